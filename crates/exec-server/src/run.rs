//! `osprey exec-server`'s main loop: build the server's configuration from plain values,
//! listen, and stop every process when the clients are gone or the server is told to stop.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use osprey_protocol::SandboxPolicy;
use osprey_sandboxing::LinuxBackend;
use tokio::io::AsyncReadExt;

use crate::server::{Roots, ServerConfig};
use crate::transport::{self, Listen};

/// What the command line chose.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Osprey's version, reported as `executorVersion`.
    pub version: String,
    /// `stdio` or `ws://IP:PORT`.
    pub listen: String,
    pub ws_token_file: Option<PathBuf>,
    pub concurrent_requests: usize,
    /// With a WebSocket listener: exit when stdin reaches end-of-file.
    pub exit_on_stdin_close: bool,
    /// Writable roots (relative to the working directory); empty = the working directory.
    pub roots: Vec<PathBuf>,
    /// Reads only under the roots too.
    pub restrict_reads: bool,
    /// The sandbox every process runs under.
    pub sandbox: SandboxPolicy,
    pub backend: LinuxBackend,
}

/// Runs the server; the exit code (2 for a bad command line).
pub async fn run_main(options: RunOptions) -> i32 {
    match run(options).await {
        Ok(()) => 0,
        Err((code, message)) => {
            let _ = writeln!(std::io::stderr(), "Error: {message}");
            code
        }
    }
}

async fn run(options: RunOptions) -> Result<(), (i32, String)> {
    let listen = Listen::parse(&options.listen).map_err(|e| (2, e))?;
    let token = options
        .ws_token_file
        .as_deref()
        .map(transport::read_token)
        .transpose()
        .map_err(|e| (2, e))?;
    let cwd = std::env::current_dir()
        .map_err(|e| (1, format!("cannot read the current directory: {e}")))?;
    let helper_exe = std::env::current_exe().map_err(|e| {
        (
            1,
            format!("cannot find the osprey binary for the sandbox: {e}"),
        )
    })?;
    let base_env: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let roots = if options.roots.is_empty() {
        vec![cwd.clone()]
    } else {
        options.roots.clone()
    };
    for root in &roots {
        let path = cwd.join(root);
        if !path.is_dir() {
            return Err((
                2,
                format!("--root {}: not a directory on this machine", path.display()),
            ));
        }
    }
    let config = Arc::new(ServerConfig {
        version: options.version,
        home: crate::server::home_dir(&base_env),
        roots: Roots::new(&roots, options.restrict_reads, &cwd),
        cwd,
        sandbox: options.sandbox,
        backend: options.backend,
        helper_exe,
        base_env,
        concurrent_requests: options.concurrent_requests.max(1),
    });
    match listen {
        Listen::Stdio => {
            tokio::select! {
                () = transport::serve_stream(config, tokio::io::stdin(), tokio::io::stdout()) => {}
                () = shutdown_signal() => {}
            }
        }
        Listen::WebSocket(addr) => {
            transport::check_ws_security(&addr, token.as_deref()).map_err(|e| (2, e))?;
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| (1, format!("cannot listen on ws://{addr}: {e}")))?;
            let bound = listener.local_addr().map_err(|e| (1, e.to_string()))?;
            // Clients (and scripts starting the server on port 0) read the URL from stdout.
            let mut stdout = std::io::stdout();
            let _ = writeln!(stdout, "ws://{bound}");
            let _ = stdout.flush();
            tokio::select! {
                () = transport::serve_websocket(config, listener, token) => {}
                () = shutdown_signal() => {}
                () = stdin_closed(), if options.exit_on_stdin_close => {}
            }
        }
    }
    Ok(())
}

/// Ctrl-C or SIGTERM. Returning from `run` drops every connection, and with them their
/// processes, whose groups are killed as they are dropped.
#[cfg(unix)]
async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(err) => {
            tracing::warn!("cannot watch for SIGTERM: {err}");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    tracing::debug!("stopping: every process is killed");
}

/// Windows: Ctrl-C (or Ctrl-Break) at the server's console; the jobs of its processes are
/// killed as they are dropped.
#[cfg(windows)]
async fn shutdown_signal() {
    let mut brk = match tokio::signal::windows::ctrl_break() {
        Ok(brk) => brk,
        Err(err) => {
            tracing::warn!("cannot watch for Ctrl-Break: {err}");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = brk.recv() => {}
    }
    tracing::debug!("stopping: every process is killed");
}

async fn stdin_closed() {
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stdin.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
}
