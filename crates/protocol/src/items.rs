//! The model's view of a conversation: Responses-API items.
//!
//! Items the model produced are sent back exactly as received, so every struct keeps the
//! fields it does not know in `extra`, and an item whose `type` we do not know at all is kept
//! as raw JSON in [`ResponseItem::Other`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One entry of the model-visible history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem {
    Message {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        role: String,
        content: Vec<ContentItem>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    Reasoning {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default)]
        summary: Vec<ReasoningSummary>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ReasoningContent>>,
        /// Opaque; must be sent back byte for byte.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    FunctionCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        name: String,
        /// The arguments as the model wrote them: a JSON document in a string.
        arguments: String,
        call_id: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    FunctionCallOutput {
        call_id: String,
        output: FunctionCallOutputPayload,
    },
    CustomToolCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        call_id: String,
        name: String,
        input: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    CustomToolCallOutput {
        call_id: String,
        output: String,
    },
    LocalShellCall {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        action: LocalShellAction,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    /// An item type this version does not know; kept verbatim.
    #[serde(untagged)]
    Other(Value),
}

impl ResponseItem {
    /// A user message with plain text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::message("user", vec![ContentItem::InputText { text: text.into() }])
    }

    /// A developer (system-level) message with plain text.
    pub fn developer_text(text: impl Into<String>) -> Self {
        Self::message(
            "developer",
            vec![ContentItem::InputText { text: text.into() }],
        )
    }

    /// An assistant message with plain text, as the model would produce it.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Self::message("assistant", vec![ContentItem::output_text(text)])
    }

    pub fn message(role: &str, content: Vec<ContentItem>) -> Self {
        Self::Message {
            id: None,
            role: role.to_string(),
            content,
            extra: Map::new(),
        }
    }

    /// The call id if this item is a tool call of any kind.
    pub fn tool_call_id(&self) -> Option<&str> {
        match self {
            Self::FunctionCall { call_id, .. } | Self::CustomToolCall { call_id, .. } => {
                Some(call_id)
            }
            Self::LocalShellCall { call_id, id, .. } => call_id.as_deref().or(id.as_deref()),
            _ => None,
        }
    }

    /// The call id if this item is a tool output of any kind.
    pub fn tool_output_call_id(&self) -> Option<&str> {
        match self {
            Self::FunctionCallOutput { call_id, .. }
            | Self::CustomToolCallOutput { call_id, .. } => Some(call_id),
            _ => None,
        }
    }

    /// The plain text of a message (all text parts joined), if this is a message.
    pub fn message_text(&self) -> Option<String> {
        match self {
            Self::Message { content, .. } => Some(
                content
                    .iter()
                    .filter_map(ContentItem::text)
                    .collect::<Vec<_>>()
                    .join(""),
            ),
            _ => None,
        }
    }

    /// The role of a message item.
    pub fn role(&self) -> Option<&str> {
        match self {
            Self::Message { role, .. } => Some(role),
            _ => None,
        }
    }
}

/// One part of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    InputText {
        text: String,
    },
    /// An image, as a URL or a `data:` URL with base64 content.
    InputImage {
        image_url: String,
    },
    OutputText {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
    #[serde(untagged)]
    Other(Value),
}

impl ContentItem {
    pub fn output_text(text: impl Into<String>) -> Self {
        Self::OutputText {
            text: text.into(),
            annotations: None,
        }
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            Self::InputText { text } | Self::OutputText { text, .. } => Some(text),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningSummary {
    SummaryText {
        text: String,
    },
    #[serde(untagged)]
    Other(Value),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReasoningContent {
    ReasoningText {
        text: String,
    },
    Text {
        text: String,
    },
    #[serde(untagged)]
    Other(Value),
}

/// What a `local_shell_call` asks to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalShellAction {
    #[serde(rename = "type", default = "exec_type")]
    pub kind: String,
    pub command: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

fn exec_type() -> String {
    "exec".to_string()
}

/// The output of a function tool: plain text, or content parts when it carries images.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FunctionCallOutputPayload {
    Text(String),
    Content(Vec<FunctionCallOutputContent>),
}

impl FunctionCallOutputPayload {
    /// The text of the output (text parts joined by newlines).
    pub fn text(&self) -> String {
        match self {
            Self::Text(t) => t.clone(),
            Self::Content(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    FunctionCallOutputContent::InputText { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

impl From<String> for FunctionCallOutputPayload {
    fn from(value: String) -> Self {
        Self::Text(value)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FunctionCallOutputContent {
    InputText { text: String },
    InputImage { image_url: String },
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn round_trip(v: Value) {
        let item: ResponseItem = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&item).unwrap(), v);
    }

    #[test]
    fn model_items_round_trip_exactly() {
        round_trip(
            json!({"type":"message","id":"msg_1","role":"assistant","status":"completed",
            "content":[{"type":"output_text","text":"hi","annotations":[]}]}),
        );
        round_trip(
            json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"t"}],
            "encrypted_content":"gAAAA=="}),
        );
        round_trip(
            json!({"type":"function_call","id":"fc_1","status":"completed","name":"exec_command",
            "arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}),
        );
        round_trip(
            json!({"type":"custom_tool_call","id":"ctc_1","status":"completed","name":"apply_patch",
            "input":"*** Begin Patch","call_id":"call_2"}),
        );
        round_trip(
            json!({"type":"local_shell_call","id":"lsc_1","call_id":"call_3","status":"completed",
            "action":{"type":"exec","command":["ls","-la"]}}),
        );
        round_trip(json!({"type":"function_call_output","call_id":"call_1","output":"done"}));
        round_trip(json!({"type":"custom_tool_call_output","call_id":"call_2","output":"done"}));
        round_trip(
            json!({"type":"web_search_call","id":"ws_1","status":"completed","action":{"x":1}}),
        );
    }

    #[test]
    fn known_items_parse_into_their_variants() {
        let item: ResponseItem = serde_json::from_value(json!({"type":"function_call","name":"n",
            "arguments":"{}","call_id":"c"}))
        .unwrap();
        assert_eq!(item.tool_call_id(), Some("c"));
        let other: ResponseItem = serde_json::from_value(json!({"type":"novel"})).unwrap();
        assert!(matches!(other, ResponseItem::Other(_)));
    }

    #[test]
    fn image_outputs_serialise_as_content_parts() {
        let out = ResponseItem::FunctionCallOutput {
            call_id: "c".into(),
            output: FunctionCallOutputPayload::Content(vec![
                FunctionCallOutputContent::InputText { text: "see".into() },
                FunctionCallOutputContent::InputImage {
                    image_url: "data:image/png;base64,AA==".into(),
                },
            ]),
        };
        let v = serde_json::to_value(&out).unwrap();
        assert_eq!(v["output"][1]["type"], "input_image");
        let back: ResponseItem = serde_json::from_value(v).unwrap();
        assert_eq!(back, out);
    }
}
