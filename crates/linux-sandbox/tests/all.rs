//! Integration tests: real commands run through the helper, trying to escape.
#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "test fixtures fail loudly")]

mod suite;
