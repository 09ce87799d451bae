//! Integration tests for osprey-execpolicy, one binary; the cases live in `suite/`.

// Helpers outside `#[test]` functions unwrap too: a failed setup step should fail the test.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers fail the test on setup errors"
)]

mod suite;
