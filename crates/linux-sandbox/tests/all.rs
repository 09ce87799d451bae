//! Integration tests: real commands run sandboxed, trying to escape — confined in the
//! command's own child before `exec`, the route `osprey` takes whenever it can
//! (`osprey_linux_sandbox::confine_in_child`). `via_helper.rs` runs the same suite through
//! the helper started as its own process.
#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "test fixtures fail loudly")]

/// Which route [`suite::common::Fixture::run`] takes.
const ROUTE: &str = "in-child";

mod suite;
