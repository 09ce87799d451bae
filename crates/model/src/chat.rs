//! The Chat Completions wire adapter, for servers that only speak `/chat/completions`
//! (Ollama, llama.cpp, vLLM, LM Studio, most proxies).
//!
//! The request maps the Responses-shaped history onto chat messages: developer messages
//! become `system` (the role every such server accepts), tool calls in a row become one
//! assistant message with `tool_calls`, outputs become `role: "tool"` messages, reasoning
//! items are dropped. Freeform (custom) tools, which Chat Completions lacks, travel as
//! function tools with one string parameter `input`; calls to them are turned back into
//! `custom_tool_call` items, so the rest of Osprey never sees the difference.
//!
//! The stream is assembled by [`ChatDecoder`]: text deltas into one assistant message,
//! tool-call deltas (keyed by `index`, arguments concatenated) into call items, usage from
//! the final chunk; it emits the same [`ResponseEvent`] sequence as the Responses adapter.

use std::collections::HashSet;

use osprey_protocol::{ContentItem, ReasoningContent, ResponseItem, TokenUsage};
use rand::Rng;
use rand::distr::Alphanumeric;
use serde::Serialize;
use serde_json::{Map, Value, json};
use tracing::{debug, warn};

use crate::decode::{Decoder, Failure, Flow, frame_name};
use crate::error::StreamFault;
use crate::prompt::{Prompt, ResponseEvent};
use crate::responses::{OUTPUT_SCHEMA_NAME, preview};
use crate::retry::code_text;

/// The single parameter a custom tool gets when offered as a function.
const CUSTOM_INPUT_PARAM: &str = "input";

/// The function name a `local_shell_call` from history is replayed under.
const LOCAL_SHELL_NAME: &str = "local_shell";

#[derive(Serialize)]
struct RequestBody<'a> {
    model: &'a str,
    messages: Vec<Value>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// Names of the custom (freeform) tools among Responses tool specs.
