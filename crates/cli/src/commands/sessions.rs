//! `osprey sessions list`: recent threads, newest first.

use clap::{Args, Subcommand};
use osprey_config::{EnvSnapshot, find_osprey_home};
use osprey_rollout::{ListOptions, list_sessions};
use std::io::Write;

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List recorded sessions, newest first.
    List(ListArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only sessions started in the current directory.
    #[arg(long)]
    cwd: bool,
    /// Print JSON (one array) instead of a table.
    #[arg(long)]
    json: bool,
    /// At most this many sessions.
    #[arg(long, default_value_t = 50)]
    limit: usize,
}

pub fn run(command: SessionsCommand) -> i32 {
    let SessionsCommand::List(args) = command;
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            let _ = writeln!(err, "Error: cannot read the current directory: {e}");
            return 1;
        }
    };
    let home = match find_osprey_home(&EnvSnapshot::from_process(), &cwd) {
        Ok(home) => home,
        Err(e) => {
            let _ = writeln!(err, "Error: {e}");
            return 1;
        }
    };
    let options = ListOptions {
        cwd: args.cwd.then(|| cwd.canonicalize().unwrap_or(cwd.clone())),
        limit: Some(args.limit),
    };
    let sessions = match list_sessions(&home, &options) {
        Ok(sessions) => sessions,
        Err(e) => {
            let _ = writeln!(err, "Error: {e}");
            return 1;
        }
    };
    let written = if args.json {
        let rows: Vec<serde_json::Value> = sessions
            .iter()
            .map(|s| {
                serde_json::json!({
                    "id": s.id.to_string(),
                    "timestamp": s.timestamp,
                    "cwd": s.cwd,
                    "first_user_message": s.first_user_message,
                    "model_provider": s.model_provider,
                    "forked_from_id": s.forked_from_id.map(|id| id.to_string()),
                    "path": s.path,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::Value::Array(rows))
    } else if sessions.is_empty() {
        writeln!(
            err,
            "No sessions under {}",
            osprey_rollout::sessions_dir(&home).display()
        )
    } else {
        let mut result = Ok(());
        for s in &sessions {
            let prompt = s
                .first_user_message
                .as_deref()
                .unwrap_or("")
                .replace('\n', " ");
            let prompt: String = prompt.chars().take(60).collect();
            result = result.and(writeln!(
                out,
                "{}  {}  {}  {}",
                s.id,
                s.timestamp,
                s.cwd.display(),
                prompt
            ));
        }
        result
    };
    i32::from(written.is_err())
}
