//! Compaction: replacing a long history by a summary so the thread fits the context window.
//!
//! The model is asked (with our own prompt, no tools) to write a handoff note about the
//! thread. The new history is the thread's fresh initial context (permissions, project
//! instructions, environment), the most recent user messages (bounded), and the note. Base
//! instructions are not part of the history and stay untouched. A `compacted` record with the
//! replacement history goes into the session file, so a resumed thread continues from the
//! compacted history rather than the original.
//!
//! It runs on request (`Op::Compact`); automatically before a request whose estimated size,
//! or the last response's reported token count, passes `model_auto_compact_token_limit` (or
//! 90% of the context window: `model_context_window`, the embedded model's, or the model
//! table's); and once when the provider refuses a request as too long.
//!
//! The summarising request must itself fit. Its history is trimmed to a byte budget first
//! ([`trim_to_fit`]): the oldest tool outputs are shortened, then the oldest turns dropped,
//! then the oldest items of the last turn (calls with their outputs). After an overflow the
//! budget starts at half of what overflowed, and halves again each time the summarising
//! request is refused too; the history that overflowed is never sent again. An empty summary
//! never replaces the history: compaction fails and the history stays as it was.

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

/// Tokens are estimated as bytes / 4 (as the tools' truncation does).
const BYTES_PER_TOKEN: usize = 4;

/// How often a summarising request refused as too long is retried with half the history.
const MAX_SUMMARY_ATTEMPTS: usize = 6;

/// What a shortened tool output says.
const OMITTED_OUTPUT: &str = "[output omitted to fit the context window]";

/// The token count past which a thread is compacted before its next request.
pub fn auto_compact_limit(session: &Session) -> Option<u64> {
    let config = &session.config;
    match config.model_auto_compact_token_limit {
        Some(limit) if limit > 0 => u64::try_from(limit).ok(),
        Some(_) => None,
        None => config.context_window().map(|window| window / 10 * 9),
    }
}

/// Whether the last response used enough of the window to compact before the next request.
pub fn usage_over_limit(session: &Session, last: &TokenUsage) -> bool {
    let used = last
        .total_tokens
        .max(last.input_tokens + last.output_tokens);
    auto_compact_limit(session).is_some_and(|limit| used >= limit)
}

/// Whether a request with this input is estimated to pass the limit.
pub fn input_over_limit(session: &Session, input: &[ResponseItem]) -> bool {
    let tokens = (items_bytes(input) / BYTES_PER_TOKEN) as u64;
    auto_compact_limit(session).is_some_and(|limit| tokens >= limit)
}

/// The serialised size of items, as they go into a request body.
pub fn items_bytes(items: &[ResponseItem]) -> usize {
    items.iter().map(item_bytes).sum()
}

fn item_bytes(item: &ResponseItem) -> usize {
    serde_json::to_string(item).map_or(0, |s| s.len())
}

/// Summarises the thread and replaces its history. Returns the summary.
///
/// `overflowed` is the input size (bytes) of a request the provider refused as too long,
/// when that is why compaction runs.
pub async fn compact(
    session: &Session,
    turn: &TurnContext,
    overflowed: Option<usize>,
) -> Result<String, ModelError> {
    let history = session.history_snapshot();
    let window_budget = session
        .config
        .context_window()
        .map(|window| usize::try_from(window).unwrap_or(usize::MAX) / 10 * 8 * BYTES_PER_TOKEN);
    let mut budget = match (overflowed, window_budget) {
        (Some(bytes), Some(window)) => (bytes / 2).min(window),
        (Some(bytes), None) => bytes / 2,
        (None, window) => window.unwrap_or(usize::MAX),
    };
    let mut attempt = 0;
    let summary = loop {
        attempt += 1;
        let trimmed = trim_to_fit(&history, budget);
        match summarise(session, turn, &trimmed).await {
            Err(error) if error.is_context_window_exceeded() && attempt < MAX_SUMMARY_ATTEMPTS => {
                budget = budget.min(items_bytes(&trimmed)) / 2;
            }
            other => break other?,
        }
    };
    let summary = summary.trim().to_string();
    if summary.is_empty() {
        return Err(ModelError::ResponseFailed {
            provider: session.config.model_provider.name.clone(),
            code: None,
            message: "the model wrote an empty summary when asked to compact the conversation, so the history was kept as it was".to_string(),
        });
    }
    let kept_user_chars = KEPT_USER_CHARS.min(budget / 2);
    let mut replacement = crate::session::initial_context(session, turn);
    replacement.extend(recent_user_messages(&history, kept_user_chars));
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

/// One summarising request over `history`.
async fn summarise(
    session: &Session,
    turn: &TurnContext,
    history: &[ResponseItem],
) -> Result<String, ModelError> {
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
    Ok(summary)
}

/// `history` cut down to at most `budget` bytes, keeping every tool call with its output:
/// first the oldest tool outputs are shortened, then the oldest turns dropped, then the
/// oldest items of the last turn after its user message.
pub(crate) fn trim_to_fit(history: &[ResponseItem], budget: usize) -> Vec<ResponseItem> {
    let mut items = history.to_vec();
    let mut size = items_bytes(&items);
    if size <= budget {
        return items;
    }
    for item in &mut items {
        if size <= budget {
            return items;
        }
        let before = item_bytes(item);
        if shorten_output(item) {
            size = size + item_bytes(item) - before;
        }
    }
    // Drop whole turns, oldest first, while more than one is left.
    while size > budget {
        let starts = turn_starts(&items);
        let (Some(&first), Some(&second)) = (starts.first(), starts.get(1)) else {
            break;
        };
        items.drain(first..second);
        size = items_bytes(&items);
    }
    // Inside the last turn, drop the oldest items after its user message.
    let keep_from = turn_starts(&items).last().map_or(0, |start| start + 1);
    while size > budget && keep_from < items.len() {
        let removed = items.remove(keep_from);
        if let Some(call_id) = call_id_of(&removed) {
            items.retain(|item| call_id_of(item).as_deref() != Some(call_id.as_str()));
        }
        size = items_bytes(&items);
    }
    items
}

/// Indexes of the user's own messages: where turns start.
fn turn_starts(items: &[ResponseItem]) -> Vec<usize> {
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| {
            item.role() == Some("user")
                && !is_context_message(&item.message_text().unwrap_or_default())
        })
        .map(|(index, _)| index)
        .collect()
}

