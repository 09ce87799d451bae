//! Builders for the events and chunks real model servers send.
//!
//! Responses-API builders return [`SseEvent`]s shaped like the events observed from the
//! hosted API (see `shared/reference/codex-formats.md`): items arrive whole in
//! `response.output_item.done`, which is all a client needs to build history; deltas are
//! for live display. Chat Completions builders return the chunk objects a streaming
//! `/chat/completions` call yields, split into several deltas as real servers do, so that
//! clients must accumulate text and tool-call arguments.

use serde_json::Value;
use serde_json::json;

use crate::script::MockResponse;
use crate::script::SseEvent;

/// Response id used by [`sse_turn`].
pub const MOCK_RESPONSE_ID: &str = "resp_mock";

/// Longest piece a chat delta carries; longer text is split across several chunks.
const CHAT_PIECE_CHARS: usize = 8;

/// `response.created` for response `id`.
pub fn ev_response_created(id: &str) -> SseEvent {
    SseEvent::new(json!({
        "type": "response.created",
        "response": {"id": id, "status": "in_progress"},
    }))
}

/// `response.output_text.delta` carrying `delta` for the first content part.
pub fn ev_output_text_delta(delta: &str) -> SseEvent {
    SseEvent::new(json!({
        "type": "response.output_text.delta",
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
    }))
}

/// `response.output_item.done` with a finished assistant message.
pub fn ev_assistant_message(id: &str, text: &str) -> SseEvent {
    output_item_done(json!({
        "type": "message",
        "role": "assistant",
        "id": id,
        "status": "completed",
        "content": [{"type": "output_text", "text": text}],
    }))
}

/// `response.output_item.done` with a reasoning item: one `summary_text` per entry of
/// `summary_texts`, and `encrypted_content` when given (clients must send it back untouched).
pub fn ev_reasoning_item(
    id: &str,
    summary_texts: &[&str],
    encrypted_content: Option<&str>,
) -> SseEvent {
    let summary: Vec<Value> = summary_texts
        .iter()
        .map(|text| json!({"type": "summary_text", "text": text}))
        .collect();
    let mut item = json!({"type": "reasoning", "id": id, "summary": summary});
    if let (Some(content), Some(object)) = (encrypted_content, item.as_object_mut()) {
        object.insert("encrypted_content".to_owned(), json!(content));
    }
    output_item_done(item)
}

/// `response.reasoning_summary_text.delta` for the first summary part.
pub fn ev_reasoning_summary_delta(delta: &str) -> SseEvent {
    SseEvent::new(json!({
        "type": "response.reasoning_summary_text.delta",
        "output_index": 0,
        "summary_index": 0,
        "delta": delta,
    }))
}

/// `response.output_item.done` with a function call; `arguments` is the JSON text the
/// model produced (it need not be valid JSON, which is how argument errors are tested).
pub fn ev_function_call(call_id: &str, name: &str, arguments: &str) -> SseEvent {
    output_item_done(json!({
        "type": "function_call",
        "id": format!("fc_{call_id}"),
        "status": "completed",
        "name": name,
        "arguments": arguments,
        "call_id": call_id,
    }))
}

/// `response.output_item.done` with a freeform (custom) tool call such as `apply_patch`.
pub fn ev_custom_tool_call(call_id: &str, name: &str, input: &str) -> SseEvent {
    output_item_done(json!({
        "type": "custom_tool_call",
        "id": format!("ctc_{call_id}"),
        "status": "completed",
        "name": name,
        "input": input,
        "call_id": call_id,
    }))
}

/// `response.output_item.done` with a `local_shell_call` running `argv`. Its output is
/// answered with a `function_call_output`.
pub fn ev_local_shell_call(call_id: &str, argv: &[&str]) -> SseEvent {
    output_item_done(json!({
        "type": "local_shell_call",
        "id": format!("lsh_{call_id}"),
        "call_id": call_id,
        "status": "completed",
        "action": {"type": "exec", "command": argv},
    }))
}

