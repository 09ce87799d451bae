//! What the agent emits: events tagged with their thread and turn, built around items.

use crate::{
    AgentStatus, AskForApproval, CollabAgentTool, CollabReceiver, ReasoningEffort, ReviewDecision,
    SandboxPolicy, ThreadId, TokenUsage, TurnId, WireError,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// One event from a thread. `turn_id` is set for everything that happens inside a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub thread_id: ThreadId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    pub msg: EventMsg,
}

/// Not `non_exhaustive` on purpose: the rollout's persistence policy and the front ends
/// match it exhaustively, so adding a variant forces a decision in each of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsg {
    /// The thread is ready (new, resumed or forked).
    ThreadStarted {
        model: String,
        model_provider: String,
        cwd: PathBuf,
        approval_policy: AskForApproval,
        sandbox_policy: SandboxPolicy,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rollout_path: Option<PathBuf>,
        #[serde(default)]
        resumed: bool,
    },
    TurnStarted,
    TurnCompleted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_agent_message: Option<String>,
        usage: TokenUsage,
    },
    TurnFailed {
        error: WireError,
        usage: TokenUsage,
    },
    TurnAborted {
        reason: AbortReason,
    },
    ItemStarted {
        item: ThreadItem,
    },
    ItemUpdated {
        item: ThreadItem,
    },
    ItemCompleted {
        item: ThreadItem,
    },
    /// A piece of an agent message still being written.
    AgentMessageDelta {
        item_id: String,
        delta: String,
    },
    /// A piece of a reasoning summary still being written.
    ReasoningDelta {
        item_id: String,
        delta: String,
    },
    /// Output a running command just printed.
    CommandOutputDelta {
        item_id: String,
        chunk: String,
    },
    /// The agent needs a decision; answer with `Op::ResolveApproval`.
    ApprovalRequested(ApprovalRequest),
    /// Token usage after a model response: the last response's and the thread's total.
    TokenCount {
        last: TokenUsage,
        total: TokenUsage,
    },
    /// Something the user should know that does not stop the turn (a retry, a skipped file).
    Warning {
        message: String,
    },
    /// An error that does not end the turn by itself (for example a stream retry notice).
    Error {
        error: WireError,
    },
    /// History was compacted.
    Compacted {
        summary: String,
    },
    /// A collaboration call began or ended (Codex's `Collab*Begin/End` events). Front ends
    /// show the `CollabAgentToolCall` item the call also emits; these carry the same facts
    /// for consumers that follow Codex's core events.
    CollabAgentSpawnBegin {
        call_id: String,
        sender_thread_id: ThreadId,
        prompt: String,
    },
    CollabAgentSpawnEnd {
        call_id: String,
        sender_thread_id: ThreadId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        new_thread_id: Option<ThreadId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        new_agent_nickname: Option<String>,
        prompt: String,
        status: AgentStatus,
    },
    CollabAgentInteractionBegin {
        call_id: String,
        sender_thread_id: ThreadId,
        receiver_thread_id: String,
        prompt: String,
    },
    CollabAgentInteractionEnd {
        call_id: String,
        sender_thread_id: ThreadId,
        receiver_thread_id: String,
        prompt: String,
        status: AgentStatus,
    },
    CollabWaitingBegin {
        call_id: String,
        sender_thread_id: ThreadId,
        receiver_thread_ids: Vec<String>,
    },
    CollabWaitingEnd {
        call_id: String,
        sender_thread_id: ThreadId,
        /// The agents that reached a final status, by thread id.
        statuses: std::collections::BTreeMap<String, AgentStatus>,
    },
    CollabCloseBegin {
        call_id: String,
        sender_thread_id: ThreadId,
        receiver_thread_id: String,
    },
    CollabCloseEnd {
        call_id: String,
        sender_thread_id: ThreadId,
        receiver_thread_id: String,
        /// The status the agent had before it was closed.
        status: AgentStatus,
    },
    /// The model called `update_plan`: its whole plan as it stands now, and why it changed.
    /// Codex's `plan_update` event, same shape (so the rollout line reads the same); the
    /// `TodoList` item the call also updates carries the steps without the explanation.
    PlanUpdate {
        #[serde(default)]
        explanation: Option<String>,
        plan: Vec<PlanStep>,
    },
    ShutdownComplete,
}

/// One step of a [`EventMsg::PlanUpdate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    pub step: String,
    pub status: PlanStepStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStepStatus {
    Pending,
    InProgress,
    Completed,
}

