//! `osprey mcp add | list | get | remove` without their command line: what each does to
//! `<home>/config.toml` and what it prints. The `cli` crate parses the arguments into an
//! [`McpCommand`].

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::Path;

use osprey_config::{McpServerConfig, McpTransport};
use serde_json::{Value, json};

use crate::client::display_command;
use crate::config_edit::{
    NewServer, add_server, config_path, load_servers, remove_server, validate_server_name,
};

/// One `osprey mcp` operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpCommand {
    /// List the configured servers, as tables or (with `json`) as Codex's JSON array.
    List { json: bool },
    /// Show one configured server.
    Get { name: String, json: bool },
    /// Add (or replace) a server.
    Add { name: String, server: NewServer },
    /// Remove a server.
    Remove { name: String },
}

/// Runs `command` against `<home>/config.toml`, writing results to `out` and problems to
/// `err`. Returns the process exit code: 0 on success, 1 on failure.
pub fn run_mcp_command(
    command: McpCommand,
    home: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    match run(command, home, out) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "{message}");
            1
        }
    }
}

fn run(command: McpCommand, home: &Path, out: &mut dyn Write) -> Result<i32, String> {
    let path = config_path(home);
    let io = |e: io::Error| format!("could not write output: {e}");
    match command {
        McpCommand::Add { name, server } => {
            add_server(&path, &name, &server).map_err(|e| e.to_string())?;
            writeln!(out, "Added MCP server `{name}` to {}.", path.display()).map_err(io)?;
            Ok(0)
        }
        McpCommand::Remove { name } => {
            let removed = remove_server(&path, &name).map_err(|e| e.to_string())?;
            if removed {
                writeln!(out, "Removed MCP server `{name}`.").map_err(io)?;
            } else {
                writeln!(out, "No MCP server named `{name}` in {}.", path.display()).map_err(io)?;
            }
            Ok(0)
        }
        McpCommand::List { json } => {
            let servers = load(home)?;
            if json {
                let list: Vec<Value> = servers
                    .iter()
                    .map(|(name, config)| server_json(name, config, false))
                    .collect();
                writeln!(out, "{}", pretty(&Value::Array(list))).map_err(io)?;
            } else if servers.is_empty() {
                writeln!(
                    out,
                    "No MCP servers configured. Add one with `osprey mcp add <name> -- <command>` \
                     or `osprey mcp add <name> --url <url>`."
                )
                .map_err(io)?;
            } else {
                out.write_all(list_tables(&servers).as_bytes())
                    .map_err(io)?;
            }
            Ok(0)
        }
        McpCommand::Get { name, json } => {
            validate_server_name(&name).map_err(|e| e.to_string())?;
            let servers = load(home)?;
            let Some(config) = servers.get(&name) else {
                return Err(format!(
                    "No MCP server named `{name}` in {}; `osprey mcp list` shows the configured ones.",
                    path.display()
                ));
            };
            if json {
                writeln!(out, "{}", pretty(&server_json(&name, config, true))).map_err(io)?;
            } else {
                out.write_all(get_text(&name, config).as_bytes())
                    .map_err(io)?;
            }
            Ok(0)
        }
    }
}

fn load(home: &Path) -> Result<BTreeMap<String, McpServerConfig>, String> {
    load_servers(home, &HashMap::new()).map_err(|e| e.to_string())
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The JSON shape of `codex mcp list --json` entries (and, with `detail`, of `get --json`).
fn server_json(name: &str, config: &McpServerConfig, detail: bool) -> Value {
    let (transport, auth) = match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => (
            json!({
                "type": "stdio",
                "command": command,
                "args": args,
                "env": if env.is_empty() { Value::Null } else { json!(env) },
                "env_vars": [],
                "cwd": cwd.as_ref().map(|p| p.display().to_string()),
            }),
            "unsupported",
        ),
        McpTransport::StreamableHttp {
            url,
            bearer_token_env_var,
            http_headers,
        } => (
            json!({
                "type": "streamable_http",
                "url": url,
                "bearer_token_env_var": bearer_token_env_var,
                "http_headers": if http_headers.is_empty() { Value::Null } else { json!(http_headers) },
                "env_http_headers": null,
            }),
            if bearer_token_env_var.is_some() {
                "bearer_token"
            } else {
                "unsupported"
            },
        ),
    };
    let mut entry = json!({
        "name": name,
        "enabled": config.enabled,
        "disabled_reason": null,
        "transport": transport,
    });
    if detail {
        entry["enabled_tools"] = json!(config.enabled_tools);
        entry["disabled_tools"] = if config.disabled_tools.is_empty() {
            Value::Null
        } else {
            json!(config.disabled_tools)
        };
    }
    entry["startup_timeout_sec"] = json!(config.startup_timeout.as_secs_f64());
    entry["tool_timeout_sec"] = json!(config.tool_timeout.as_secs_f64());
    if !detail {
        entry["auth_status"] = json!(auth);
    }
    entry
}

