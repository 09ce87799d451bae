//! Server → client approval requests and the client's decisions. Commands and file changes
//! have separate decision enums: only commands can carry an execpolicy amendment.

use crate::items::CommandAction;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `item/commandExecution/requestApproval` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    /// `command` (Codex also has network-access kinds).
    pub kind: String,
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub started_at_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    pub environment_id: Option<String>,
    /// The model's justification for running the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_actions: Option<Vec<CommandAction>>,
    /// The prefix rule `acceptWithExecpolicyAmendment` would persist; only offered for a
    /// single command no rule matches yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_execpolicy_amendment: Option<Vec<String>>,
    /// The decisions that really apply to this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_decisions: Option<Vec<CommandExecutionApprovalDecision>>,
    /// Osprey: set when the command already ran in the sandbox and the sandbox blocked it
    /// (what it blocked); accepting runs it again outside the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_denial: Option<String>,
}

/// The client's answer to a command approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalDecision {
    /// Run this once.
    Accept,
    /// Run it, and the identical command again in this session without asking.
    AcceptForSession,
    /// Run it and persist the prefix rule (field name snake_case, as Codex sends it).
    AcceptWithExecpolicyAmendment { execpolicy_amendment: Vec<String> },
    /// Do not run it; the turn continues and the model is told the person declined.
    Decline,
    /// Do not run it; the turn ends as interrupted.
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalResponse {
    pub decision: CommandExecutionApprovalDecision,
}

/// `item/fileChange/requestApproval` params; the changes themselves are on the item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub started_at_ms: i64,
    pub reason: Option<String>,
    /// A directory the approval would make writable for the rest of the session.
    pub grant_root: Option<String>,
}

/// The client's answer to a file-change approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeApprovalDecision {
    Accept,
    /// Accept, and later changes to the same absolute paths (move targets included) too.
    AcceptForSession,
    Decline,
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalResponse {
    pub decision: FileChangeApprovalDecision,
}
