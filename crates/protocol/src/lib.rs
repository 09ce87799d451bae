//! osprey-protocol (being built; see the crate's issue).
