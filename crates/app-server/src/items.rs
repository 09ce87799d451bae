//! Core's thread items and errors in the app server's wire shapes.

use std::path::Path;

use osprey_app_server_protocol as wire;
use osprey_protocol as core;
use serde_json::{Value, json};

use crate::convert::{path_text, text_input};

/// When an item started and (once it has) completed, in Unix milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ItemTimes {
    pub started_at_ms: Option<i64>,
    pub completed_at_ms: Option<i64>,
}

/// A core item as the wire's. `user_content` replaces a user message's text with the input
/// the client sent (images included), when the server still has it.
pub fn wire_item(
    item: &core::ThreadItem,
    times: ItemTimes,
    user_content: Option<&[wire::UserInput]>,
) -> Option<wire::ThreadItem> {
    let details = match item {
        core::ThreadItem::UserMessage { id, text, images } => {
            wire::ThreadItemDetails::UserMessage {
                id: id.clone(),
                client_id: None,
                content: user_content
                    .map(<[wire::UserInput]>::to_vec)
                    .unwrap_or_else(|| {
                        images
                            .iter()
                            .map(|path| wire::UserInput::LocalImage {
                                path: path_text(path),
                                detail: None,
                            })
                            .chain(std::iter::once(text_input(text)))
                            .collect()
                    }),
            }
        }
        core::ThreadItem::AgentMessage { id, text } => wire::ThreadItemDetails::AgentMessage {
            id: id.clone(),
            text: text.clone(),
            phase: None,
            moderation: None,
            memory_citation: None,
            delivery: None,
            questions: None,
        },
        core::ThreadItem::Reasoning { id, text } => wire::ThreadItemDetails::Reasoning {
            id: id.clone(),
            summary: if text.is_empty() {
                Vec::new()
            } else {
                vec![text.clone()]
            },
            content: Vec::new(),
        },
        core::ThreadItem::CommandExecution {
            id,
            command,
            cwd,
            aggregated_output,
            exit_code,
            status,
            source,
            ..
        } => command_item(
            id,
            command,
            cwd,
            aggregated_output,
            *exit_code,
            *status,
            *source,
            times,
        ),
        core::ThreadItem::FileChange {
            id,
            changes,
            status,
            ..
        } => wire::ThreadItemDetails::FileChange {
            id: id.clone(),
            changes: changes.iter().map(file_change).collect(),
            status: match status {
                core::ItemStatus::InProgress => wire::PatchApplyStatus::InProgress,
                core::ItemStatus::Completed => wire::PatchApplyStatus::Completed,
                core::ItemStatus::Failed => wire::PatchApplyStatus::Failed,
                core::ItemStatus::Declined => wire::PatchApplyStatus::Declined,
            },
        },
        core::ThreadItem::McpToolCall {
            id,
            server,
            tool,
            arguments,
            result,
            error,
            status,
        } => wire::ThreadItemDetails::McpToolCall {
            id: id.clone(),
            server: server.clone(),
            environment_id: None,
            tool: tool.clone(),
            status: match status {
                core::ItemStatus::InProgress => wire::McpToolCallStatus::InProgress,
                core::ItemStatus::Completed => wire::McpToolCallStatus::Completed,
                core::ItemStatus::Failed | core::ItemStatus::Declined => {
                    wire::McpToolCallStatus::Failed
                }
            },
            arguments: arguments.clone(),
            app_context: None,
            mcp_app_ui: None,
            plugin_id: None,
            read_only_hint: None,
            result: result
                .as_ref()
                .map(|r| json!({"content": r.content, "structuredContent": r.structured_content})),
            error: error.as_ref().map(|message| json!({ "message": message })),
            duration_ms: duration(times),
        },
        // `update_plan` reaches the wire as `turn/plan/updated` (see `crate::plan`), as in
        // Codex, whose `plan` item is for plan-mode proposals.
        core::ThreadItem::TodoList { .. } => return None,
        // Not an item on this wire: the server sends it as a `warning` notification.
        core::ThreadItem::Error { .. } => return None,
        core::ThreadItem::CollabAgentToolCall {
            id,
            tool,
            status,
            sender_thread_id,
            receiver_thread_ids,
            prompt,
            model,
            reasoning_effort,
            agents_states,
            ..
        } => wire::ThreadItemDetails::CollabAgentToolCall {
            id: id.clone(),
            tool: match tool {
                core::CollabAgentTool::SpawnAgent => wire::CollabAgentTool::SpawnAgent,
                core::CollabAgentTool::SendInput => wire::CollabAgentTool::SendInput,
                core::CollabAgentTool::ResumeAgent => wire::CollabAgentTool::ResumeAgent,
                core::CollabAgentTool::Wait => wire::CollabAgentTool::Wait,
                core::CollabAgentTool::CloseAgent => wire::CollabAgentTool::CloseAgent,
            },
            status: match status {
                core::ItemStatus::InProgress => wire::CollabAgentToolCallStatus::InProgress,
                core::ItemStatus::Completed => wire::CollabAgentToolCallStatus::Completed,
                core::ItemStatus::Failed | core::ItemStatus::Declined => {
                    wire::CollabAgentToolCallStatus::Failed
                }
            },
            sender_thread_id: sender_thread_id.to_string(),
            receiver_thread_ids: receiver_thread_ids.clone(),
            prompt: prompt.clone(),
            model: model.clone(),
            reasoning_effort: reasoning_effort
                .and_then(|e| serde_json::to_value(e).ok())
                .and_then(|v| v.as_str().map(str::to_string)),
            agents_states: agents_states
                .iter()
                .map(|(id, state)| (id.clone(), collab_state(state)))
                .collect(),
        },
    };
    Some(wire::ThreadItem {
        details,
        started_at_ms: times.started_at_ms,
        completed_at_ms: times.completed_at_ms,
    })
}

