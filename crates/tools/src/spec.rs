//! Tool specs: what the model is told about each tool.
//!
//! A spec is either a function tool with a JSON schema for its arguments or a freeform
//! ("custom") tool whose raw input follows a Lark grammar. Names and argument shapes follow
//! Codex so that models trained on it call our tools the same way; the descriptions are ours.

use serde_json::{Value, json};

/// Tool names, as the model sees them.
pub mod names {
    /// Run a command (unified exec, optionally in a PTY).
    pub const EXEC_COMMAND: &str = "exec_command";
    /// Write to a running exec_command session.
    pub const WRITE_STDIN: &str = "write_stdin";
    /// Run an argv-style command.
    pub const SHELL: &str = "shell";
    /// Run a script in the user's shell.
    pub const SHELL_COMMAND: &str = "shell_command";
    /// Edit files with a patch.
    pub const APPLY_PATCH: &str = "apply_patch";
    /// Read lines of a text file.
    pub const READ_FILE: &str = "read_file";
    /// List a directory tree.
    pub const LIST_DIR: &str = "list_dir";
    /// Find files whose contents match a regex.
    pub const GREP_FILES: &str = "grep_files";
    /// Attach a local image.
    pub const VIEW_IMAGE: &str = "view_image";
    /// Record the task plan.
    pub const UPDATE_PLAN: &str = "update_plan";
    /// The Responses API's built-in shell call (accepted, never offered).
    pub const LOCAL_SHELL: &str = "local_shell";
    /// Write a whole file (the local tool profile).
    pub const WRITE_FILE: &str = "write_file";
    /// Replace one exact span of an existing file (the local tool profile).
    pub const EDIT_FILE: &str = "edit_file";
    /// List the resources of the MCP servers.
    pub const LIST_MCP_RESOURCES: &str = "list_mcp_resources";
    /// List the resource templates of the MCP servers.
    pub const LIST_MCP_RESOURCE_TEMPLATES: &str = "list_mcp_resource_templates";
    /// Read one MCP resource.
    pub const READ_MCP_RESOURCE: &str = "read_mcp_resource";
    /// Start a sub-agent (multi-agent collaboration).
    pub const SPAWN_AGENT: &str = "spawn_agent";
    /// Send a message to a sub-agent.
    pub const SEND_INPUT: &str = "send_input";
    /// Wait for sub-agents to reach a final status.
    pub const WAIT_AGENT: &str = "wait_agent";
    /// Close a sub-agent and its descendants.
    pub const CLOSE_AGENT: &str = "close_agent";
    /// Reopen a closed sub-agent.
    pub const RESUME_AGENT: &str = "resume_agent";
}

/// A JSON schema object describing a function tool's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSchema(pub Value);

/// The input format of a freeform tool: a grammar the model's raw input must follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeformFormat {
    /// Always "grammar" for now.
    pub kind: String,
    /// Always "lark" for now.
    pub syntax: String,
    /// The grammar text.
    pub definition: String,
}

/// One tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolSpec {
    /// A function tool: the model sends a JSON object matching `parameters`.
    Function {
        /// Tool name.
        name: String,
        /// What the tool does, for the model.
        description: String,
        /// Whether the API should enforce the schema strictly (Codex sends `false`).
        strict: bool,
        /// JSON schema of the arguments object.
        parameters: JsonSchema,
    },
    /// A freeform (custom) tool: the model sends raw text matching `format`.
    Freeform {
        /// Tool name.
        name: String,
        /// What the tool does, for the model.
        description: String,
        /// The grammar of the input.
        format: FreeformFormat,
    },
}

