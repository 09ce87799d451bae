//! `osprey mcp add | list | get | remove`: the clap definitions and their execution, so the
//! binary only dispatches.

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::Path;

use clap::{ArgGroup, Args, Parser, Subcommand};
use osprey_config::{McpServerConfig, McpTransport};
use serde_json::{Value, json};

use crate::client::display_command;
use crate::config_edit::{
    NewServer, add_server, config_path, load_servers, remove_server, validate_server_name,
};

/// Manage the MCP servers Osprey connects to (`[mcp_servers]` in config.toml).
#[derive(Debug, Parser)]
#[command(name = "mcp")]
pub struct McpCli {
    #[command(subcommand)]
    pub command: McpSubcommand,
}

#[derive(Debug, Subcommand)]
pub enum McpSubcommand {
    /// List the configured MCP servers.
    List(ListArgs),
    /// Show one configured MCP server.
    Get(GetArgs),
    /// Add (or replace) an MCP server: a command to launch, or a streamable-HTTP URL.
    Add(AddArgs),
    /// Remove an MCP server.
    Remove(RemoveArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the servers as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// The server's name.
    pub name: String,
    /// Print the server as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("transport").required(true).args(["url", "command"])))]
pub struct AddArgs {
    /// Name for the server (letters, digits, `-`, `_`).
    pub name: String,
    /// Environment variable for a launched server (repeatable).
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env_pair, conflicts_with = "url")]
    pub env: Vec<(String, String)>,
    /// URL of a streamable-HTTP server.
    #[arg(long)]
    pub url: Option<String>,
    /// Environment variable holding a bearer token for the HTTP server.
    #[arg(
        long,
        value_name = "ENV_VAR",
        requires = "url",
        conflicts_with = "command"
    )]
    pub bearer_token_env_var: Option<String>,
    /// Command (and arguments) that starts a stdio server, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    /// The server's name.
    pub name: String,
}

fn parse_env_pair(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err("expected KEY=VALUE".to_owned()),
    }
}

/// Runs `cli` against `<home>/config.toml`, writing results to `out` and problems to `err`.
/// Returns the process exit code: 0 on success, 1 on failure.
pub fn run_mcp_command(cli: McpCli, home: &Path, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match run(cli, home, out) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(err, "{message}");
            1
        }
    }
}

