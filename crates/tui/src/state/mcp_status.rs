//! `/mcp`: the rows of the MCP servers cell, from `mcpServerStatus/list` — each server's
//! state (running, failed to start and why, disabled) and the tools it offers.

use osprey_app_server_protocol::{McpAuthStatus, McpServerStatus};

/// One `label: value` row per server, the server's name as the label.
pub fn server_rows(servers: &[McpServerStatus]) -> Vec<(String, String)> {
    if servers.is_empty() {
        return vec![(
            "Servers".to_owned(),
            "none configured (add one with `osprey mcp add`)".to_owned(),
        )];
    }
    servers
        .iter()
        .map(|s| (s.name.clone(), describe(s)))
        .collect()
}

fn describe(server: &McpServerStatus) -> String {
    if !server.enabled {
        return "disabled (enabled = false in its [mcp_servers] entry)".to_owned();
    }
    if let Some(reason) = &server.startup_error {
        return format!("failed to start: {reason}");
    }
    let mut names: Vec<&str> = server.tools.keys().map(String::as_str).collect();
    names.sort_unstable();
    let auth = match server.auth_status {
        McpAuthStatus::BearerToken => " · bearer token",
        McpAuthStatus::OAuth => " · OAuth",
        McpAuthStatus::NotLoggedIn => " · not logged in",
        McpAuthStatus::Unsupported => "",
    };
    let count = match names.len() {
        0 => "no tools".to_owned(),
        1 => "1 tool".to_owned(),
        n => format!("{n} tools"),
    };
    let mut text = format!("running · {count}{auth}");
    if !names.is_empty() {
        text.push('\n');
        text.push_str(&names.join(", "));
    }
    text
}
