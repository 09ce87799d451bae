//! Thread items: what the agent did or said, each with a run-local id and a `type`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An item: `{"id": "item_N", "type": …, …fields of that type}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecItem {
    /// `item_0`, `item_1`, … in order of first appearance within a run.
    pub id: String,
    #[serde(flatten)]
    pub details: ItemDetails,
}

impl ExecItem {
    pub fn new(id: impl Into<String>, details: ItemDetails) -> Self {
        Self {
            id: id.into(),
            details,
        }
    }
}

/// The payload of each item type, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemDetails {
    /// The agent's reply (a JSON string when an output schema was given).
    AgentMessage { text: String },
    /// A summary of the model's reasoning.
    Reasoning { text: String },
    /// A command the agent ran: started when spawned, completed when it exits.
    CommandExecution {
        /// The command as shown to a person (a shell-quoted argv).
        command: String,
        /// Stdout and stderr together, in arrival order.
        aggregated_output: String,
        /// `null` while running, or when the process was killed by a signal.
        exit_code: Option<i32>,
        status: ItemStatus,
    },
    /// A set of file changes from one patch.
    FileChange {
        changes: Vec<FileUpdateChange>,
        status: ItemStatus,
    },
    /// A call of a tool on an MCP server.
    McpToolCall {
        server: String,
        tool: String,
        #[serde(default)]
        arguments: Value,
        result: Option<McpToolCallResult>,
        error: Option<crate::ErrorMessage>,
        status: ItemStatus,
    },
    /// A call of a multi-agent collaboration tool (`spawn_agent`, `send_input`, `wait`,
    /// `close_agent`).
    CollabToolCall {
        tool: CollabTool,
        sender_thread_id: String,
        receiver_thread_ids: Vec<String>,
        prompt: Option<String>,
        /// The last known state of each agent involved, by thread id.
        agents_states: BTreeMap<String, CollabAgentState>,
        status: ItemStatus,
    },
    /// The agent's plan: started with the first update, updated with each later one,
    /// completed when the turn ends.
    TodoList { items: Vec<TodoItem> },
    /// A problem that did not end the turn (a warning).
    Error { message: String },
}

impl ItemDetails {
    /// The `type` tag of this item, as it appears on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            ItemDetails::AgentMessage { .. } => "agent_message",
            ItemDetails::Reasoning { .. } => "reasoning",
            ItemDetails::CommandExecution { .. } => "command_execution",
            ItemDetails::FileChange { .. } => "file_change",
            ItemDetails::McpToolCall { .. } => "mcp_tool_call",
            ItemDetails::CollabToolCall { .. } => "collab_tool_call",
            ItemDetails::TodoList { .. } => "todo_list",
            ItemDetails::Error { .. } => "error",
        }
    }
}

/// Where an item stands. One enum for every item type: Codex uses `declined` for commands,
/// and Osprey also reports a declined patch or MCP call that way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    InProgress,
    Completed,
    /// Ran and failed (for a command: a non-zero exit).
    Failed,
    /// Not run: a person or the policy declined it.
    Declined,
}

/// One file of a file change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileUpdateChange {
    /// The absolute path.
    pub path: String,
    pub kind: FileChangeKind,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    Add,
    Update,
    Delete,
}

/// What an MCP tool returned: its content blocks as the server sent them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolCallResult {
    pub content: Vec<Value>,
    pub structured_content: Option<Value>,
}

/// One entry of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub text: String,
    pub completed: bool,
}

/// The collaboration tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollabTool {
    SpawnAgent,
    SendInput,
    Wait,
    CloseAgent,
    ResumeAgent,
}

/// An agent's state as a collaboration call last saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollabAgentState {
    pub status: CollabAgentStatus,
    pub message: Option<String>,
}

/// Where a collaborating agent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollabAgentStatus {
    PendingInit,
    Running,
    Interrupted,
    Completed,
    Errored,
    Shutdown,
    NotFound,
}