fn call_id_of(item: &ResponseItem) -> Option<String> {
    item.tool_call_id()
        .or_else(|| item.tool_output_call_id())
        .map(str::to_string)
}

/// Replaces a tool output's content by a short note; `false` when `item` is no output or
/// already short.
fn shorten_output(item: &mut ResponseItem) -> bool {
    match item {
        ResponseItem::FunctionCallOutput { output, .. }
            if output.text().len() > OMITTED_OUTPUT.len() =>
        {
            *output = osprey_protocol::FunctionCallOutputPayload::from(OMITTED_OUTPUT.to_string());
            true
        }
        ResponseItem::CustomToolCallOutput { output, .. }
            if output.len() > OMITTED_OUTPUT.len() =>
        {
            *output = OMITTED_OUTPUT.to_string();
            true
        }
        _ => false,
    }
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
    use osprey_protocol::FunctionCallOutputPayload;

    fn call(id: &str) -> ResponseItem {
        ResponseItem::FunctionCall {
            id: None,
            name: "shell".into(),
            arguments: "{}".into(),
            call_id: id.into(),
            extra: Default::default(),
        }
    }

    fn output(id: &str, text: &str) -> ResponseItem {
        ResponseItem::FunctionCallOutput {
            call_id: id.into(),
            output: FunctionCallOutputPayload::from(text.to_string()),
        }
    }

    fn calls_have_outputs(items: &[ResponseItem]) -> bool {
        let calls: Vec<_> = items
            .iter()
            .filter_map(ResponseItem::tool_call_id)
            .collect();
        let outputs: Vec<_> = items
            .iter()
            .filter_map(ResponseItem::tool_output_call_id)
            .collect();
        calls == outputs
    }

    #[test]
    fn trimming_shortens_old_outputs_first() {
        let big = "x".repeat(5_000);
        let history = vec![
            ResponseItem::user_text("first"),
            call("a"),
            output("a", &big),
            ResponseItem::user_text("second"),
            call("b"),
            output("b", "small"),
        ];
        let budget = items_bytes(&history) - 3_000;
        let trimmed = trim_to_fit(&history, budget);
        assert_eq!(trimmed.len(), history.len(), "nothing dropped");
        assert!(items_bytes(&trimmed) <= budget);
        let ResponseItem::FunctionCallOutput { output, .. } = &trimmed[2] else {
            panic!("the old output stays in place")
        };
        assert_eq!(output.text(), OMITTED_OUTPUT);
    }

    #[test]
    fn trimming_drops_old_turns_then_old_items_and_keeps_calls_paired() {
        let big = "y".repeat(4_000);
        let history = vec![
            ResponseItem::user_text(format!("first {big}")),
            ResponseItem::assistant_text("ok"),
            ResponseItem::user_text("second"),
            call("a"),
            output("a", "o"),
            ResponseItem::assistant_text(big.as_str()),
            call("b"),
            output("b", "o"),
        ];
        let trimmed = trim_to_fit(&history, 5_000);
        assert!(items_bytes(&trimmed) <= 5_000, "{}", items_bytes(&trimmed));
        assert_eq!(trimmed[0].message_text().as_deref(), Some("second"));
        assert!(calls_have_outputs(&trimmed));
        let tiny = trim_to_fit(&history, 100);
        assert!(calls_have_outputs(&tiny));
        assert_eq!(
            tiny[0].message_text().as_deref(),
            Some("second"),
            "the request stays"
        );
    }

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
