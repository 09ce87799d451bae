//! The `osprey` binary: argument parsing and dispatch to the front ends, nothing else.
//!
//! Dispatch happens in two steps. First on the program name and a hidden first argument, for
//! the entry points other parts of Osprey invoke the binary through (the `apply_patch`
//! virtual command). Then on clap subcommands: `exec`, and the tools' own commands.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, Parser)]
#[command(
    name = "osprey",
    version = VERSION,
    about = "Osprey: a coding agent for your terminal",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one task non-interactively.
    #[command(visible_alias = "e")]
    Exec(osprey_exec::ExecCli),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Exec(exec) => block_on(osprey_exec::run_main(exec, VERSION)),
    };
    exit_code(code)
}

fn block_on<F: std::future::Future<Output = i32>>(future: F) -> i32 {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(future),
        Err(e) => {
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("Error: could not start the async runtime: {e}\n"),
            );
            1
        }
    }
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
