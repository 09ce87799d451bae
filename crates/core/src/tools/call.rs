//! One tool call, whatever item it came from, and what a handler gives back.

use osprey_protocol::{
    FunctionCallOutputContent, FunctionCallOutputPayload, LocalShellAction, ResponseItem,
};

/// A tool call extracted from the model's output.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub call_id: String,
    pub tool_name: String,
    pub payload: ToolPayload,
}

/// What the model sent with the call; the item type decides the output item type.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolPayload {
    /// A `function_call`: arguments are a JSON document in a string.
    Function { arguments: String },
    /// A `custom_tool_call` (freeform tool): raw text input.
    Custom { input: String },
    /// A `local_shell_call`: an argv to run.
    LocalShell { action: LocalShellAction },
}

impl ToolCall {
    /// The output item for this call, of the type its call item demands.
    pub fn output_item(&self, output: ToolOutput) -> ResponseItem {
        let call_id = self.call_id.clone();
        match &self.payload {
            ToolPayload::Custom { .. } => ResponseItem::CustomToolCallOutput {
                call_id,
                output: output.text(),
            },
            ToolPayload::Function { .. } | ToolPayload::LocalShell { .. } => {
                ResponseItem::FunctionCallOutput {
                    call_id,
                    output: output.into_payload(),
                }
            }
        }
    }
}

/// What a tool returns to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    /// Images attached to the output (data URLs), sent as input images.
    pub images: Vec<String>,
    /// Whether the call did what was asked; failed outputs still go to the model.
    pub success: bool,
}

impl ToolOutput {
    pub fn success(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            images: Vec::new(),
            success: true,
        }
    }

    pub fn failure(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            images: Vec::new(),
            success: false,
        }
    }

    pub fn text(&self) -> String {
        self.text.clone()
    }

    fn into_payload(self) -> FunctionCallOutputPayload {
        if self.images.is_empty() {
            return FunctionCallOutputPayload::Text(self.text);
        }
        let mut parts = vec![FunctionCallOutputContent::InputText { text: self.text }];
        parts.extend(
            self.images
                .into_iter()
                .map(|image_url| FunctionCallOutputContent::InputImage { image_url }),
        );
        FunctionCallOutputPayload::Content(parts)
    }
}

/// Why a tool call did not produce a normal output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The model can act on this: it becomes a failed output in plain words.
    #[error("{0}")]
    RespondToModel(String),
    /// The turn cannot go on (for example the user chose "abort" at an approval).
    #[error("{0}")]
    Fatal(String),
}
