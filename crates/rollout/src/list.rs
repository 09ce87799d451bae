//! Listing threads, newest first, without reading whole files.
//!
//! File names give creation time and id, so ordering needs only directory listings. What a
//! listing shows beyond that (working directory, first prompt, provider) sits in each file's
//! first lines; those are read once and remembered in `sessions/index.jsonl`, a cache keyed by
//! the file's path under `sessions/`. The rollout files stay the source of truth: an index
//! that is missing, unreadable or from another version is rebuilt without a word, files it
//! does not know are read and added, and entries whose files are gone are dropped.
//!
//! An entry is final once it has a first user message (a header never changes after that);
//! an entry without one is re-read when its file's size changes.

use crate::error::Result;
use crate::format::{Envelope, SessionMeta};
use crate::paths::{RolloutFile, rollout_files_newest_first, sessions_dir};
use crate::reader::typed_user_text;
use osprey_protocol::{ResponseItem, ThreadId};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// The cache file under `sessions/`.
pub const INDEX_FILE: &str = "index.jsonl";
const INDEX_VERSION: u32 = 1;
/// At most this much of a file (after the header) is read looking for its first user message.
const MAX_HEADER_BYTES: u64 = 1024 * 1024;
/// The header line may be longer: it carries the base instructions.
const MAX_META_BYTES: u64 = 16 * 1024 * 1024;
/// Longest first-message preview, in characters.
const PREVIEW_CHARS: usize = 200;

/// What to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Only threads whose header `cwd` equals this path exactly.
    pub cwd: Option<PathBuf>,
    /// At most this many threads (`None`: all).
    pub limit: Option<usize>,
}

/// One thread in a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: ThreadId,
    /// Creation time from the header, UTC.
    pub timestamp: String,
    pub cwd: PathBuf,
    /// The first message the user typed, trimmed, at most 200 characters (cut ones end in
    /// `…`). `None` until the user has said something.
    pub first_user_message: Option<String>,
    pub path: PathBuf,
    pub model_provider: Option<String>,
    /// Set when the thread is a fork of another.
    pub forked_from_id: Option<ThreadId>,
}

/// Threads under `$home/sessions`, newest first. Files that cannot be read as rollouts are
/// left out (and logged at debug level). Listing stops reading as soon as `limit` matches are
/// found. Writing the index is best effort: a read-only home still lists.
pub fn list_sessions(home: &Path, options: &ListOptions) -> Result<Vec<SessionSummary>> {
    let files = rollout_files_newest_first(home)?;
    let sessions = sessions_dir(home);
    let index_path = sessions.join(INDEX_FILE);
    let (mut index, mut changed) = match load_index(&index_path) {
        Some(index) => (index, false),
        None => (HashMap::new(), true),
    };
    let limit = options.limit.unwrap_or(usize::MAX);
    let mut found = Vec::new();
    let mut complete_walk = true;
    for file in &files {
        if found.len() >= limit {
            complete_walk = false;
            break;
        }
        let key = index_key(&sessions, &file.path);
        if fresh_entry(&index, &key, file).is_none() {
            match read_entry(file) {
                Some(entry) => {
                    index.insert(key.clone(), entry);
                    changed = true;
                }
                None => {
                    changed |= index.remove(&key).is_some();
                    continue;
                }
            }
        }
        if let Some(entry) = index.get(&key)
            && let Some(summary) = summarise(entry, file, options)
        {
            found.push(summary);
        }
    }
    if complete_walk {
        let present: HashSet<String> = files
            .iter()
            .map(|file| index_key(&sessions, &file.path))
            .collect();
        let before = index.len();
        index.retain(|key, _| present.contains(key));
        changed |= index.len() != before;
    }
    if changed && let Err(e) = save_index(&index_path, &index) {
        tracing::debug!(path = %index_path.display(), error = %e, "could not write the session index");
    }
    Ok(found)
}

/// The newest thread's rollout file (by creation time), optionally only among threads
/// started in `cwd`. This is what `resume --last` opens.
pub fn find_latest_rollout(home: &Path, cwd: Option<&Path>) -> Result<Option<PathBuf>> {
    let options = ListOptions {
        cwd: cwd.map(Path::to_path_buf),
        limit: Some(1),
    };
    Ok(list_sessions(home, &options)?
        .into_iter()
        .next()
        .map(|summary| summary.path))
}

/// One remembered file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IndexEntry {
    /// Path under `sessions/`, `/`-separated.
    key: String,
    /// File size when read; decides whether an entry without a first message is stale.
    size: u64,
    id: ThreadId,
    timestamp: String,
    cwd: PathBuf,
    #[serde(default)]
    first_user_message: Option<String>,
    #[serde(default)]
    model_provider: Option<String>,
    #[serde(default)]
    forked_from_id: Option<ThreadId>,
}

#[derive(Serialize, Deserialize)]
struct IndexHeader {
    osprey_session_index: u32,
}

fn index_key(sessions: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(sessions).unwrap_or(path);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn fresh_entry<'a>(
    index: &'a HashMap<String, IndexEntry>,
    key: &str,
    file: &RolloutFile,
) -> Option<&'a IndexEntry> {
    let entry = index.get(key)?;
    if entry.id != file.id {
        return None;
    }
    if entry.first_user_message.is_some() {
        return Some(entry);
    }
    let size = fs::metadata(&file.path).ok()?.len();
    (size == entry.size).then_some(entry)
}