fn run(cli: McpCli, home: &Path, out: &mut dyn Write) -> Result<i32, String> {
    let path = config_path(home);
    let io = |e: io::Error| format!("could not write output: {e}");
    match cli.command {
        McpSubcommand::Add(args) => {
            let server = if let Some(url) = args.url {
                NewServer::Http {
                    url,
                    bearer_token_env_var: args.bearer_token_env_var,
                }
            } else {
                let mut parts = args.command.into_iter();
                let command = parts
                    .next()
                    .ok_or("give the command to launch after `--`, or --url")?;
                NewServer::Stdio {
                    command,
                    args: parts.collect(),
                    env: args.env.into_iter().collect(),
                }
            };
            add_server(&path, &args.name, &server).map_err(|e| e.to_string())?;
            writeln!(
                out,
                "Added MCP server `{}` to {}.",
                args.name,
                path.display()
            )
            .map_err(io)?;
            Ok(0)
        }
        McpSubcommand::Remove(args) => {
            let removed = remove_server(&path, &args.name).map_err(|e| e.to_string())?;
            if removed {
                writeln!(out, "Removed MCP server `{}`.", args.name).map_err(io)?;
            } else {
                writeln!(
                    out,
                    "No MCP server named `{}` in {}.",
                    args.name,
                    path.display()
                )
                .map_err(io)?;
            }
            Ok(0)
        }
        McpSubcommand::List(args) => {
            let servers = load(home)?;
            if args.json {
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
        McpSubcommand::Get(args) => {
            validate_server_name(&args.name).map_err(|e| e.to_string())?;
            let servers = load(home)?;
            let Some(config) = servers.get(&args.name) else {
                return Err(format!(
                    "No MCP server named `{}` in {}; `osprey mcp list` shows the configured ones.",
                    args.name,
                    path.display()
                ));
            };
            if args.json {
                writeln!(out, "{}", pretty(&server_json(&args.name, config, true))).map_err(io)?;
            } else {
                out.write_all(get_text(&args.name, config).as_bytes())
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

    fn parse(args: &[&str]) -> Result<McpCli, clap::Error> {
        McpCli::try_parse_from(std::iter::once("mcp").chain(args.iter().copied()))
    }

    fn run_args(home: &Path, args: &[&str]) -> (i32, String, String) {
        let cli = parse(args).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run_mcp_command(cli, home, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn add_requires_exactly_one_transport() {
        assert!(parse(&["add", "x"]).is_err());
        assert!(parse(&["add", "x", "--url", "http://h", "--", "cmd"]).is_err());
        assert!(parse(&["add", "x", "--bearer-token-env-var", "T", "--", "cmd"]).is_err());
        assert!(parse(&["add", "x", "--env", "A=1", "--url", "http://h"]).is_err());
        assert!(parse(&["add", "x", "--env", "novalue", "--", "cmd"]).is_err());
        let McpSubcommand::Add(add) =
            parse(&["add", "x", "--env", "A=1=2", "--", "npx", "-y", "s"])
                .unwrap()
                .command
        else {
            panic!("expected add");
        };
        assert_eq!(add.command, vec!["npx", "-y", "s"]);
        assert_eq!(add.env, vec![("A".to_owned(), "1=2".to_owned())]);
    }

    #[test]
    fn add_list_get_remove_round_trip() {
        let home = tempfile::tempdir().unwrap();
        let (code, out, _) = run_args(
            home.path(),
            &[
                "add", "docs", "--env", "A=1", "--", "npx", "-y", "srv", "--flag",
            ],
        );
        assert_eq!(code, 0);
        assert!(out.starts_with("Added MCP server `docs`"));
        run_args(
            home.path(),
            &[
                "add",
                "web",
                "--url",
                "https://x.example/mcp",
                "--bearer-token-env-var",
                "TOK",
            ],
        );

        let (code, out, err) = run_args(home.path(), &["list"]);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(
            out,
            "Name  Command  Args           Env      Cwd  Status\n\
             docs  npx      -y srv --flag  A=*****  -    enabled\n\
             \n\
             Name  Url                    Bearer Token Env Var  Status\n\
             web   https://x.example/mcp  TOK                   enabled\n"
        );

        let (_, out, _) = run_args(home.path(), &["list", "--json"]);
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

        let (_, out, _) = run_args(home.path(), &["get", "web", "--json"]);
        let web: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(web["transport"]["bearer_token_env_var"], "TOK");
        assert_eq!(web["enabled_tools"], Value::Null);

        let (_, out, _) = run_args(home.path(), &["get", "docs"]);
        assert_eq!(
            out,
            "docs\n  enabled: true\n  transport: stdio\n  command: npx\n  args: -y srv --flag\n  \
             cwd: -\n  env: A=*****\n  startup_timeout_sec: 10\n  tool_timeout_sec: 60\n  \
             remove: osprey mcp remove docs\n"
        );

        let (code, _, err) = run_args(home.path(), &["get", "nope"]);
        assert_eq!(code, 1);
        assert!(err.starts_with("No MCP server named `nope`"), "{err}");

        let (code, out, _) = run_args(home.path(), &["remove", "web"]);
        assert_eq!((code, out.as_str()), (0, "Removed MCP server `web`.\n"));
        let (code, out, _) = run_args(home.path(), &["remove", "web"]);
        assert_eq!(code, 0);
        assert!(out.starts_with("No MCP server named `web`"));
    }

    #[test]
    fn empty_list_says_how_to_add() {
        let home = tempfile::tempdir().unwrap();
        let (code, out, _) = run_args(home.path(), &["list"]);
        assert_eq!(code, 0);
        assert!(out.starts_with("No MCP servers configured."));
        let (_, out, _) = run_args(home.path(), &["list", "--json"]);
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
        let (code, _, err) = run_args(home.path(), &["list"]);
        assert_eq!(code, 1);
        assert!(err.contains("config.toml"), "{err}");
        assert!(err.contains("`args`"), "{err}");
        // Removing the broken entry still works.
        let (code, _, _) = run_args(home.path(), &["remove", "bad"]);
        assert_eq!(code, 0);
        let (code, _, _) = run_args(home.path(), &["list"]);
        assert_eq!(code, 0);
    }
}
