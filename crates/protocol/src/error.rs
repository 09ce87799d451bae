//! The one error type that crosses the wire to front ends.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of failure ended a turn or was reported alongside it. Front ends may branch on
/// the kind (for example to offer compaction on [`ErrorKind::ContextWindowExceeded`]); the
/// message is always complete on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The conversation no longer fits the model's context window.
    ContextWindowExceeded,
    /// The account has no quota or credit left.
    QuotaExceeded,
    /// The provider asked us to slow down and retries ran out.
    RateLimited,
    /// The API key is missing, wrong or lacks permission.
    Unauthorized,
    /// The provider rejected the request as malformed (HTTP 400/404/422).
    BadRequest,
    /// The provider failed (HTTP 5xx) and retries ran out.
    ServerError,
    /// The provider could not be reached at all.
    ConnectionFailed,
    /// The response stream ended early or stalled, and retries ran out.
    StreamFailed,
    /// Configuration is invalid.
    Config,
    /// A sandbox could not be set up.
    Sandbox,
    /// Anything else.
    Other,
}

/// An error as front ends see it: a kind and a message in plain words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    pub kind: ErrorKind,
    pub message: String,
}

impl WireError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for WireError {}
