//! Requests as the mock server received them, with helpers for what tests usually assert.

use std::collections::HashMap;

use serde_json::Value;

use crate::script::WireApi;

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedRequest {
    /// The request path, e.g. `/v1/responses`.
    pub path: String,
    /// Headers with lowercase names; a repeated header keeps its last value.
    pub headers: HashMap<String, String>,
    /// The JSON body; `Value::Null` when the body was not JSON (which is also recorded as a
    /// failure).
    pub body: Value,
}

/// A tool output found in a request's history.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The call this output answers.
    pub call_id: String,
    /// The output as text: a string output as is, a list of content parts as their texts
    /// joined, anything else as compact JSON.
    pub output: String,
    /// The whole item (Responses) or message (Chat), to check other fields.
    pub item: Value,
}

impl CapturedRequest {
    /// Which wire API the request used, from its path.
    pub fn wire(&self) -> Option<WireApi> {
        WireApi::from_path(&self.path)
    }

    /// The sub-agent this request came from: the `agent_nickname` of its
    /// `x-codex-turn-metadata` header when it carries `x-openai-subagent` (as Osprey's
    /// sub-agents send them), `None` for a root thread's request. The routed mock answers
    /// each sub-agent from its own script by this name.
    pub fn agent_route(&self) -> Option<String> {
        route_of(|name| self.header(name))
    }

    /// The thread this request came from: the `thread_id` of its `x-codex-turn-metadata`
    /// header, else its `thread-id` header (Codex sends both; Osprey's sub-agents too).
    pub fn thread_id(&self) -> Option<String> {
        thread_of(|name| self.header(name))
    }

    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The Responses `input` array; empty when absent.
    pub fn input(&self) -> &[Value] {
        array(&self.body, "input")
    }

    /// The Chat Completions `messages` array; empty when absent.
    pub fn messages(&self) -> &[Value] {
        array(&self.body, "messages")
    }

