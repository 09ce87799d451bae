//! Osprey's event types against Codex's `exec --json` lines (see `tests/codex/README.md`).

use std::collections::BTreeSet;

use osprey_exec_events::{
    CollabAgentState, CollabAgentStatus, CollabTool, ErrorMessage, ExecEvent, ExecItem,
    FileChangeKind, FileUpdateChange, ItemDetails, ItemStatus, McpToolCallResult, TodoItem, Usage,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const CODEX_FILES: &[(&str, &str)] = &[
    (
        "formats-doc.jsonl",
        include_str!("../codex/formats-doc.jsonl"),
    ),
    ("collab-v1.jsonl", include_str!("../codex/collab-v1.jsonl")),
    (
        "documented.jsonl",
        include_str!("../codex/documented.jsonl"),
    ),
];

fn codex_lines() -> Vec<(String, &'static str)> {
    CODEX_FILES
        .iter()
        .flat_map(|(file, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(move |(i, line)| (format!("{file}:{}", i + 1), line))
        })
        .collect()
}

/// The kind of a line: the event `type`, plus the item `type` for item events.
fn kind_of(value: &Value) -> String {
    match value["item"]["type"].as_str() {
        Some(item) => format!("{} {item}", value["type"].as_str().unwrap_or("?")),
        None => value["type"].as_str().unwrap_or("?").to_owned(),
    }
}

/// Every key path in `value`, in order of appearance (`item.result.content`, …). Arrays
/// contribute the paths of their elements; values inside `arguments`, `content` and
/// `structured_content` are the tools' own and not part of the schema.
fn key_paths(value: &Value, prefix: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                out.push(path.clone());
                let opaque = matches!(
                    key.as_str(),
                    "arguments" | "content" | "structured_content" | "agents_states"
                );
                if !opaque {
                    key_paths(child, &path, out);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                key_paths(item, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

fn paths(value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    key_paths(value, "", &mut out);
    // Arrays repeat their element paths; keep the first of each, in order.
    let mut seen = BTreeSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

#[test]
fn every_codex_line_reads_into_our_types_and_writes_back_unchanged() {
    let lines = codex_lines();
    assert!(lines.len() >= 40, "only {} reference lines", lines.len());
    for (at, line) in lines {
        let event: ExecEvent = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{at}: does not read as an ExecEvent ({e}): {line}"));
        let value: Value = serde_json::from_str(line).unwrap();
        // Compared as JSON values: key order inside free-form payloads (MCP content) follows
        // serde_json's map, which the workspace does not make order-preserving.
        let written: Value = serde_json::from_str(&event.to_json_line()).unwrap();
        assert_eq!(written, value, "{at}");
        assert_eq!(value["type"], event.kind(), "{at}");
    }
}

/// One event of every kind (event type × item type), so that a new variant needs a Codex
/// reference line before it ships.
fn one_of_each() -> Vec<ExecEvent> {
    let item = |details| ExecItem::new("item_0", details);
    let command = |status, exit_code| ItemDetails::CommandExecution {
        command: "/bin/bash -lc 'make'".into(),
        aggregated_output: "ok\n".into(),
        exit_code,
        status,
    };
    vec![
        ExecEvent::ThreadStarted {
            thread_id: "01a229d9-0000-7000-8000-000000000000".into(),
        },
        ExecEvent::TurnStarted,
        ExecEvent::TurnCompleted {
            usage: Usage {
                input_tokens: 10,
                cached_input_tokens: 2,
                cache_write_input_tokens: 0,
                output_tokens: 3,
                reasoning_output_tokens: 1,
            },
        },
        ExecEvent::TurnFailed {
            error: ErrorMessage::new("boom"),
        },
        ExecEvent::Error {
            message: "boom".into(),
        },
        ExecEvent::ItemStarted {
            item: item(command(ItemStatus::InProgress, None)),
        },
        ExecEvent::ItemCompleted {
            item: item(command(ItemStatus::Failed, Some(2))),
        },
        ExecEvent::ItemCompleted {
            item: item(ItemDetails::AgentMessage { text: "hi".into() }),
        },
        ExecEvent::ItemCompleted {
            item: item(ItemDetails::Reasoning { text: "hmm".into() }),
        },
        ExecEvent::ItemCompleted {
            item: item(ItemDetails::FileChange {
                changes: vec![FileUpdateChange {
                    path: "/w/a.txt".into(),
                    kind: FileChangeKind::Update,
                }],
                status: ItemStatus::Completed,
            }),
        },
        ExecEvent::ItemStarted {
            item: item(ItemDetails::McpToolCall {
                server: "s".into(),
                tool: "t".into(),
                arguments: json!({"a": 1}),
                result: None,
                error: None,
                status: ItemStatus::InProgress,
            }),
        },
        ExecEvent::ItemCompleted {
            item: item(ItemDetails::McpToolCall {
                server: "s".into(),
                tool: "t".into(),
                arguments: json!({"a": 1}),
                result: Some(McpToolCallResult {
                    content: vec![json!({"type": "text", "text": "x"})],
                    structured_content: None,
                }),
                error: None,
                status: ItemStatus::Completed,
            }),
        },
        ExecEvent::ItemCompleted {
            item: item(ItemDetails::McpToolCall {
                server: "s".into(),
                tool: "t".into(),
                arguments: json!({}),
                result: None,
                error: Some(ErrorMessage::new("timed out")),
                status: ItemStatus::Failed,
            }),
        },
        ExecEvent::ItemCompleted {
            item: item(ItemDetails::CollabToolCall {
                tool: CollabTool::SpawnAgent,
                sender_thread_id: "a".into(),
                receiver_thread_ids: vec!["b".into()],
                prompt: Some("go".into()),
                agents_states: [(
                    "b".to_owned(),
                    CollabAgentState {
                        status: CollabAgentStatus::PendingInit,
                        message: None,
                    },
                )]
                .into_iter()
                .collect(),
                status: ItemStatus::Completed,
            }),
        },
        ExecEvent::ItemUpdated {
            item: item(ItemDetails::TodoList {
                items: vec![TodoItem {
                    text: "one".into(),
                    completed: false,
                }],
            }),
        },
        ExecEvent::ItemCompleted {
            item: item(ItemDetails::Error {
                message: "careful".into(),
            }),
        },
    ]
}

#[test]
fn every_event_kind_serialises_with_the_field_names_codex_uses() {
    let reference: Vec<(String, Value)> = codex_lines()
        .into_iter()
        .map(|(at, line)| (at, serde_json::from_str(line).unwrap()))
        .collect();
    let mut kinds_checked = BTreeSet::new();
    for event in one_of_each() {
        let ours: Value = serde_json::to_value(&event).unwrap();
        let kind = kind_of(&ours);
        // Compare against every Codex line of the same kind whose optional parts (result,
        // error) are present or absent alike.
        let shape = |v: &Value| {
            (
                v["item"]["result"].is_null(),
                v["item"]["error"].is_null(),
                v["item"]["exit_code"].is_null(),
            )
        };
        let matches: Vec<&(String, Value)> = reference
            .iter()
            .filter(|(_, v)| kind_of(v) == kind && shape(v) == shape(&ours))
            .collect();
        assert!(
            !matches.is_empty(),
            "no Codex reference line of kind `{kind}` with this shape: {ours}"
        );
        for (at, theirs) in matches {
            assert_eq!(paths(&ours), paths(theirs), "{kind} against {at}");
        }
        kinds_checked.insert(kind);
    }
    // Every item type appears under some event.
    let item_types: BTreeSet<&str> = one_of_each()
        .iter()
        .filter_map(|e| match e {
            ExecEvent::ItemStarted { item }
            | ExecEvent::ItemUpdated { item }
            | ExecEvent::ItemCompleted { item } => Some(item.details.kind()),
            ExecEvent::ThreadStarted { .. }
            | ExecEvent::TurnStarted
            | ExecEvent::TurnCompleted { .. }
            | ExecEvent::TurnFailed { .. }
            | ExecEvent::Error { .. } => None,
        })
        .collect();
    assert_eq!(
        item_types.into_iter().collect::<Vec<_>>(),
        [
            "agent_message",
            "collab_tool_call",
            "command_execution",
            "error",
            "file_change",
            "mcp_tool_call",
            "reasoning",
            "todo_list"
        ]
    );
    assert!(kinds_checked.len() >= 14, "{kinds_checked:?}");
}

#[test]
fn missing_optional_fields_read_as_codex_writes_them() {
    // Older Codex versions report only three usage counters; an MCP call without arguments
    // reads as `null` arguments.
    let event: ExecEvent = serde_json::from_str(
        r#"{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":2}}"#,
    )
    .unwrap();
    assert_eq!(
        event,
        ExecEvent::TurnCompleted {
            usage: Usage {
                input_tokens: 1,
                output_tokens: 2,
                ..Usage::default()
            }
        }
    );
    let event: ExecEvent = serde_json::from_str(
        r#"{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"s","tool":"t","result":null,"error":null,"status":"in_progress"}}"#,
    )
    .unwrap();
    let ExecEvent::ItemStarted { item } = event else {
        panic!("expected item.started");
    };
    assert!(matches!(
        item.details,
        ItemDetails::McpToolCall {
            arguments: Value::Null,
            ..
        }
    ));
}
