//! `--json`: one JSON object per line on stdout, in the reference CLI's `exec --json` schema.
//!
//! Core item ids are mapped to `item_0`, `item_1`, … in order of first appearance. Agent
//! messages and reasoning are only reported when complete; commands, file changes and MCP
//! calls are reported when they start and when they end; the plan (`todo_list`) starts with
//! the first update, is updated with each later one and completes when the turn ends.

use osprey_protocol::{
    Event, EventMsg, FileChangeKind, ItemStatus, ThreadItem, TodoEntry, TokenUsage,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;

#[derive(Default)]
pub struct JsonEventWriter {
    ids: HashMap<String, String>,
    next_id: u64,
    open_todo: Option<(String, Vec<TodoEntry>)>,
}

impl JsonEventWriter {
    pub fn write_event(&mut self, out: &mut dyn Write, event: &Event) -> std::io::Result<()> {
        for line in self.lines_for(event) {
            writeln!(out, "{line}")?;
        }
        out.flush()
    }

    /// The JSON lines one core event turns into (often none).
    pub fn lines_for(&mut self, event: &Event) -> Vec<Value> {
        match &event.msg {
            EventMsg::ThreadStarted { .. } => {
                vec![json!({"type": "thread.started", "thread_id": event.thread_id.to_string()})]
            }
            EventMsg::TurnStarted => vec![json!({"type": "turn.started"})],
            EventMsg::TurnCompleted { usage, .. } => {
                let mut lines = self.close_todo();
                lines.push(json!({"type": "turn.completed", "usage": usage_json(usage)}));
                lines
            }
            EventMsg::TurnFailed { error, .. } => {
                let mut lines = self.close_todo();
                lines.push(json!({"type": "error", "message": error.message}));
                lines.push(json!({"type": "turn.failed", "error": {"message": error.message}}));
                lines
            }
            EventMsg::TurnAborted { reason } => {
                let mut lines = self.close_todo();
                let message = abort_message(*reason);
                lines.push(json!({"type": "turn.failed", "error": {"message": message}}));
                lines
            }
            EventMsg::ItemStarted { item } => self.item_event("item.started", item),
            EventMsg::ItemUpdated { item } => self.item_event("item.updated", item),
            EventMsg::ItemCompleted { item } => self.item_event("item.completed", item),
            EventMsg::Error { error } => vec![json!({"type": "error", "message": error.message})],
            EventMsg::Warning { message } => {
                let id = self.fresh_id();
                vec![
                    json!({"type": "item.completed", "item": {"id": id, "type": "error", "message": message}}),
                ]
            }
            EventMsg::AgentMessageDelta { .. }
            | EventMsg::ReasoningDelta { .. }
            | EventMsg::CommandOutputDelta { .. }
            | EventMsg::ApprovalRequested(_)
            | EventMsg::TokenCount { .. }
            | EventMsg::Compacted { .. }
            | EventMsg::ShutdownComplete => Vec::new(),
        }
    }

    fn fresh_id(&mut self) -> String {
        let id = format!("item_{}", self.next_id);
        self.next_id += 1;
        id
    }

    fn id_for(&mut self, core_id: &str) -> String {
        if let Some(id) = self.ids.get(core_id) {
            return id.clone();
        }
        let id = self.fresh_id();
        self.ids.insert(core_id.to_string(), id.clone());
        id
    }

    fn item_event(&mut self, kind: &str, item: &ThreadItem) -> Vec<Value> {
        let completed = kind == "item.completed";
        let value = match item {
            ThreadItem::UserMessage { .. } => return Vec::new(),
            ThreadItem::AgentMessage { id, text } => {
                if !completed {
                    return Vec::new();
                }
                json!({"id": self.id_for(id), "type": "agent_message", "text": text})
            }
            ThreadItem::Reasoning { id, text } => {
                if !completed {
                    return Vec::new();
                }
                json!({"id": self.id_for(id), "type": "reasoning", "text": text})
            }
            ThreadItem::CommandExecution {
                id,
                command,
                aggregated_output,
                exit_code,
                status,
                ..
            } => json!({
                "id": self.id_for(id),
                "type": "command_execution",
                "command": command,
                "aggregated_output": aggregated_output,
                "exit_code": exit_code,
                "status": status_str(*status),
            }),
            ThreadItem::FileChange {
                id,
                changes,
                status,
                ..
            } => {
                let changes: Vec<Value> = changes
                    .iter()
                    .map(|c| {
                        json!({"path": c.path.display().to_string(), "kind": match c.kind {
                            FileChangeKind::Add => "add",
                            FileChangeKind::Update => "update",
                            FileChangeKind::Delete => "delete",
                        }})
                    })
                    .collect();
                json!({"id": self.id_for(id), "type": "file_change", "changes": changes, "status": status_str(*status)})
            }
            ThreadItem::McpToolCall {
                id,
                server,
                tool,
                arguments,
                result,
                error,
                status,
            } => json!({
                "id": self.id_for(id),
                "type": "mcp_tool_call",
                "server": server,
                "tool": tool,
                "arguments": arguments,
                "result": result.as_ref().map(|r| json!({"content": r.content, "structured_content": r.structured_content})),
                "error": error.as_ref().map(|message| json!({"message": message})),
                "status": status_str(*status),
            }),
            ThreadItem::TodoList { id, items } => {
                let exec_id = self.id_for(id);
                let first = self.open_todo.is_none();
                self.open_todo = Some((exec_id.clone(), items.clone()));
                let kind = if first {
                    "item.started"
                } else {
                    "item.updated"
                };
                return vec![json!({"type": kind, "item": todo_json(&exec_id, items)})];
            }
            ThreadItem::Error { id, message } => {
                json!({"id": self.id_for(id), "type": "error", "message": message})
            }
        };
        vec![json!({"type": kind, "item": value})]
    }

    fn close_todo(&mut self) -> Vec<Value> {
        match self.open_todo.take() {
            Some((id, items)) => {
                vec![json!({"type": "item.completed", "item": todo_json(&id, &items)})]
            }
            None => Vec::new(),
        }
    }
}

fn todo_json(id: &str, items: &[TodoEntry]) -> Value {
    let items: Vec<Value> = items
        .iter()
        .map(|e| json!({"text": e.text, "completed": e.completed}))
        .collect();
    json!({"id": id, "type": "todo_list", "items": items})
}

/// Why a turn stopped early, in plain words.
pub(crate) fn abort_message(reason: osprey_protocol::AbortReason) -> &'static str {
    match reason {
        osprey_protocol::AbortReason::Interrupted => "the turn was interrupted",
        osprey_protocol::AbortReason::ApprovalAborted => {
            "the turn was aborted at an approval request"
        }
        osprey_protocol::AbortReason::Replaced => "the turn was replaced by a new one",
        osprey_protocol::AbortReason::Shutdown => "the session shut down",
    }
}

pub(crate) fn status_str(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::InProgress => "in_progress",
        ItemStatus::Completed => "completed",
        ItemStatus::Failed => "failed",
        ItemStatus::Declined => "declined",
    }
}

fn usage_json(usage: &TokenUsage) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "cache_write_input_tokens": 0,
        "output_tokens": usage.output_tokens,
        "reasoning_output_tokens": usage.reasoning_output_tokens,
    })
}
