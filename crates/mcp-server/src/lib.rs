//! Osprey as an MCP server: `osprey mcp-server` lets another agent hand Osprey a coding task
//! over the Model Context Protocol (stdio transport) and read back the answer.
//!
//! # What it offers
//!
//! Two tools, shaped like the `codex` / `codex-reply` tools of Codex's own MCP server so that
//! clients written for one work with the other:
//!
//! * `osprey` starts a thread: `prompt` (required), `cwd`, `model`, `profile`,
//!   `approval-policy`, `sandbox`, `config` (an object of `-c key=value` overrides),
//!   `base-instructions`, `developer-instructions` ([`tool_config`]).
//! * `osprey-reply` continues one: `threadId` and `prompt`.
//!
//! Both answer with the turn's final agent message as text content, and with
//! `structuredContent: {threadId, content}`; a failed or stopped turn answers with
//! `isError: true` and the reason as text ([`runner::tool_result`]).
//!
//! # While a turn runs
//!
//! Every event of the thread goes to the client as an `osprey/event` notification, and when
//! the call carried a progress token, the notable ones also as `notifications/progress`
//! ([`notify`]). Approval requests become MCP elicitations when the client declared the
//! capability; the answer becomes a [`osprey_protocol::ReviewDecision`] ([`approval`]).
//! A client without elicitation gets what `osprey exec` gives: the configured approval policy
//! applies, and whatever would need a person's approval is declined, with the model told.
//!
//! # Shape
//!
//! [`server::OspreyMcpServer`] implements rmcp's `ServerHandler`; rmcp runs each request in
//! its own task, so threads work side by side. Threads live as long as the server process,
//! kept by id for `osprey-reply`; when the client disconnects, each is shut down so its
//! session file is complete. [`run_main`] is the entry point `osprey mcp-server` calls;
//! [`serve`] runs the same server over any byte streams (tests use it with in-memory pipes).

pub mod approval;
mod error;
pub mod notify;
pub mod runner;
pub mod server;
pub mod tool_config;

pub use error::McpServerError;
pub use server::{OspreyMcpServer, ServerOptions};

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use osprey_protocol::{EventMsg, Op};
use rmcp::ServiceExt;
use tokio::io::{AsyncRead, AsyncWrite};

/// How long each thread gets to stop and write its session file when the client leaves.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Runs `osprey mcp-server`: serves MCP on stdin/stdout until the client disconnects.
/// Returns the process exit code (0 after a normal disconnect, 1 when the connection could
/// not be set up). Diagnostics go to stderr; stdout carries only MCP messages.
pub async fn run_main(
    version: &str,
    providers: Vec<Arc<dyn osprey_core::ModelProviderFactory>>,
) -> i32 {
    run_main_with_exe(version, std::env::current_exe().ok(), providers).await
}

/// [`run_main`] with the executable that sandboxed commands re-enter (the `osprey` binary,
/// which dispatches on argv[0]). `None` refuses every command that needs the sandbox.
pub async fn run_main_with_exe(
    version: &str,
    osprey_exe: Option<PathBuf>,
    providers: Vec<Arc<dyn osprey_core::ModelProviderFactory>>,
) -> i32 {
    // Variables that are not valid UTF-8 are skipped rather than fatal.
    let env: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let process_cwd = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "Error: cannot read the current directory: {e}"
            );
            return 1;
        }
    };
    let options = ServerOptions {
        version: version.to_string(),
        env,
        process_cwd,
        osprey_exe,
        providers,
    };
    match serve(options, tokio::io::stdin(), tokio::io::stdout()).await {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            1
        }
    }
}

/// Serves MCP over `input` / `output` until the client disconnects, then shuts every thread
/// down.
pub async fn serve<R, W>(options: ServerOptions, input: R, output: W) -> Result<(), McpServerError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let server = OspreyMcpServer::new(options);
    let registry = server.registry();
    let running = server
        .serve((input, output))
        .await
        .map_err(|e| McpServerError::Connection {
            reason: e.to_string(),
        })?;
    let quit = running.waiting().await;
    if let Err(e) = quit {
        tracing::warn!("the MCP service task ended abnormally: {e}");
    }
    for thread in server::all_threads(&registry) {
        let _ = thread.submit(Op::Shutdown).await;
        let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while let Some(event) = thread.next_event().await {
                if matches!(event.msg, EventMsg::ShutdownComplete) {
                    break;
                }
            }
        })
        .await;
        if drained.is_err() {
            tracing::warn!("thread {} did not shut down in time", thread.id());
        }
    }
    Ok(())
}