/// The same item under another id.
pub fn renamed(item: &core::ThreadItem, new_id: &str) -> core::ThreadItem {
    let mut item = item.clone();
    match &mut item {
        core::ThreadItem::UserMessage { id, .. }
        | core::ThreadItem::AgentMessage { id, .. }
        | core::ThreadItem::Reasoning { id, .. }
        | core::ThreadItem::CommandExecution { id, .. }
        | core::ThreadItem::FileChange { id, .. }
        | core::ThreadItem::McpToolCall { id, .. }
        | core::ThreadItem::TodoList { id, .. }
        | core::ThreadItem::CollabAgentToolCall { id, .. }
        | core::ThreadItem::Error { id, .. } => *id = new_id.to_owned(),
    }
    item
}

/// An agent's state as the app server shows it: `{status: "pendingInit" | "running" |
/// "interrupted" | "completed" | "errored" | "shutdown" | "notFound", message}`.
fn collab_state(state: &core::AgentStatus) -> Value {
    let status = match state {
        core::AgentStatus::PendingInit => "pendingInit",
        core::AgentStatus::Running => "running",
        core::AgentStatus::Interrupted => "interrupted",
        core::AgentStatus::Completed(_) => "completed",
        core::AgentStatus::Errored(_) => "errored",
        core::AgentStatus::Shutdown => "shutdown",
        core::AgentStatus::NotFound => "notFound",
    };
    json!({ "status": status, "message": state.message() })
}

fn duration(times: ItemTimes) -> Option<i64> {
    Some(times.completed_at_ms? - times.started_at_ms?)
}

#[allow(clippy::too_many_arguments)]
fn command_item(
    id: &str,
    command: &str,
    cwd: &Path,
    aggregated_output: &str,
    exit_code: Option<i32>,
    status: core::ItemStatus,
    source: core::CommandSource,
    times: ItemTimes,
) -> wire::ThreadItemDetails {
    let done = status != core::ItemStatus::InProgress;
    wire::ThreadItemDetails::CommandExecution {
        id: id.to_owned(),
        plugin_id: None,
        script_path: None,
        command: command.to_owned(),
        cwd: path_text(cwd),
        process_id: None,
        source: match source {
            core::CommandSource::Agent => wire::CommandExecutionSource::UnifiedExecStartup,
            core::CommandSource::User => wire::CommandExecutionSource::UserShell,
        },
        status: match status {
            core::ItemStatus::InProgress => wire::CommandExecutionStatus::InProgress,
            core::ItemStatus::Completed => wire::CommandExecutionStatus::Completed,
            core::ItemStatus::Failed => wire::CommandExecutionStatus::Failed,
            core::ItemStatus::Declined => wire::CommandExecutionStatus::Declined,
        },
        command_actions: crate::command_actions::command_actions(command),
        aggregated_output: (done && !aggregated_output.is_empty())
            .then(|| aggregated_output.to_owned()),
        exit_code,
        duration_ms: if done { duration(times) } else { None },
    }
}

