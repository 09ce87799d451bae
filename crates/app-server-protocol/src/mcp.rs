//! `mcpServerStatus/list`: the MCP servers a thread runs, the tools each one offers, and
//! why a server is not running.
//!
//! The shape is Codex's (`ListMcpServerStatusParams` / `McpServerStatus` in its v2
//! protocol). Osprey adds `threadId` to the params (which thread's servers; Codex's newer
//! releases have it too) and `enabled` / `startupError` to each server, so a client can say
//! why a configured server has no tools.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How much to gather per server: `full` (the default) also lists resources and resource
/// templates, which asks every server; `toolsAndAuthOnly` answers from what is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerStatusDetail {
    Full,
    ToolsAndAuthOnly,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusParams {
    /// Opaque cursor from a previous page's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Page size; all servers when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<McpServerStatusDetail>,
    /// The thread whose servers to report; the newest loaded thread when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// How the server is authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpAuthStatus {
    Unsupported,
    NotLoggedIn,
    BearerToken,
    #[serde(rename = "oAuth")]
    OAuth,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    /// The name in `[mcp_servers.<name>]`.
    pub name: String,
    /// Each tool offered, by the name the server gives it, as the server lists it
    /// (`name`, `description`, `inputSchema`, …). Empty when the server is not running.
    pub tools: Map<String, Value>,
    #[serde(default)]
    pub resources: Vec<Value>,
    #[serde(default)]
    pub resource_templates: Vec<Value>,
    pub auth_status: McpAuthStatus,
    /// Osprey: false when the config disables the server (`enabled = false`).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Osprey: why the server failed to start (the command and its stderr tail, the URL and
    /// the HTTP error, or the timeout); absent when it started or is disabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_error: Option<String>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusResponse {
    pub data: Vec<McpServerStatus>,
    /// The cursor for the next page; null on the last.
    pub next_cursor: Option<String>,
}
