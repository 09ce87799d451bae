//! osprey-process (being built; see the crate's issue).
