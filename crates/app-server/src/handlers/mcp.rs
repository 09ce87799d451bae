//! `mcpServerStatus/list`: a thread's MCP servers — every configured one, the tools of those
//! that started, and why the others did not — from the servers the thread really started
//! (core's connection manager), not a fresh start.

use std::sync::Arc;

use osprey_app_server_protocol as wire;
use osprey_config::McpTransport;
use serde_json::{Map, Value};

use super::{Reply, answer, loaded_thread};
use crate::loaded::LoadedThread;
use crate::server::Server;

pub(crate) async fn status_list(server: &Server, params: wire::ListMcpServerStatusParams) -> Reply {
    let thread = match &params.thread_id {
        Some(id) => loaded_thread(server, id)?,
        None => newest_thread(server).ok_or_else(|| {
            "no thread is loaded: MCP servers start with a thread, so call thread/start (or \
             thread/resume) first, or pass `threadId`"
                .to_owned()
        })?,
    };
    let names: Vec<&String> = thread.config.mcp_servers.keys().collect();
    let start = match &params.cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= names.len())
            .ok_or_else(|| {
                format!(
                    "invalid cursor `{cursor}`: pass the `nextCursor` of the previous \
                     mcpServerStatus/list answer"
                )
            })?,
    };
    let limit = params.limit.map_or(names.len(), |n| n.max(1) as usize);
    let end = start.saturating_add(limit).min(names.len());
    let full = params.detail != Some(wire::McpServerStatusDetail::ToolsAndAuthOnly);
    let mut data = Vec::new();
    for name in &names[start..end] {
        data.push(server_status(&thread, name, full).await);
    }
    let next_cursor = (end < names.len()).then(|| end.to_string());
    answer(&wire::ListMcpServerStatusResponse { data, next_cursor })
}

/// The most recently created loaded thread that is not a sub-agent.
fn newest_thread(server: &Server) -> Option<Arc<LoadedThread>> {
    server
        .loaded_ids()
        .iter()
        .filter_map(|id| server.loaded(id))
        .filter(|t| t.info.parent_thread_id.is_none())
        .max_by_key(|t| t.info.created_at)
}

async fn server_status(thread: &LoadedThread, name: &str, full: bool) -> wire::McpServerStatus {
    let config = thread.config.mcp_servers.get(name);
    let mcp = thread.thread.mcp();
    let tools: Map<String, Value> = mcp
        .manager
        .tools()
        .iter()
        .filter(|t| t.server == name)
        .map(|t| (t.tool.clone(), t.raw.clone()))
        .collect();
    let running = mcp.manager.server_names().any(|n| n == name);
    let (resources, resource_templates) = if full && running {
        let resources = mcp.manager.list_resources(Some(name), None).await.ok();
        let templates = mcp
            .manager
            .list_resource_templates(Some(name), None)
            .await
            .ok();
        (
            listed(resources, "resources"),
            listed(templates, "resourceTemplates"),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let auth_status = match config.map(|c| &c.transport) {
        Some(McpTransport::StreamableHttp {
            bearer_token_env_var: Some(_),
            ..
        }) => wire::McpAuthStatus::BearerToken,
        _ => wire::McpAuthStatus::Unsupported,
    };
    let startup_error = mcp
        .failures
        .iter()
        .find(|f| f.server == name)
        .map(|f| f.reason.clone());
    wire::McpServerStatus {
        name: name.to_owned(),
        tools,
        resources,
        resource_templates,
        auth_status,
        enabled: config.is_none_or(|c| c.enabled),
        startup_error,
    }
}

/// The items under `key` of a manager listing, without the `server` each one is tagged
/// with for the model.
fn listed(listing: Option<Value>, key: &str) -> Vec<Value> {
    let Some(Value::Array(items)) = listing.and_then(|mut v| v.get_mut(key).map(Value::take))
    else {
        return Vec::new();
    };
    items
        .into_iter()
        .map(|mut item| {
            if let Value::Object(map) = &mut item {
                map.remove("server");
            }
            item
        })
        .collect()
}