pub(crate) fn custom_tool_names(tools: &[Value]) -> HashSet<String> {
    tools
        .iter()
        .filter(|tool| tool.get("type").and_then(Value::as_str) == Some("custom"))
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// The JSON body of `POST {base_url}/chat/completions` for `prompt`.
pub(crate) fn request_body(prompt: &Prompt) -> Result<Vec<u8>, serde_json::Error> {
    let tools = convert_tools(&prompt.tools);
    let has_tools = !tools.is_empty();
    let body = RequestBody {
        model: &prompt.model,
        messages: messages(prompt),
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
        tools,
        tool_choice: has_tools.then(|| prompt.tool_choice.chat_value()),
        parallel_tool_calls: has_tools.then_some(prompt.parallel_tool_calls),
        response_format: prompt.output_schema.as_ref().map(|schema| {
            json!({
                "type": "json_schema",
                "json_schema": {"name": OUTPUT_SCHEMA_NAME, "strict": true, "schema": schema},
            })
        }),
    };
    serde_json::to_vec(&body)
}

/// The history as chat messages.
pub(crate) fn messages(prompt: &Prompt) -> Vec<Value> {
    let mut messages = Vec::with_capacity(prompt.input.len() + 1);
    if let Some(instructions) = &prompt.instructions {
        messages.push(json!({"role": "system", "content": instructions}));
    }
    for item in &prompt.input {
        match item {
            ResponseItem::Message { role, content, .. } => {
                let role = if role == "developer" { "system" } else { role };
                let content = if role == "assistant" {
                    Value::String(joined_text(content))
                } else {
                    message_content(content)
                };
                if role == "system"
                    && let (Some(text), Some(leading)) =
                        (content.as_str(), leading_system_text(&mut messages))
                {
                    // Many chat templates accept only one system message, and only first.
                    leading.push_str("\n\n");
                    leading.push_str(text);
                    continue;
                }
                messages.push(json!({"role": role, "content": content}));
            }
            ResponseItem::FunctionCall {
                name,
                arguments,
                call_id,
                ..
            } => push_tool_call(&mut messages, call_id, name, arguments.clone()),
            ResponseItem::CustomToolCall {
                call_id,
                name,
                input,
                ..
            } => {
                let arguments = json!({ CUSTOM_INPUT_PARAM: input }).to_string();
                push_tool_call(&mut messages, call_id, name, arguments);
            }
            ResponseItem::LocalShellCall {
                id,
                call_id,
                action,
                ..
            } => {
                let call_id = call_id.as_deref().or(id.as_deref()).unwrap_or_default();
                let arguments = serde_json::to_string(action).unwrap_or_else(|_| "{}".into());
                push_tool_call(&mut messages, call_id, LOCAL_SHELL_NAME, arguments);
            }
            ResponseItem::FunctionCallOutput { call_id, output } => {
                messages.push(tool_message(call_id, &output.text()));
            }
            ResponseItem::CustomToolCallOutput { call_id, output } => {
                messages.push(tool_message(call_id, output));
            }
            ResponseItem::Reasoning { .. } => {}
            ResponseItem::Other(value) => {
                let item_type = value.get("type").and_then(Value::as_str).unwrap_or("?");
                debug!(
                    item_type,
                    "dropping a history item Chat Completions cannot carry"
                );
            }
        }
    }
    messages
}

/// The text of the opening system message, if every message so far is that one message.
fn leading_system_text(messages: &mut [Value]) -> Option<&mut String> {
    match messages {
        [only] if only.get("role").and_then(Value::as_str) == Some("system") => {
            match only.get_mut("content") {
                Some(Value::String(text)) => Some(text),
                _ => None,
            }
        }
        _ => None,
    }
}

fn tool_message(call_id: &str, output: &str) -> Value {
    json!({"role": "tool", "tool_call_id": call_id, "content": output})
}

/// Adds a call to the assistant message just before it, or starts one: consecutive calls
/// (and the text the model wrote before them) form one assistant turn on this API.
fn push_tool_call(messages: &mut Vec<Value>, call_id: &str, name: &str, arguments: String) {
    let call = json!({
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    });
    if let Some(Value::Object(last)) = messages.last_mut()
        && last.get("role").and_then(Value::as_str) == Some("assistant")
    {
        if let Some(Value::Array(calls)) = last.get_mut("tool_calls") {
            calls.push(call);
        } else {
            last.insert("tool_calls".to_owned(), Value::Array(vec![call]));
        }
        return;
    }
    messages.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
}

fn joined_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .filter_map(ContentItem::text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A plain string when the message is text only; content parts when it carries images.
fn message_content(content: &[ContentItem]) -> Value {
    if !content
        .iter()
        .any(|part| matches!(part, ContentItem::InputImage { .. }))
    {
        return Value::String(joined_text(content));
    }
    let parts = content
        .iter()
        .filter_map(|part| match part {
            ContentItem::InputText { text } | ContentItem::OutputText { text, .. } => {
                Some(json!({"type": "text", "text": text}))
            }
            ContentItem::InputImage { image_url } => {
                Some(json!({"type": "image_url", "image_url": {"url": image_url}}))
            }
            ContentItem::Other(_) => None,
        })
        .collect();
    Value::Array(parts)
}

/// Responses tool specs as Chat function tools; tools with no Chat equivalent are dropped.
pub(crate) fn convert_tools(tools: &[Value]) -> Vec<Value> {
    tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name").and_then(Value::as_str)?;
            let description = tool.get("description").and_then(Value::as_str).unwrap_or("");
            match tool.get("type").and_then(Value::as_str) {
                Some("function") => {
                    let parameters = tool
                        .get("parameters")
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                    Some(function_tool(name, description, parameters))
                }
                Some("custom") => {
                    let input_description = custom_input_description(tool.get("format"));
                    let parameters = json!({
                        "type": "object",
                        "properties": {
                            CUSTOM_INPUT_PARAM: {"type": "string", "description": input_description},
                        },
                        "required": [CUSTOM_INPUT_PARAM],
                        "additionalProperties": false,
                    });
                    Some(function_tool(name, description, parameters))
                }
                other => {
                    debug!(tool = name, kind = ?other, "tool type not offered over Chat Completions");
                    None
                }
            }
        })
        .collect()
}

fn function_tool(name: &str, description: &str, parameters: Value) -> Value {
    json!({
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    })
}

