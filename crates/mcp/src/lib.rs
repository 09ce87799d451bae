//! Osprey as an MCP *client*: connecting to the servers in `[mcp_servers.<name>]`, offering
//! their tools to the model, calling them, and managing the entries with `osprey mcp …`.
//!
//! Built on the official Rust SDK, `rmcp`; it speaks stdio (a launched child) and streamable
//! HTTP. This crate knows nothing of turns, approvals or events: the core registers the tools
//! this crate describes and routes calls here.
//!
//! # Lifecycle
//!
//! [`McpConnectionManager::start`] starts every enabled server at once. Each has its own
//! `startup_timeout_sec` (default 10 s) to complete `initialize` and `tools/list`; a server
//! that cannot be launched, exits, refuses the connection or runs out of time becomes a
//! [`StartupFailure`] with a reason in plain words (the command and the end of its stderr, or
//! the URL and the HTTP error, or the time it was given). Nothing here panics or blocks on a bad
//! server: `start` returns once the slowest server answered or timed out, and the others work.
//! The front end reports [`McpConnectionManager::failures`] once;
//! [`McpConnectionManager::startup_times`] says how long each server took. [`McpConnectionManager::shutdown`]
//! ends the sessions; a launched server whose stdin closes gets a moment to exit, then
//! `SIGTERM`, then `SIGKILL` to its whole process group.
//!
//! # Tools offered to the model
//!
//! Each tool has a namespace `mcp__<server>` and a name, both cleaned to `[A-Za-z0-9_]`, and the
//! qualified name `mcp__<server>__<tool>` within 64 characters; collisions and over-long names
//! get stable hash suffixes and a warning ([`McpConnectionManager::warnings`]; see [`names`]).
//! `enabled_tools` / `disabled_tools` filter what is offered. Input schemas pass through
//! [`sanitize_input_schema`], which repairs only what the model APIs reject.
//!
//! * [`McpConnectionManager::responses_tool_specs`] — for the Responses API, what Codex 0.171
//!   sends (observed on the wire): one `{"type":"namespace","name":"mcp__<server>",
//!   "description":<server instructions or a default>,"tools":[…]}` per server, whose tools are
//!   `{"type":"function","name":<tool>,"description","strict":false,"parameters"}`. The model
//!   answers with a `function_call` carrying `"namespace":"mcp__<server>"` and `"name":<tool>`;
//!   map it back with [`McpConnectionManager::resolve_namespaced`].
//! * [`McpConnectionManager::flat_tool_specs`] — the same tools as plain function tools named
//!   `mcp__<server>__<tool>`, for Chat Completions (wrap each as
//!   `{"type":"function","function":{name, description, parameters}}`); map calls back with
//!   [`McpConnectionManager::resolve`].
//! * [`resource_tool_specs`] — `list_mcp_resources`, `list_mcp_resource_templates`,
//!   `read_mcp_resource`, offered whenever a server is connected. Parse their arguments with
//!   [`ResourceToolCall::parse`] (it accepts `null`s), run them with
//!   [`McpConnectionManager::run_resource_tool`], and show the result with
//!   [`resource_output_for_model`].
//!
//! # Calling
//!
//! [`McpConnectionManager::call_tool`]`(server, tool, arguments, timeout)` sends `tools/call`
//! with the raw tool name; `null` arguments become `{}`; past the timeout (default
//! `tool_timeout_sec`, 60 s) the request is cancelled on the server and
//! [`McpError::ToolTimeout`] names server, tool and limit. Every [`McpError`] reads as a message
//! for the model (a failed tool output), not a reason to end the turn.
//!
//! [`McpToolResult`] keeps the raw content blocks for events; [`McpToolResult::to_model_output`]
//! gives the model text plus images as `data:` URLs (see [`ModelOutput::to_content_items`] for
//! the Responses `function_call_output` array form), and flags `isError`.
//!
//! ```no_run
//! # async fn demo(config: osprey_config::Config, env: std::collections::HashMap<String, String>) {
//! use osprey_mcp::McpConnectionManager;
//!
//! let manager = McpConnectionManager::start(&config.mcp_servers, &env).await;
//! for failure in manager.failures() {
//!     eprintln!("{failure}");
//! }
//! let tools = manager.responses_tool_specs(); // add to the request's `tools`
//! // … the model calls namespace "mcp__docs", name "search":
//! if let Some((server, tool)) = manager.resolve_namespaced("mcp__docs", "search") {
//!     match manager.call_tool(&server, &tool, Some(serde_json::json!({"q": "x"})), None).await {
//!         Ok(result) => {
//!             let output = result.to_model_output(); // text + images, is_error
//!         }
//!         Err(err) => { /* failed output: err.to_string() */ }
//!     }
//! }
//! manager.shutdown().await;
//! # }
//! ```
//!
//! # `osprey mcp`
//!
//! [`McpCommand`] is one of `add`, `list`, `get`, `remove` (the `cli` crate parses the command
//! line into it) and [`run_mcp_command`] runs it against `<home>/config.toml`; the editing
//! functions in [`config_edit`] keep the user's comments and layout. `list --json` and
//! `get --json` print the shapes Codex 0.171 prints.

mod client;
mod commands;
pub mod config_edit;
mod error;
mod manager;
pub mod names;
mod resources;
mod result;
mod schema;

pub use client::INHERITED_ENV_VARS;
pub use commands::{McpCommand, run_mcp_command};
pub use error::{McpError, StartupFailure};
pub use manager::{McpConnectionManager, McpToolInfo};
pub use resources::{
    LIST_MCP_RESOURCE_TEMPLATES, LIST_MCP_RESOURCES, READ_MCP_RESOURCE, ResourceToolCall,
    is_resource_tool, resource_output_for_model, resource_tool_specs,
};
pub use result::{McpToolResult, ModelOutput};
pub use schema::sanitize_input_schema;
