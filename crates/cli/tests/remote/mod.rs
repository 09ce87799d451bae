//! Two transports, one suite: each submodule includes `suite/tools_exec.rs` with a
//! `common` whose `osprey_async` routes `osprey exec` through an exec server.

mod harness;
mod stdio;
mod websocket;
