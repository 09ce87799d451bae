//! Appending to a rollout file from a running thread.
//!
//! One Tokio task owns the open file and is the only writer. [`RolloutRecorder::record`]
//! stamps the records, drops what the persistence policy does not keep, and hands the rest to
//! that task through an unbounded channel, so recording never waits for the disk and records
//! land in the order they were recorded. [`RolloutRecorder::flush`] is a message on the same
//! channel, so when it returns everything recorded before it is in the file.
//!
//! A lock file beside the rollout (`<file>.lock`) holds an OS advisory lock for as long as the
//! writer lives, so a second process (or a second recorder in this one) that tries to resume
//! the same thread is refused instead of interleaving lines. A lock file left behind by a
//! crashed process holds no lock and is simply taken over.

use crate::error::{Result, RolloutError};
use crate::format::{RolloutItem, RolloutLine, SessionMeta, format_timestamp};
use crate::paths::rollout_path;
use crate::policy::should_persist_item;
use crate::reader::{RolloutContents, read_rollout};
use chrono::Utc;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Writes one thread's records to its rollout file. Dropping it without
/// [`shutdown`](Self::shutdown) still writes everything recorded so far, in the background.
#[derive(Debug)]
pub struct RolloutRecorder {
    path: PathBuf,
    tx: mpsc::UnboundedSender<Command>,
    task: JoinHandle<()>,
}

#[derive(Debug)]
enum Command {
    Write(Vec<RolloutLine>),
    Flush {
        sync: bool,
        done: oneshot::Sender<std::result::Result<(), String>>,
    },
}

