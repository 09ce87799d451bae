//! What a front end submits to a thread.

use crate::{AskForApproval, ReasoningEffort, ReviewDecision, SandboxPolicy};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Op {
    /// Start a turn with this input. Settings left `None` keep the thread's current ones.
    UserTurn {
        items: Vec<UserInput>,
        #[serde(default)]
        cwd: Option<PathBuf>,
        #[serde(default)]
        approval_policy: Option<AskForApproval>,
        #[serde(default)]
        sandbox_policy: Option<SandboxPolicy>,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        effort: Option<ReasoningEffort>,
        /// A JSON schema the final message must follow.
        #[serde(default)]
        output_schema: Option<Value>,
    },
    /// Stop the running turn; calls in flight get an "aborted" output.
    Interrupt,
    /// Answer an approval request.
    ResolveApproval {
        id: String,
        decision: ReviewDecision,
    },
    /// Add input to the running regular turn: it is recorded as a user message before the
    /// turn's next model request. With no regular turn running, the input is not used and a
    /// warning says so (`OspreyThread::steer` reports that as an error instead).
    Steer { items: Vec<UserInput> },
    /// Summarise the history to free context.
    Compact,
    /// Run a command the person typed (`!cmd`) in their own shell, in the thread's working
    /// directory, as a task of its own: not sandboxed and not asking for approval, since the
    /// person asked for it. With `share_with_model`, the command and its output are recorded
    /// as a user message the model sees in later turns (as Codex does); otherwise only the
    /// front end sees it.
    RunUserShellCommand {
        command: String,
        /// Milliseconds before the command is killed; ten minutes when `None`.
        #[serde(default)]
        timeout_ms: Option<u64>,
        #[serde(default = "share_by_default")]
        share_with_model: bool,
    },
    /// End the thread: stop what runs, flush the rollout.
    Shutdown,
}

fn share_by_default() -> bool {
    true
}

/// One piece of user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserInput {
    Text {
        text: String,
    },
    /// A local image file, attached as an input image.
    LocalImage {
        path: PathBuf,
    },
    /// An image by URL (or `data:` URL).
    Image {
        image_url: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn new_ops_use_snake_case_tags_and_defaults() {
        let op: Op =
            serde_json::from_value(json!({"type": "run_user_shell_command", "command": "ls -la"}))
                .unwrap();
        assert_eq!(
            op,
            Op::RunUserShellCommand {
                command: "ls -la".into(),
                timeout_ms: None,
                share_with_model: true,
            }
        );
        let steer = Op::Steer {
            items: vec![UserInput::Text {
                text: "also".into(),
            }],
        };
        assert_eq!(
            serde_json::to_value(&steer).unwrap(),
            json!({"type": "steer", "items": [{"type": "text", "text": "also"}]})
        );
    }
}
