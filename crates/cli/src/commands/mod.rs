//! The subcommands' command lines, one module each. Each module holds the clap structs and
//! a `run` that turns them into the plain request of the library crate that does the work
//! (`osprey-mcp`, `osprey-local-model`, `osprey-sandboxing`, `osprey-execpolicy`,
//! `osprey-rollout`): library crates do not parse command lines.

pub mod app_server;
pub mod completion;
pub mod exec_server;
pub mod execpolicy;
pub mod mcp;
pub mod model;
pub mod sandbox;
pub mod sessions;
pub mod tui;

use std::path::PathBuf;

/// The Osprey home for this process (`$OSPREY_HOME` or `~/.osprey`), or why it cannot be
/// found.
pub fn osprey_home() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env = osprey_config::EnvSnapshot::from_process();
    osprey_config::find_osprey_home(&env, &cwd).map_err(|e| e.to_string())
}