impl RolloutRecorder {
    /// Starts the rollout file of a new thread under `$home/sessions/…` (named for
    /// `meta.timestamp`, or now if that is not an RFC 3339 time): creates the folders,
    /// the file and its lock, and writes `meta` as the first line before returning (so the
    /// thread is listed from this moment). Needs a Tokio runtime for the writer task.
    pub fn create(home: &Path, meta: SessionMeta) -> Result<Self> {
        // The file name carries the header's creation time when it has a valid one, so the
        // two never disagree.
        let created = chrono::DateTime::parse_from_rfc3339(&meta.timestamp)
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_else(|_| Utc::now());
        let path = rollout_path(home, created, &meta.id);
        let runtime = runtime_for(&path)?;
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        let new_dirs = missing_ancestors(dir);
        fs::create_dir_all(dir)
            .map_err(|e| RolloutError::io("create the sessions folder", dir, e))?;
        let lock = FileLock::acquire(&path)?;
        let mut file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| RolloutError::io("create the session file", &path, e))?;
        let mut header = Vec::new();
        RolloutLine::new(format_timestamp(Utc::now()), RolloutItem::SessionMeta(meta))
            .write_to(&mut header)
            .map_err(|source| RolloutError::Encode {
                path: path.clone(),
                source,
            })?;
        file.write_all(&header)
            .map_err(|e| RolloutError::io("write the session header to", &path, e))?;
        // The thread exists once its header is on disk and the folders name it: sync the
        // file, then the folder holding it and each folder created for it, so a crash right
        // after creation cannot leave a thread that was announced but is not listed.
        file.sync_data()
            .map_err(|e| RolloutError::io("sync the session file", &path, e))?;
        for synced in std::iter::once(dir).chain(new_dirs.iter().filter_map(|d| d.parent())) {
            sync_dir(synced);
        }
        Ok(Self::start(&runtime, path, file, lock, None))
    }

    /// Reopens an existing rollout file to continue its thread: takes the lock (refusing if
    /// another recorder holds it), reads the file, and appends to it from then on. A cut-off
    /// last line left by a crash is removed first so the next record starts on a fresh line;
    /// the returned contents' warnings say so. A last record that is whole but lost only its
    /// newline is kept, and the newline is written. In a file whose records are numbered (Codex's
    /// "paginated" threads) new records continue the numbering.
    pub fn resume(path: &Path) -> Result<(Self, RolloutContents)> {
        let runtime = runtime_for(path)?;
        let lock = FileLock::acquire(path)?;
        let contents = read_rollout(path)?;
        let mut file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| RolloutError::io("open the session file for appending", path, e))?;
        if contents.kept_len < contents.file_len {
            file.set_len(contents.kept_len)
                .map_err(|e| RolloutError::io("cut the incomplete last line of", path, e))?;
        }
        if contents.missing_newline {
            file.write_all(b"\n")
                .map_err(|e| RolloutError::io("end the last record with a newline in", path, e))?;
        }
        Ok((
            Self::start(
                &runtime,
                path.to_path_buf(),
                file,
                lock,
                contents.last_ordinal.and_then(|o| o.checked_add(1)),
            ),
            contents,
        ))
    }

    fn start(
        runtime: &tokio::runtime::Handle,
        path: PathBuf,
        file: File,
        lock: FileLock,
        next_ordinal: Option<u64>,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = Writer {
            path: path.clone(),
            file: tokio::fs::File::from_std(file),
            buf: Vec::new(),
            failed: None,
            next_ordinal,
        };
        let task = runtime.spawn(writer.run(rx, lock));
        Self { path, tx, task }
    }

    /// The rollout file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues records for writing and returns at once. Records the persistence policy does
    /// not keep (see [`crate::should_persist_item`]) are dropped here, so callers may pass
    /// every event. All records of one call get the same timestamp.
    pub fn record(&self, items: Vec<RolloutItem>) {
        let timestamp = format_timestamp(Utc::now());
        let lines: Vec<RolloutLine> = items
            .into_iter()
            .filter(should_persist_item)
            .map(|item| RolloutLine::new(timestamp.clone(), item))
            .collect();
        if lines.is_empty() {
            return;
        }
        if self.tx.send(Command::Write(lines)).is_err() {
            tracing::warn!(path = %self.path.display(), "rollout writer is gone; records dropped");
        }
    }

    /// Waits until everything recorded so far has been handed to the operating system (it
    /// survives this process crashing). Reports the writer's first failure, if any.
    pub async fn flush(&self) -> Result<()> {
        self.request_flush(false).await
    }

    /// Like [`flush`](Self::flush), and also asks the disk to store the data (`fsync`), so it
    /// survives a power loss. Costs milliseconds; use it at turn ends, not per item.
    pub async fn sync(&self) -> Result<()> {
        self.request_flush(true).await
    }

    async fn request_flush(&self, sync: bool) -> Result<()> {
        let (done, wait) = oneshot::channel();
        self.tx
            .send(Command::Flush { sync, done })
            .map_err(|_| self.writer_gone())?;
        match wait.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(message)) => Err(RolloutError::WriterFailed {
                path: self.path.clone(),
                message,
            }),
            Err(_) => Err(self.writer_gone()),
        }
    }

    /// Writes and syncs everything recorded, stops the writer and releases the lock. After it
    /// returns, another recorder may resume the file.
    pub async fn shutdown(self) -> Result<()> {
        let flushed = self.sync().await;
        let Self { path, tx, task } = self;
        drop(tx);
        task.await.map_err(|e| RolloutError::WriterFailed {
            path,
            message: format!("the writer task ended abnormally: {e}"),
        })?;
        flushed
    }

    fn writer_gone(&self) -> RolloutError {
        RolloutError::WriterFailed {
            path: self.path.clone(),
            message: "the writer task is no longer running (was its runtime shut down?)"
                .to_string(),
        }
    }
}

fn runtime_for(path: &Path) -> Result<tokio::runtime::Handle> {
    tokio::runtime::Handle::try_current().map_err(|_| RolloutError::NoRuntime {
        path: path.to_path_buf(),
    })
}