    /// Every tool output in the history, in order: Responses `function_call_output` and
    /// `custom_tool_call_output` items, or Chat `role: "tool"` messages.
    pub fn function_call_outputs(&self) -> Vec<CallOutput> {
        let responses = self.input().iter().filter(|item| {
            matches!(
                item.get("type").and_then(Value::as_str),
                Some("function_call_output" | "custom_tool_call_output")
            )
        });
        let chat = self
            .messages()
            .iter()
            .filter(|message| message.get("role").and_then(Value::as_str) == Some("tool"));
        responses
            .map(|item| (item, "call_id", "output"))
            .chain(chat.map(|message| (message, "tool_call_id", "content")))
            .map(|(item, id_key, output_key)| CallOutput {
                call_id: item
                    .get(id_key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                output: item.get(output_key).map(content_text).unwrap_or_default(),
                item: item.clone(),
            })
            .collect()
    }

    /// The output text for `call_id`, if the history holds one.
    pub fn output_for(&self, call_id: &str) -> Option<String> {
        self.function_call_outputs()
            .into_iter()
            .find(|output| output.call_id == call_id)
            .map(|output| output.output)
    }

    /// Texts of the user messages, in order: Responses `message` items with role `user`
    /// (one entry per `input_text` part), or Chat user messages (string content, or one
    /// entry per `text` part).
    pub fn user_texts(&self) -> Vec<String> {
        let mut texts = Vec::new();
        let user_messages = self
            .input()
            .iter()
            .filter(|item| item.get("type").and_then(Value::as_str) == Some("message"))
            .chain(self.messages())
            .filter(|message| message.get("role").and_then(Value::as_str) == Some("user"));
        for message in user_messages {
            match message.get("content") {
                Some(Value::String(text)) => texts.push(text.clone()),
                Some(Value::Array(parts)) => texts.extend(
                    parts
                        .iter()
                        .filter(|part| {
                            matches!(
                                part.get("type").and_then(Value::as_str),
                                Some("input_text" | "text")
                            )
                        })
                        .filter_map(|part| part.get("text").and_then(Value::as_str))
                        .map(str::to_owned),
                ),
                _ => {}
            }
        }
        texts
    }

    /// Names of the offered tools: `name` for Responses function and custom tools,
    /// `function.name` for Chat tools, and `type` for nameless built-ins such as
    /// `web_search`.
    pub fn tool_names(&self) -> Vec<String> {
        array(&self.body, "tools")
            .iter()
            .filter_map(|tool| {
                tool.get("name")
                    .or_else(|| tool.get("function").and_then(|f| f.get("name")))
                    .or_else(|| tool.get("type"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect()
    }
}

fn array<'a>(body: &'a Value, key: &str) -> &'a [Value] {
    body.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn content_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

/// The sub-agent route of a request, from its headers (see [`CapturedRequest::agent_route`]).
pub(crate) fn route_of<'a>(header: impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    header("x-openai-subagent")?;
    let nickname = header("x-codex-turn-metadata")
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|meta| meta.get("agent_nickname")?.as_str().map(str::to_owned));
    Some(nickname.unwrap_or_else(|| "<a sub-agent without agent_nickname>".to_owned()))
}

/// The thread id a request names (see [`CapturedRequest::thread_id`]).
pub(crate) fn thread_of<'a>(header: impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    header("x-codex-turn-metadata")
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .and_then(|meta| meta.get("thread_id")?.as_str().map(str::to_owned))
        .or_else(|| header("thread-id").map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn request(path: &str, body: Value) -> CapturedRequest {
        CapturedRequest {
            path: path.to_owned(),
            headers: HashMap::from([("authorization".to_owned(), "Bearer k".to_owned())]),
            body,
        }
    }

    #[test]
    fn responses_helpers_read_input() {
        let req = request(
            "/v1/responses",
            json!({
                "input": [
                    {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
                    {"type": "message", "role": "user", "content": [
                        {"type": "input_text", "text": "ctx"}, {"type": "input_text", "text": "do it"}]},
                    {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "a", "output": "done"},
                    {"type": "custom_tool_call_output", "call_id": "b",
                     "output": [{"type": "input_text", "text": "pa"}, {"type": "input_text", "text": "rts"}]},
                ],
                "tools": [
                    {"type": "function", "name": "exec_command"},
                    {"type": "custom", "name": "apply_patch"},
                    {"type": "web_search"},
                ],
            }),
        );
        assert_eq!(req.wire(), Some(WireApi::Responses));
        assert_eq!(req.header("Authorization"), Some("Bearer k"));
        assert_eq!(req.input().len(), 5);
        assert_eq!(req.user_texts(), vec!["ctx", "do it"]);
        assert_eq!(
            req.tool_names(),
            vec!["exec_command", "apply_patch", "web_search"]
        );
        assert_eq!(req.output_for("a").as_deref(), Some("done"));
        assert_eq!(req.output_for("b").as_deref(), Some("parts"));
        assert_eq!(req.function_call_outputs().len(), 2);
        assert!(req.messages().is_empty());
    }

    #[test]
    fn chat_helpers_read_messages() {
        let req = request(
            "/chat/completions",
            json!({
                "messages": [
                    {"role": "system", "content": "rules"},
                    {"role": "user", "content": "plain"},
                    {"role": "user", "content": [{"type": "text", "text": "part"}]},
                    {"role": "tool", "tool_call_id": "c", "content": "out"},
                ],
                "tools": [{"type": "function", "function": {"name": "exec_command"}}],
            }),
        );
        assert_eq!(req.wire(), Some(WireApi::Chat));
        assert_eq!(req.user_texts(), vec!["plain", "part"]);
        assert_eq!(req.tool_names(), vec!["exec_command"]);
        let outputs = req.function_call_outputs();
        assert_eq!(outputs.len(), 1);
        assert_eq!(outputs[0].call_id, "c");
        assert_eq!(outputs[0].output, "out");
    }
}
