//! End-to-end tests: the built `osprey` binary against the scripted mock model server.
#[cfg(test)]
mod suite;
