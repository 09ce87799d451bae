//! `--json`: one JSON object per line on stdout, in the reference CLI's `exec --json` schema.
//!
//! This is the one place where core [`Event`]s become [`ExecEvent`]s (the typed schema in
//! `osprey-exec-events`). Core item ids are mapped to `item_0`, `item_1`, … in order of first
//! appearance. Agent messages and reasoning are only reported when complete; commands, file
//! changes and MCP calls are reported when they start and when they end; the plan
//! (`todo_list`) starts with the first update, is updated with each later one and completes
//! when the turn ends.

use osprey_exec_events::{
    ErrorMessage, ExecEvent, ExecItem, FileChangeKind, FileUpdateChange, ItemDetails, ItemStatus,
    McpToolCallResult, TodoItem, Usage,
};
use osprey_protocol::{AbortReason, Event, EventMsg, ThreadItem, TodoEntry, TokenUsage};
use std::collections::HashMap;
use std::io::Write;

#[derive(Default)]
pub struct JsonEventWriter {
    ids: HashMap<String, String>,
    next_id: u64,
    open_todo: Option<(String, Vec<TodoEntry>)>,
}

/// Which lifecycle event an item change is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Started,
    Updated,
    Completed,
}

impl JsonEventWriter {
    pub fn write_event(&mut self, out: &mut dyn Write, event: &Event) -> std::io::Result<()> {
        for line in self.events_for(event) {
            serde_json::to_writer(&mut *out, &line)?;
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    /// The exec events one core event turns into (often none).
    pub fn events_for(&mut self, event: &Event) -> Vec<ExecEvent> {
        match &event.msg {
            EventMsg::ThreadStarted { .. } => vec![ExecEvent::ThreadStarted {
                thread_id: event.thread_id.to_string(),
            }],
            EventMsg::TurnStarted => vec![ExecEvent::TurnStarted],
            EventMsg::TurnCompleted { usage, .. } => {
                let mut events = self.close_todo();
                events.push(ExecEvent::TurnCompleted {
                    usage: usage_of(usage),
                });
                events
            }
            EventMsg::TurnFailed { error, .. } => {
                let mut events = self.close_todo();
                events.push(ExecEvent::Error {
                    message: error.message.clone(),
                });
                events.push(ExecEvent::TurnFailed {
                    error: ErrorMessage::new(error.message.clone()),
                });
                events
            }
            EventMsg::TurnAborted { reason } => {
                let mut events = self.close_todo();
                events.push(ExecEvent::TurnFailed {
                    error: ErrorMessage::new(abort_message(*reason)),
                });
                events
            }
            EventMsg::ItemStarted { item } => self.item_event(Phase::Started, item),
            EventMsg::ItemUpdated { item } => self.item_event(Phase::Updated, item),
            EventMsg::ItemCompleted { item } => self.item_event(Phase::Completed, item),
            EventMsg::Error { error } => vec![ExecEvent::Error {
                message: error.message.clone(),
            }],
            EventMsg::Warning { message } => {
                let id = self.fresh_id();
                vec![ExecEvent::ItemCompleted {
                    item: ExecItem::new(
                        id,
                        ItemDetails::Error {
                            message: message.clone(),
                        },
                    ),
                }]
            }
            EventMsg::AgentMessageDelta { .. }
            | EventMsg::ReasoningDelta { .. }
            | EventMsg::CommandOutputDelta { .. }
            | EventMsg::ApprovalRequested(_)
            | EventMsg::TokenCount { .. }
            | EventMsg::Compacted { .. }
            | EventMsg::ShutdownComplete => Vec::new(),
            // The `todo_list` item the same call updates is what Codex's exec shows.
            EventMsg::PlanUpdate { .. } => Vec::new(),
            // Shown through the `CollabAgentToolCall` item the call emits as well.
            EventMsg::CollabAgentSpawnBegin { .. }
            | EventMsg::CollabAgentSpawnEnd { .. }
            | EventMsg::CollabAgentInteractionBegin { .. }
            | EventMsg::CollabAgentInteractionEnd { .. }
            | EventMsg::CollabWaitingBegin { .. }
            | EventMsg::CollabWaitingEnd { .. }
            | EventMsg::CollabCloseBegin { .. }
            | EventMsg::CollabCloseEnd { .. } => Vec::new(),
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

    fn item_event(&mut self, phase: Phase, item: &ThreadItem) -> Vec<ExecEvent> {
        let completed = phase == Phase::Completed;
        let details = match item {
            ThreadItem::UserMessage { .. } => return Vec::new(),
            ThreadItem::AgentMessage { text, .. } => {
                if !completed {
                    return Vec::new();
                }
                ItemDetails::AgentMessage { text: text.clone() }
            }
            ThreadItem::Reasoning { text, .. } => {
                if !completed {
                    return Vec::new();
                }
                ItemDetails::Reasoning { text: text.clone() }
            }
            ThreadItem::CommandExecution {
                command,
                aggregated_output,
                exit_code,
                status,
                ..
            } => ItemDetails::CommandExecution {
                command: command.clone(),
                aggregated_output: aggregated_output.clone(),
                exit_code: *exit_code,
                status: status_of(*status),
            },
            ThreadItem::FileChange {
                changes, status, ..
            } => ItemDetails::FileChange {
                changes: changes
                    .iter()
                    .map(|c| FileUpdateChange {
                        path: c.path.display().to_string(),
                        kind: match c.kind {
                            osprey_protocol::FileChangeKind::Add => FileChangeKind::Add,
                            osprey_protocol::FileChangeKind::Update => FileChangeKind::Update,
                            osprey_protocol::FileChangeKind::Delete => FileChangeKind::Delete,
                        },
                    })
                    .collect(),
                status: status_of(*status),
            },
            ThreadItem::McpToolCall {
                server,
                tool,
                arguments,
                result,
                error,
                status,
                ..
            } => ItemDetails::McpToolCall {
                server: server.clone(),
                tool: tool.clone(),
                arguments: arguments.clone(),
                result: result.as_ref().map(|r| McpToolCallResult {
                    content: r.content.clone(),
                    structured_content: r.structured_content.clone(),
                }),
                error: error.as_ref().map(ErrorMessage::new),
                status: status_of(*status),
            },
            ThreadItem::TodoList { id, items } => {
                // The plan's own lifecycle: started with the first update, then updated;
                // completed by `close_todo` when the turn ends.
                let exec_id = self.id_for(id);
                let first = self.open_todo.is_none();
                self.open_todo = Some((exec_id.clone(), items.clone()));
                let item = todo_item(&exec_id, items);
                return vec![if first {
                    ExecEvent::ItemStarted { item }
                } else {
                    ExecEvent::ItemUpdated { item }
                }];
            }
            ThreadItem::Error { message, .. } => ItemDetails::Error {
                message: message.clone(),
            },
            ThreadItem::CollabAgentToolCall {
                tool,
                status,
                sender_thread_id,
                receiver_thread_ids,
                prompt,
                agents_states,
                ..
            } => collab_details(
                *tool,
                *status,
                sender_thread_id,
                receiver_thread_ids,
                prompt,
                agents_states,
            ),
        };
        let item = ExecItem::new(self.id_for(item.id()), details);
        vec![match phase {
            Phase::Started => ExecEvent::ItemStarted { item },
            Phase::Updated => ExecEvent::ItemUpdated { item },
            Phase::Completed => ExecEvent::ItemCompleted { item },
        }]
    }

    fn close_todo(&mut self) -> Vec<ExecEvent> {
        match self.open_todo.take() {
            Some((id, items)) => vec![ExecEvent::ItemCompleted {
                item: todo_item(&id, &items),
            }],
            None => Vec::new(),
        }
    }
}

/// A collaboration call as Codex's `collab_tool_call` item.
fn collab_details(
    tool: osprey_protocol::CollabAgentTool,
    status: osprey_protocol::ItemStatus,
    sender: &osprey_protocol::ThreadId,
    receivers: &[String],
    prompt: &Option<String>,
    states: &std::collections::BTreeMap<String, osprey_protocol::AgentStatus>,
) -> ItemDetails {
    use osprey_exec_events::{CollabAgentState, CollabAgentStatus, CollabTool};
    use osprey_protocol::{AgentStatus, CollabAgentTool};
    ItemDetails::CollabToolCall {
        tool: match tool {
            CollabAgentTool::SpawnAgent => CollabTool::SpawnAgent,
            CollabAgentTool::SendInput => CollabTool::SendInput,
            CollabAgentTool::ResumeAgent => CollabTool::ResumeAgent,
            CollabAgentTool::Wait => CollabTool::Wait,
            CollabAgentTool::CloseAgent => CollabTool::CloseAgent,
        },
        sender_thread_id: sender.to_string(),
        receiver_thread_ids: receivers.to_vec(),
        prompt: prompt.clone(),
        agents_states: states
            .iter()
            .map(|(id, state)| {
                let status = match state {
                    AgentStatus::PendingInit => CollabAgentStatus::PendingInit,
                    AgentStatus::Running => CollabAgentStatus::Running,
                    AgentStatus::Interrupted => CollabAgentStatus::Interrupted,
                    AgentStatus::Completed(_) => CollabAgentStatus::Completed,
                    AgentStatus::Errored(_) => CollabAgentStatus::Errored,
                    AgentStatus::Shutdown => CollabAgentStatus::Shutdown,
                    AgentStatus::NotFound => CollabAgentStatus::NotFound,
                };
                let message = state.message().map(str::to_string);
                (id.clone(), CollabAgentState { status, message })
            })
            .collect(),
        status: status_of(status),
    }
}

fn todo_item(id: &str, items: &[TodoEntry]) -> ExecItem {
    ExecItem::new(
        id,
        ItemDetails::TodoList {
            items: items
                .iter()
                .map(|e| TodoItem {
                    text: e.text.clone(),
                    completed: e.completed,
                })
                .collect(),
        },
    )
}

/// Why a turn stopped early, in plain words.
pub(crate) fn abort_message(reason: AbortReason) -> &'static str {
    match reason {
        AbortReason::Interrupted => "the turn was interrupted",
        AbortReason::ApprovalAborted => "the turn was aborted at an approval request",
        AbortReason::Replaced => "the turn was replaced by a new one",
        AbortReason::Shutdown => "the session shut down",
    }
}

fn status_of(status: osprey_protocol::ItemStatus) -> ItemStatus {
    match status {
        osprey_protocol::ItemStatus::InProgress => ItemStatus::InProgress,
        osprey_protocol::ItemStatus::Completed => ItemStatus::Completed,
        osprey_protocol::ItemStatus::Failed => ItemStatus::Failed,
        osprey_protocol::ItemStatus::Declined => ItemStatus::Declined,
    }
}

/// The status word the JSON stream uses, for the human transcript too.
pub(crate) fn status_str(status: osprey_protocol::ItemStatus) -> &'static str {
    match status {
        osprey_protocol::ItemStatus::InProgress => "in_progress",
        osprey_protocol::ItemStatus::Completed => "completed",
        osprey_protocol::ItemStatus::Failed => "failed",
        osprey_protocol::ItemStatus::Declined => "declined",
    }
}

fn usage_of(usage: &TokenUsage) -> Usage {
    Usage {
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        cache_write_input_tokens: 0,
        output_tokens: usage.output_tokens,
        reasoning_output_tokens: usage.reasoning_output_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::ItemStatus as CoreStatus;
    use osprey_protocol::{
        AskForApproval, CommandSource, ErrorKind, FileChangeSummary, McpCallResult, SandboxPolicy,
        ThreadId, WireError,
    };
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};
    use std::collections::BTreeSet;
    use std::path::PathBuf;
    use std::str::FromStr;

    /// Codex's `exec --json` lines (see `crates/exec-events/tests/codex/README.md`).
    const CODEX_LINES: &[&str] = &[
        include_str!("../../exec-events/tests/codex/formats-doc.jsonl"),
        include_str!("../../exec-events/tests/codex/collab-v1.jsonl"),
        include_str!("../../exec-events/tests/codex/documented.jsonl"),
    ];

    fn event(msg: EventMsg) -> Event {
        Event {
            thread_id: ThreadId::from_str("01a229d9-5c3e-7a41-9d0e-2f6b1c7d8e90").unwrap(),
            turn_id: None,
            msg,
        }
    }

    fn command(id: &str, output: &str, exit_code: Option<i32>, status: CoreStatus) -> ThreadItem {
        ThreadItem::CommandExecution {
            id: id.into(),
            command: "/bin/bash -lc 'cargo test'".into(),
            cwd: PathBuf::from("/work/repo"),
            aggregated_output: output.into(),
            exit_code,
            status,
            source: CommandSource::Agent,
            sandbox_denial: None,
        }
    }

    fn todo(done: &[bool]) -> ThreadItem {
        ThreadItem::TodoList {
            id: "plan-1".into(),
            items: ["Write the test", "Fix the parser"]
                .iter()
                .zip(done)
                .map(|(text, completed)| TodoEntry {
                    text: (*text).into(),
                    completed: *completed,
                    in_progress: false,
                })
                .collect(),
        }
    }

    fn mcp(
        id: &str,
        result: Option<McpCallResult>,
        error: Option<&str>,
        status: CoreStatus,
    ) -> ThreadItem {
        ThreadItem::McpToolCall {
            id: id.into(),
            server: "docs".into(),
            tool: "search".into(),
            arguments: json!({"q": "landlock", "limit": 3}),
            result,
            error: error.map(str::to_owned),
            status,
        }
    }

    /// A turn that touches every kind of event `exec --json` prints.
    fn representative_turn() -> Vec<Event> {
        use CoreStatus::{Completed, Declined, Failed, InProgress};
        let reasoning = ThreadItem::Reasoning {
            id: "rs_1".into(),
            text: "The parser test fails first.".into(),
        };
        let patch = |status| ThreadItem::FileChange {
            id: "call_patch".into(),
            changes: vec![
                FileChangeSummary {
                    path: PathBuf::from("/work/repo/src/parser.rs"),
                    kind: osprey_protocol::FileChangeKind::Update,
                    diff: Some("@@ -1 +1 @@\n-a\n+b\n".into()),
                    move_path: None,
                },
                FileChangeSummary {
                    path: PathBuf::from("/work/repo/tests/parser.rs"),
                    kind: osprey_protocol::FileChangeKind::Add,
                    diff: None,
                    move_path: None,
                },
            ],
            status,
            error: None,
        };
        let message = |text: &str| ThreadItem::AgentMessage {
            id: "msg_1".into(),
            text: text.into(),
        };
        vec![
            event(EventMsg::ThreadStarted {
                model: "gpt-5".into(),
                model_provider: "openai".into(),
                cwd: PathBuf::from("/work/repo"),
                approval_policy: AskForApproval::Never,
                sandbox_policy: SandboxPolicy::ReadOnly,
                rollout_path: None,
                resumed: false,
            }),
            event(EventMsg::TurnStarted),
            event(EventMsg::ItemStarted {
                item: ThreadItem::UserMessage {
                    id: "user_1".into(),
                    text: "fix the parser".into(),
                    images: Vec::new(),
                },
            }),
            event(EventMsg::ItemStarted {
                item: reasoning.clone(),
            }),
            event(EventMsg::ReasoningDelta {
                item_id: "rs_1".into(),
                delta: "The parser".into(),
            }),
            event(EventMsg::ItemCompleted { item: reasoning }),
            event(EventMsg::ItemCompleted {
                item: todo(&[false, false]),
            }),
            event(EventMsg::ItemStarted {
                item: command("call_1", "", None, InProgress),
            }),
            event(EventMsg::CommandOutputDelta {
                item_id: "call_1".into(),
                chunk: "test parser ... FAILED\n".into(),
            }),
            event(EventMsg::ItemCompleted {
                item: command("call_1", "test parser ... FAILED\n", Some(101), Failed),
            }),
            event(EventMsg::ItemStarted {
                item: patch(InProgress),
            }),
            event(EventMsg::ItemCompleted {
                item: patch(Completed),
            }),
            event(EventMsg::ItemCompleted {
                item: todo(&[true, false]),
            }),
            event(EventMsg::ItemStarted {
                item: mcp("call_2", None, None, InProgress),
            }),
            event(EventMsg::ItemCompleted {
                item: mcp(
                    "call_2",
                    Some(McpCallResult {
                        content: vec![json!({"type": "text", "text": "3 pages"})],
                        structured_content: Some(json!({"hits": 3})),
                    }),
                    None,
                    Completed,
                ),
            }),
            event(EventMsg::ItemStarted {
                item: mcp("call_3", None, None, InProgress),
            }),
            event(EventMsg::ItemCompleted {
                item: mcp(
                    "call_3",
                    None,
                    Some("tool call timed out after 60s"),
                    Failed,
                ),
            }),
            event(EventMsg::ItemCompleted {
                item: command("call_4", "", None, Declined),
            }),
            event(EventMsg::Warning {
                message: "AGENTS.md in /work/repo/docs could not be read".into(),
            }),
            event(EventMsg::TokenCount {
                last: TokenUsage::default(),
                total: TokenUsage::default(),
            }),
            event(EventMsg::ItemStarted { item: message("") }),
            event(EventMsg::AgentMessageDelta {
                item_id: "msg_1".into(),
                delta: "Fixed".into(),
            }),
            event(EventMsg::ItemCompleted {
                item: message("Fixed the parser; the test passes."),
            }),
            event(EventMsg::TurnCompleted {
                last_agent_message: Some("Fixed the parser; the test passes.".into()),
                usage: TokenUsage {
                    input_tokens: 1200,
                    cached_input_tokens: 800,
                    output_tokens: 90,
                    reasoning_output_tokens: 20,
                    total_tokens: 1290,
                },
            }),
            // A second turn of the same run: it fails, then one is interrupted.
            event(EventMsg::TurnStarted),
            event(EventMsg::ItemCompleted {
                item: todo(&[true, true]),
            }),
            event(EventMsg::Error {
                error: WireError::new(ErrorKind::StreamFailed, "stream disconnected; retrying 1/5"),
            }),
            event(EventMsg::TurnFailed {
                error: WireError::new(
                    ErrorKind::StreamFailed,
                    "stream disconnected before completion",
                ),
                usage: TokenUsage::default(),
            }),
            event(EventMsg::TurnStarted),
            event(EventMsg::TurnAborted {
                reason: AbortReason::Interrupted,
            }),
            event(EventMsg::ShutdownComplete),
        ]
    }

    fn jsonl(events: &[Event]) -> String {
        let mut writer = JsonEventWriter::default();
        let mut out = Vec::new();
        for e in events {
            writer.write_event(&mut out, e).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn representative_turn_snapshot() {
        insta::assert_snapshot!(jsonl(&representative_turn()));
    }

    /// The `type` of a line, with the item's `type` for item events.
    fn kind_of(value: &Value) -> String {
        let event = value["type"].as_str().unwrap_or("?");
        match value["item"]["type"].as_str() {
            Some(item) => format!("{event} {item}"),
            None => event.to_owned(),
        }
    }

    /// Every key path of a line (tools' own JSON inside `arguments`, `content` and
    /// `structured_content` left out), deduplicated in order.
    fn key_paths(value: &Value) -> Vec<String> {
        fn walk(value: &Value, prefix: &str, out: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    for (key, child) in map {
                        let path = format!("{prefix}.{key}");
                        if !out.contains(&path) {
                            out.push(path.clone());
                        }
                        if !matches!(key.as_str(), "arguments" | "content" | "structured_content") {
                            walk(child, &path, out);
                        }
                    }
                }
                Value::Array(items) => items
                    .iter()
                    .for_each(|i| walk(i, &format!("{prefix}[]"), out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(value, "", &mut out);
        out
    }

    #[test]
    fn every_line_has_the_keys_of_a_codex_line_of_its_kind() {
        let reference: Vec<Value> = CODEX_LINES
            .iter()
            .flat_map(|text| text.lines())
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let ours = jsonl(&representative_turn());
        let mut kinds = BTreeSet::new();
        for line in ours.lines() {
            let value: Value = serde_json::from_str(line).unwrap();
            let kind = kind_of(&value);
            // Items compare by item type whatever the phase (Osprey also reports a file
            // change when it starts; Codex only when it ends), other events by event type.
            let sort = |v: &Value| match v["item"]["type"].as_str() {
                Some(item) => item.to_owned(),
                None => kind_of(v),
            };
            let same_keys = reference
                .iter()
                .any(|r| sort(r) == sort(&value) && key_paths(r) == key_paths(&value));
            assert!(
                same_keys,
                "no Codex line of kind `{kind}` has the keys of {line}"
            );
            kinds.insert(kind);
        }
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            [
                "error",
                "item.completed agent_message",
                "item.completed command_execution",
                "item.completed error",
                "item.completed file_change",
                "item.completed mcp_tool_call",
                "item.completed reasoning",
                "item.completed todo_list",
                "item.started command_execution",
                "item.started file_change",
                "item.started mcp_tool_call",
                "item.started todo_list",
                "item.updated todo_list",
                "thread.started",
                "turn.completed",
                "turn.failed",
                "turn.started",
            ]
        );
    }
}
