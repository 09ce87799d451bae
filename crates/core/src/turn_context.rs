//! Settings that hold for one turn.

use osprey_config::Config;
use osprey_protocol::{AskForApproval, ReasoningEffort, SandboxPolicy, TurnId};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// The settings one turn runs under; fixed when the turn starts.
#[derive(Debug, Clone)]
pub struct TurnContext {
    pub turn_id: TurnId,
    pub cwd: PathBuf,
    pub model: String,
    pub effort: Option<ReasoningEffort>,
    pub approval_policy: AskForApproval,
    pub sandbox_policy: SandboxPolicy,
    pub output_schema: Option<Value>,
    pub config: Arc<Config>,
}
