//! Errors of the core API (not of tools: those go back to the model).

use osprey_protocol::{ErrorKind, WireError};

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error(transparent)]
    Model(#[from] osprey_model::ModelError),
    #[error("the thread has shut down; start or resume a thread to continue")]
    ThreadClosed,
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Rollout(#[from] osprey_rollout::RolloutError),
    /// `steer` found no regular turn running (none at all, or only a compaction or a user
    /// shell command, which take no input).
    #[error("no active turn to steer")]
    NoActiveTurn,
    /// `start_turn` was given an operation that does not start a turn.
    #[error(
        "`{op}` does not start a turn: start_turn takes user_turn, compact or run_user_shell_command; send other operations with submit"
    )]
    NotATurn { op: String },
}

impl CoreError {
    pub fn to_wire(&self) -> WireError {
        match self {
            Self::Model(e) => e.to_wire(),
            Self::ThreadClosed => WireError::new(ErrorKind::Other, self.to_string()),
            Self::Invalid(_) => WireError::new(ErrorKind::Config, self.to_string()),
            Self::Rollout(e) => e.to_wire(),
            Self::NoActiveTurn | Self::NotATurn { .. } => {
                WireError::new(ErrorKind::Other, self.to_string())
            }
        }
    }
}
