//! Forking: a new thread that starts as a copy of (the beginning of) another.

use crate::error::{Result, RolloutError};
use crate::format::{RolloutItem, RolloutLine, SessionMeta, format_timestamp};
use crate::paths::rollout_path;
use crate::reader::read_rollout;
use chrono::Utc;
use osprey_protocol::ThreadId;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Copies the thread in `source` into a new rollout file for thread `new_id` and returns its
/// path. The header is the source's with the new id, the current time and `forked_from_id`
/// set to the source thread; then come the source's records before turn `before_turn`
/// (counting from 0, see [`crate::RolloutContents::history_before_turn`]), or all of them
/// for `None`. Resume the new file with [`crate::RolloutRecorder::resume`] to continue it.
pub fn fork_rollout(
    home: &Path,
    source: &Path,
    before_turn: Option<usize>,
    new_id: ThreadId,
) -> Result<PathBuf> {
    let contents = read_rollout(source)?;
    let lines = match before_turn {
        None => &contents.lines[..],
        Some(turn) => {
            contents
                .history_before_turn(turn)
                .ok_or_else(|| RolloutError::NoSuchTurn {
                    path: source.to_path_buf(),
                    turn,
                    available: contents.turn_contexts().len(),
                })?
        }
    };
    let now = Utc::now();
    let meta = SessionMeta {
        id: new_id,
        forked_from_id: Some(contents.meta.id),
        timestamp: format_timestamp(now),
        ..contents.meta.clone()
    };
    let path = rollout_path(home, now, &new_id);
    let encode = |source| RolloutError::Encode {
        path: path.clone(),
        source,
    };
    // A numbered (Codex "paginated") source stays numbered, from 0 at the new header.
    let numbered = contents.last_ordinal.is_some();
    let mut out = Vec::new();
    let mut header = RolloutLine::new(format_timestamp(now), RolloutItem::SessionMeta(meta));
    header.ordinal = numbered.then_some(0);
    header.write_to(&mut out).map_err(encode)?;
    for (n, line) in (1u64..).zip(lines) {
        if numbered {
            let mut line = line.clone();
            line.ordinal = Some(n);
            line.write_to(&mut out).map_err(encode)?;
        } else {
            line.write_to(&mut out).map_err(encode)?;
        }
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)
            .map_err(|e| RolloutError::io("create the sessions folder", dir, e))?;
    }
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| RolloutError::io("create the forked session file", &path, e))?;
    file.write_all(&out)
        .and_then(|()| file.sync_data())
        .map_err(|e| RolloutError::io("write the forked session file", &path, e))?;
    Ok(path)
}