fn summarise(
    entry: &IndexEntry,
    file: &RolloutFile,
    options: &ListOptions,
) -> Option<SessionSummary> {
    if let Some(cwd) = &options.cwd
        && *cwd != entry.cwd
    {
        return None;
    }
    Some(SessionSummary {
        id: entry.id,
        timestamp: entry.timestamp.clone(),
        cwd: entry.cwd.clone(),
        first_user_message: entry.first_user_message.clone(),
        path: file.path.clone(),
        model_provider: entry.model_provider.clone(),
        forked_from_id: entry.forked_from_id,
    })
}

/// Reads a file's header and its lines up to the first typed user message.
fn read_entry(file: &RolloutFile) -> Option<IndexEntry> {
    let handle = match File::open(&file.path) {
        Ok(handle) => handle,
        Err(e) => {
            tracing::debug!(path = %file.path.display(), error = %e, "unreadable rollout skipped");
            return None;
        }
    };
    let size = handle.metadata().ok()?.len();
    let mut reader = BufReader::with_capacity(64 * 1024, handle);
    let mut line = String::new();
    // The header holds the base instructions, so it gets a budget of its own.
    (&mut reader)
        .take(MAX_META_BYTES)
        .read_line(&mut line)
        .ok()?;
    let meta = match header_meta(&line) {
        Some(meta) => meta,
        None => {
            tracing::debug!(path = %file.path.display(), "file without a session header skipped");
            return None;
        }
    };
    let mut first_user_message = None;
    let mut budget = MAX_HEADER_BYTES;
    loop {
        line.clear();
        let read = match (&mut reader).take(budget).read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(read) => read as u64,
        };
        if !line.ends_with('\n') {
            break;
        }
        budget = budget.saturating_sub(read);
        if let Some(text) = user_text_of_line(&line) {
            first_user_message = Some(preview(&text));
            break;
        }
    }
    Some(IndexEntry {
        key: String::new(),
        size,
        id: meta.id,
        timestamp: meta.timestamp,
        cwd: meta.cwd,
        first_user_message,
        model_provider: meta.model_provider,
        forked_from_id: meta.forked_from_id,
    })
}

fn header_meta(line: &str) -> Option<SessionMeta> {
    let envelope = Envelope::parse(line.trim()).ok()?;
    if envelope.kind != "session_meta" {
        return None;
    }
    serde_json::from_value(envelope.payload).ok()
}

fn user_text_of_line(line: &str) -> Option<String> {
    // Cheap text test first: most lines are not user messages.
    if !line.contains("\"response_item\"") || !line.contains("\"user\"") {
        return None;
    }
    let envelope = Envelope::parse(line.trim()).ok()?;
    if envelope.kind != "response_item" {
        return None;
    }
    let item: ResponseItem = serde_json::from_value(envelope.payload).ok()?;
    typed_user_text(&item)
}

fn preview(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(PREVIEW_CHARS) {
        None => text.to_string(),
        Some(_) => {
            let cut = text
                .char_indices()
                .nth(PREVIEW_CHARS - 1)
                .map_or(text.len(), |(i, _)| i);
            format!("{}…", text[..cut].trim_end())
        }
    }
}

/// The index's entries by key, or `None` if it is missing, unreadable or from another
/// version (any of which means: rebuild).
fn load_index(path: &Path) -> Option<HashMap<String, IndexEntry>> {
    let text = fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: IndexHeader = serde_json::from_str(lines.next()?).ok()?;
    if header.osprey_session_index != INDEX_VERSION {
        return None;
    }
    let mut index = HashMap::new();
    for line in lines {
        let entry: IndexEntry = serde_json::from_str(line).ok()?;
        index.insert(entry.key.clone(), entry);
    }
    Some(index)
}

/// Writes the index to a temporary file and renames it into place, so a reader never sees a
/// half-written index and concurrent writers simply replace each other's complete work.
fn save_index(path: &Path, index: &HashMap<String, IndexEntry>) -> std::io::Result<()> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    fs::create_dir_all(dir)?;
    let mut out = Vec::with_capacity(index.len() * 256);
    serde_json::to_writer(
        &mut out,
        &IndexHeader {
            osprey_session_index: INDEX_VERSION,
        },
    )?;
    out.push(b'\n');
    let mut keys: Vec<&String> = index.keys().collect();
    keys.sort();
    for key in keys {
        let mut entry = index[key].clone();
        entry.key.clone_from(key);
        serde_json::to_writer(&mut out, &entry)?;
        out.push(b'\n');
    }
    let tmp = dir.join(format!(
        ".{INDEX_FILE}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::now_v7().simple()
    ));
    let written = File::create(&tmp).and_then(|mut file| file.write_all(&out));
    match written.and_then(|()| fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_are_trimmed_and_capped_in_characters() {
        assert_eq!(preview("  hi  "), "hi");
        let long = "é".repeat(300);
        let cut = preview(&long);
        assert_eq!(cut.chars().count(), PREVIEW_CHARS);
        assert!(cut.ends_with('…'));
        let exact = "a".repeat(PREVIEW_CHARS);
        assert_eq!(preview(&exact), exact);
    }
}
