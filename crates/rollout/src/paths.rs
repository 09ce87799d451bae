//! Where rollout files live and how they are named.
//!
//! `$OSPREY_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<thread id>.jsonl`, all in
//! UTC. The name alone gives a file's creation time and thread, so finding and ordering files
//! needs directory listings only, never a read or a `stat`.

use crate::error::{Result, RolloutError};
use chrono::{DateTime, Datelike, Utc};
use osprey_protocol::ThreadId;
use std::fs;
use std::path::{Path, PathBuf};

/// The folder under the home that holds every rollout file.
pub const SESSIONS_DIR: &str = "sessions";

/// `$home/sessions`.
pub fn sessions_dir(home: &Path) -> PathBuf {
    home.join(SESSIONS_DIR)
}

/// The file a thread created at `at` is written to.
pub fn rollout_path(home: &Path, at: DateTime<Utc>, id: &ThreadId) -> PathBuf {
    sessions_dir(home)
        .join(format!("{:04}", at.year()))
        .join(format!("{:02}", at.month()))
        .join(format!("{:02}", at.day()))
        .join(format!(
            "rollout-{}-{id}.jsonl",
            at.format("%Y-%m-%dT%H-%M-%S")
        ))
}

/// A rollout file found on disk, with what its name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RolloutFile {
    pub(crate) path: PathBuf,
    /// `YYYY-MM-DDTHH-MM-SS` from the name; sorts chronologically as text.
    pub(crate) time: String,
    pub(crate) id: ThreadId,
}

/// What a rollout file name says: its creation time text and thread id.
pub(crate) fn parse_file_name(name: &str) -> Option<(String, ThreadId)> {
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    // `YYYY-MM-DDTHH-MM-SS` is 19 bytes, then `-`, then a 36-byte UUID.
    if stem.len() != 19 + 1 + 36 || !stem.is_char_boundary(19) || !stem.is_char_boundary(20) {
        return None;
    }
    let (time, rest) = stem.split_at(19);
    let id = rest.strip_prefix('-')?.parse().ok()?;
    Some((time.to_string(), id))
}

/// Every rollout file under `$home/sessions`, newest first (by the time in the name, then the
/// id). Folders are walked a few levels deep whatever their names, so a file copied anywhere
/// under `sessions/` is found. A missing sessions folder means no files.
pub(crate) fn rollout_files_newest_first(home: &Path) -> Result<Vec<RolloutFile>> {
    let mut files = Vec::new();
    collect(&sessions_dir(home), 0, &mut files)?;
    files.sort_by(|a, b| (&b.time, &b.id).cmp(&(&a.time, &a.id)));
    Ok(files)
}

const MAX_DEPTH: usize = 4;

fn collect(dir: &Path, depth: usize, out: &mut Vec<RolloutFile>) -> Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && depth == 0 => return Ok(()),
        Err(e) if depth == 0 => return Err(RolloutError::io("list the sessions folder", dir, e)),
        // One unreadable subfolder should not hide every other thread.
        Err(e) => {
            tracing::debug!(path = %dir.display(), error = %e, "unreadable sessions subfolder skipped");
            return Ok(());
        }
    };
    for entry in entries {
        let entry = entry.map_err(|e| RolloutError::io("list the sessions folder", dir, e))?;
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if file_type.is_dir() {
            if depth < MAX_DEPTH && !name.starts_with('.') {
                collect(&entry.path(), depth + 1, out)?;
            }
        } else if let Some((time, id)) = parse_file_name(name) {
            out.push(RolloutFile {
                path: entry.path(),
                time,
                id,
            });
        }
    }
    Ok(())
}

/// The rollout file of thread `id`, if one exists under `$home/sessions`.
///
/// A thread id is a UUID v7 whose first 48 bits are its creation time, so the day folder of
/// that date (and its neighbours, for clock skew) is looked at first; only when that fails is
/// the whole tree listed.
pub fn find_rollout_by_id(home: &Path, id: &ThreadId) -> Result<Option<PathBuf>> {
    let suffix = format!("-{id}.jsonl");
    if let Some(created) = uuid_v7_time(id) {
        for offset in [0, -1, 1] {
            let day = created + chrono::Duration::days(offset);
            let dir = rollout_path(home, day, id)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            if let Some(found) = find_in_dir(&dir, &suffix) {
                return Ok(Some(found));
            }
        }
    }
    Ok(rollout_files_newest_first(home)?
        .into_iter()
        .find(|file| file.id == *id)
        .map(|file| file.path))
}

fn find_in_dir(dir: &Path, suffix: &str) -> Option<PathBuf> {
    fs::read_dir(dir).ok()?.flatten().find_map(|entry| {
        let name = entry.file_name();
        let name = name.to_str()?;
        (name.starts_with("rollout-") && name.ends_with(suffix)).then(|| entry.path())
    })
}

fn uuid_v7_time(id: &ThreadId) -> Option<DateTime<Utc>> {
    let uuid: uuid::Uuid = id.to_string().parse().ok()?;
    let (secs, nanos) = uuid.get_timestamp()?.to_unix();
    DateTime::from_timestamp(i64::try_from(secs).ok()?, nanos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn names_round_trip() {
        let id = ThreadId::new();
        let at = Utc.with_ymd_and_hms(2025, 3, 4, 5, 6, 7).unwrap();
        let path = rollout_path(Path::new("/h"), at, &id);
        assert_eq!(
            path,
            PathBuf::from(format!(
                "/h/sessions/2025/03/04/rollout-2025-03-04T05-06-07-{id}.jsonl"
            ))
        );
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            parse_file_name(name),
            Some(("2025-03-04T05-06-07".to_string(), id))
        );
        assert_eq!(parse_file_name("rollout-x.jsonl"), None);
        assert_eq!(parse_file_name(&format!("{name}.lock")), None);
    }

    #[test]
    fn thread_ids_carry_their_creation_time() {
        let before = Utc::now() - chrono::Duration::seconds(1);
        let t = uuid_v7_time(&ThreadId::new()).unwrap();
        assert!(t >= before && t <= Utc::now() + chrono::Duration::seconds(1));
    }
}
