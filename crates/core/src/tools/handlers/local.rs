//! The embedded local model's versions of `read_file`, `list_dir` and `shell_command`: the
//! same handlers underneath, offered with only the arguments a small model uses well, and
//! taking paths relative to the working directory as well as absolute ones.
//!
//! A 1.5B model fills in every optional argument it is shown (it set `timeout_ms` to a few
//! milliseconds and killed its own test run) and writes relative paths although the
//! description asks for absolute ones, costing a failed call each time. Hosted models keep
//! the full Codex-shaped tools.

use std::path::Path;

use async_trait::async_trait;
use osprey_tools::{JsonSchema, ToolSpec};
use serde_json::{Value, json};

use super::files::{ListDirHandler, ReadFileHandler};
use super::shell::ShellCommandHandler;
use crate::tools::call::{ToolError, ToolOutput, ToolPayload};
use crate::tools::context::ToolInvocation;
use crate::tools::registry::ToolHandler;

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

/// Parses the call's JSON arguments, lets `edit` adjust them, and hands the call on to
/// `inner` with the adjusted arguments.
async fn delegate(
    name: &str,
    inner: &dyn ToolHandler,
    mut inv: ToolInvocation,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>, &Path),
) -> Result<ToolOutput, ToolError> {
    let ToolPayload::Function { arguments } = &inv.call.payload else {
        return Err(ToolError::RespondToModel(format!(
            "{name} takes JSON arguments"
        )));
    };
    let mut args = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => map,
        Ok(_) | Err(_) => {
            return Err(ToolError::RespondToModel(format!(
                "{name}: the arguments must be a JSON object"
            )));
        }
    };
    edit(&mut args, &inv.turn.cwd);
    inv.call.payload = ToolPayload::Function {
        arguments: Value::Object(args).to_string(),
    };
    inner.handle(inv).await
}

/// Makes `args[key]` absolute by joining a relative path onto `cwd`; a missing key becomes
/// `cwd` itself when `default_to_cwd` is set.
fn absolutize(
    args: &mut serde_json::Map<String, Value>,
    key: &str,
    cwd: &Path,
    default_to_cwd: bool,
) {
    let path = match args.get(key) {
        Some(Value::String(path)) if Path::new(path).is_absolute() => return,
        Some(Value::String(path)) if path.trim().is_empty() || path == "." => cwd.to_path_buf(),
        Some(Value::String(path)) => cwd.join(path),
        None if default_to_cwd => cwd.to_path_buf(),
        _ => return,
    };
    args.insert(key.to_string(), Value::String(path.display().to_string()));
}

/// `read_file {file_path, offset?, limit?}` with relative paths allowed.
pub struct LocalReadFileHandler;

#[async_trait]
impl ToolHandler for LocalReadFileHandler {
    fn spec(&self) -> ToolSpec {
        function(
            "read_file",
            "Read a text file; lines come back numbered.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file, relative to the working directory or absolute."},
                "offset": {"type": "integer", "description": "First line to show (default 1)."},
                "limit": {"type": "integer", "description": "Most lines to show (default 2000)."},
            }),
            &["file_path"],
        )
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        delegate("read_file", &ReadFileHandler, inv, |args, cwd| {
            absolutize(args, "file_path", cwd, false);
        })
        .await
    }
}

/// `list_dir {dir_path?}`: two levels deep, up to 200 entries, relative paths allowed.
pub struct LocalListDirHandler;

#[async_trait]
impl ToolHandler for LocalListDirHandler {
    fn spec(&self) -> ToolSpec {
        function(
            "list_dir",
            "List the files and folders in a directory, two levels deep.",
            json!({
                "dir_path": {"type": "string", "description": "Directory, relative to the working directory or absolute (default: the working directory)."},
            }),
            &[],
        )
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        delegate("list_dir", &ListDirHandler, inv, |args, cwd| {
            absolutize(args, "dir_path", cwd, true);
            args.entry("limit").or_insert(json!(200));
        })
        .await
    }
}

/// `shell_command {command}`: a script run by the user's shell in the working directory.
pub struct LocalShellCommandHandler;

#[async_trait]
impl ToolHandler for LocalShellCommandHandler {
    fn spec(&self) -> ToolSpec {
        function(
            "shell_command",
            "Run a shell command in the working directory and return its exit code and output.",
            json!({
                "command": {"type": "string", "description": "The command line to run."},
            }),
            &["command"],
        )
    }

    fn is_mutating(&self, call: &crate::tools::call::ToolCall) -> bool {
        ShellCommandHandler.is_mutating(call)
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        delegate("shell_command", &ShellCommandHandler, inv, |_, _| {}).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn relative_paths_are_joined_onto_the_working_directory() {
        let cwd = Path::new("/work/repo");
        let mut args = serde_json::Map::new();
        args.insert("file_path".into(), json!("deploy/service.toml"));
        absolutize(&mut args, "file_path", cwd, false);
        assert_eq!(args["file_path"], "/work/repo/deploy/service.toml");

        absolutize(&mut args, "file_path", Path::new("/elsewhere"), false);
        assert_eq!(
            args["file_path"], "/work/repo/deploy/service.toml",
            "absolute stays"
        );

        let mut args = serde_json::Map::new();
        absolutize(&mut args, "dir_path", cwd, true);
        assert_eq!(args["dir_path"], "/work/repo");
        args.insert("dir_path".into(), json!("."));
        absolutize(&mut args, "dir_path", cwd, true);
        assert_eq!(args["dir_path"], "/work/repo");

        let mut args = serde_json::Map::new();
        absolutize(&mut args, "file_path", cwd, false);
        assert!(
            args.is_empty(),
            "a missing required path is left for the handler to report"
        );
    }

    #[test]
    fn specs_offer_only_the_small_argument_sets() {
        for (handler, expected) in [
            (
                &LocalReadFileHandler as &dyn ToolHandler,
                vec!["file_path", "limit", "offset"],
            ),
            (&LocalListDirHandler, vec!["dir_path"]),
            (&LocalShellCommandHandler, vec!["command"]),
        ] {
            let ToolSpec::Function { parameters, .. } = handler.spec() else {
                panic!("function tools")
            };
            let mut keys: Vec<String> = parameters.0["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            keys.sort();
            assert_eq!(keys, expected);
        }
    }
}
