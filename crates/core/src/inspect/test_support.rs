//! Builders the inspectors' unit tests share: a tool call, a turn's start, a tool result and
//! a small project on disk.

use super::TurnStart;
use crate::tools::call::{ToolCall, ToolPayload};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use std::path::Path;

/// A function-style call `id` to `tool` with JSON `arguments`.
pub(crate) fn call(id: &str, tool: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        call_id: id.to_string(),
        tool_name: tool.to_string(),
        payload: ToolPayload::Function {
            arguments: arguments.to_string(),
        },
    }
}

/// A `shell_command` call `id` running `command`.
pub(crate) fn shell(id: &str, command: &str) -> ToolCall {
    call(
        id,
        osprey_tools::names::SHELL_COMMAND,
        serde_json::json!({ "command": command }),
    )
}

/// A `write_file` call `id` writing `content` to `path`.
pub(crate) fn write(id: &str, path: &str, content: &str) -> ToolCall {
    call(
        id,
        osprey_tools::names::WRITE_FILE,
        serde_json::json!({ "path": path, "content": content }),
    )
}

/// A turn asking `request` in `cwd`, with no tool list and no command path.
pub(crate) fn start<'a>(request: &'a str, cwd: &'a Path) -> TurnStart<'a> {
    TurnStart {
        request,
        cwd,
        tool_names: &[],
        command_path: None,
    }
}

/// The result of call `id`, reading `text`.
pub(crate) fn output(id: &str, text: &str) -> ResponseItem {
    ResponseItem::FunctionCallOutput {
        call_id: id.into(),
        output: FunctionCallOutputPayload::from(text.to_string()),
    }
}

/// The text of tool result `item`; panics on anything else.
pub(crate) fn output_text(item: &ResponseItem) -> String {
    match item {
        ResponseItem::FunctionCallOutput { output, .. } => output.text(),
        other => panic!("not an output: {other:?}"),
    }
}

/// A temporary project holding `files` (name, text); parent folders are made as needed.
pub(crate) fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}
