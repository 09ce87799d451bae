//! osprey-apply-patch (being built; see the crate's issue).
