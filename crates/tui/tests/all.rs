//! End-to-end tests of the interactive UI: the real `osprey` binary in a pseudo-terminal
//! against the scripted mock model server. Build the binaries first
//! (`cargo build --workspace --bins`). The cases live in `suite/`.
#[cfg(test)]
mod suite;
