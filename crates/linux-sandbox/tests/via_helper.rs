//! The escape suite of `all.rs` again, with every command confined by the helper started
//! as a process of its own (the route taken when confining in the child is not possible:
//! the creation guard, bubblewrap, or a preparation that failed).
#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "test fixtures fail loudly")]

/// Which route [`suite::common::Fixture::run`] takes.
const ROUTE: &str = "helper";

#[path = "suite/mod.rs"]
mod suite;
