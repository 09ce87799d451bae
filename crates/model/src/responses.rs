//! The Responses-API wire adapter: the request body and the SSE event decoder.
//!
//! The body is a struct, not a JSON map, so its keys go out in the order Codex sends them
//! (see `shared/reference/codex-formats.md`); optional keys are left out rather than sent
//! as `null`.

use osprey_protocol::{ReasoningEffort, ResponseItem, TokenUsage};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::debug;

use crate::decode::{Decoder, Failure, Flow, frame_name};
use crate::error::StreamFault;
use crate::prompt::{Prompt, ResponseEvent};
use crate::retry::code_text;

/// The name under which an output schema is sent.
pub(crate) const OUTPUT_SCHEMA_NAME: &str = "osprey_output_schema";

#[derive(Serialize)]
struct RequestBody<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    stream: bool,
    input: &'a [ResponseItem],
    tools: &'a [Value],
    tool_choice: Value,
    parallel_tool_calls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning>,
    store: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<[&'static str; 1]>,
    prompt_cache_key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<TextControls<'a>>,
}

#[derive(Serialize)]
struct Reasoning {
    effort: ReasoningEffort,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'static str>,
}

#[derive(Serialize)]
struct TextControls<'a> {
    format: TextFormat<'a>,
}

#[derive(Serialize)]
struct TextFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    strict: bool,
    schema: &'a Value,
    name: &'static str,
}

/// The JSON body of `POST {base_url}/responses` for `prompt`.
pub(crate) fn request_body(prompt: &Prompt) -> Result<Vec<u8>, serde_json::Error> {
    let reasoning = prompt.reasoning_effort.map(|effort| Reasoning {
        effort,
        summary: prompt.reasoning_summary.then_some("auto"),
    });
    let include = reasoning.as_ref().map(|_| ["reasoning.encrypted_content"]);
    let body = RequestBody {
        model: &prompt.model,
        instructions: prompt.instructions.as_deref(),
        stream: true,
        input: &prompt.input,
        tools: &prompt.tools,
        tool_choice: prompt.tool_choice.responses_value(),
        parallel_tool_calls: prompt.parallel_tool_calls,
        reasoning,
        store: false,
        include,
        prompt_cache_key: &prompt.prompt_cache_key,
        text: prompt.output_schema.as_ref().map(|schema| TextControls {
            format: TextFormat {
                kind: "json_schema",
                strict: true,
                schema,
                name: OUTPUT_SCHEMA_NAME,
            },
        }),
    };
    serde_json::to_vec(&body)
}

/// The fields of a Responses SSE event we read; the rest is ignored.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    delta: Option<String>,
    /// Top-level `code`/`message` of an `error` event.
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
    #[serde(default)]
    total_tokens: u64,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: u64,
}

impl From<Usage> for TokenUsage {
    fn from(usage: Usage) -> Self {
        TokenUsage {
            input_tokens: usage.input_tokens,
            cached_input_tokens: usage.input_tokens_details.map_or(0, |d| d.cached_tokens),
            output_tokens: usage.output_tokens,
            reasoning_output_tokens: usage
                .output_tokens_details
                .map_or(0, |d| d.reasoning_tokens),
            total_tokens: usage.total_tokens,
        }
    }
}

/// Turns Responses SSE frames into [`ResponseEvent`]s.
#[derive(Default)]
pub(crate) struct ResponsesDecoder;