fn custom_input_description(format: Option<&Value>) -> String {
    let grammar = format.filter(|f| f.get("type").and_then(Value::as_str) == Some("grammar"));
    match grammar
        .and_then(|f| f.get("definition"))
        .and_then(Value::as_str)
    {
        Some(definition) => {
            let syntax = grammar
                .and_then(|f| f.get("syntax"))
                .and_then(Value::as_str)
                .unwrap_or("formal");
            format!(
                "The tool's raw input as one string, written in this {syntax} grammar:\n{definition}"
            )
        }
        None => "The tool's raw input as one string.".to_owned(),
    }
}

/// A tool call being assembled from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Assembles a Chat Completions stream into [`ResponseEvent`]s.
#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    custom_tools: HashSet<String>,
    response_id: Option<String>,
    text: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<TokenUsage>,
}

impl ChatDecoder {
    pub(crate) fn new(custom_tools: HashSet<String>) -> Self {
        Self {
            custom_tools,
            ..Self::default()
        }
    }

    fn chunk(&mut self, chunk: &Value, out: &mut Vec<ResponseEvent>) -> Result<(), Failure> {
        if let Some(error) = chunk.get("error") {
            let message = match error {
                Value::String(text) => text.clone(),
                _ => error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the server sent an error chunk without a message")
                    .to_owned(),
            };
            return Err(Failure::Provider {
                code: error.get("code").and_then(code_text),
                message,
            });
        }
        if self.response_id.is_none() {
            self.response_id = chunk.get("id").and_then(Value::as_str).map(str::to_owned);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(chat_usage(usage));
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if let Some(delta) = choice.get("delta") {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                if reason == "length" {
                    warn!("the model stopped at its output token limit (finish_reason: length)");
                }
                self.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(())
    }

    fn delta(&mut self, delta: &Value, out: &mut Vec<ResponseEvent>) {
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            if self.text.is_empty() {
                out.push(ResponseEvent::OutputItemAdded(ResponseItem::message(
                    "assistant",
                    Vec::new(),
                )));
            }
            self.text.push_str(text);
            out.push(ResponseEvent::OutputTextDelta {
                item_id: None,
                delta: text.to_owned(),
            });
        }
        // Servers name the raw reasoning differently (vLLM/DeepSeek vs Ollama/OpenRouter).
        for key in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta.get(key).and_then(Value::as_str)
                && !text.is_empty()
            {
                self.reasoning.push_str(text);
                out.push(ResponseEvent::ReasoningSummaryDelta {
                    item_id: None,
                    delta: text.to_owned(),
                });
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            self.tool_call_delta(call, out);
        }
    }

    fn tool_call_delta(&mut self, call: &Value, out: &mut Vec<ResponseEvent>) {
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let function = call.get("function");
        let index = match call.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            // Servers that omit `index` send each call whole, or continue the last one.
            None => match id {
                Some(id) => self
                    .calls
                    .iter()
                    .find(|c| c.id.as_deref() == Some(id))
                    .map_or(self.next_index(), |c| c.index),
                None => self.calls.last().map_or(0, |c| c.index),
            },
        };
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let Some(entry) = self.calls.get_mut(position) else {
            return;
        };
        if entry.id.is_none() {
            entry.id = id.map(str::to_owned);
        }
        if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str)
            && entry.name.is_empty()
        {
            entry.name = name.to_owned();
        }
        if let Some(arguments) = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            && !arguments.is_empty()
        {
            entry.arguments.push_str(arguments);
            out.push(ResponseEvent::ToolCallInputDelta {
                item_id: entry.id.clone(),
                delta: arguments.to_owned(),
            });
        }
    }

    fn next_index(&self) -> u64 {
        self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0)
    }

    /// Emits the finished items and `Completed`.
    fn finish(&mut self, out: &mut Vec<ResponseEvent>) {
        if !self.reasoning.is_empty() {
            out.push(ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                id: None,
                summary: Vec::new(),
                content: Some(vec![ReasoningContent::ReasoningText {
                    text: std::mem::take(&mut self.reasoning),
                }]),
                encrypted_content: None,
                extra: Map::new(),
            }));
        }
        if !self.text.is_empty() {
            out.push(ResponseEvent::OutputItemDone(ResponseItem::assistant_text(
                std::mem::take(&mut self.text),
            )));
        }
        let mut calls = std::mem::take(&mut self.calls);
        calls.sort_by_key(|c| c.index);
        for call in calls {
            let call_id = call.id.unwrap_or_else(generated_call_id);
            let item = if self.custom_tools.contains(&call.name) {
                ResponseItem::CustomToolCall {
                    id: None,
                    call_id,
                    name: call.name,
                    input: custom_input(&call.arguments),
                    extra: Map::new(),
                }
            } else {
                ResponseItem::FunctionCall {
                    id: None,
                    name: call.name,
                    arguments: if call.arguments.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        call.arguments
                    },
                    call_id,
                    extra: Map::new(),
                }
            };
            out.push(ResponseEvent::OutputItemDone(item));
        }
        out.push(ResponseEvent::Completed {
            response_id: self.response_id.take(),
            usage: self.usage.take(),
        });
    }
}

