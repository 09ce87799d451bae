//! The history check run on every request: each tool call has exactly one output, after it.
//!
//! A model API rejects a request whose history holds a call without its output (or an
//! output without its call), and agents break in exactly this way when a tool is
//! interrupted, fails, or runs in parallel. Checking it on every request of every test
//! catches such bugs where they happen rather than against the hosted API.
//!
//! Rules, Responses API (`input` items): every `function_call`, `custom_tool_call` and
//! `local_shell_call` has a `call_id`, unique among calls, and exactly one output with that
//! `call_id` appearing later (`custom_tool_call_output` for custom calls,
//! `function_call_output` for the other two); every output has its call. Chat Completions
//! (`messages`): every `tool_calls[].id` of an assistant message has exactly one later
//! `role: "tool"` message with that `tool_call_id`, and every tool message has its call.

use std::collections::HashMap;

use serde_json::Value;

use crate::script::WireApi;

/// Problems with the tool-call history in a request body of the given wire API; empty when
/// the history is well-formed. Each problem is one readable sentence.
pub fn history_problems(wire: WireApi, body: &Value) -> Vec<String> {
    match wire {
        WireApi::Responses => responses_problems(body),
        WireApi::Chat => chat_problems(body),
    }
}

/// A call seen so far: where it was, what output type answers it, how many outputs it got.
struct Call {
    kind: String,
    location: String,
    output_kind: &'static str,
    outputs: usize,
}

#[derive(Default)]
struct Ledger {
    calls: HashMap<String, Call>,
    order: Vec<String>,
    problems: Vec<String>,
}

impl Ledger {
    fn call(&mut self, kind: &str, call_id: &str, location: String, output_kind: &'static str) {
        if let Some(previous) = self.calls.get(call_id) {
            self.problems.push(format!(
                "{kind} at {location} reuses call_id `{call_id}` already used by the {} at {}",
                previous.kind, previous.location
            ));
            return;
        }
        self.order.push(call_id.to_owned());
        self.calls.insert(
            call_id.to_owned(),
            Call {
                kind: kind.to_owned(),
                location,
                output_kind,
                outputs: 0,
            },
        );
    }

    fn output(&mut self, kind: &str, call_id: &str, location: String, later_call: bool) {
        match self.calls.get_mut(call_id) {
            Some(call) => {
                call.outputs += 1;
                if call.outputs > 1 {
                    self.problems.push(format!(
                        "{kind} at {location} is a duplicate output for call_id `{call_id}` \
                         (the {} at {} already has one)",
                        call.kind, call.location
                    ));
                } else if call.output_kind != kind {
                    self.problems.push(format!(
                        "{kind} at {location} answers the {} `{call_id}` at {}, which needs a {}",
                        call.kind, call.location, call.output_kind
                    ));
                }
            }
            None if later_call => self.problems.push(format!(
                "{kind} at {location} for call_id `{call_id}` comes before its call"
            )),
            None => self.problems.push(format!(
                "{kind} at {location} has no matching call with call_id `{call_id}`"
            )),
        }
    }

    fn finish(mut self) -> Vec<String> {
        for call_id in &self.order {
            if let Some(call) = self.calls.get(call_id)
                && call.outputs == 0
            {
                self.problems.push(format!(
                    "{} `{call_id}` at {} has no {} after it",
                    call.kind, call.location, call.output_kind
                ));
            }
        }
        self.problems
    }
}