fn status(config: &McpServerConfig) -> &'static str {
    if config.enabled {
        "enabled"
    } else {
        "disabled"
    }
}

fn masked_env(env: &BTreeMap<String, String>) -> String {
    if env.is_empty() {
        "-".to_owned()
    } else {
        env.keys()
            .map(|k| format!("{k}=*****"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn list_tables(servers: &BTreeMap<String, McpServerConfig>) -> String {
    let mut stdio = vec![["Name", "Command", "Args", "Env", "Cwd", "Status"].map(String::from)];
    let mut http = vec![["Name", "Url", "Bearer Token Env Var", "Status"].map(String::from)];
    for (name, config) in servers {
        match &config.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => stdio.push([
                name.clone(),
                command.clone(),
                if args.is_empty() {
                    "-".to_owned()
                } else {
                    display_command(&args[0], &args[1..])
                },
                masked_env(env),
                cwd.as_ref()
                    .map_or_else(|| "-".to_owned(), |p| p.display().to_string()),
                status(config).to_owned(),
            ]),
            McpTransport::StreamableHttp {
                url,
                bearer_token_env_var,
                ..
            } => http.push([
                name.clone(),
                url.clone(),
                bearer_token_env_var
                    .clone()
                    .unwrap_or_else(|| "-".to_owned()),
                status(config).to_owned(),
            ]),
        }
    }
    let mut text = String::new();
    if stdio.len() > 1 {
        text.push_str(&table(&stdio));
    }
    if http.len() > 1 {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&table(&http));
    }
    text
}

fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0usize; N];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let mut text = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, cell)| format!("{cell:<width$}", width = widths[i]))
            .collect();
        text.push_str(line.join("  ").trim_end());
        text.push('\n');
    }
    text
}

