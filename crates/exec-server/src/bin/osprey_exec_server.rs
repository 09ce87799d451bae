//! `osprey-exec-server`: `osprey exec-server` on its own, with the same flags, for builds
//! that leave the rest of the agent out — the Windows build (cross-compiled with
//! `x86_64-pc-windows-gnu` and tested under Wine, see `docs/windows.md`) and this crate's
//! end-to-end tests. The shipped entry point on Linux and macOS is the `osprey` binary.

use std::path::PathBuf;

use clap::Parser;
use osprey_protocol::SandboxPolicy;
use osprey_sandboxing::LinuxBackend;

/// Serves Codex's exec-server protocol: an agent elsewhere runs its commands and file
/// operations on this machine.
#[derive(Debug, Parser)]
#[command(name = "osprey-exec-server", version)]
struct Cli {
    /// `stdio` (one JSON message per line) or ws://IP:PORT (the bound URL is printed).
    #[arg(long, value_name = "URL", default_value = "ws://127.0.0.1:0")]
    listen: String,
    /// File holding the token WebSocket clients must send; required beyond loopback.
    #[arg(long, value_name = "FILE")]
    ws_token_file: Option<PathBuf>,
    /// Requests of one connection handled at the same time.
    #[arg(long, value_name = "N", default_value_t = 1)]
    concurrent_requests: usize,
    /// With a WebSocket listener, exit when stdin closes.
    #[arg(long)]
    exit_on_stdin_close: bool,
    /// A directory clients may write in; repeat for several. Default: the current directory.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Let fs calls read only inside the roots.
    #[arg(long)]
    restrict_reads: bool,
    /// The sandbox every process runs under. On Windows, where Osprey has no sandbox,
    /// processes are refused unless this is `danger-full-access`.
    #[arg(long, value_enum, default_value_t = Policy::WorkspaceWrite)]
    sandbox: Policy,
    /// Allow processes network access (workspace-write only).
    #[arg(long)]
    network: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Policy {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let sandbox = match cli.sandbox {
        Policy::ReadOnly => SandboxPolicy::ReadOnly,
        Policy::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        Policy::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: cli.network,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: false,
        },
    };
    let options = osprey_exec_server::RunOptions {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        listen: cli.listen,
        ws_token_file: cli.ws_token_file,
        concurrent_requests: cli.concurrent_requests,
        exit_on_stdin_close: cli.exit_on_stdin_close,
        roots: cli.roots,
        restrict_reads: cli.restrict_reads,
        sandbox,
        backend: LinuxBackend::Auto,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "Error: cannot start the async runtime: {err}"
            );
            return std::process::ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(osprey_exec_server::run_main(options));
    // Every process is killed by now. Exit at once: Tokio's stdin reader sits in a
    // blocking read the runtime would otherwise wait for at shutdown.
    std::process::exit(code)
}
