//! `osprey mcp add | list | get | remove`: the command line; `osprey-mcp` edits
//! `config.toml` and prints.

use std::io::Write;

use clap::{ArgGroup, Args, Parser, Subcommand};
use osprey_mcp::McpCommand;
use osprey_mcp::config_edit::NewServer;

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

impl McpSubcommand {
    /// The plain operation these arguments describe, or what is missing.
    pub fn into_command(self) -> Result<McpCommand, String> {
        Ok(match self {
            McpSubcommand::List(args) => McpCommand::List { json: args.json },
            McpSubcommand::Get(args) => McpCommand::Get {
                name: args.name,
                json: args.json,
            },
            McpSubcommand::Remove(args) => McpCommand::Remove { name: args.name },
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
                McpCommand::Add {
                    name: args.name,
                    server,
                }
            }
        })
    }
}

/// Runs `osprey mcp …` against the Osprey home's `config.toml`.
pub fn run(cli: McpCli) -> i32 {
    let mut err = std::io::stderr();
    let command = match cli.command.into_command() {
        Ok(command) => command,
        Err(message) => {
            let _ = writeln!(err, "{message}");
            return 1;
        }
    };
    match super::osprey_home() {
        Ok(home) => osprey_mcp::run_mcp_command(command, &home, &mut std::io::stdout(), &mut err),
        Err(message) => {
            let _ = writeln!(err, "Error: {message}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(args: &[&str]) -> Result<McpCommand, String> {
        McpCli::try_parse_from(std::iter::once("mcp").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?
            .command
            .into_command()
    }

    #[test]
    fn add_requires_exactly_one_transport() {
        assert!(parse(&["add", "x"]).is_err());
        assert!(parse(&["add", "x", "--url", "http://h", "--", "cmd"]).is_err());
        assert!(parse(&["add", "x", "--bearer-token-env-var", "T", "--", "cmd"]).is_err());
        assert!(parse(&["add", "x", "--env", "A=1", "--url", "http://h"]).is_err());
        assert!(parse(&["add", "x", "--env", "novalue", "--", "cmd"]).is_err());
        assert_eq!(
            parse(&["add", "x", "--env", "A=1=2", "--", "npx", "-y", "s"]).unwrap(),
            McpCommand::Add {
                name: "x".to_owned(),
                server: NewServer::Stdio {
                    command: "npx".to_owned(),
                    args: vec!["-y".to_owned(), "s".to_owned()],
                    env: [("A".to_owned(), "1=2".to_owned())].into_iter().collect(),
                },
            }
        );
        assert_eq!(
            parse(&[
                "add",
                "w",
                "--url",
                "http://h",
                "--bearer-token-env-var",
                "T"
            ])
            .unwrap(),
            McpCommand::Add {
                name: "w".to_owned(),
                server: NewServer::Http {
                    url: "http://h".to_owned(),
                    bearer_token_env_var: Some("T".to_owned()),
                },
            }
        );
    }

    #[test]
    fn list_get_remove_carry_their_arguments() {
        assert_eq!(parse(&["list"]).unwrap(), McpCommand::List { json: false });
        assert_eq!(
            parse(&["list", "--json"]).unwrap(),
            McpCommand::List { json: true }
        );
        assert_eq!(
            parse(&["get", "docs", "--json"]).unwrap(),
            McpCommand::Get {
                name: "docs".to_owned(),
                json: true
            }
        );
        assert_eq!(
            parse(&["remove", "docs"]).unwrap(),
            McpCommand::Remove {
                name: "docs".to_owned()
            }
        );
    }
}