impl Decoder for ChatDecoder {
    fn frame(
        &mut self,
        sse_event: &str,
        data: &str,
        out: &mut Vec<ResponseEvent>,
    ) -> Result<Flow, Failure> {
        if data.trim() == "[DONE]" {
            self.finish(out);
            return Ok(Flow::Done);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|err| {
            let which = frame_name(sse_event, data)
                .map_or_else(|| "a chunk".to_owned(), |name| format!("a `{name}` chunk"));
            Failure::Broken(StreamFault::Malformed(format!(
                "{which} is not JSON ({err}): {}",
                preview(data)
            )))
        })?;
        self.chunk(&chunk, out)?;
        Ok(Flow::Continue)
    }

    fn end(&mut self, out: &mut Vec<ResponseEvent>) -> Result<(), Failure> {
        // Some servers close the body after the last chunk without `[DONE]`.
        if self.finish_reason.is_some() {
            self.finish(out);
            Ok(())
        } else {
            Err(Failure::Broken(StreamFault::EndedEarly))
        }
    }
}

/// The `input` argument of a custom tool called as a function; the raw arguments when the
/// model did not wrap its input as asked.
fn custom_input(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => match map.get(CUSTOM_INPUT_PARAM) {
            Some(Value::String(input)) => input.clone(),
            _ => arguments.to_owned(),
        },
        Ok(Value::String(input)) => input,
        _ => arguments.to_owned(),
    }
}

fn generated_call_id() -> String {
    let suffix: String = rand::rng()
        .sample_iter(Alphanumeric)
        .take(24)
        .map(char::from)
        .collect();
    format!("call_{suffix}")
}

