//! Keeping a history the model API accepts.

use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use std::collections::HashSet;

/// The output given to a call whose result was lost (the process ended mid-call).
pub const LOST_OUTPUT: &str =
    "aborted: the session ended before this call finished; its result is unknown";

/// Gives every tool call without an output one (a process killed mid-call leaves such calls
/// in its session file, and the API refuses a history with them). Returns how many.
pub fn close_dangling_calls(history: &mut Vec<ResponseItem>) -> usize {
    let answered: HashSet<String> = history
        .iter()
        .filter_map(|i| i.tool_output_call_id().map(str::to_string))
        .collect();
    let missing: Vec<ResponseItem> = history
        .iter()
        .filter_map(|item| {
            let call_id = item.tool_call_id()?;
            if answered.contains(call_id) {
                return None;
            }
            Some(match item {
                ResponseItem::CustomToolCall { .. } => ResponseItem::CustomToolCallOutput {
                    call_id: call_id.to_string(),
                    output: LOST_OUTPUT.to_string(),
                },
                _ => ResponseItem::FunctionCallOutput {
                    call_id: call_id.to_string(),
                    output: FunctionCallOutputPayload::Text(LOST_OUTPUT.to_string()),
                },
            })
        })
        .collect();
    let count = missing.len();
    history.extend(missing);
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_without_outputs_get_one_and_answered_calls_do_not() {
        let mut history: Vec<ResponseItem> = serde_json::from_value(json!([
            {"type":"function_call","name":"a","arguments":"{}","call_id":"done"},
            {"type":"function_call_output","call_id":"done","output":"ok"},
            {"type":"function_call","name":"b","arguments":"{}","call_id":"lost"},
            {"type":"custom_tool_call","name":"apply_patch","input":"x","call_id":"lost2"}
        ]))
        .unwrap();
        assert_eq!(close_dangling_calls(&mut history), 2);
        assert_eq!(history.len(), 6);
        assert_eq!(history[4].tool_output_call_id(), Some("lost"));
        assert!(matches!(
            history[5],
            ResponseItem::CustomToolCallOutput { .. }
        ));
        assert_eq!(close_dangling_calls(&mut history), 0);
    }
}
