//! Transcript cells: what one entry of the conversation holds, independent of how it is
//! drawn. Cells are built from the app server's items and deltas.

use osprey_app_server_protocol::{
    CollabAgentTool, CollabAgentToolCallStatus, CommandExecutionSource, CommandExecutionStatus,
    FileUpdateChange, McpToolCallStatus, PatchApplyStatus, PatchChangeKind, ThreadItemDetails,
};

/// One entry of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    User {
        text: String,
    },
    /// The model's answer, markdown; `streaming` while deltas still arrive.
    Agent {
        text: String,
        streaming: bool,
    },
    Reasoning {
        text: String,
    },
    Exec(ExecCell),
    FileChange {
        changes: Vec<FileUpdateChange>,
        status: PatchApplyStatus,
    },
    Error {
        message: String,
    },
    Warning {
        message: String,
    },
    /// A one-line note from the TUI itself (an approval decision, a hint).
    Notice {
        text: String,
    },
    /// The agent's plan: one `update_plan` call (see [`super::plan`]).
    Plan(super::plan::PlanCell),
    Mcp(McpCell),
    /// A call of a sub-agent tool (spawn, send, wait, close, resume).
    Collab(CollabCell),
    /// The conversation was compacted (summarized) here.
    Compaction,
    /// Labelled facts (`/status`, `/mcp`): a title and aligned `label: value` rows.
    Facts {
        title: String,
        rows: Vec<(String, String)>,
    },
    /// Watching another thread (`/agent`) starts here: which one, and how to get back.
    ThreadHeader(super::threads::ThreadHeader),
    /// The end of a turn: how long it worked, and whether it was interrupted.
    TurnEnd {
        seconds: u64,
        interrupted: bool,
    },
}

/// A call of an MCP server's tool.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCell {
    pub server: String,
    pub tool: String,
    /// The arguments as compact JSON.
    pub arguments: String,
    pub status: McpToolCallStatus,
    /// The result's text content (or its JSON), once there.
    pub result: Option<String>,
    pub error: Option<String>,
    pub duration_ms: Option<i64>,
}

/// A call of a sub-agent tool, as the app server's `collabAgentToolCall` item has it.
#[derive(Debug, Clone, PartialEq)]
pub struct CollabCell {
    pub tool: CollabAgentTool,
    pub status: CollabAgentToolCallStatus,
    /// The agents it was about (their thread ids).
    pub receivers: Vec<String>,
    /// The message sent (spawn, send).
    pub prompt: Option<String>,
    /// Each agent's status after the call, and its last message when it has one.
    pub states: Vec<AgentState>,
    /// Names of the agents known by nickname when the cell was made (thread id → name);
    /// the others are shown by the end of their id.
    pub names: std::collections::BTreeMap<String, String>,
}

/// One agent's state in a [`CollabCell`].
#[derive(Debug, Clone, PartialEq)]
pub struct AgentState {
    pub id: String,
    pub status: String,
    pub message: Option<String>,
}

impl CollabCell {
    fn from_item(
        tool: CollabAgentTool,
        status: CollabAgentToolCallStatus,
        receivers: &[String],
        prompt: Option<&String>,
        states: &serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        let states = states
            .iter()
            .map(|(id, state)| AgentState {
                id: id.clone(),
                status: state
                    .get("status")
                    .and_then(|s| s.as_str())
                    .unwrap_or("unknown")
                    .to_owned(),
                message: state
                    .get("message")
                    .and_then(|m| m.as_str())
                    .map(str::to_owned),
            })
            .collect();
        Self {
            tool,
            status,
            receivers: receivers.to_vec(),
            prompt: prompt.filter(|p| !p.is_empty()).cloned(),
            states,
            names: Default::default(),
        }
    }
}

/// The text of an MCP result: its `content` parts' text, else the JSON.
fn mcp_result_text(result: &serde_json::Value) -> String {
    let texts: Vec<&str> = result
        .get("content")
        .and_then(|c| c.as_array())
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
                .collect()
        })
        .unwrap_or_default();
    if texts.is_empty() {
        result.to_string()
    } else {
        texts.join("\n")
    }
}