/// `response.completed` for response `id`, with all usage counters at zero.
pub fn ev_completed(id: &str) -> SseEvent {
    ev_completed_with_usage(id, 0, 0, 0, 0)
}

/// `response.completed` for response `id` with the given token usage; `total_tokens` is
/// input plus output, as the hosted API reports it.
pub fn ev_completed_with_usage(
    id: &str,
    input_tokens: u64,
    cached_tokens: u64,
    output_tokens: u64,
    reasoning_tokens: u64,
) -> SseEvent {
    SseEvent::new(json!({
        "type": "response.completed",
        "response": {
            "id": id,
            "status": "completed",
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": cached_tokens},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": input_tokens.saturating_add(output_tokens),
            },
        },
    }))
}

/// `response.failed` with `response.error = {code, message}`; codes the API uses include
/// `context_length_exceeded`, `insufficient_quota` and `rate_limit_exceeded`.
pub fn ev_failed(code: &str, message: &str) -> SseEvent {
    SseEvent::new(json!({
        "type": "response.failed",
        "response": {
            "id": MOCK_RESPONSE_ID,
            "status": "failed",
            "error": {"code": code, "message": message},
        },
    }))
}

/// A whole Responses turn: `response.created`, `events`, then `response.completed`
/// (both with id [`MOCK_RESPONSE_ID`]).
pub fn sse_turn(events: Vec<SseEvent>) -> MockResponse {
    let mut all = Vec::with_capacity(events.len().saturating_add(2));
    all.push(ev_response_created(MOCK_RESPONSE_ID));
    all.extend(events);
    all.push(ev_completed(MOCK_RESPONSE_ID));
    MockResponse::Sse(all)
}

/// `response.output_item.added` announcing `item` (e.g. a message about to stream).
pub fn ev_output_item_added(item: Value) -> SseEvent {
    SseEvent::new(json!({
        "type": "response.output_item.added",
        "output_index": 0,
        "item": item,
    }))
}

/// `response.output_item.done` with an arbitrary finished `item`, for item types the other
/// builders do not cover.
pub fn ev_output_item_done(item: Value) -> SseEvent {
    output_item_done(item)
}

fn output_item_done(item: Value) -> SseEvent {
    SseEvent::new(json!({
        "type": "response.output_item.done",
        "output_index": 0,
        "item": item,
    }))
}

/// Chat chunks for an assistant answer `text`: a role delta, the text in several content
/// deltas, a `finish_reason: "stop"` chunk and a final usage chunk with empty `choices`.
pub fn chat_text_chunks(text: &str) -> Vec<Value> {
    let mut chunks = vec![chat_chunk(
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for piece in split_pieces(text, CHAT_PIECE_CHARS) {
        chunks.push(chat_chunk(json!({"content": piece}), None));
    }
    chunks.push(chat_chunk(json!({}), Some("stop")));
    chunks.push(chat_usage_chunk(text.len()));
    chunks
}

/// Chat chunks for one or more tool calls `(call_id, name, arguments_json)`: for each
/// call a delta with its id and name, then its arguments in several pieces (only `index`
/// identifies the call in those), then `finish_reason: "tool_calls"` and a usage chunk.
pub fn chat_tool_call_chunks(calls: &[(&str, &str, &str)]) -> Vec<Value> {
    let mut chunks = vec![chat_chunk(
        json!({"role": "assistant", "content": null}),
        None,
    )];
    let mut produced = 0usize;
    for (index, (call_id, name, arguments)) in calls.iter().enumerate() {
        chunks.push(chat_chunk(
            json!({"tool_calls": [{
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }]}),
            None,
        ));
        for piece in split_pieces(arguments, CHAT_PIECE_CHARS) {
            chunks.push(chat_chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
        produced = produced
            .saturating_add(name.len())
            .saturating_add(arguments.len());
    }
    chunks.push(chat_chunk(json!({}), Some("tool_calls")));
    chunks.push(chat_usage_chunk(produced));
    chunks
}

fn chat_chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "mock-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    })
}

/// The closing usage chunk; completion tokens are estimated as ceil(bytes / 4).
fn chat_usage_chunk(output_bytes: usize) -> Value {
    let prompt_tokens = 10usize;
    let completion_tokens = output_bytes.div_ceil(4);
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "mock-model",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens.saturating_add(completion_tokens),
        },
    })
}

