//! osprey-execpolicy (being built; see the crate's issue).
