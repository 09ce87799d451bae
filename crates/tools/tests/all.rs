//! Integration tests of osprey-tools, one binary.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] functions fail loudly on setup errors"
)]

mod suite;