/// Splits `text` into pieces of at most `max_chars` characters, never inside a character.
fn split_pieces(text: &str, max_chars: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (offset, _) in text.char_indices() {
        if count == max_chars {
            pieces.push(&text[start..offset]);
            start = offset;
            count = 0;
        }
        count += 1;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn pieces_respect_char_boundaries_and_rejoin() {
        let text = "héllo wörld, ünïcode ✓✓✓";
        let pieces = split_pieces(text, 3);
        assert!(pieces.iter().all(|p| p.chars().count() <= 3));
        assert_eq!(pieces.concat(), text);
        assert_eq!(split_pieces("", 3), Vec::<&str>::new());
    }

    #[test]
    fn chat_text_chunks_rejoin_to_the_text() {
        let text = "The answer is forty-two, as computed.";
        let chunks = chat_text_chunks(text);
        let joined: String = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(joined, text);
        assert!(chunks.len() > 4, "text should span several deltas");
        assert_eq!(
            chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
            "stop"
        );
        assert_eq!(chunks[chunks.len() - 1]["choices"], json!([]));
        assert!(chunks[chunks.len() - 1]["usage"]["total_tokens"].is_u64());
    }

    #[test]
    fn chat_tool_call_arguments_are_split_and_rejoin() {
        let args = r#"{"cmd":"echo hello world"}"#;
        let chunks =
            chat_tool_call_chunks(&[("call_a", "exec_command", args), ("call_b", "x", "{}")]);
        let mut first_args = String::new();
        let mut ids = Vec::new();
        for chunk in &chunks {
            for call in chunk["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let Some(id) = call["id"].as_str() {
                    ids.push(id.to_owned());
                }
                if call["index"] == 0 {
                    first_args.push_str(call["function"]["arguments"].as_str().unwrap());
                }
            }
        }
        assert_eq!(first_args, args);
        assert_eq!(ids, vec!["call_a", "call_b"]);
        assert_eq!(
            chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
            "tool_calls"
        );
    }

    #[test]
    fn sse_turn_wraps_with_created_and_completed() {
        let MockResponse::Sse(events) = sse_turn(vec![ev_assistant_message("m1", "hi")]) else {
            panic!("sse_turn must build an Sse response");
        };
        let kinds: Vec<_> = events.iter().map(|e| e.kind().unwrap()).collect();
        assert_eq!(
            kinds,
            vec![
                "response.created",
                "response.output_item.done",
                "response.completed"
            ]
        );
    }

    #[test]
    fn usage_totals_input_and_output() {
        let event = ev_completed_with_usage("r", 100, 40, 20, 5);
        let usage = &event.data()["response"]["usage"];
        assert_eq!(usage["total_tokens"], 120);
        assert_eq!(usage["input_tokens_details"]["cached_tokens"], 40);
        assert_eq!(usage["output_tokens_details"]["reasoning_tokens"], 5);
    }

    #[test]
    fn reasoning_item_includes_encrypted_content_only_when_given() {
        let plain = ev_reasoning_item("rs1", &["thinking"], None);
        assert!(plain.data()["item"].get("encrypted_content").is_none());
        let sealed = ev_reasoning_item("rs1", &["a", "b"], Some("gAAA"));
        assert_eq!(sealed.data()["item"]["encrypted_content"], "gAAA");
        assert_eq!(sealed.data()["item"]["summary"][1]["text"], "b");
    }
}
