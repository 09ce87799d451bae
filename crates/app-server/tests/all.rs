//! End-to-end tests of `osprey app-server`: a scripted JSON-RPC client drives the real
//! `osprey` binary over stdio against the scripted mock model server. Build the binaries
//! first (`cargo build --workspace --bins`). The cases live in `suite/`.
#[cfg(test)]
mod suite;
