//! End-to-end tests of `osprey exec-server`: the real `osprey` binary over stdio and
//! WebSocket, driven by this crate's client and by raw JSON lines, and (with
//! `OSPREY_CODEX_BIN`) the reference Codex's exec server driven by the same client. Build
//! the binaries first (`cargo build --workspace --bins`). The cases live in `suite/`.
#[cfg(test)]
mod suite;