/// The writer task's state. After the first write error it stops writing (a later line
/// could otherwise be glued to a half-written one) and reports the error on every flush.
struct Writer {
    path: PathBuf,
    file: tokio::fs::File,
    buf: Vec<u8>,
    failed: Option<String>,
    /// Set when the file numbers its records: the next record's number.
    next_ordinal: Option<u64>,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>, lock: FileLock) {
        while let Some(first) = rx.recv().await {
            self.handle(first).await;
            // Take whatever else is already queued before touching the disk again.
            while let Ok(next) = rx.try_recv() {
                self.handle(next).await;
            }
            self.write_out().await;
        }
        self.write_out().await;
        self.finish(true).await;
        if let Some(message) = &self.failed {
            tracing::error!(path = %self.path.display(), %message, "rollout writer failed");
        }
        drop(lock);
    }

    async fn handle(&mut self, command: Command) {
        match command {
            Command::Write(lines) => {
                for mut line in lines {
                    if let Some(ordinal) = self.next_ordinal {
                        line.ordinal = Some(ordinal);
                        self.next_ordinal = ordinal.checked_add(1);
                    }
                    if let Err(e) = line.write_to(&mut self.buf) {
                        tracing::error!(path = %self.path.display(), error = %e,
                            kind = line.item.kind(), "could not encode a rollout record; skipped");
                    }
                }
            }
            Command::Flush { sync, done } => {
                self.write_out().await;
                self.finish(sync).await;
                // The flusher may have stopped waiting; nothing to do then.
                let _ = done.send(match &self.failed {
                    Some(message) => Err(message.clone()),
                    None => Ok(()),
                });
            }
        }
    }

    async fn write_out(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if self.failed.is_none()
            && let Err(e) = self.file.write_all(&self.buf).await
        {
            self.failed = Some(format!("writing failed: {e}"));
        }
        self.buf.clear();
    }

    async fn finish(&mut self, sync: bool) {
        if self.failed.is_some() {
            return;
        }
        let result = match self.file.flush().await {
            Ok(()) if sync => self.file.sync_data().await,
            other => other,
        };
        if let Err(e) = result {
            self.failed = Some(format!("flushing failed: {e}"));
        }
    }
}

/// `dir` and those of its ancestors that do not exist yet, deepest first.
fn missing_ancestors(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect()
}

/// Makes `dir`'s entries durable (a new file or folder in it survives a crash). Best effort:
/// some filesystems cannot sync a folder, and the thread is still usable, so a failure is
/// logged, not returned.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::warn!(path = %dir.display(), error = %e, "could not sync the sessions folder");
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// The lock file beside a rollout, holding an exclusive advisory lock while alive.
#[derive(Debug)]
pub(crate) struct FileLock {
    path: PathBuf,
    file: File,
}

impl FileLock {
    /// Locks `<rollout>.lock`, or fails with [`RolloutError::Locked`] if another open file
    /// holds it.
    pub(crate) fn acquire(rollout: &Path) -> Result<Self> {
        let mut name = rollout.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let locked = || RolloutError::Locked {
            path: rollout.to_path_buf(),
            lock_path: path.clone(),
        };
        // A holder that is releasing removes the file while still holding it; if we locked
        // such a removed file, the path no longer names it and we try again.
        for _ in 0..8 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| RolloutError::io("create the session lock file", &path, e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(locked()),
                Err(TryLockError::Error(e)) => {
                    return Err(RolloutError::io("lock the session lock file", &path, e));
                }
            }
            if still_named(&file, &path) {
                let mut file = file;
                // The holder's pid, for a person wondering who holds it; best effort.
                let _ = file.set_len(0);
                let _ = writeln!(file, "{}", std::process::id());
                return Ok(Self { path, file });
            }
        }
        Err(locked())
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Remove while still locked, so nobody can lock this file after we let go and then
        // race a newcomer who creates a fresh one. Unix only: elsewhere an open file cannot
        // be removed, and a leftover lock file is harmless anyway.
        if cfg!(unix) {
            let _ = fs::remove_file(&self.path);
        }
        let _ = self.file.unlock();
    }
}

#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_named(_file: &File, _path: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn missing_ancestors_lists_the_folders_create_makes_deepest_first() {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        fs::create_dir(&sessions).unwrap();
        let day = sessions.join("2025").join("06").join("01");
        assert_eq!(
            missing_ancestors(&day),
            vec![
                day.clone(),
                sessions.join("2025").join("06"),
                sessions.join("2025")
            ]
        );
        fs::create_dir_all(&day).unwrap();
        assert_eq!(missing_ancestors(&day), Vec::<PathBuf>::new());
        // Syncing an existing folder works; a missing one is only logged.
        sync_dir(&day);
        sync_dir(&day.join("missing"));
    }
}
