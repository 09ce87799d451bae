//! The local tool profile's one tool of its own: `write_file {path, content}`.
//!
//! A small model fails at `apply_patch` (context lines, headers) but manages "write the
//! whole file". This crate only specifies the tool (its schema feeds the grammar); the agent
//! (`osprey-core`) implements it by turning the write into a patch, so approvals, the sandbox
//! and `file_change` events apply as for `apply_patch`. The rest of the profile —
//! `read_file`, `list_dir`, `shell_command` — are the agent's existing tools.

use serde_json::{Value, json};

/// The Responses-API function spec of `write_file`.
pub fn write_file_spec() -> Value {
    json!({
        "type": "function",
        "name": "write_file",
        "description": "Create or overwrite a text file with the complete new content.",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the working directory or absolute."},
                "content": {"type": "string", "description": "The whole file content."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_names_the_tool_and_requires_both_fields() {
        let spec = write_file_spec();
        assert_eq!(spec["name"], "write_file");
        assert_eq!(spec["parameters"]["required"], json!(["path", "content"]));
        assert_eq!(spec["parameters"]["additionalProperties"], false);
    }
}
