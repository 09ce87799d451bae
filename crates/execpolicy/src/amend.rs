//! Appending an `allow` rule to a rules file, safely against concurrent writers and crashes.

use std::fs::File;
use std::fs::OpenOptions;
use std::io;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use crate::rule::starlark_string;

/// What [`append_allow_prefix_rule`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AmendOutcome {
    /// The rule was added at the end of the file.
    Appended,
    /// The same rule line was already in the file; nothing changed.
    AlreadyPresent,
}

/// Why an amendment failed. The rules file is unchanged in every case.
#[derive(Debug, thiserror::Error)]
pub enum AmendError {
    /// An empty prefix would allow every command.
    #[error("refusing to add an allow rule with an empty prefix: it would allow every command")]
    EmptyPrefix,
    /// The rules file path has no parent directory (e.g. it is `/`).
    #[error("rules file path {} has no parent directory; pass a file path such as ~/.osprey/rules/default.rules", path.display())]
    NoParent {
        /// The path given.
        path: PathBuf,
    },
    /// An I/O step failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. "lock".
        action: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> AmendError + 'a {
    move |source| AmendError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// The line [`append_allow_prefix_rule`] writes for `prefix`.
pub fn allow_rule_line(prefix: &[String]) -> String {
    let tokens: Vec<String> = prefix.iter().map(|t| starlark_string(t)).collect();
    format!(
        "prefix_rule(pattern=[{}], decision=\"allow\")",
        tokens.join(", ")
    )
}

/// Appends `prefix_rule(pattern=[…], decision="allow")` for `prefix` to `rules_file`.
///
/// Creates the file and its parent directories when missing. Writers are serialized by an
/// exclusive lock on `<rules_file>.lock` (a sibling that does not end in `.rules`, so
/// loaders ignore it); the new content is written to a temporary file in the same directory
/// and renamed over the old, so a reader sees either the old or the new file, never a torn
/// one. If the exact rule line is already present, nothing is written.
///
/// This blocks on file I/O and on the lock; call it from a blocking context.
pub fn append_allow_prefix_rule(
    rules_file: &Path,
    prefix: &[String],
) -> Result<AmendOutcome, AmendError> {
    if prefix.is_empty() {
        return Err(AmendError::EmptyPrefix);
    }
    let line = allow_rule_line(prefix);
    let dir = match rules_file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        Some(_) => Path::new("."),
        None => {
            return Err(AmendError::NoParent {
                path: rules_file.to_path_buf(),
            });
        }
    };
    std::fs::create_dir_all(dir).map_err(io_err("create directory", dir))?;

    let mut lock_name = rules_file.as_os_str().to_owned();
    lock_name.push(".lock");
    let lock_path = PathBuf::from(lock_name);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io_err("open lock file", &lock_path))?;
    lock.lock().map_err(io_err("lock", &lock_path))?;
    let result = append_locked(rules_file, dir, &line);
    // Closing the file releases the lock as well; unlocking first just makes it prompt.
    let _ = lock.unlock();
    result
}

fn append_locked(rules_file: &Path, dir: &Path, line: &str) -> Result<AmendOutcome, AmendError> {
    let existing = match std::fs::read_to_string(rules_file) {
        Ok(text) => Some(text),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(AmendError::Io {
                action: "read",
                path: rules_file.to_path_buf(),
                source,
            });
        }
    };
    let mut content = existing.clone().unwrap_or_default();
    if content
        .lines()
        .any(|existing_line| existing_line.trim() == line)
    {
        return Ok(AmendOutcome::AlreadyPresent);
    }
    if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str(line);
    content.push('\n');

    let mut temp = tempfile::Builder::new()
        .prefix(".osprey-rules-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_err("create a temporary file in", dir))?;
    temp.write_all(content.as_bytes())
        .map_err(io_err("write", temp.path()))?;
    temp.as_file()
        .sync_all()
        .map_err(io_err("sync", temp.path()))?;
    if existing.is_some()
        && let Ok(meta) = std::fs::metadata(rules_file)
    {
        // Keep the file's permissions; failure here is not worth losing the rule over.
        let _ = temp.as_file().set_permissions(meta.permissions());
    }
    temp.persist(rules_file).map_err(|err| AmendError::Io {
        action: "replace",
        path: rules_file.to_path_buf(),
        source: err.error,
    })?;
    if let Ok(dir_handle) = File::open(dir) {
        // Make the rename durable where the platform allows syncing a directory.
        let _ = dir_handle.sync_all();
    }
    Ok(AmendOutcome::Appended)
}