/// A command the model (or the person, with `!cmd`) ran.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecCell {
    pub command: String,
    pub source: CommandExecutionSource,
    pub status: CommandExecutionStatus,
    /// Output so far (live) or all of it (completed).
    pub output: String,
    pub exit_code: Option<i32>,
    pub duration_ms: Option<i64>,
}

impl Cell {
    /// The cell for an item, or `None` for an item that shows nothing (yet).
    pub fn from_item(item: &ThreadItemDetails, live: bool) -> Option<Self> {
        match item {
            ThreadItemDetails::UserMessage { content, .. } => {
                let text = content
                    .iter()
                    .filter_map(|part| match part {
                        osprey_app_server_protocol::UserInput::Text { text, .. } => {
                            Some(text.as_str())
                        }
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                Some(Cell::User { text })
            }
            // A finished message with no text (the model said nothing) leaves no cell.
            ThreadItemDetails::AgentMessage { text, .. } => {
                (live || !text.trim().is_empty()).then(|| Cell::Agent {
                    text: text.clone(),
                    streaming: live,
                })
            }
            ThreadItemDetails::Reasoning { summary, .. } => {
                let text = summary.join("\n\n");
                (!text.trim().is_empty() || live).then_some(Cell::Reasoning { text })
            }
            ThreadItemDetails::CommandExecution {
                command,
                source,
                status,
                aggregated_output,
                exit_code,
                duration_ms,
                ..
            } => Some(Cell::Exec(ExecCell {
                command: command.clone(),
                source: *source,
                status: *status,
                output: aggregated_output.clone().unwrap_or_default(),
                exit_code: *exit_code,
                duration_ms: *duration_ms,
            })),
            ThreadItemDetails::FileChange {
                changes, status, ..
            } => Some(Cell::FileChange {
                changes: changes.clone(),
                status: *status,
            }),
            ThreadItemDetails::McpToolCall {
                server,
                tool,
                status,
                arguments,
                result,
                error,
                duration_ms,
                ..
            } => Some(Cell::Mcp(McpCell {
                server: server.clone(),
                tool: tool.clone(),
                arguments: arguments.to_string(),
                status: *status,
                result: result.as_ref().map(mcp_result_text),
                error: error.as_ref().map(|e| {
                    e.get("message")
                        .and_then(|m| m.as_str())
                        .map_or_else(|| e.to_string(), str::to_owned)
                }),
                duration_ms: *duration_ms,
            })),
            // A plan streamed into an item (another server's plan mode) shows once it has text.
            ThreadItemDetails::Plan { text, .. } => (!live || !text.trim().is_empty())
                .then(|| Cell::Plan(super::plan::PlanCell::from_text(text))),
            // The marker is shown once the compaction is done.
            ThreadItemDetails::ContextCompaction { .. } => (!live).then_some(Cell::Compaction),
            ThreadItemDetails::CollabAgentToolCall {
                tool,
                status,
                receiver_thread_ids,
                prompt,
                agents_states,
                ..
            } => Some(Cell::Collab(CollabCell::from_item(
                *tool,
                *status,
                receiver_thread_ids,
                prompt.as_ref(),
                agents_states,
            ))),
        }
    }
}

/// Lines added and removed by one file's diff (an added file's `diff` is its content).
pub fn diff_counts(change: &FileUpdateChange) -> (usize, usize) {
    match change.kind {
        PatchChangeKind::Add => (change.diff.lines().count(), 0),
        PatchChangeKind::Delete => (0, change.diff.lines().count()),
        PatchChangeKind::Update { .. } => {
            let mut added = 0;
            let mut removed = 0;
            for line in change.diff.lines() {
                if line.starts_with("+++") || line.starts_with("---") {
                    continue;
                }
                if line.starts_with('+') {
                    added += 1;
                } else if line.starts_with('-') {
                    removed += 1;
                }
            }
            (added, removed)
        }
    }
}
