//! Integration tests of osprey-rollout, one binary; the cases live in `suite/`.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] functions fail the test by panicking"
)]

mod suite;
