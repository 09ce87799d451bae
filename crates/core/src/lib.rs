//! osprey-core (being built; see the crate's issue).