impl Decoder for ResponsesDecoder {
    fn frame(
        &mut self,
        sse_event: &str,
        data: &str,
        out: &mut Vec<ResponseEvent>,
    ) -> Result<Flow, Failure> {
        let event: Event = serde_json::from_str(data).map_err(|err| {
            let which = frame_name(sse_event, data).map_or_else(
                || "an event".to_owned(),
                |name| format!("the `{name}` event"),
            );
            Failure::Broken(StreamFault::Malformed(format!(
                "{which} is not JSON with a `type` ({err}): {}",
                preview(data)
            )))
        })?;
        match event.kind.as_str() {
            "response.created" => out.push(ResponseEvent::Created),
            "response.output_item.added" => {
                // Only informs the UI; an item we cannot read here is not worth a retry.
                match parse_item(event.item, &event.kind) {
                    Ok(Some(item)) => out.push(ResponseEvent::OutputItemAdded(item)),
                    Ok(None) => {}
                    Err(_) => debug!("ignoring an unreadable response.output_item.added"),
                }
            }
            "response.output_item.done" => {
                if let Some(item) = parse_item(event.item, &event.kind)? {
                    out.push(ResponseEvent::OutputItemDone(item));
                }
            }
            "response.output_text.delta" => {
                if let Some(delta) = event.delta {
                    out.push(ResponseEvent::OutputTextDelta {
                        item_id: event.item_id,
                        delta,
                    });
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(delta) = event.delta {
                    out.push(ResponseEvent::ReasoningSummaryDelta {
                        item_id: event.item_id,
                        delta,
                    });
                }
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                if let Some(delta) = event.delta {
                    out.push(ResponseEvent::ToolCallInputDelta {
                        item_id: event.item_id,
                        delta,
                    });
                }
            }
            "response.completed" => {
                let response = event.response.unwrap_or(Value::Null);
                let response_id = response
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let usage = match response.get("usage") {
                    None | Some(Value::Null) => None,
                    Some(usage) => Some(
                        serde_json::from_value::<Usage>(usage.clone())
                            .map_err(|err| {
                                Failure::Broken(StreamFault::Malformed(format!(
                                    "the `response.completed` event has an unreadable usage ({err})"
                                )))
                            })?
                            .into(),
                    ),
                };
                out.push(ResponseEvent::Completed { response_id, usage });
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let error = event
                    .response
                    .as_ref()
                    .and_then(|r| r.get("error"))
                    .cloned()
                    .unwrap_or(Value::Null);
                return Err(Failure::Provider {
                    code: error.get("code").and_then(code_text),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("the provider sent response.failed without a message")
                        .to_owned(),
                });
            }
            "response.incomplete" => {
                let reason = event
                    .response
                    .as_ref()
                    .and_then(|r| r.pointer("/incomplete_details/reason"))
                    .and_then(Value::as_str)
                    .unwrap_or("unknown")
                    .to_owned();
                return Err(Failure::Provider {
                    message: format!("the response ended incomplete (reason: {reason})"),
                    code: Some(reason),
                });
            }
            "error" => {
                // Either `{type:"error", code, message}` or `{type:"error", error:{…}}`.
                let nested: Option<Value> = serde_json::from_str::<Value>(data)
                    .ok()
                    .and_then(|v| v.get("error").cloned());
                let code = event.code.as_ref().and_then(code_text).or_else(|| {
                    nested
                        .as_ref()
                        .and_then(|e| e.get("code"))
                        .and_then(code_text)
                });
                let message = event
                    .message
                    .or_else(|| {
                        nested
                            .as_ref()
                            .and_then(|e| e.get("message"))
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| "the provider sent an error event without a message".into());
                return Err(Failure::Provider { code, message });
            }
            other => debug!(event = other, "ignoring Responses stream event"),
        }
        Ok(Flow::Continue)
    }

    fn end(&mut self, _out: &mut Vec<ResponseEvent>) -> Result<(), Failure> {
        Err(Failure::Broken(StreamFault::EndedEarly))
    }
}

fn parse_item(item: Option<Value>, kind: &str) -> Result<Option<ResponseItem>, Failure> {
    let Some(item) = item else {
        debug!(event = kind, "event without an item");
        return Ok(None);
    };
    let text = item.to_string();
    serde_json::from_value(item).map(Some).map_err(|err| {
        Failure::Broken(StreamFault::Malformed(format!(
            "the `{kind}` event carries an item that is not a Responses item ({err}): {}",
            preview(&text)
        )))
    })
}

/// The start of a frame's data, for error messages.
pub(crate) fn preview(data: &str) -> String {
    let mut chars = data.chars();
    let head: String = chars.by_ref().take(120).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn keys(body: &[u8]) -> Vec<String> {
        // Top-level keys in the order they appear in the text.
        let text = std::str::from_utf8(body).unwrap();
        let value: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
        let mut found: Vec<(usize, String)> = value
            .keys()
            .map(|k| (text.find(&format!("\"{k}\":")).unwrap(), k.clone()))
            .collect();
        found.sort();
        found.into_iter().map(|(_, k)| k).collect()
    }

    #[test]
    fn minimal_prompt_leaves_optional_keys_out() {
        let prompt = Prompt {
            model: "m".into(),
            prompt_cache_key: "t".into(),
            ..Prompt::default()
        };
        let body = request_body(&prompt).unwrap();
        assert_eq!(
            keys(&body),
            [
                "model",
                "stream",
                "input",
                "tools",
                "tool_choice",
                "parallel_tool_calls",
                "store",
                "prompt_cache_key"
            ]
        );
    }

    #[test]
    fn effort_without_summary_sends_effort_only() {
        let prompt = Prompt {
            reasoning_effort: Some(ReasoningEffort::Low),
            ..Prompt::default()
        };
        let body: Value = serde_json::from_slice(&request_body(&prompt).unwrap()).unwrap();
        assert_eq!(body["reasoning"], json!({"effort": "low"}));
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    }

    fn decode(data: Value) -> Result<Vec<ResponseEvent>, Failure> {
        let mut out = Vec::new();
        ResponsesDecoder.frame("message", &data.to_string(), &mut out)?;
        Ok(out)
    }

    #[test]
    fn error_events_become_provider_failures() {
        let nested =
            decode(json!({"type":"error","error":{"code":"server_error","message":"boom"}}));
        assert!(
            matches!(nested, Err(Failure::Provider { code: Some(c), message }) if c == "server_error" && message == "boom")
        );
        let flat = decode(json!({"type":"error","code":"rate_limit_exceeded","message":"slow"}));
        assert!(
            matches!(flat, Err(Failure::Provider { code: Some(c), .. }) if c == "rate_limit_exceeded")
        );
        let incomplete = decode(
            json!({"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"}}}),
        );
        assert!(
            matches!(incomplete, Err(Failure::Provider { code: Some(c), .. }) if c == "max_output_tokens")
        );
    }