fn get_text(name: &str, config: &McpServerConfig) -> String {
    let mut lines = vec![name.to_owned(), format!("  enabled: {}", config.enabled)];
    match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            lines.push("  transport: stdio".to_owned());
            lines.push(format!("  command: {command}"));
            lines.push(format!(
                "  args: {}",
                if args.is_empty() {
                    "-".to_owned()
                } else {
                    display_command(&args[0], &args[1..])
                }
            ));
            lines.push(format!(
                "  cwd: {}",
                cwd.as_ref()
                    .map_or_else(|| "-".to_owned(), |p| p.display().to_string())
            ));
            lines.push(format!("  env: {}", masked_env(env)));
        }
        McpTransport::StreamableHttp {
            url,
            bearer_token_env_var,
            http_headers,
        } => {
            lines.push("  transport: streamable_http".to_owned());
            lines.push(format!("  url: {url}"));
            lines.push(format!(
                "  bearer_token_env_var: {}",
                bearer_token_env_var.as_deref().unwrap_or("-")
            ));
            lines.push(format!("  http_headers: {}", masked_env(http_headers)));
        }
    }
    if let Some(tools) = &config.enabled_tools {
        lines.push(format!("  enabled_tools: {}", tools.join(", ")));
    }
    if !config.disabled_tools.is_empty() {
        lines.push(format!(
            "  disabled_tools: {}",
            config.disabled_tools.join(", ")
        ));
    }
    lines.push(format!(
        "  startup_timeout_sec: {}",
        config.startup_timeout.as_secs_f64()
    ));
    lines.push(format!(
        "  tool_timeout_sec: {}",
        config.tool_timeout.as_secs_f64()
    ));
    lines.push(format!("  remove: osprey mcp remove {name}"));
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn stdio(name: &str, env: &[(&str, &str)], command: &[&str]) -> McpCommand {
        McpCommand::Add {
            name: name.to_owned(),
            server: NewServer::Stdio {
                command: command[0].to_owned(),
                args: strings(&command[1..]),
                env: env
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            },
        }
    }

    fn list(json: bool) -> McpCommand {
        McpCommand::List { json }
    }

    fn get(name: &str, json: bool) -> McpCommand {
        McpCommand::Get {
            name: name.to_owned(),
            json,
        }
    }

    fn remove(name: &str) -> McpCommand {
        McpCommand::Remove {
            name: name.to_owned(),
        }
    }

    fn run_args(home: &Path, command: McpCommand) -> (i32, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run_mcp_command(command, home, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn add_list_get_remove_round_trip() {
        let home = tempfile::tempdir().unwrap();
        let (code, out, _) = run_args(
            home.path(),
            stdio("docs", &[("A", "1")], &["npx", "-y", "srv", "--flag"]),
        );
        assert_eq!(code, 0);
        assert!(out.starts_with("Added MCP server `docs`"));
        run_args(
            home.path(),
            McpCommand::Add {
                name: "web".to_owned(),
                server: NewServer::Http {
                    url: "https://x.example/mcp".to_owned(),
                    bearer_token_env_var: Some("TOK".to_owned()),
                },
            },
        );

        let (code, out, err) = run_args(home.path(), list(false));
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(
            out,
            "Name  Command  Args           Env      Cwd  Status\n\
             docs  npx      -y srv --flag  A=*****  -    enabled\n\
             \n\
             Name  Url                    Bearer Token Env Var  Status\n\
             web   https://x.example/mcp  TOK                   enabled\n"
        );

        let (_, out, _) = run_args(home.path(), list(true));
        let list: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            list[0],
            json!({
                "name": "docs", "enabled": true, "disabled_reason": null,
                "transport": {"type": "stdio", "command": "npx", "args": ["-y", "srv", "--flag"],
                              "env": {"A": "1"}, "env_vars": [], "cwd": null},
                "startup_timeout_sec": 10.0, "tool_timeout_sec": 60.0, "auth_status": "unsupported"
            })
        );
        assert_eq!(list[1]["transport"]["type"], "streamable_http");
        assert_eq!(list[1]["auth_status"], "bearer_token");

        let (_, out, _) = run_args(home.path(), get("web", true));
        let web: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(web["transport"]["bearer_token_env_var"], "TOK");
        assert_eq!(web["enabled_tools"], Value::Null);

        let (_, out, _) = run_args(home.path(), get("docs", false));
        assert_eq!(
            out,
            "docs\n  enabled: true\n  transport: stdio\n  command: npx\n  args: -y srv --flag\n  \
             cwd: -\n  env: A=*****\n  startup_timeout_sec: 10\n  tool_timeout_sec: 60\n  \
             remove: osprey mcp remove docs\n"
        );

        let (code, _, err) = run_args(home.path(), get("nope", false));
        assert_eq!(code, 1);
        assert!(err.starts_with("No MCP server named `nope`"), "{err}");

        let (code, out, _) = run_args(home.path(), remove("web"));
        assert_eq!((code, out.as_str()), (0, "Removed MCP server `web`.\n"));
        let (code, out, _) = run_args(home.path(), remove("web"));
        assert_eq!(code, 0);
        assert!(out.starts_with("No MCP server named `web`"));
    }

    #[test]
    fn empty_list_says_how_to_add() {
        let home = tempfile::tempdir().unwrap();
        let (code, out, _) = run_args(home.path(), list(false));
        assert_eq!(code, 0);
        assert!(out.starts_with("No MCP servers configured."));
        let (_, out, _) = run_args(home.path(), list(true));
        assert_eq!(out, "[]\n");
    }

    #[test]
    fn broken_entries_are_reported_with_their_location() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join("config.toml"),
            "[mcp_servers.bad]\nurl = \"http://h\"\nargs = []\n",
        )
        .unwrap();
        let (code, _, err) = run_args(home.path(), list(false));
        assert_eq!(code, 1);
        assert!(err.contains("config.toml"), "{err}");
        assert!(err.contains("`args`"), "{err}");
        // Removing the broken entry still works.
        let (code, _, _) = run_args(home.path(), remove("bad"));
        assert_eq!(code, 0);
        let (code, _, _) = run_args(home.path(), list(false));
        assert_eq!(code, 0);
    }
}
