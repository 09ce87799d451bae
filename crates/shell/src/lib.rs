//! osprey-shell (being built; see the crate's issue).
