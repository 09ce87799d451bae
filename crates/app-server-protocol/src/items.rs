//! The items a turn is made of (`ThreadItem`), as `item/started`, `item/completed` and
//! `thread/read` carry them.

use crate::common::UserInput;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One item of a turn: its kind-specific body plus its start and end times (Unix ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItem {
    #[serde(flatten)]
    pub details: ThreadItemDetails,
    #[serde(default)]
    pub started_at_ms: Option<i64>,
    #[serde(default)]
    pub completed_at_ms: Option<i64>,
}

/// The kinds of item Osprey produces, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ThreadItemDetails {
    UserMessage {
        id: String,
        client_id: Option<String>,
        content: Vec<UserInput>,
    },
    AgentMessage {
        id: String,
        text: String,
        /// `commentary` / `final_answer` when the model says so.
        phase: Option<String>,
        /// Codex's moderation, memory-citation, delivery and question extras: Osprey sends
        /// `null` and passes through what it reads.
        moderation: Option<Value>,
        memory_citation: Option<Value>,
        delivery: Option<Value>,
        questions: Option<Value>,
    },
    Reasoning {
        id: String,
        summary: Vec<String>,
        #[serde(default)]
        content: Vec<String>,
    },
    CommandExecution {
        id: String,
        plugin_id: Option<String>,
        script_path: Option<String>,
        command: String,
        cwd: String,
        process_id: Option<String>,
        source: CommandExecutionSource,
        status: CommandExecutionStatus,
        command_actions: Vec<CommandAction>,
        aggregated_output: Option<String>,
        exit_code: Option<i32>,
        duration_ms: Option<i64>,
    },
    FileChange {
        id: String,
        changes: Vec<FileUpdateChange>,
        status: PatchApplyStatus,
    },
    McpToolCall {
        id: String,
        server: String,
        environment_id: Option<String>,
        tool: String,
        status: McpToolCallStatus,
        arguments: Value,
        app_context: Option<Value>,
        mcp_app_ui: Option<Value>,
        plugin_id: Option<String>,
        read_only_hint: Option<bool>,
        result: Option<Value>,
        error: Option<Value>,
        duration_ms: Option<i64>,
    },
    Plan {
        id: String,
        text: String,
    },
    ContextCompaction {
        id: String,
    },
    CollabAgentToolCall {
        id: String,
        tool: CollabAgentTool,
        status: CollabAgentToolCallStatus,
        sender_thread_id: String,
        receiver_thread_ids: Vec<String>,
        prompt: Option<String>,
        model: Option<String>,
        reasoning_effort: Option<String>,
        agents_states: Map<String, Value>,
    },
}

impl ThreadItemDetails {
    /// The item's id, whatever its kind.
    pub fn id(&self) -> &str {
        match self {
            ThreadItemDetails::UserMessage { id, .. }
            | ThreadItemDetails::AgentMessage { id, .. }
            | ThreadItemDetails::Reasoning { id, .. }
            | ThreadItemDetails::CommandExecution { id, .. }
            | ThreadItemDetails::FileChange { id, .. }
            | ThreadItemDetails::McpToolCall { id, .. }
            | ThreadItemDetails::Plan { id, .. }
            | ThreadItemDetails::ContextCompaction { id }
            | ThreadItemDetails::CollabAgentToolCall { id, .. } => id,
        }
    }
}

/// Who ran a command: the model's tool, the person's `!cmd`, or unified exec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionSource {
    Agent,
    UserShell,
    UnifiedExecStartup,
    UnifiedExecInteraction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

/// What a command does, parsed for display (`read`, `listFiles`, `search`, `unknown`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CommandAction {
    Read {
        command: String,
        name: String,
        path: String,
    },
    ListFiles {
        command: String,
        path: Option<String>,
    },
    Search {
        command: String,
        query: Option<String>,
        path: Option<String>,
    },
    Unknown {
        command: String,
    },
}

/// One file of a `fileChange` item, with its unified diff (the content, for an add).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileUpdateChange {
    pub path: String,
    pub kind: PatchChangeKind,
    pub diff: String,
}

/// `move_path` stays snake_case, as Codex sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    Add,
    Delete,
    Update { move_path: Option<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PatchApplyStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpToolCallStatus {
    InProgress,
    Completed,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentTool {
    SpawnAgent,
    SendInput,
    ResumeAgent,
    Wait,
    CloseAgent,
    SendMessage,
    FollowupTask,
    InterruptAgent,
    ListAgents,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CollabAgentToolCallStatus {
    InProgress,
    Completed,
    Failed,
    Interrupted,
}