fn chat_usage(usage: &Value) -> TokenUsage {
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let input_tokens = number("/prompt_tokens");
    let output_tokens = number("/completion_tokens");
    let total = usage.get("total_tokens").and_then(Value::as_u64);
    TokenUsage {
        input_tokens,
        cached_input_tokens: number("/prompt_tokens_details/cached_tokens"),
        output_tokens,
        reasoning_output_tokens: number("/completion_tokens_details/reasoning_tokens"),
        total_tokens: total.unwrap_or(input_tokens.saturating_add(output_tokens)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::FunctionCallOutputPayload;
    use pretty_assertions::assert_eq;

    #[test]
    fn calls_after_assistant_text_join_that_message() {
        let prompt = Prompt {
            input: vec![
                ResponseItem::developer_text("be brief"),
                ResponseItem::developer_text("sandboxed"),
                ResponseItem::user_text("hi"),
                ResponseItem::assistant_text("running it"),
                ResponseItem::FunctionCall {
                    id: Some("fc_1".into()),
                    name: "exec_command".into(),
                    arguments: "{}".into(),
                    call_id: "c1".into(),
                    extra: Map::new(),
                },
                ResponseItem::FunctionCallOutput {
                    call_id: "c1".into(),
                    output: FunctionCallOutputPayload::Text("ok".into()),
                },
                ResponseItem::developer_text("later note"),
            ],
            ..Prompt::default()
        };
        assert_eq!(
            messages(&prompt),
            vec![
                json!({"role": "system", "content": "be brief\n\nsandboxed"}),
                json!({"role": "user", "content": "hi"}),
                json!({"role": "assistant", "content": "running it", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "exec_command", "arguments": "{}"}}
                ]}),
                json!({"role": "tool", "tool_call_id": "c1", "content": "ok"}),
                json!({"role": "system", "content": "later note"}),
            ]
        );
    }

    #[test]
    fn output_schema_becomes_response_format_and_tool_keys_need_tools() {
        let prompt = Prompt {
            model: "m".into(),
            output_schema: Some(json!({"type": "object"})),
            ..Prompt::default()
        };
        let body: Value = serde_json::from_slice(&request_body(&prompt).unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [],
                "stream": true,
                "stream_options": {"include_usage": true},
                "response_format": {"type": "json_schema", "json_schema": {
                    "name": "osprey_output_schema", "strict": true, "schema": {"type": "object"}}},
            })
        );
    }

    #[test]
    fn images_become_content_parts() {
        let prompt = Prompt {
            input: vec![ResponseItem::message(
                "user",
                vec![
                    ContentItem::InputText {
                        text: "look".into(),
                    },
                    ContentItem::InputImage {
                        image_url: "data:image/png;base64,AA==".into(),
                    },
                ],
            )],
            ..Prompt::default()
        };
        assert_eq!(
            messages(&prompt)[0]["content"],
            json!([
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
            ])
        );
    }

    #[test]
    fn custom_tools_become_single_string_functions() {
        let tools = convert_tools(&[
            json!({"type": "custom", "name": "apply_patch", "description": "patch",
                   "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"}}),
            json!({"type": "web_search"}),
        ]);
        assert_eq!(tools.len(), 1);
        let params = &tools[0]["function"]["parameters"];
        assert_eq!(params["required"], json!(["input"]));
        let described = params["properties"]["input"]["description"]
            .as_str()
            .unwrap();
        assert!(
            described.contains("lark") && described.contains("start: x"),
            "{described}"
        );
    }

    #[test]
    fn custom_input_is_unwrapped_leniently() {
        assert_eq!(
            custom_input(r#"{"input":"*** Begin Patch"}"#),
            "*** Begin Patch"
        );
        assert_eq!(custom_input(r#""raw""#), "raw");
        assert_eq!(custom_input("not json"), "not json");
        assert_eq!(custom_input(r#"{"other":1}"#), r#"{"other":1}"#);
    }

    #[test]
    fn calls_without_index_or_id_are_still_assembled() {
        let mut decoder = ChatDecoder::default();
        let mut out = Vec::new();
        for chunk in [
            json!({"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","arguments":"{\"x\""}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}),
        ] {
            decoder
                .frame("message", &chunk.to_string(), &mut out)
                .unwrap();
        }
        decoder.end(&mut out).unwrap();
        let done: Vec<_> = out
            .iter()
            .filter_map(|e| match e {
                ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
                    name,
                    arguments,
                    call_id,
                    ..
                }) => Some((
                    name.clone(),
                    arguments.clone(),
                    call_id.starts_with("call_"),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(done, vec![("a".to_owned(), "{\"x\":1}".to_owned(), true)]);
    }

    #[test]
    fn a_chunk_that_is_not_json_is_named_and_quoted() {
        let err = ChatDecoder::default().frame("message", "{\"choices\": [", &mut Vec::new());
        let Err(Failure::Broken(StreamFault::Malformed(text))) = err else {
            panic!("expected a malformed-stream failure, got {err:?}");
        };
        assert!(
            text.starts_with("a chunk is not JSON (") && text.ends_with("): {\"choices\": ["),
            "{text}"
        );
    }

    #[test]
    fn a_body_that_ends_without_finish_reason_is_broken() {
        let mut decoder = ChatDecoder::default();
        let mut out = Vec::new();
        decoder
            .frame(
                "message",
                &json!({"choices":[{"delta":{"content":"hal"}}]}).to_string(),
                &mut out,
            )
            .unwrap();
        assert!(matches!(
            decoder.end(&mut out),
            Err(Failure::Broken(StreamFault::EndedEarly))
        ));
    }
}