/// Why a turn stopped before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    Interrupted,
    /// A user answered an approval request with "abort".
    ApprovalAborted,
    /// A new turn replaced this one.
    Replaced,
    Shutdown,
}

/// One visible unit inside a turn. Not `non_exhaustive`: front ends match it exhaustively.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThreadItem {
    UserMessage {
        id: String,
        /// What the user typed.
        text: String,
        /// The local images attached, in order (the model sees them as `[Image #1]`, …).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<PathBuf>,
    },
    AgentMessage {
        id: String,
        text: String,
    },
    Reasoning {
        id: String,
        text: String,
    },
    CommandExecution {
        id: String,
        /// The command as shown to the user (a shell-quoted argv).
        command: String,
        cwd: PathBuf,
        aggregated_output: String,
        exit_code: Option<i32>,
        status: ItemStatus,
        source: CommandSource,
        /// Set when the sandbox blocked what the command tried to do.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox_denial: Option<String>,
    },
    FileChange {
        id: String,
        changes: Vec<FileChangeSummary>,
        status: ItemStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    McpToolCall {
        id: String,
        server: String,
        tool: String,
        arguments: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<McpCallResult>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        status: ItemStatus,
    },
    TodoList {
        id: String,
        items: Vec<TodoEntry>,
    },
    /// A call of a collaboration tool (`spawn_agent`, `send_input`, `wait_agent`,
    /// `close_agent`, `resume_agent`); the id is the call's.
    CollabAgentToolCall {
        id: String,
        tool: CollabAgentTool,
        status: ItemStatus,
        sender_thread_id: ThreadId,
        /// The agents addressed (for a finished `wait`: the ones that reached a final
        /// status; for a spawn: empty until it completes).
        receiver_thread_ids: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        receiver_agents: Vec<CollabReceiver>,
        prompt: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_effort: Option<ReasoningEffort>,
        /// The last known status of each agent addressed, by thread id.
        agents_states: std::collections::BTreeMap<String, AgentStatus>,
    },
    Error {
        id: String,
        message: String,
    },
}

impl ThreadItem {
    pub fn id(&self) -> &str {
        match self {
            Self::UserMessage { id, .. }
            | Self::AgentMessage { id, .. }
            | Self::Reasoning { id, .. }
            | Self::CommandExecution { id, .. }
            | Self::FileChange { id, .. }
            | Self::McpToolCall { id, .. }
            | Self::TodoList { id, .. }
            | Self::CollabAgentToolCall { id, .. }
            | Self::Error { id, .. } => id,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    InProgress,
    Completed,
    Failed,
    /// Not run: the user or the policy declined it.
    Declined,
}

/// Who asked for a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandSource {
    /// The model, through a tool call.
    Agent,
    /// The user, through a front end's own shell command (`!cmd` in the TUI).
    User,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChangeSummary {
    pub path: PathBuf,
    pub kind: FileChangeKind,
    /// Unified diff of this file's change, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// For a move: where the file went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    Add,
    Update,
    Delete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpCallResult {
    pub content: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoEntry {
    pub text: String,
    pub completed: bool,
    #[serde(default)]
    pub in_progress: bool,
}

/// A request for the user's decision. Answer with `Op::ResolveApproval { id, decision }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Unique within the thread; usually the tool call's id.
    pub id: String,
    pub call_id: String,
    pub kind: ApprovalRequestKind,
    pub cwd: PathBuf,
    /// Why approval is needed, in plain words.
    pub reason: String,
    /// The decisions the front end may offer.
    pub available_decisions: Vec<ReviewDecision>,
    /// The model's own reason for the action, when it gave one (`justification`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// The prefix rule a front end may offer ("always allow commands starting with …"):
    /// set only for a single plain command that no rule matches yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_execpolicy_amendment: Option<Vec<String>>,
    /// For a rerun without the sandbox: what the sandbox blocked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_denial: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ApprovalRequestKind {
    /// Run a command (possibly outside the sandbox).
    Exec {
        command: Vec<String>,
        #[serde(default)]
        escalation: bool,
    },
    /// Apply a patch that changes these files.
    Patch {
        changes: Vec<FileChangeSummary>,
        /// Every absolute path the patch writes, move targets included ("approve for this
        /// session" covers exactly these).
        #[serde(default)]
        paths: Vec<PathBuf>,
    },
    /// Call a tool on an MCP server.
    McpTool {
        server: String,
        tool: String,
        arguments: Value,
    },
}
