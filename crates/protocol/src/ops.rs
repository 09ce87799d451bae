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
    /// Summarise the history to free context.
    Compact,
    /// End the thread: stop what runs, flush the rollout.
    Shutdown,
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
