//! Specs of the compact tool variants: the same tools with only the arguments a small model
//! uses well, taking paths relative to the working directory as well as absolute ones, and
//! `write_file`, the whole-file write such a model manages where patches fail, and
//! `edit_file`, the exact-span replacement that keeps what the model does not mention.
//!
//! A 1.5B model fills in every optional argument it is shown (it set `timeout_ms` to a few
//! milliseconds and killed its own test run) and writes relative paths although a description
//! asks for absolute ones, costing a failed call each time. Hosted models keep the full
//! Codex-shaped tools ([`crate::spec`]).

use serde::Deserialize;
use serde_json::{Value, json};

use crate::args::ToolArguments;
use crate::spec::{JsonSchema, ToolSpec, names};

fn function(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec::Function {
        name: name.to_string(),
        description: description.to_string(),
        strict: false,
        parameters: JsonSchema(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })),
    }
}

/// `write_file {path, content}`: create or overwrite a whole file.
pub fn write_file_spec() -> ToolSpec {
    function(
        names::WRITE_FILE,
        "Create or overwrite a text file with the complete new content.",
        json!({
            "path": {"type": "string", "description": "File path, relative to the working directory or absolute."},
            "content": {"type": "string", "description": "The whole file content."},
        }),
        &["path", "content"],
    )
}

/// `edit_file {path, old, new}`: replace the one place where `old` occurs (see
/// [`crate::replace_span`]).
pub fn edit_file_spec() -> ToolSpec {
    function(
        names::EDIT_FILE,
        "Change part of an existing file: replace the one place where `old` occurs with `new`.",
        json!({
            "path": {"type": "string", "description": "File path, relative to the working directory or absolute."},
            "old": {"type": "string", "description": "The exact text to replace, copied from the file; it must occur once."},
            "new": {"type": "string", "description": "The text to put in its place."},
        }),
        &["path", "old", "new"],
    )
}

/// `read_file {file_path, offset?, limit?}` with relative paths allowed.
pub fn read_file_compact_spec() -> ToolSpec {
    function(
        names::READ_FILE,
        "Read a text file; lines come back numbered.",
        json!({
            "file_path": {"type": "string", "description": "Path of the file, relative to the working directory or absolute."},
            "offset": {"type": "integer", "description": "First line to show (default 1)."},
            "limit": {"type": "integer", "description": "Most lines to show (default 2000)."},
        }),
        &["file_path"],
    )
}

/// `list_dir {dir_path?}`: two levels deep, relative paths allowed.
pub fn list_dir_compact_spec() -> ToolSpec {
    function(
        names::LIST_DIR,
        "List the files and folders in a directory, two levels deep.",
        json!({
            "dir_path": {"type": "string", "description": "Directory, relative to the working directory or absolute (default: the working directory)."},
        }),
        &[],
    )
}

/// `shell_command {command}`: one script, no timeout or login knobs.
pub fn shell_command_compact_spec() -> ToolSpec {
    function(
        names::SHELL_COMMAND,
        "Run a shell command in the working directory and return its exit code and output.",
        json!({
            "command": {"type": "string", "description": "The command line to run."},
        }),
        &["command"],
    )
}

/// Arguments of `write_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Relative to the working directory, or absolute.
    pub path: String,
    /// The whole new content.
    pub content: String,
}

impl ToolArguments for WriteFileArgs {
    fn spec() -> ToolSpec {
        write_file_spec()
    }
}

/// Arguments of `edit_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Relative to the working directory, or absolute.
    pub path: String,
    /// The text to replace; must occur once.
    pub old: String,
    /// What replaces it.
    pub new: String,
}

impl ToolArguments for EditFileArgs {
    fn spec() -> ToolSpec {
        edit_file_spec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_arguments;

    #[test]
    fn write_file_requires_both_fields_and_says_so() {
        let spec = write_file_spec().to_responses_json();
        assert_eq!(spec["name"], "write_file");
        assert_eq!(spec["parameters"]["required"], json!(["path", "content"]));
        let error = parse_arguments::<WriteFileArgs>("write_file", r#"{"path": "a.py"}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("`content`"), "{error}");
    }

    #[test]
    fn edit_file_requires_path_old_and_new() {
        let spec = edit_file_spec().to_responses_json();
        assert_eq!(spec["name"], "edit_file");
        assert_eq!(
            spec["parameters"]["required"],
            json!(["path", "old", "new"])
        );
        assert_eq!(spec["parameters"]["additionalProperties"], false);
        let error = parse_arguments::<EditFileArgs>("edit_file", r#"{"path": "a.py", "old": "x"}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("`new`"), "{error}");
    }

    #[test]
    fn compact_variants_offer_only_the_small_argument_sets() {
        for (spec, expected) in [
            (
                read_file_compact_spec(),
                vec!["file_path", "limit", "offset"],
            ),
            (list_dir_compact_spec(), vec!["dir_path"]),
            (shell_command_compact_spec(), vec!["command"]),
        ] {
            let json = spec.to_responses_json();
            let mut keys: Vec<String> = json["parameters"]["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            keys.sort();
            assert_eq!(keys, expected, "{json}");
        }
    }
}