fn file_change(change: &core::FileChangeSummary) -> wire::FileUpdateChange {
    wire::FileUpdateChange {
        path: path_text(&change.path),
        kind: match change.kind {
            core::FileChangeKind::Add => wire::PatchChangeKind::Add,
            core::FileChangeKind::Delete => wire::PatchChangeKind::Delete,
            core::FileChangeKind::Update => wire::PatchChangeKind::Update {
                move_path: change.move_path.as_deref().map(path_text),
            },
        },
        diff: match change.kind {
            // Codex sends an added file's content, not a hunk.
            core::FileChangeKind::Add => change
                .diff
                .as_deref()
                .map(added_content)
                .unwrap_or_default(),
            _ => change.diff.clone().unwrap_or_default(),
        },
    }
}

/// The content of an added file from its unified diff (the `+` lines).
fn added_content(diff: &str) -> String {
    if !diff.starts_with("@@") && !diff.starts_with("---") && !diff.starts_with("diff ") {
        return diff.to_owned();
    }
    let mut content = String::new();
    for line in diff.lines() {
        if line.starts_with("+++") {
            continue;
        }
        if let Some(text) = line.strip_prefix('+') {
            content.push_str(text);
            content.push('\n');
        }
    }
    content
}

/// A turn error as the wire's, with Codex's `codexErrorInfo` names.
pub fn turn_error(error: &core::WireError) -> wire::TurnError {
    let info = match error.kind {
        core::ErrorKind::ContextWindowExceeded => "contextWindowExceeded",
        core::ErrorKind::QuotaExceeded => "usageLimitExceeded",
        core::ErrorKind::RateLimited => "rateLimitExceeded",
        core::ErrorKind::Unauthorized => "unauthorized",
        core::ErrorKind::BadRequest => "badRequest",
        core::ErrorKind::ServerError => "internalServerError",
        core::ErrorKind::ConnectionFailed => {
            return wire::TurnError {
                message: error.message.clone(),
                codex_error_info: Some(json!({"httpConnectionFailed": {"httpStatusCode": null}})),
                additional_details: None,
                misalignment: None,
            };
        }
        core::ErrorKind::StreamFailed => {
            return wire::TurnError {
                message: error.message.clone(),
                codex_error_info: Some(
                    json!({"responseStreamDisconnected": {"httpStatusCode": null}}),
                ),
                additional_details: None,
                misalignment: None,
            };
        }
        core::ErrorKind::Sandbox => "sandboxError",
        _ => "other",
    };
    wire::TurnError {
        message: error.message.clone(),
        codex_error_info: Some(Value::String(info.to_owned())),
        additional_details: None,
        misalignment: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_finished_command_carries_output_exit_code_and_duration() {
        let item = core::ThreadItem::CommandExecution {
            id: "call_1".into(),
            command: "/bin/bash -lc 'cat README.md'".into(),
            cwd: "/work".into(),
            aggregated_output: "hello\n".into(),
            exit_code: Some(0),
            status: core::ItemStatus::Completed,
            source: core::CommandSource::Agent,
            sandbox_denial: None,
        };
        let times = ItemTimes {
            started_at_ms: Some(1000),
            completed_at_ms: Some(1250),
        };
        let wire = serde_json::to_value(wire_item(&item, times, None).unwrap()).unwrap();
        assert_eq!(wire["type"], "commandExecution");
        assert_eq!(wire["aggregatedOutput"], "hello\n");
        assert_eq!(wire["exitCode"], 0);
        assert_eq!(wire["durationMs"], 250);
        assert_eq!(wire["status"], "completed");
        assert_eq!(wire["commandActions"][0]["type"], "read");
        assert_eq!(wire["startedAtMs"], 1000);
    }

    #[test]
    fn errors_use_codex_error_names() {
        let e = core::WireError::new(core::ErrorKind::ContextWindowExceeded, "full");
        assert_eq!(
            turn_error(&e).codex_error_info,
            Some(json!("contextWindowExceeded"))
        );
        let e = core::WireError::new(core::ErrorKind::ServerError, "boom");
        assert_eq!(
            turn_error(&e).codex_error_info,
            Some(json!("internalServerError"))
        );
    }
}