impl ToolSpec {
    /// The tool's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Function { name, .. } | Self::Freeform { name, .. } => name,
        }
    }

    /// The entry for the Responses API `tools` array.
    pub fn to_responses_json(&self) -> Value {
        match self {
            Self::Function {
                name,
                description,
                strict,
                parameters,
            } => json!({
                "type": "function",
                "name": name,
                "description": description,
                "strict": strict,
                "parameters": parameters.0,
            }),
            Self::Freeform {
                name,
                description,
                format,
            } => json!({
                "type": "custom",
                "name": name,
                "description": description,
                "format": {
                    "type": format.kind,
                    "syntax": format.syntax,
                    "definition": format.definition,
                },
            }),
        }
    }

    /// The entry for the Chat Completions `tools` array; `None` for freeform tools, which
    /// that API cannot express (offer the function variant instead).
    pub fn to_chat_completions_json(&self) -> Option<Value> {
        match self {
            Self::Function {
                name,
                description,
                strict,
                parameters,
            } => Some(json!({
                "type": "function",
                "function": {
                    "name": name,
                    "description": description,
                    "strict": strict,
                    "parameters": parameters.0,
                },
            })),
            Self::Freeform { .. } => None,
        }
    }
}

fn function(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec::Function {
        name: name.to_string(),
        description: description.to_string(),
        strict: false,
        parameters: JsonSchema(parameters),
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn number(description: &str) -> Value {
    json!({"type": "number", "description": description})
}

fn boolean(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

fn string_enum(values: &[&str], description: &str) -> Value {
    json!({"type": "string", "enum": values, "description": description})
}

fn string_array(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

/// The approval-related arguments shared by the command tools.
fn approval_properties(properties: &mut Value) {
    if let Value::Object(map) = properties {
        map.insert(
            "sandbox_permissions".to_string(),
            string_enum(
                &["use_default", "require_escalated"],
                "Leave unset (\"use_default\") to run inside the sandbox. Use \
                 \"require_escalated\" only when the command cannot work sandboxed; the user \
                 is then asked to approve it.",
            ),
        );
        map.insert(
            "justification".to_string(),
            string(
                "Only with \"require_escalated\": one short question for the user explaining \
                 why this command needs to run outside the sandbox.",
            ),
        );
        map.insert(
            "prefix_rule".to_string(),
            string_array(
                "Only with \"require_escalated\": a short command prefix (e.g. [\"cargo\", \
                 \"test\"]) the user may approve once for similar commands later.",
            ),
        );
    }
}

const YIELD_DESCRIPTION: &str =
    "Milliseconds to wait for output before returning (default 10000, range 250-30000).";
const MAX_TOKENS_DESCRIPTION: &str =
    "Token budget for the returned output (default 10000); longer output keeps its start and end.";

/// `exec_command`: run a command, possibly long-lived, returning output or a session id.
pub fn exec_command_spec() -> ToolSpec {
    let mut properties = json!({
        "cmd": string("The command line to run, interpreted by the shell."),
        "workdir": string("Directory to run in; defaults to the turn's working directory."),
        "shell": string("Shell program to use; defaults to the user's shell."),
        "login": boolean("Run the shell as a login shell so profile files load (default true)."),
        "tty": boolean("Attach a pseudo-terminal, for interactive programs (default false)."),
        "yield_time_ms": number(YIELD_DESCRIPTION),
        "max_output_tokens": number(MAX_TOKENS_DESCRIPTION),
    });
    approval_properties(&mut properties);
    function(
        names::EXEC_COMMAND,
        "Run a shell command. Returns its output once it exits, or, if it is still running \
         when the wait ends, the output so far and a session ID to use with write_stdin.",
        object(properties, &["cmd"]),
    )
}

/// `write_stdin`: send characters to a running exec session and collect new output.
pub fn write_stdin_spec() -> ToolSpec {
    let properties = json!({
        "session_id": number("The session ID that exec_command returned."),
        "chars": string("Text to send to the process's input; leave empty to just read new output."),
        "yield_time_ms": number(YIELD_DESCRIPTION),
        "max_output_tokens": number(MAX_TOKENS_DESCRIPTION),
    });
    function(
        names::WRITE_STDIN,
        "Send input to a command started by exec_command that is still running, and return \
         the output it produced since the last call.",
        object(properties, &["session_id"]),
    )
}

/// `shell`: run an argv-style command to completion.
pub fn shell_spec() -> ToolSpec {
    let mut properties = json!({
        "command": string_array("The program and its arguments, e.g. [\"bash\", \"-lc\", \"ls -la\"]."),
        "workdir": string("Directory to run in; set it rather than using `cd`."),
        "timeout_ms": number("Kill the command after this many milliseconds."),
    });
    approval_properties(&mut properties);
    function(
        names::SHELL,
        "Run a program with arguments (executed directly, not through a shell unless you \
         call one, e.g. [\"bash\", \"-lc\", \"…\"]) and return its exit code and output.",
        object(properties, &["command"]),
    )
}

/// `shell_command`: run a script string in the user's shell to completion.
pub fn shell_command_spec() -> ToolSpec {
    let mut properties = json!({
        "command": string("The script to run in the user's shell."),
        "workdir": string("Directory to run in; set it rather than using `cd`."),
        "login": boolean("Run the shell as a login shell so profile files load (default true)."),
        "timeout_ms": number("Kill the command after this many milliseconds."),
    });
    approval_properties(&mut properties);
    function(
        names::SHELL_COMMAND,
        "Run a script in the user's shell and return its exit code and output.",
        object(properties, &["command"]),
    )
}

const APPLY_PATCH_DESCRIPTION: &str = "Create, edit, move or delete files with a patch. The patch starts with `*** Begin Patch` \
     and ends with `*** End Patch`; each file section is `*** Add File: path` (lines prefixed \
     `+`), `*** Delete File: path`, or `*** Update File: path` (optionally followed by `*** \
     Move to: new path`) with hunks that start with `@@` and hold context lines (` `), removed \
     lines (`-`) and added lines (`+`). Use paths relative to the working directory.";

/// `apply_patch` as a freeform tool whose input follows `grammar` (from the apply-patch crate).
pub fn apply_patch_freeform_spec(grammar: &str) -> ToolSpec {
    ToolSpec::Freeform {
        name: names::APPLY_PATCH.to_string(),
        description: APPLY_PATCH_DESCRIPTION.to_string(),
        format: FreeformFormat {
            kind: "grammar".to_string(),
            syntax: "lark".to_string(),
            definition: grammar.to_string(),
        },
    }
}

/// `apply_patch` as a function tool taking the patch text in `input`.
pub fn apply_patch_function_spec() -> ToolSpec {
    let properties = json!({
        "input": string("The whole patch, from `*** Begin Patch` to `*** End Patch`."),
    });
    function(
        names::APPLY_PATCH,
        APPLY_PATCH_DESCRIPTION,
        object(properties, &["input"]),
    )
}

/// `read_file`: numbered lines of a text file, as a range or as the block around a line.
pub fn read_file_spec() -> ToolSpec {
    let indentation = json!({
        "type": "object",
        "properties": {
            "anchor_line": number("The line whose block to show; defaults to `offset`."),
            "max_levels": number("How many enclosing indentation levels to include (0, the default, means all)."),
            "include_siblings": boolean("Also include neighbouring blocks at the anchor's level (default false)."),
            "include_header": boolean("Include comment lines directly above the block (default true)."),
            "max_lines": number("At most this many lines (defaults to `limit`)."),
        },
        "additionalProperties": false,
    });
    let properties = json!({
        "file_path": string("Absolute path of the file."),
        "offset": number("First line to show, counting from 1 (default 1)."),
        "limit": number("Maximum number of lines to show (default 2000)."),
        "mode": string_enum(&["slice", "indentation"], "\"slice\" (default) shows lines from `offset`; \"indentation\" shows the code block around the anchor line."),
        "indentation": indentation,
    });
    function(
        names::READ_FILE,
        "Read a text file; each line comes back prefixed with its 1-based number as `L<n>: `. \
         Read a range with offset and limit, or the enclosing block of a line with mode \
         \"indentation\".",
        object(properties, &["file_path"]),
    )
}

/// `list_dir`: a directory tree, paged.
pub fn list_dir_spec() -> ToolSpec {
    let properties = json!({
        "dir_path": string("Absolute path of the directory."),
        "offset": number("First entry to show, counting from 1 (default 1)."),
        "limit": number("Maximum number of entries to show (default 25)."),
        "depth": number("How many directory levels to descend, at least 1 (default 2)."),
    });
    function(
        names::LIST_DIR,
        "List a directory's entries in name order, descending into subdirectories up to \
         `depth`. Directories end in `/`, symlinks in `@`, other special files in `?`.",
        object(properties, &["dir_path"]),
    )
}

/// `grep_files`: paths of files whose contents match a regex, newest first.
pub fn grep_files_spec() -> ToolSpec {
    let properties = json!({
        "pattern": string("Regular expression to look for (Rust regex syntax)."),
        "include": string("Only search files whose names match this glob, e.g. \"*.rs\" or \"*.{ts,tsx}\"."),
        "path": string("File or directory to search; defaults to the working directory."),
        "limit": number("Maximum number of paths to return (default 100)."),
    });
    function(
        names::GREP_FILES,
        "Find files whose contents match a regular expression and return their paths, most \
         recently modified first. Files ignored by .gitignore and hidden files are skipped.",
        object(properties, &["pattern"]),
    )
}

/// `view_image`: attach a local image to the conversation.
pub fn view_image_spec() -> ToolSpec {
    let properties = json!({
        "path": string("Path of the image file (PNG, JPEG, GIF or WebP)."),
    });
    function(
        names::VIEW_IMAGE,
        "Look at an image file on disk. Use it when the user points you to an image path \
         that is not already attached to the conversation.",
        object(properties, &["path"]),
    )
}

/// `update_plan`: record the step-by-step plan and each step's status.
pub fn update_plan_spec() -> ToolSpec {
    let step = json!({
        "type": "object",
        "properties": {
            "step": string("What this step does, in a few words."),
            "status": string_enum(&["pending", "in_progress", "completed"], "The step's status."),
        },
        "required": ["step", "status"],
        "additionalProperties": false,
    });
    let properties = json!({
        "explanation": string("Optional note on why the plan changed."),
        "plan": {"type": "array", "items": step, "description": "All steps, in order."},
    });
    function(
        names::UPDATE_PLAN,
        "Share and update your plan for the task as a list of short steps. Keep at most one \
         step in_progress at a time and send the whole list each time.",
        object(properties, &["plan"]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn property_names(spec: &ToolSpec) -> Vec<String> {
        let ToolSpec::Function { parameters, .. } = spec else {
            panic!("not a function tool");
        };
        let mut names: Vec<String> = parameters.0["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }

    #[test]
    fn exec_command_has_codex_argument_names() {
        assert_eq!(
            property_names(&exec_command_spec()),
            vec![
                "cmd",
                "justification",
                "login",
                "max_output_tokens",
                "prefix_rule",
                "sandbox_permissions",
                "shell",
                "tty",
                "workdir",
                "yield_time_ms"
            ]
        );
    }

    #[test]
    fn function_spec_serialises_to_responses_shape() {
        let v = view_image_spec().to_responses_json();
        assert_eq!(
            v,
            json!({
                "type": "function",
                "name": "view_image",
                "description": v["description"],
                "strict": false,
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": v["parameters"]["properties"]["path"]["description"]}},
                    "required": ["path"],
                    "additionalProperties": false,
                }
            })
        );
    }

    #[test]
    fn freeform_spec_serialises_to_custom_tool() {
        let spec = apply_patch_freeform_spec("start: begin_patch");
        assert_eq!(spec.name(), "apply_patch");
        let v = spec.to_responses_json();
        assert_eq!(v["type"], "custom");
        assert_eq!(
            v["format"],
            json!({"type": "grammar", "syntax": "lark", "definition": "start: begin_patch"})
        );
        assert_eq!(spec.to_chat_completions_json(), None);
    }
}
