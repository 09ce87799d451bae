//! The one error type of this crate.

use std::io;
use std::path::PathBuf;

/// Why a rollout operation failed. Each variant names the file involved and, in its message,
/// what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done, as a verb phrase ("create the sessions directory").
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error(
        "session file {} is in use by another Osprey process (lock {} is held); \
         finish or close that session first, or fork it to continue separately",
        path.display(),
        lock_path.display()
    )]
    Locked { path: PathBuf, lock_path: PathBuf },

    #[error(
        "{} is not a session file: its first line must be a `session_meta` record ({reason})",
        path.display()
    )]
    MissingMeta { path: PathBuf, reason: String },

    #[error("could not encode a rollout record for {}: {source}", path.display())]
    Encode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },

    #[error(
        "the rollout writer for {} stopped after an error: {message}; \
         later records of this session were not saved",
        path.display()
    )]
    WriterFailed { path: PathBuf, message: String },

    #[error(
        "a rollout recorder needs a running Tokio runtime (creating one for {})",
        path.display()
    )]
    NoRuntime { path: PathBuf },

    #[error(
        "cannot fork {} before turn {turn}: the session has only {available} turns",
        path.display()
    )]
    NoSuchTurn {
        path: PathBuf,
        turn: usize,
        available: usize,
    },
}

impl RolloutError {
    /// This error as front ends receive it. Session-file problems have no kind of their own:
    /// the message says everything.
    pub fn to_wire(&self) -> osprey_protocol::WireError {
        osprey_protocol::WireError::new(osprey_protocol::ErrorKind::Other, self.to_string())
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = RolloutError> = std::result::Result<T, E>;
