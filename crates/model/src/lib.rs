//! osprey-model (being built; see the crate's issue).
