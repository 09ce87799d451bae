//! The top-level events: one per JSONL line.

use serde::{Deserialize, Serialize};

use crate::item::ExecItem;

/// One line of `exec --json` output, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ExecEvent {
    /// The first event of a run: the thread's id (which `exec resume` takes).
    #[serde(rename = "thread.started")]
    ThreadStarted { thread_id: String },
    /// The model started working on a prompt.
    #[serde(rename = "turn.started")]
    TurnStarted,
    /// The turn ended normally, with the tokens it used.
    #[serde(rename = "turn.completed")]
    TurnCompleted { usage: Usage },
    /// The turn ended with an error (or was aborted).
    #[serde(rename = "turn.failed")]
    TurnFailed { error: ErrorMessage },
    /// An item began (commands, file changes, MCP and collaboration calls, the plan).
    #[serde(rename = "item.started")]
    ItemStarted { item: ExecItem },
    /// An item changed (the plan after an update).
    #[serde(rename = "item.updated")]
    ItemUpdated { item: ExecItem },
    /// An item reached its final state.
    #[serde(rename = "item.completed")]
    ItemCompleted { item: ExecItem },
    /// An error of the stream itself, outside any item.
    #[serde(rename = "error")]
    Error { message: String },
}

impl ExecEvent {
    /// The event as one line of JSON, without the newline.
    pub fn to_json_line(&self) -> String {
        // Serialising these types cannot fail: every map key is a string and no value is a
        // float that could be non-finite.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The `type` tag of this event, as it appears on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            ExecEvent::ThreadStarted { .. } => "thread.started",
            ExecEvent::TurnStarted => "turn.started",
            ExecEvent::TurnCompleted { .. } => "turn.completed",
            ExecEvent::TurnFailed { .. } => "turn.failed",
            ExecEvent::ItemStarted { .. } => "item.started",
            ExecEvent::ItemUpdated { .. } => "item.updated",
            ExecEvent::ItemCompleted { .. } => "item.completed",
            ExecEvent::Error { .. } => "error",
        }
    }
}

/// Token usage of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    /// Tokens written to a provider-side prompt cache (always 0 for the providers Osprey
    /// speaks to; Codex reports the field).
    #[serde(default)]
    pub cache_write_input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub reasoning_output_tokens: u64,
}

/// `{"message": …}`: the error of a failed turn, a failed MCP call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMessage {
    pub message: String,
}

impl ErrorMessage {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}
