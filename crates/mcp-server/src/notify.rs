//! What the client hears while a turn runs.
//!
//! Every event of the thread goes out as an `osprey/event` notification whose params are the
//! event's JSON (`thread_id`, `turn_id`, `msg`) plus `_meta: {requestId, threadId}`, so a
//! client can tie it to its `tools/call`. This is the envelope of Codex's `codex/event`
//! notification; the method carries Osprey's name because the event bodies are Osprey's
//! (see `osprey-protocol`), not Codex's.
//!
//! When the `tools/call` request carried a progress token, the events a person would want to
//! see (a command starting or ending, a message, an approval wait, a warning) also go out as
//! standard `notifications/progress` with a one-line message. The progress value counts
//! those notifications; the total is unknown. Clients that reset their tool-call timeout on
//! progress keep long turns alive this way.

use osprey_protocol::{AbortReason, Event, EventMsg, ItemStatus, ThreadItem};
use rmcp::model::{CustomNotification, JsonObject, RequestId};
use serde_json::{Value, json};

/// The method of the per-event notification.
pub const EVENT_METHOD: &str = "osprey/event";

/// Longest progress message; longer texts are cut at a character boundary with "…".
const PROGRESS_MESSAGE_CHARS: usize = 200;

/// The `osprey/event` notification for one event.
pub fn event_notification(event: &Event, request_id: &RequestId) -> CustomNotification {
    let mut params = match serde_json::to_value(event) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    params.insert(
        "_meta".to_string(),
        json!({
            "requestId": request_id,
            "threadId": event.thread_id.to_string(),
        }),
    );
    CustomNotification::new(EVENT_METHOD, Some(Value::Object(params)))
}

/// A one-line description of the event for `notifications/progress`, or `None` for events
/// that are too small (deltas) or too internal (token counts) to report.
pub fn progress_message(msg: &EventMsg) -> Option<String> {
    let text = match msg {
        EventMsg::TurnStarted => "turn started".to_string(),
        EventMsg::TurnCompleted { .. } => "turn completed".to_string(),
        EventMsg::TurnFailed { error, .. } => format!("turn failed: {error}"),
        EventMsg::TurnAborted { reason } => format!("turn aborted: {}", abort_text(*reason)),
        EventMsg::ItemStarted { item } => item_started(item)?,
        EventMsg::ItemCompleted { item } => item_completed(item)?,
        EventMsg::ApprovalRequested(request) => {
            format!(
                "waiting for approval: {}",
                crate::approval::approval_message(request)
            )
        }
        EventMsg::Warning { message } => format!("warning: {message}"),
        EventMsg::Error { error } => format!("error: {error}"),
        EventMsg::Compacted { .. } => "history compacted".to_string(),
        EventMsg::ThreadStarted { .. }
        | EventMsg::ItemUpdated { .. }
        | EventMsg::AgentMessageDelta { .. }
        | EventMsg::ReasoningDelta { .. }
        | EventMsg::CommandOutputDelta { .. }
        | EventMsg::TokenCount { .. }
        | EventMsg::PlanUpdate { .. }
        | EventMsg::CollabAgentSpawnBegin { .. }
        | EventMsg::CollabAgentSpawnEnd { .. }
        | EventMsg::CollabAgentInteractionBegin { .. }
        | EventMsg::CollabAgentInteractionEnd { .. }
        | EventMsg::CollabWaitingBegin { .. }
        | EventMsg::CollabWaitingEnd { .. }
        | EventMsg::CollabCloseBegin { .. }
        | EventMsg::CollabCloseEnd { .. }
        | EventMsg::ShutdownComplete => return None,
    };
    Some(shorten(&text))
}

/// Why a turn stopped early, in words (matched without a wildcard so a new reason must be
/// worded here).
fn abort_text(reason: AbortReason) -> &'static str {
    match reason {
        AbortReason::Interrupted => "interrupted",
        AbortReason::ApprovalAborted => "aborted at an approval request",
        AbortReason::Replaced => "replaced by a new turn",
        AbortReason::Shutdown => "the session shut down",
    }
}

fn item_started(item: &ThreadItem) -> Option<String> {
    match item {
        ThreadItem::CommandExecution { command, .. } => Some(format!("running `{command}`")),
        ThreadItem::FileChange { changes, .. } => {
            let paths: Vec<String> = changes
                .iter()
                .map(|c| c.path.display().to_string())
                .collect();
            Some(format!("editing {}", paths.join(", ")))
        }
        ThreadItem::McpToolCall { server, tool, .. } => {
            Some(format!("calling `{tool}` on MCP server `{server}`"))
        }
        ThreadItem::UserMessage { .. }
        | ThreadItem::AgentMessage { .. }
        | ThreadItem::Reasoning { .. }
        | ThreadItem::TodoList { .. }
        | ThreadItem::CollabAgentToolCall { .. }
        | ThreadItem::Error { .. } => None,
    }
}

