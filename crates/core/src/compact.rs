//! Compaction: replacing a long history by a summary so the thread fits the context window.
//!
//! The model is asked (with our own prompt, no tools) to write a handoff note about the
//! thread. The new history is the thread's fresh initial context (permissions, project
//! instructions, environment), the most recent user messages (bounded), and the note. Base
//! instructions are not part of the history and stay untouched. A `compacted` record with the
//! replacement history goes into the session file, so a resumed thread continues from the
//! compacted history rather than the original.
//!
//! It runs on request (`Op::Compact`), automatically when the last response's token count
//! passes `model_auto_compact_token_limit` (or 90% of `model_context_window`), and once when
//! the provider reports the context window exceeded.

use crate::session::Session;
use crate::turn_context::TurnContext;
use futures::StreamExt;
use osprey_model::{ModelError, Prompt, ResponseEvent};
use osprey_protocol::{EventMsg, ResponseItem, TokenUsage};
use osprey_rollout::{CompactedItem, RolloutItem};

const COMPACT_PROMPT: &str = include_str!("../prompts/compact.md");

/// The prefix of the message that carries the summary in the new history.
pub const SUMMARY_PREFIX: &str =
    "Earlier parts of this conversation were compacted. The handoff note written then:\n\n";

/// How much of the most recent user messages is kept verbatim.
const KEPT_USER_CHARS: usize = 20_000;

/// The token count past which a thread is compacted before its next request.
pub fn auto_compact_limit(session: &Session) -> Option<u64> {
    let config = &session.config;
    match config.model_auto_compact_token_limit {
        Some(limit) if limit > 0 => u64::try_from(limit).ok(),
        Some(_) => None,
        None => config.model_context_window.map(|window| window / 10 * 9),
    }
}

/// Whether the last response used enough of the window to compact now.
pub fn should_auto_compact(session: &Session, last: &TokenUsage) -> bool {
    let used = last
        .total_tokens
        .max(last.input_tokens + last.output_tokens);
    auto_compact_limit(session).is_some_and(|limit| used >= limit)
}

/// Summarises the thread and replaces its history. Returns the summary.
pub async fn compact(session: &Session, turn: &TurnContext) -> Result<String, ModelError> {
    let history = session.history_snapshot();
    let mut input = vec![ResponseItem::developer_text(&session.base_instructions)];
    input.extend(history.iter().cloned());
    input.push(ResponseItem::user_text(COMPACT_PROMPT));
    let prompt = Prompt {
        model: turn.model.clone(),
        instructions: None,
        input,
        tools: Vec::new(),
        parallel_tool_calls: false,
        reasoning_effort: turn.effort,
        reasoning_summary: false,
        output_schema: None,
        prompt_cache_key: session.thread_id.to_string(),
        tool_choice: osprey_model::ToolChoice::Auto,
    };
    let mut stream = session.model.stream(&prompt).await?;
    let mut summary = String::new();
    while let Some(event) = stream.next().await {
        match event? {
            ResponseEvent::OutputItemDone(item) if item.role() == Some("assistant") => {
                summary = item.message_text().unwrap_or_default();
            }
            ResponseEvent::RetryingStream { .. } => summary.clear(),
            ResponseEvent::Completed { .. } => break,
            _ => {}
        }
    }
    let summary = summary.trim().to_string();
    let mut replacement = crate::session::initial_context(session, turn);
    replacement.extend(recent_user_messages(&history, KEPT_USER_CHARS));
    replacement.push(ResponseItem::user_text(format!(
        "{SUMMARY_PREFIX}{summary}"
    )));
    if let Some(recorder) = &session.recorder {
        recorder.record(vec![RolloutItem::Compacted(CompactedItem {
            message: summary.clone(),
            replacement_history: Some(replacement.clone()),
        })]);
    }
    session.replace_history(replacement);
    session.flush().await;
    session.events().emit(
        Some(&turn.turn_id),
        EventMsg::Compacted {
            summary: summary.clone(),
        },
    );
    Ok(summary)
}

/// The user's own messages (not context or earlier summaries), newest kept first, up to
/// `budget` characters, returned oldest first.
fn recent_user_messages(history: &[ResponseItem], budget: usize) -> Vec<ResponseItem> {
    let mut kept = Vec::new();
    let mut used = 0;
    for item in history.iter().rev() {
        if item.role() != Some("user") {
            continue;
        }
        let text = item.message_text().unwrap_or_default();
        if is_context_message(&text) {
            continue;
        }
        if used + text.len() > budget {
            break;
        }
        used += text.len();
        kept.push(item.clone());
    }
    kept.reverse();
    kept
}

fn is_context_message(text: &str) -> bool {
    text.starts_with("<environment_context>")
        || text.starts_with("# AGENTS.md instructions")
        || text.starts_with(SUMMARY_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_real_user_messages_are_kept_newest_within_budget() {
        let history = vec![
            ResponseItem::user_text("<environment_context>x</environment_context>"),
            ResponseItem::user_text("old request that is rather long"),
            ResponseItem::assistant_text("answer"),
            ResponseItem::user_text("new request"),
        ];
        let kept = recent_user_messages(&history, 20);
        let texts: Vec<String> = kept.iter().filter_map(ResponseItem::message_text).collect();
        assert_eq!(texts, ["new request"]);
        let kept = recent_user_messages(&history, 1000);
        assert_eq!(kept.len(), 2);
    }
}
