//! osprey-tools (being built; see the crate's issue).
