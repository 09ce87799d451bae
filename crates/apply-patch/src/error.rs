//! Errors of verification and application. Their texts go back to the model
//! as they are, so each says what failed, where, and what to do next.

use std::path::PathBuf;

use crate::parser::ParseError;

/// Why a patch could not be verified or applied. Whenever this is returned,
/// no file was changed (for [`ApplyError::Commit`], see its fields).
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The patch text did not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The patch has no file operations.
    #[error(
        "No files were modified: the patch contains no '*** Add File:', '*** Update File:' or \
         '*** Delete File:' section"
    )]
    NoOperations,
    /// A chunk's `@@` anchor line does not occur in the file.
    #[error(
        "Failed to find context '{anchor}' in {}\n(chunk {chunk} at patch line {line}: the '@@' \
         line must match a line of the file; nothing was changed)",
        path.display()
    )]
    AnchorNotFound {
        path: PathBuf,
        chunk: usize,
        line: usize,
        anchor: String,
    },
    /// A chunk's context and removed lines do not occur in the file.
    #[error(
        "Failed to find expected lines in {}:\n{}\n(chunk {chunk} at patch line {line}{}; nothing \
         was changed: re-read the file and copy the context and '-' lines exactly)",
        path.display(),
        expected.join("\n"),
        if *end_of_file { ", which must match at the end of the file" } else { "" }
    )]
    LinesNotFound {
        path: PathBuf,
        chunk: usize,
        line: usize,
        expected: Vec<String>,
        end_of_file: bool,
    },
    /// Two chunks of one file claim the same lines.
    #[error(
        "Chunk {chunk} of {} overlaps an earlier chunk; nothing was changed: merge the chunks or \
         order them as they appear in the file",
        path.display()
    )]
    Overlap { path: PathBuf, chunk: usize },
    /// An update or delete names a file that does not exist.
    #[error(
        "Cannot {action} {}: the file does not exist; nothing was changed{hint}",
        path.display(),
        hint = if *action == "update" { " (use '*** Add File:' to create it)" } else { "" }
    )]
    Missing { path: PathBuf, action: &'static str },
    /// An add or move would replace an existing file.
    #[error(
        "Cannot {action} {}: the file already exists; nothing was changed (use '*** Update File:' \
         to change it, or delete it first)",
        path.display()
    )]
    Exists { path: PathBuf, action: &'static str },
    /// The path names a directory or another non-file.
    #[error("Cannot {action} {}: it is not a regular file; nothing was changed", path.display())]
    NotAFile { path: PathBuf, action: &'static str },
    /// An updated file is not UTF-8 text.
    #[error(
        "Cannot update {}: the file is not UTF-8 text; nothing was changed (replace it with \
         '*** Delete File:' and '*** Add File:' instead)",
        path.display()
    )]
    NotText { path: PathBuf },
    /// The path resolves (after `..` and symlinks) outside every allowed root.
    #[error(
        "Refusing to touch {}: it resolves to {} which is outside the allowed directories ({}); \
         nothing was changed",
        given.display(),
        resolved.display(),
        roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    OutsideRoots {
        given: PathBuf,
        resolved: PathBuf,
        roots: Vec<PathBuf>,
    },
    /// The path cannot name a file (empty, `..` at the end, …).
    #[error("Invalid path '{}': {reason}; nothing was changed", given.display())]
    InvalidPath {
        given: PathBuf,
        reason: &'static str,
    },
    /// A file changed on disk between verification and application.
    #[error(
        "{} changed on disk after the patch was checked; nothing was changed: read it again and \
         resend the patch",
        path.display()
    )]
    Changed { path: PathBuf },
    /// Reading, checking or preparing a file failed before anything was
    /// replaced.
    #[error("Failed to {action} {}: {source}; nothing was changed", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// Replacing a file failed after earlier files were already replaced.
    /// The earlier files were restored unless `restore_failures` lists them.
    #[error(
        "Failed to {action} {}: {source}; {}",
        path.display(),
        if restore_failures.is_empty() {
            "files already replaced were restored, so nothing was changed".to_string()
        } else {
            format!("these files could not be restored: {}", restore_failures.join("; "))
        }
    )]
    Commit {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
        restore_failures: Vec<String>,
    },
}

impl ApplyError {
    pub(crate) fn io(path: &std::path::Path, action: &'static str, source: std::io::Error) -> Self {
        ApplyError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}
