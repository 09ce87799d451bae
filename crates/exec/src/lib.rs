//! osprey-exec (being built; see the crate's issue).
