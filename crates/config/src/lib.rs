//! osprey-config (being built; see the crate's issue).
