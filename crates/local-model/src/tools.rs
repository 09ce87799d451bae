//! The local tool profile's one tool of its own, `write_file {path, content}`, in the
//! Responses-API JSON form this crate's grammar and conversation code work with.
//!
//! The spec lives with the other tool specs in `osprey-tools`; the agent implements the tool
//! by turning the write into a patch, so approvals, the sandbox and `file_change` events
//! apply as for `apply_patch`.

use serde_json::Value;

/// The Responses-API function spec of `write_file`.
pub fn write_file_spec() -> Value {
    osprey_tools::write_file_spec().to_responses_json()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_spec_names_the_tool_and_requires_both_fields() {
        let spec = write_file_spec();
        assert_eq!(spec["name"], "write_file");
        assert_eq!(spec["type"], "function");
        assert_eq!(spec["parameters"]["required"], json!(["path", "content"]));
        assert_eq!(spec["parameters"]["additionalProperties"], false);
    }
}
