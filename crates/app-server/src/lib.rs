//! `osprey app-server`: Codex's app-server "v2" JSON-RPC protocol (threads → turns → items,
//! server → client approval requests) over stdio, a Unix socket or WebSocket, so clients
//! written for `codex app-server` drive Osprey unchanged.
//!
//! # Shape
//!
//! * [`transport`] reads messages and writes a connection's queue ([`outgoing`]: never
//!   blocks a turn; deltas merge behind a slow reader, nothing else is dropped).
//! * [`connection`] owns the handshake (`initialize` once; everything before it is "Not
//!   initialized"), runs requests in arrival order and routes the client's answers to the
//!   server's own requests.
//! * `handlers` — one module per resource (threads, turns, config and models).
//! * Each loaded thread ([`loaded`]) has an event pump (`pump`) that turns core's events
//!   into notifications for every subscribed connection, and sends approvals as
//!   server → client requests (`approval`).
//! * Threads are shared by the whole process: another connection can `thread/resume` a
//!   thread that is loaded, and gets its pending approvals.
//!
//! The wire types live in `osprey-app-server-protocol`; what is implemented and what is
//! not is listed in `docs/app-server.md`.

mod approval;
mod command_actions;
pub mod connection;
mod convert;
mod handlers;
mod history;
mod items;
pub mod loaded;
pub mod outgoing;
mod plan;
mod pump;
pub mod schema;
pub mod server;
mod subagents;
pub mod transport;
mod turn_diff;

pub use server::{Server, ServerOptions};
pub use transport::Listen;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// What `osprey app-server` was asked to do.
pub struct RunOptions {
    pub version: String,
    pub providers: Vec<Arc<dyn osprey_core::ModelProviderFactory>>,
    /// `--listen` (default `stdio://`).
    pub listen: String,
    /// `--ws-token-file`.
    pub ws_token_file: Option<PathBuf>,
}

/// Runs the server until its client leaves (stdio) or forever (sockets). Returns the exit
/// code: 0 after a normal end, 2 for bad arguments, 1 when the server could not start.
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
    let env: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let process_cwd = std::env::current_dir()
        .map_err(|e| (1, format!("cannot read the current directory: {e}")))?;
    let server = Server::new(ServerOptions {
        version: options.version,
        env,
        process_cwd,
        osprey_exe: std::env::current_exe().ok(),
        providers: options.providers,
        originator: ServerOptions::APP_SERVER_ORIGINATOR.to_owned(),
        source: osprey_rollout::SessionSource::VsCode,
    })
    .map_err(|e| (1, format!("cannot find Osprey's home: {e}")))?;
    match listen {
        Listen::Stdio => {
            transport::serve_stream(Arc::clone(&server), tokio::io::stdin(), tokio::io::stdout())
                .await;
            server.shutdown_all().await;
        }
        Listen::WebSocket(addr) => {
            transport::check_ws_security(&addr, token.as_deref()).map_err(|e| (2, e))?;
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| (1, format!("cannot listen on ws://{addr}: {e}")))?;
            let bound = listener.local_addr().map_err(|e| (1, e.to_string()))?;
            tracing::info!("listening on ws://{bound}");
            let _ = writeln!(
                std::io::stderr(),
                "osprey app-server: listening on ws://{bound}"
            );
            tokio::select! {
                () = transport::serve_websocket(Arc::clone(&server), listener, token) => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            server.shutdown_all().await;
        }
        Listen::Unix(path) => {
            if path.exists() {
                std::fs::remove_file(&path).map_err(|e| {
                    (
                        1,
                        format!("cannot replace the socket {}: {e}", path.display()),
                    )
                })?;
            }
            let listener = tokio::net::UnixListener::bind(&path).map_err(|e| {
                (
                    1,
                    format!("cannot listen on unix://{}: {e}", path.display()),
                )
            })?;
            let _ = writeln!(
                std::io::stderr(),
                "osprey app-server: listening on unix://{}",
                path.display()
            );
            tokio::select! {
                () = transport::serve_unix(Arc::clone(&server), listener) => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            let _ = std::fs::remove_file(&path);
            server.shutdown_all().await;
        }
    }
    Ok(())
}
