//! The shell and file tools' end-to-end suites (`suite/tools_exec.rs`, `suite/apply_patch.rs`) run again with every
//! tool executed through `osprey exec-server`: once with the server as a child over stdio,
//! once over WebSocket on 127.0.0.1 (`remote/`).
#![allow(
    clippy::duplicate_mod,
    reason = "the same suites are included once per transport, on purpose"
)]

#[cfg(test)]
mod remote;
