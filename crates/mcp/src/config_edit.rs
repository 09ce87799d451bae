//! Adding, removing and reading `[mcp_servers.<name>]` entries of a `config.toml`.
//!
//! Edits go through `osprey_config::edit`, which keeps the rest of the file — comments, key
//! order, blank lines — as the user wrote it and replaces the file atomically. An entry is
//! written as one table, so `add` over an existing name replaces the whole entry (no stale
//! `url` left next to a new `command`). Reading goes through the full configuration loader,
//! so `list` and `get` show exactly what a session would use, and a broken entry is reported
//! with its file and line.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use osprey_config::{
    CONFIG_FILE_NAME, ConfigBuilder, ConfigError, EnvSnapshot, McpServerConfig, env_vars,
};
use toml_edit::{Array, Item, Table, value};

/// What `osprey mcp add` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewServer {
    /// A launched server: `command args…`, with extra environment variables.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// A streamable-HTTP server.
    Http {
        url: String,
        bearer_token_env_var: Option<String>,
    },
}

/// A failed `osprey mcp` configuration operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpConfigError {
    #[error(
        "`{name}` is not a valid MCP server name: use letters, digits, `-` and `_` (it becomes \
         part of tool names)"
    )]
    InvalidName { name: String },
    #[error("{0}")]
    Config(#[from] ConfigError),
}

/// `<home>/config.toml`.
pub fn config_path(home: &Path) -> PathBuf {
    home.join(CONFIG_FILE_NAME)
}

/// Checks that `name` is usable as a server name (`[A-Za-z0-9_-]+`).
pub fn validate_server_name(name: &str) -> Result<(), McpConfigError> {
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(McpConfigError::InvalidName {
            name: name.to_owned(),
        })
    }
}

/// Writes `[mcp_servers.<name>]` into the file at `config_path`, replacing an entry of the same
/// name and creating the file when needed.
pub fn add_server(
    config_path: &Path,
    name: &str,
    server: &NewServer,
) -> Result<(), McpConfigError> {
    validate_server_name(name)?;
    let mut table = Table::new();
    match server {
        NewServer::Stdio { command, args, env } => {
            table.insert("command", value(command.as_str()));
            if !args.is_empty() {
                let mut array = Array::new();
                for arg in args {
                    array.push(arg.as_str());
                }
                table.insert("args", value(array));
            }
            if !env.is_empty() {
                let mut env_table = Table::new();
                for (key, val) in env {
                    env_table.insert(key, value(val.as_str()));
                }
                table.insert("env", Item::Table(env_table));
            }
        }
        NewServer::Http {
            url,
            bearer_token_env_var,
        } => {
            table.insert("url", value(url.as_str()));
            if let Some(var) = bearer_token_env_var {
                table.insert("bearer_token_env_var", value(var.as_str()));
            }
        }
    }
    osprey_config::edit::set_value(config_path, &entry_key(name), Item::Table(table))?;
    Ok(())
}

/// Removes `[mcp_servers.<name>]`; returns whether it existed.
pub fn remove_server(config_path: &Path, name: &str) -> Result<bool, McpConfigError> {
    validate_server_name(name)?;
    Ok(osprey_config::edit::remove_value(
        config_path,
        &entry_key(name),
    )?)
}

/// The MCP servers a session with `home` as `$OSPREY_HOME` would see (user file and managed
/// requirements; no project layer, no `-c` overrides). `env` supplies the variables the loader
/// consults, such as `HOME`.
pub fn load_servers(
    home: &Path,
    env: &HashMap<String, String>,
) -> Result<BTreeMap<String, McpServerConfig>, McpConfigError> {
    let snapshot = EnvSnapshot::from_pairs(
        env.iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .chain([(env_vars::OSPREY_HOME.to_owned(), home.display().to_string())]),
    );
    let loaded = ConfigBuilder::new(snapshot).process_cwd(home).build()?;
    Ok(loaded.config.mcp_servers)
}

fn entry_key(name: &str) -> String {
    format!("mcp_servers.{name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn add_keeps_comments_and_replace_drops_stale_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = config_path(dir.path());
        std::fs::write(
            &path,
            "# my settings\nmodel = \"o3\" # fast\n\n[mcp_servers.docs]\nurl = \"https://old\"\n",
        )
        .unwrap();
        add_server(
            &path,
            "docs",
            &NewServer::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "srv".into()],
                env: BTreeMap::from([("A".into(), "1".into())]),
            },
        )
        .unwrap();
        add_server(
            &path,
            "web",
            &NewServer::Http {
                url: "https://x.example/mcp".into(),
                bearer_token_env_var: Some("TOK".into()),
            },
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# my settings\nmodel = \"o3\" # fast\n\n[mcp_servers.docs]\ncommand = \"npx\"\n\
             args = [\"-y\", \"srv\"]\n\n[mcp_servers.docs.env]\nA = \"1\"\n\n\
             [mcp_servers.web]\nurl = \"https://x.example/mcp\"\nbearer_token_env_var = \"TOK\"\n"
        );
        assert!(remove_server(&path, "docs").unwrap());
        assert!(!remove_server(&path, "docs").unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my settings\nmodel = \"o3\" # fast\n"));
        assert!(!text.contains("docs"));
    }

    #[test]
    fn names_are_validated() {
        assert!(validate_server_name("my-server_2").is_ok());
        for bad in ["", "a.b", "a b", "ü"] {
            assert!(validate_server_name(bad).is_err(), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let err = remove_server(&config_path(dir.path()), "a.b").unwrap_err();
        assert!(err.to_string().contains("not a valid MCP server name"));
    }
}
