//! `osprey exec-server`: serves Codex's exec-server protocol so an agent elsewhere runs its
//! commands and file operations on this machine (`osprey-exec-server`).

use std::path::PathBuf;

use osprey_sandboxing::SandboxPolicy;

use super::sandbox::{BackendArg, PolicyArg};

/// Arguments of `osprey exec-server`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExecServerCli {
    /// Where to serve: `stdio` (one JSON message per line; what ssh, `docker exec -i` and
    /// `kubectl exec -i` carry) or ws://IP:PORT (the bound URL is printed on stdout).
    #[arg(long, value_name = "URL", default_value = "ws://127.0.0.1:0")]
    pub listen: String,
    /// File holding the capability token WebSocket clients must send
    /// (`Authorization: Bearer <token>`); required to listen beyond loopback.
    #[arg(long, value_name = "FILE")]
    pub ws_token_file: Option<PathBuf>,
    /// Requests of one connection handled at the same time.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub concurrent_requests: usize,
    /// With a WebSocket listener, exit when stdin closes (e.g. the ssh session that
    /// started the server ended). Also `OSPREY_EXEC_SERVER_EXIT_ON_STDIN_CLOSE=1`.
    #[arg(long)]
    pub exit_on_stdin_close: bool,
    /// A directory clients may write in (and processes, under workspace-write); a
    /// process's working directory must be inside one. Repeat for several. Default: the
    /// current directory.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// Let fs calls read files only inside the roots (default: anywhere the server's user
    /// can read). Processes still read what their sandbox allows, which is everything.
    #[arg(long)]
    pub restrict_reads: bool,
    /// The sandbox every process runs under, whatever the client asks.
    #[arg(long, value_enum, default_value_t = PolicyArg::WorkspaceWrite)]
    pub sandbox: PolicyArg,
    /// Allow processes network access (workspace-write only).
    #[arg(long)]
    pub network: bool,
    /// Linux only: which mechanism enforces the sandbox.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
}

pub async fn run(cli: ExecServerCli, version: &str) -> i32 {
    let sandbox = match cli.sandbox {
        PolicyArg::ReadOnly => SandboxPolicy::ReadOnly,
        PolicyArg::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        PolicyArg::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: cli.network,
            // A client chooses a process's TMPDIR: it must not choose what is writable.
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: false,
        },
    };
    let options = osprey_exec_server::RunOptions {
        version: version.to_owned(),
        listen: cli.listen,
        ws_token_file: cli.ws_token_file,
        concurrent_requests: cli.concurrent_requests,
        exit_on_stdin_close: cli.exit_on_stdin_close || exit_on_stdin_close_from_env(),
        roots: cli.roots,
        restrict_reads: cli.restrict_reads,
        sandbox,
        backend: cli.backend.into(),
    };
    let code = osprey_exec_server::run_main(options).await;
    // Every process group is killed by now. Exit at once: Tokio's stdin reader sits in a
    // blocking read the runtime would otherwise wait for at shutdown.
    std::process::exit(code)
}

fn exit_on_stdin_close_from_env() -> bool {
    std::env::var("OSPREY_EXEC_SERVER_EXIT_ON_STDIN_CLOSE")
        .is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
}
