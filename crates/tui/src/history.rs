//! Sent messages kept across sessions, in Codex's format: `$OSPREY_HOME/history.jsonl`, one
//! `{"session_id", "ts", "text"}` object a line, appended as messages are sent. The newest
//! [`LOADED`] are loaded into the composer's Up/Down and Ctrl+R history at start.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How many entries are loaded at start.
pub const LOADED: usize = 1000;

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    session_id: String,
    ts: i64,
    text: String,
}

/// `$OSPREY_HOME/history.jsonl`, next to the user's config.toml.
pub fn path(env: &HashMap<String, String>) -> Option<PathBuf> {
    crate::settings::config_path(env)
        .and_then(|config| config.parent().map(|dir| dir.join("history.jsonl")))
}

/// The newest entries' texts, oldest first; unreadable lines are skipped.
pub fn load(path: &std::path::Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut entries: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Entry>(line).ok())
        .map(|e| e.text)
        .collect();
    if entries.len() > LOADED {
        entries.drain(..entries.len() - LOADED);
    }
    entries
}

/// Appends one sent message.
pub fn append(
    path: &std::path::Path,
    session_id: &str,
    ts: i64,
    text: &str,
) -> std::io::Result<()> {
    let line = serde_json::to_string(&Entry {
        session_id: session_id.to_owned(),
        ts,
        text: text.to_owned(),
    })
    .map_err(std::io::Error::other)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_messages_load_back_oldest_first_and_bad_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        append(&path, "s1", 1, "first").unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"not json\n")
            .unwrap();
        append(&path, "s1", 2, "second\nwith a newline").unwrap();
        assert_eq!(load(&path), vec!["first", "second\nwith a newline"]);
    }
}
