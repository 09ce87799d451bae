//! Turns the model's output items into [`ToolCall`]s.

use super::call::{ToolCall, ToolPayload};
use osprey_protocol::ResponseItem;

/// Every tool call in `items`, in the order the model made them.
pub fn extract_tool_calls(items: &[ResponseItem]) -> Vec<ToolCall> {
    items.iter().filter_map(tool_call_from_item).collect()
}

pub fn tool_call_from_item(item: &ResponseItem) -> Option<ToolCall> {
    match item {
        ResponseItem::FunctionCall {
            name,
            arguments,
            call_id,
            extra,
            ..
        } => Some(ToolCall {
            call_id: call_id.clone(),
            // A tool inside a namespace (MCP servers on the Responses API) is addressed by
            // the qualified name `<namespace>__<name>`.
            tool_name: match extra.get("namespace").and_then(|n| n.as_str()) {
                Some(namespace) if !namespace.is_empty() => format!("{namespace}__{name}"),
                _ => name.clone(),
            },
            payload: ToolPayload::Function {
                arguments: arguments.clone(),
            },
        }),
        ResponseItem::CustomToolCall {
            call_id,
            name,
            input,
            ..
        } => Some(ToolCall {
            call_id: call_id.clone(),
            tool_name: name.clone(),
            payload: ToolPayload::Custom {
                input: input.clone(),
            },
        }),
        ResponseItem::LocalShellCall {
            id,
            call_id,
            action,
            ..
        } => {
            let call_id = call_id.clone().or_else(|| id.clone())?;
            Some(ToolCall {
                call_id,
                tool_name: osprey_tools::names::LOCAL_SHELL.to_string(),
                payload: ToolPayload::LocalShell {
                    action: action.clone(),
                },
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn all_three_call_kinds_become_tool_calls_in_order() {
        let items: Vec<ResponseItem> = serde_json::from_value(json!([
            {"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]},
            {"type":"function_call","name":"exec_command","arguments":"{}","call_id":"a"},
            {"type":"custom_tool_call","name":"apply_patch","input":"p","call_id":"b"},
            {"type":"local_shell_call","id":"c","status":"completed","action":{"type":"exec","command":["ls"]}}
        ]))
        .unwrap();
        let calls = extract_tool_calls(&items);
        let ids: Vec<_> = calls.iter().map(|c| c.call_id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!(calls[2].tool_name, "local_shell");
    }
}
