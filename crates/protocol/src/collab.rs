//! Multi-agent collaboration: where a sub-agent stands and which tool a collaboration call
//! used. Shaped like Codex's core types, so tool outputs and session files match.

use serde::{Deserialize, Serialize};

/// Where a sub-agent (a thread another thread spawned) stands, as the collaboration tools
/// report it to the model: `"pending_init"`, `"running"`, `"interrupted"`, `"shutdown"`,
/// `"not_found"`, or `{"completed": <last message or null>}`, `{"errored": <message>}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// Spawned; its first turn has not started yet.
    PendingInit,
    Running,
    /// Its turn was interrupted; it can take new input.
    Interrupted,
    /// Its last turn finished, with the last agent message.
    Completed(Option<String>),
    /// Its last turn failed.
    Errored(String),
    /// Closed (`close_agent`, or its parent went away).
    Shutdown,
    /// No agent with that id.
    NotFound,
}

impl AgentStatus {
    /// Whether `wait_agent` stops waiting for an agent in this status (everything but
    /// `pending_init`, `running` and `interrupted`, as Codex's `is_final`): an interrupted
    /// agent is expected to take new input and go on, so its result is still to come.
    pub fn is_final(&self) -> bool {
        !matches!(self, Self::PendingInit | Self::Running | Self::Interrupted)
    }

    /// The status name without its message (`completed`, `not_found`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Self::PendingInit => "pending_init",
            Self::Running => "running",
            Self::Interrupted => "interrupted",
            Self::Completed(_) => "completed",
            Self::Errored(_) => "errored",
            Self::Shutdown => "shutdown",
            Self::NotFound => "not_found",
        }
    }

    /// The message a completed or errored status carries.
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::Completed(message) => message.as_deref(),
            Self::Errored(message) => Some(message),
            _ => None,
        }
    }
}

/// Which collaboration tool a `CollabAgentToolCall` item is for (Codex's rollout names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollabAgentTool {
    SpawnAgent,
    SendInput,
    ResumeAgent,
    Wait,
    CloseAgent,
}

/// A thread a collaboration call addressed, with its nickname when known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollabReceiver {
    pub thread_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_nickname: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statuses_serialize_as_codex_writes_them() {
        assert_eq!(
            serde_json::to_value(AgentStatus::PendingInit).unwrap(),
            json!("pending_init")
        );
        assert_eq!(
            serde_json::to_value(AgentStatus::Completed(Some("bye".into()))).unwrap(),
            json!({"completed": "bye"})
        );
        assert_eq!(
            serde_json::to_value(AgentStatus::Completed(None)).unwrap(),
            json!({"completed": null})
        );
        assert_eq!(
            serde_json::to_value(AgentStatus::Errored("boom".into())).unwrap(),
            json!({"errored": "boom"})
        );
        assert!(!AgentStatus::Interrupted.is_final());
        assert!(AgentStatus::Shutdown.is_final());
        assert!(!AgentStatus::Running.is_final());
    }
}
