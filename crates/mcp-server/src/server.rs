//! The MCP handler: `initialize`, `tools/list`, `tools/call`, and the threads it keeps.
//!
//! Each `osprey` call builds a configuration from the arguments, starts a thread and keeps
//! it under its id; each `osprey-reply` call finds the thread again. Calls run side by side
//! (rmcp runs each request in its own task), so several threads can work at once. Turns on
//! one thread take turns: a second `osprey-reply` to a busy thread waits until the first
//! one's turn has ended, then runs — the thread's event stream has a single reader at a time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use osprey_config::{ConfigWarning, EnvSnapshot};
use osprey_core::{OspreyThread, ThreadManager};
use osprey_protocol::{Event, EventMsg, ThreadId};
use osprey_rollout::SessionSource;
use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, ServerNotification,
};
use rmcp::service::{RequestContext, RoleServer};

use crate::error::McpServerError;
use crate::notify;
use crate::runner::{self, TurnClient};
use crate::tool_config::{
    OSPREY_REPLY_TOOL, OSPREY_TOOL, OspreyToolCallParam, OspreyToolCallReplyParam,
    osprey_reply_tool, osprey_tool, parse_arguments,
};

/// What the server needs from its process: the environment, the directory relative `cwd`
/// arguments start from, and the executable sandboxed helpers re-enter.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Reported as `serverInfo.version`.
    pub version: String,
    pub env: HashMap<String, String>,
    pub process_cwd: PathBuf,
    /// The `osprey` executable. Without it, commands that need the sandbox are refused with
    /// the reason (the sandbox fails closed).
    pub osprey_exe: Option<PathBuf>,
    /// Providers that are not HTTP endpoints (the embedded local model), registered by the
    /// program that runs the server.
    pub providers: Vec<Arc<dyn osprey_core::ModelProviderFactory>>,
}

/// One thread and the lock that lets one turn at a time read its events.
pub(crate) struct ThreadSlot {
    thread: Arc<OspreyThread>,
    turn: tokio::sync::Mutex<()>,
}

/// Osprey as an MCP server: rmcp's `ServerHandler` over a `ThreadManager` and the threads
/// this connection started.
pub struct OspreyMcpServer {
    manager: ThreadManager,
    env: EnvSnapshot,
    process_cwd: PathBuf,
    version: String,
    threads: ThreadRegistry,
}

/// The threads of one server, by id; shared with [`crate::serve`] for the final shutdown.
pub(crate) type ThreadRegistry = Arc<Mutex<HashMap<ThreadId, Arc<ThreadSlot>>>>;

impl OspreyMcpServer {
    pub fn new(options: ServerOptions) -> Self {
        let mut manager = ThreadManager::new(options.env.clone())
            .with_origin("osprey_mcp_server", SessionSource::Mcp);
        if let Some(exe) = options.osprey_exe {
            manager = manager.with_osprey_exe(exe);
        }
        for provider in options.providers {
            manager = manager.with_provider(provider);
        }
        // The MCP client answers the parent's approvals; nobody can answer a sub-agent's,
        // so they are declined (and logged) instead of leaving the child waiting.
        if tokio::runtime::Handle::try_current().is_ok() {
            osprey_core::decline_subagent_approvals(&manager, |child, reason| {
                tracing::warn!(
                    "declined an approval request of sub-agent {} ({}): {reason}",
                    child.nickname,
                    child.thread_id
                );
            });
        }
        Self {
            manager,
            env: EnvSnapshot::from_pairs(options.env),
            process_cwd: options.process_cwd,
            version: options.version,
            threads: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn slot(&self, id: ThreadId) -> Option<Arc<ThreadSlot>> {
        self.threads.lock().ok()?.get(&id).cloned()
    }

    pub(crate) fn registry(&self) -> ThreadRegistry {
        Arc::clone(&self.threads)
    }

    async fn start(
        &self,
        param: OspreyToolCallParam,
        client: &TurnClient,
    ) -> Result<CallToolResult, McpServerError> {
        let built = param.into_config(&self.env, &self.process_cwd)?;
        let thread = self
            .manager
            .start_thread(built.config)
            .await
            .map_err(|source| McpServerError::StartThread { source })?;
        let id = thread.id();
        let slot = Arc::new(ThreadSlot {
            thread,
            turn: tokio::sync::Mutex::new(()),
        });
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(id, Arc::clone(&slot));
        }
        let _turn = slot.turn.lock().await;
        send_config_warnings(id, built.warnings, client).await;
        let outcome = runner::run_turn(&slot.thread, built.prompt, client).await;
        Ok(runner::tool_result(id, outcome))
    }

    async fn reply(
        &self,
        param: OspreyToolCallReplyParam,
        client: &TurnClient,
    ) -> Result<CallToolResult, McpServerError> {
        let id = param.thread_id()?;
        let slot = self
            .slot(id)
            .ok_or(McpServerError::UnknownThread { thread_id: id })?;
        // Wait for an earlier turn on this thread to end, unless this call is cancelled first.
        let _turn = tokio::select! {
            guard = slot.turn.lock() => guard,
            () = client.cancel.cancelled() => {
                return Err(McpServerError::CancelledWhileQueued { thread_id: id });
            }
        };
        let outcome = runner::run_turn(&slot.thread, param.prompt, client).await;
        Ok(runner::tool_result(id, outcome))
    }
}

/// Every thread in the registry.
pub(crate) fn all_threads(registry: &ThreadRegistry) -> Vec<Arc<OspreyThread>> {
    registry
        .lock()
        .map(|t| t.values().map(|slot| Arc::clone(&slot.thread)).collect())
        .unwrap_or_default()
}

/// Configuration warnings (unknown keys, ignored project files) as `warning` events, so the
/// client sees them the way other front ends show them once at startup.
async fn send_config_warnings(id: ThreadId, warnings: Vec<ConfigWarning>, client: &TurnClient) {
    for warning in warnings {
        let event = Event {
            thread_id: id,
            turn_id: None,
            msg: EventMsg::Warning {
                message: warning.to_string(),
            },
        };
        let note = notify::event_notification(&event, &client.request_id);
        let _ = client
            .peer
            .send_notification(ServerNotification::CustomNotification(note))
            .await;
    }
}

fn error_result(error: &McpServerError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(error.to_string())])
}

impl ServerHandler for OspreyMcpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("osprey-mcp-server", self.version.clone()).with_title("Osprey"),
            )
            .with_instructions(
                "Osprey is a coding agent. Call `osprey` with a task to start a thread; the result's structuredContent.threadId continues it with `osprey-reply`.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            osprey_tool(),
            osprey_reply_tool(),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let client = TurnClient {
            progress_token: context.meta.get_progress_token(),
            peer: context.peer,
            request_id: context.id,
            cancel: context.ct,
        };
        let result = match request.name.as_ref() {
            OSPREY_TOOL => match parse_arguments(OSPREY_TOOL, request.arguments) {
                Ok(param) => self.start(param, &client).await,
                Err(e) => Err(e),
            },
            OSPREY_REPLY_TOOL => match parse_arguments(OSPREY_REPLY_TOOL, request.arguments) {
                Ok(param) => self.reply(param, &client).await,
                Err(e) => Err(e),
            },
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "unknown tool `{other}`; this server offers `{OSPREY_TOOL}` and `{OSPREY_REPLY_TOOL}`"
                    ),
                    None,
                ));
            }
        };
        Ok(result.unwrap_or_else(|e| error_result(&e)).into())
    }
}
