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
    /// The call's JSON arguments parsed into the tool's argument struct. Every parse error
    /// is one the model can act on: it names the field at fault and how to call the tool.
    pub fn arguments<T: osprey_tools::ToolArguments>(&self) -> Result<T, ToolError> {
        let ToolPayload::Function { arguments } = &self.payload else {
            return Err(ToolError::RespondToModel(format!(
                "{} takes JSON arguments: call it as a function with one JSON object",
                self.tool_name
            )));
        };
        osprey_tools::parse_arguments(&self.tool_name, arguments)
            .map_err(|e| ToolError::RespondToModel(e.to_string()))
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn call(payload: ToolPayload) -> ToolCall {
        ToolCall {
            call_id: "c1".to_string(),
            tool_name: "read_file".to_string(),
            payload,
        }
    }

    #[test]
    fn arguments_parse_into_the_tool_struct() {
        let args: osprey_tools::ReadFileArgs = call(ToolPayload::Function {
            arguments: r#"{"file_path": "/a"}"#.to_string(),
        })
        .arguments()
        .unwrap();
        assert_eq!(args.file_path, "/a");
    }

    #[test]
    fn bad_arguments_are_plain_words_for_the_model() {
        let bad = call(ToolPayload::Function {
            arguments: r#"{"file_path": 3}"#.to_string(),
        })
        .arguments::<osprey_tools::ReadFileArgs>()
        .unwrap_err();
        let ToolError::RespondToModel(message) = bad else {
            panic!("a parse error is not fatal");
        };
        assert!(message.contains("`file_path`"), "{message}");
        let freeform = call(ToolPayload::Custom {
            input: "x".to_string(),
        })
        .arguments::<osprey_tools::ReadFileArgs>()
        .unwrap_err();
        assert!(
            freeform.to_string().contains("JSON arguments"),
            "{freeform}"
        );
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