fn item_completed(item: &ThreadItem) -> Option<String> {
    match item {
        ThreadItem::AgentMessage { text, .. } => Some(text.clone()),
        ThreadItem::Reasoning { text, .. } => Some(format!("thinking: {text}")),
        ThreadItem::CommandExecution {
            command,
            exit_code,
            status,
            ..
        } => Some(match (status, exit_code) {
            (ItemStatus::Declined, _) => format!("not run: `{command}`"),
            (_, Some(code)) => format!("`{command}` exited with {code}"),
            (_, None) => format!("`{command}` ended without an exit code"),
        }),
        ThreadItem::FileChange { status, error, .. } => Some(match (status, error) {
            (_, Some(error)) => format!("file change failed: {error}"),
            (ItemStatus::Declined, None) => "file change not applied".to_string(),
            _ => "files changed".to_string(),
        }),
        ThreadItem::McpToolCall {
            server,
            tool,
            error,
            ..
        } => Some(match error {
            Some(error) => format!("`{tool}` on `{server}` failed: {error}"),
            None => format!("`{tool}` on `{server}` returned"),
        }),
        ThreadItem::TodoList { items, .. } => {
            let done = items.iter().filter(|i| i.completed).count();
            Some(format!("plan: {done} of {} steps done", items.len()))
        }
        ThreadItem::Error { message, .. } => Some(format!("error: {message}")),
        ThreadItem::UserMessage { .. } | ThreadItem::CollabAgentToolCall { .. } => None,
    }
}

fn shorten(text: &str) -> String {
    let line = text.trim().replace('\n', " ");
    if line.chars().count() <= PROGRESS_MESSAGE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(PROGRESS_MESSAGE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::{CommandSource, ThreadId, TokenUsage, TurnId};
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    #[test]
    fn event_notification_carries_the_event_and_request_meta() {
        let thread_id = ThreadId::new();
        let event = Event {
            thread_id,
            turn_id: Some(TurnId("turn-1".to_string())),
            msg: EventMsg::TurnStarted,
        };
        let note = event_notification(&event, &RequestId::String("req-9".into()));
        assert_eq!(note.method, "osprey/event");
        assert_eq!(
            note.params.unwrap(),
            json!({
                "thread_id": thread_id.to_string(),
                "turn_id": "turn-1",
                "msg": {"type": "turn_started"},
                "_meta": {"requestId": "req-9", "threadId": thread_id.to_string()}
            })
        );
    }

    #[test]
    fn progress_messages_describe_what_a_person_would_watch() {
        let command = ThreadItem::CommandExecution {
            id: "c".to_string(),
            command: "ls -la".to_string(),
            cwd: PathBuf::from("/r"),
            aggregated_output: String::new(),
            exit_code: Some(0),
            status: ItemStatus::Completed,
            source: CommandSource::Agent,
            sandbox_denial: None,
        };
        assert_eq!(
            progress_message(&EventMsg::ItemStarted {
                item: command.clone()
            }),
            Some("running `ls -la`".to_string())
        );
        assert_eq!(
            progress_message(&EventMsg::ItemCompleted { item: command }),
            Some("`ls -la` exited with 0".to_string())
        );
        assert_eq!(
            progress_message(&EventMsg::AgentMessageDelta {
                item_id: "m".to_string(),
                delta: "x".to_string()
            }),
            None
        );
        assert_eq!(
            progress_message(&EventMsg::TokenCount {
                last: TokenUsage::default(),
                total: TokenUsage::default()
            }),
            None
        );
        let long = "é".repeat(500);
        let message = progress_message(&EventMsg::ItemCompleted {
            item: ThreadItem::AgentMessage {
                id: "m".to_string(),
                text: long,
            },
        })
        .unwrap();
        assert_eq!(message.chars().count(), PROGRESS_MESSAGE_CHARS);
        assert!(message.ends_with('…'));
    }

    /// Regression: the abort reason was shown as Rust Debug text ("turn aborted (Interrupted)").
    #[test]
    fn aborted_turns_say_why_in_words() {
        let shown = |reason| progress_message(&EventMsg::TurnAborted { reason }).unwrap();
        assert_eq!(shown(AbortReason::Interrupted), "turn aborted: interrupted");
        assert_eq!(
            shown(AbortReason::ApprovalAborted),
            "turn aborted: aborted at an approval request"
        );
        assert_eq!(
            shown(AbortReason::Replaced),
            "turn aborted: replaced by a new turn"
        );
        assert_eq!(
            shown(AbortReason::Shutdown),
            "turn aborted: the session shut down"
        );
    }
}
