//! osprey-test-support (being built; see the crate's issue).