fn responses_problems(body: &Value) -> Vec<String> {
    let Some(items) = body.get("input").and_then(Value::as_array) else {
        return match body.get("input") {
            // A bare string input is a valid request with no history.
            Some(Value::String(_)) => Vec::new(),
            _ => vec!["request has no `input` array".to_owned()],
        };
    };
    let call_id_of = |item: &Value| {
        item.get("call_id")
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut ledger = Ledger::default();
    for (index, item) in items.iter().enumerate() {
        let location = format!("input[{index}]");
        let Some(kind) = item.get("type").and_then(Value::as_str) else {
            continue;
        };
        let output_kind = match kind {
            "function_call" | "local_shell_call" => Some("function_call_output"),
            "custom_tool_call" => Some("custom_tool_call_output"),
            "tool_search_call" => Some("tool_search_output"),
            _ => None,
        };
        if let Some(output_kind) = output_kind {
            // Older local_shell_call items carry only `id`.
            let call_id = call_id_of(item).or_else(|| {
                (kind == "local_shell_call")
                    .then(|| item.get("id").and_then(Value::as_str).map(str::to_owned))
                    .flatten()
            });
            match call_id.filter(|id| !id.is_empty()) {
                Some(call_id) => ledger.call(kind, &call_id, location, output_kind),
                None => ledger
                    .problems
                    .push(format!("{kind} at {location} has no call_id")),
            }
        } else if matches!(
            kind,
            "function_call_output" | "custom_tool_call_output" | "tool_search_output"
        ) {
            match call_id_of(item).filter(|id| !id.is_empty()) {
                Some(call_id) => {
                    let later = items[index..].iter().any(|other| {
                        other.get("type").and_then(Value::as_str).is_some_and(|t| {
                            matches!(
                                t,
                                "function_call"
                                    | "custom_tool_call"
                                    | "local_shell_call"
                                    | "tool_search_call"
                            )
                        }) && call_id_of(other).as_deref() == Some(call_id.as_str())
                    });
                    ledger.output(kind, &call_id, location, later);
                }
                None => ledger
                    .problems
                    .push(format!("{kind} at {location} has no call_id")),
            }
        }
    }
    ledger.finish()
}

fn chat_problems(body: &Value) -> Vec<String> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return vec!["request has no `messages` array".to_owned()];
    };
    const CALL: &str = "assistant tool call";
    const OUTPUT: &str = "tool message";
    let mut ledger = Ledger::default();
    for (index, message) in messages.iter().enumerate() {
        match message.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                let calls = message.get("tool_calls").and_then(Value::as_array);
                for (call_index, call) in calls.into_iter().flatten().enumerate() {
                    let location = format!("messages[{index}].tool_calls[{call_index}]");
                    match call
                        .get("id")
                        .and_then(Value::as_str)
                        .filter(|id| !id.is_empty())
                    {
                        Some(call_id) => ledger.call(CALL, call_id, location, OUTPUT),
                        None => ledger
                            .problems
                            .push(format!("{CALL} at {location} has no id")),
                    }
                }
            }
            Some("tool") => {
                let location = format!("messages[{index}]");
                let call_id = message
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty());
                match call_id {
                    Some(call_id) => {
                        let later = messages[index..].iter().any(|other| {
                            other
                                .get("tool_calls")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .any(|c| c.get("id").and_then(Value::as_str) == Some(call_id))
                        });
                        ledger.output(OUTPUT, call_id, location, later);
                    }
                    None => ledger
                        .problems
                        .push(format!("{OUTPUT} at {location} has no tool_call_id")),
                }
            }
            _ => {}
        }
    }
    ledger.finish()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn responses(input: Value) -> Vec<String> {
        history_problems(WireApi::Responses, &json!({ "input": input }))
    }

    fn chat(messages: Value) -> Vec<String> {
        history_problems(WireApi::Chat, &json!({ "messages": messages }))
    }

    #[test]
    fn well_formed_responses_history_passes() {
        let problems = responses(json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "a", "name": "exec_command", "arguments": "{}"},
            {"type": "custom_tool_call", "call_id": "b", "name": "apply_patch", "input": ""},
            {"type": "local_shell_call", "call_id": "c", "action": {"type": "exec", "command": []}},
            {"type": "function_call_output", "call_id": "a", "output": "ok"},
            {"type": "custom_tool_call_output", "call_id": "b", "output": "ok"},
            {"type": "function_call_output", "call_id": "c", "output": "ok"},
        ]));
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn missing_output_is_reported() {
        let problems = responses(json!([
            {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
        ]));
        assert_eq!(
            problems,
            vec!["function_call `a` at input[0] has no function_call_output after it"]
        );
    }

    #[test]
    fn duplicate_output_is_reported() {
        let problems = responses(json!([
            {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "1"},
            {"type": "function_call_output", "call_id": "a", "output": "2"},
        ]));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("duplicate output"), "{problems:?}");
        assert!(problems[0].contains("input[2]"), "{problems:?}");
    }

    #[test]
    fn orphan_and_early_outputs_are_reported() {
        let problems = responses(json!([
            {"type": "function_call_output", "call_id": "ghost", "output": "?"},
            {"type": "custom_tool_call_output", "call_id": "b", "output": "early"},
            {"type": "custom_tool_call", "call_id": "b", "name": "apply_patch", "input": ""},
        ]));
        assert_eq!(
            problems,
            vec![
                "function_call_output at input[0] has no matching call with call_id `ghost`",
                "custom_tool_call_output at input[1] for call_id `b` comes before its call",
                "custom_tool_call `b` at input[2] has no custom_tool_call_output after it",
            ]
        );
    }

    #[test]
    fn wrong_output_kind_is_reported() {
        let problems = responses(json!([
            {"type": "custom_tool_call", "call_id": "b", "name": "apply_patch", "input": ""},
            {"type": "function_call_output", "call_id": "b", "output": "?"},
        ]));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("needs a custom_tool_call_output"),
            "{problems:?}"
        );
    }

    #[test]
    fn reused_call_id_and_missing_call_id_are_reported() {
        let problems = responses(json!([
            {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
            {"type": "function_call", "call_id": "a", "name": "y", "arguments": "{}"},
            {"type": "function_call", "name": "z", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "ok"},
        ]));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("reuses call_id `a`"), "{problems:?}");
        assert!(
            problems[1].contains("input[2] has no call_id"),
            "{problems:?}"
        );
    }

    #[test]
    fn string_input_has_no_history_but_missing_input_is_a_problem() {
        assert!(history_problems(WireApi::Responses, &json!({"input": "hello"})).is_empty());
        assert_eq!(
            history_problems(WireApi::Responses, &json!({"model": "m"})),
            vec!["request has no `input` array"]
        );
    }

    #[test]
    fn well_formed_chat_history_passes() {
        let problems = chat(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "b", "content": "2"},
            {"role": "assistant", "content": "done"},
        ]));
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn chat_missing_duplicate_and_orphan_are_reported() {
        let problems = chat(json!([
            {"role": "tool", "tool_call_id": "early", "content": "?"},
            {"role": "assistant", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "x", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "y", "arguments": "{}"}},
                {"id": "early", "type": "function", "function": {"name": "z", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "a", "content": "again"},
            {"role": "tool", "tool_call_id": "ghost", "content": "?"},
        ]));
        assert_eq!(
            problems,
            vec![
                "tool message at messages[0] for call_id `early` comes before its call",
                "tool message at messages[3] is a duplicate output for call_id `a` \
                 (the assistant tool call at messages[1].tool_calls[0] already has one)",
                "tool message at messages[4] has no matching call with call_id `ghost`",
                "assistant tool call `b` at messages[1].tool_calls[1] has no tool message after it",
                "assistant tool call `early` at messages[1].tool_calls[2] has no tool message after it",
            ]
        );
    }
}
