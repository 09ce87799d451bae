//! Logging for the server subcommands (`app-server`, `mcp-server`, `exec-server`, and
//! `exec` when `RUST_LOG` is set): to
//! stderr, since stdout carries their protocol, at the level `RUST_LOG` chooses (`warn`
//! by default). Set up here, in the binary, so library crates never install a global
//! subscriber of their own.

/// Installs the stderr subscriber (a second call does nothing).
pub fn to_stderr() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}
