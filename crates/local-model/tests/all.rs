//! Integration tests for osprey-local-model. Tests that need the real weights read
//! `OSPREY_LOCAL_MODEL` (printed by `scripts/install-test-deps.sh`); without it they skip
//! with a note, unless `OSPREY_REQUIRE_LOCAL_MODEL=1`, in which case they fail.

#![expect(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "test helpers outside #[test] functions unwrap and print skip notes"
)]

mod suite;
