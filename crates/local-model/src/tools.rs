//! The local tool profile's tools of its own, `write_file {path, content}` and
//! `edit_file {path, old, new}`, in the Responses-API JSON form this crate's grammar and
//! conversation code work with.
//!
//! The specs live with the other tool specs in `osprey-tools`; the agent implements both
//! tools by turning the change into a patch, so approvals, the sandbox and `file_change`
//! events apply as for `apply_patch`.

use serde_json::Value;

/// The Responses-API function spec of `write_file`.
pub fn write_file_spec() -> Value {
    osprey_tools::write_file_spec().to_responses_json()
}

/// The Responses-API function spec of `edit_file`.
pub fn edit_file_spec() -> Value {
    osprey_tools::edit_file_spec().to_responses_json()
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

    #[test]
    fn the_grammar_constrains_edit_file_calls_to_its_three_strings() {
        let tools = crate::grammar::ToolDef::from_specs(&[write_file_spec(), edit_file_spec()]);
        let grammar = crate::grammar::tools_grammar(&tools);
        assert!(grammar.contains(r#"\"name\": \"edit_file\""#), "{grammar}");
        let edit = &tools[1];
        assert_eq!(edit.name, "edit_file");
        let (required, optional) = crate::grammar::ToolDef::ordered_properties(&edit.parameters);
        let names: Vec<&str> = required.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["path", "old", "new"]);
        assert!(optional.is_empty());
        let call = json!({"path": "a.json", "old": "true", "new": "false"});
        assert_eq!(crate::grammar::validate(&call, &edit.parameters), Ok(()));
        let extra = json!({"path": "a.json", "old": "x", "new": "y", "count": 2});
        assert!(crate::grammar::validate(&extra, &edit.parameters).is_err());
        let missing = json!({"path": "a.json", "old": "x"});
        assert!(crate::grammar::validate(&missing, &edit.parameters).is_err());
    }
}