    #[test]
    fn unknown_events_are_ignored_and_non_json_is_malformed() {
        assert_eq!(
            decode(json!({"type":"response.in_progress"})).unwrap(),
            vec![]
        );
        let mut out = Vec::new();
        let err = ResponsesDecoder.frame("message", "{not json", &mut out);
        assert!(matches!(
            err,
            Err(Failure::Broken(StreamFault::Malformed(_)))
        ));
    }

    fn malformed_text(sse_event: &str, data: &str) -> String {
        match ResponsesDecoder.frame(sse_event, data, &mut Vec::new()) {
            Err(Failure::Broken(StreamFault::Malformed(text))) => text,
            other => panic!("expected a malformed-stream failure, got {other:?}"),
        }
    }

    #[test]
    fn malformed_events_are_named_in_the_error() {
        // By the SSE `event:` line …
        let text = malformed_text("response.output_text.delta", r#"{"type":"response.outp"#);
        assert!(
            text.starts_with("the `response.output_text.delta` event is not JSON"),
            "{text}"
        );
        // … or, without one, by the `type` the broken data declares …
        let text = malformed_text("message", r#"{"type": "response.completed", "response": {"#);
        assert!(
            text.starts_with("the `response.completed` event is not JSON"),
            "{text}"
        );
        // … and the data itself is quoted.
        assert!(
            text.ends_with(r#"{"type": "response.completed", "response": {"#),
            "{text}"
        );
        let text = malformed_text("message", "{not json");
        assert!(text.starts_with("an event is not JSON"), "{text}");
    }
}
