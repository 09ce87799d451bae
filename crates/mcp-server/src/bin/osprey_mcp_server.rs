//! A stand-alone `osprey mcp-server` for this crate's end-to-end tests: MCP clients need a
//! program to spawn, and the shipped `osprey` binary lives in another crate. It has no
//! sandbox helper entry, so commands that need the sandbox are refused there; tests that
//! run commands use `danger-full-access`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(_) => return ExitCode::FAILURE,
    };
    let code = runtime.block_on(osprey_mcp_server::run_main_with_exe(
        env!("CARGO_PKG_VERSION"),
        None,
        Vec::new(),
    ));
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
