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
use osprey_tools::ToolSpec;
use serde_json::{Value, json};

use super::files::{ListDirHandler, ReadFileHandler};
use super::shell::ShellCommandHandler;
use crate::tools::call::{ToolError, ToolOutput, ToolPayload};
use crate::tools::context::ToolInvocation;
use crate::tools::registry::ToolHandler;

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
pub struct LocalReadFileHandler {
    pub inner: ReadFileHandler,
}

#[async_trait]
impl ToolHandler for LocalReadFileHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::read_file_compact_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let mut missing = None;
        let result = delegate(
            osprey_tools::names::READ_FILE,
            &self.inner,
            inv,
            |args, cwd| {
                absolutize(args, "file_path", cwd, false);
                // The same-name hint walks this machine's tree: local environments only.
                if let Some(Value::String(path)) = args.get("file_path")
                    && self.inner.environment.remote().is_none()
                    && !Path::new(path).exists()
                {
                    missing = Some((path.clone(), cwd.to_path_buf()));
                }
            },
        )
        .await;
        match (result, missing) {
            (Err(_), Some((path, cwd))) => Err(ToolError::RespondToModel(not_found(&path, &cwd))),
            (result, _) => result,
        }
    }
}

/// The message for a file that does not exist, naming files of the same name in the
/// project (the model often drops the directory part).
fn not_found(path: &str, cwd: &Path) -> String {
    let name = Path::new(path).file_name();
    let (entries, _) = osprey_tools::project_overview(cwd, 4, 5_000);
    let same_name: Vec<String> = entries
        .into_iter()
        .filter(|entry| Path::new(entry).file_name() == name)
        .take(5)
        .collect();
    if same_name.is_empty() {
        format!("{path} does not exist. Call list_dir to see which files there are.")
    } else {
        format!(
            "{path} does not exist. Files with that name: {}",
            same_name.join(", ")
        )
    }
}

/// `list_dir {dir_path?}`: two levels deep, up to 200 entries, relative paths allowed.
pub struct LocalListDirHandler {
    pub inner: ListDirHandler,
}

#[async_trait]
impl ToolHandler for LocalListDirHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::list_dir_compact_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        delegate(
            osprey_tools::names::LIST_DIR,
            &self.inner,
            inv,
            |args, cwd| {
                absolutize(args, "dir_path", cwd, true);
                args.entry("limit").or_insert(json!(200));
            },
        )
        .await
    }
}

/// `shell_command {command}`: a script run by the user's shell (not as a login shell) in the
/// working directory; "command not found" gets a hint naming similar commands.
pub struct LocalShellCommandHandler {
    pub shell: ShellCommandHandler,
}

#[async_trait]
impl ToolHandler for LocalShellCommandHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::shell_command_compact_spec()
    }

    fn is_mutating(&self, call: &crate::tools::call::ToolCall) -> bool {
        self.shell.is_mutating(call)
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let path = crate::tools::exec_env::command_env(
            &self.shell.commands.env,
            &inv.turn.config.shell_environment_policy,
            false,
        )
        .remove("PATH");
        // Not a login shell: profile files may rewrite PATH, and the thread's first message
        // names the commands found on the PATH the command really gets.
        let mut output = delegate(
            osprey_tools::names::SHELL_COMMAND,
            &self.shell,
            inv,
            |args, _| {
                args.insert("login".to_string(), Value::Bool(false));
            },
        )
        .await?;
        if let Some(hint) = missing_command_hint(&output.text, path.as_deref()) {
            output.text.push_str("\n\n");
            output.text.push_str(&hint);
        }
        Ok(output)
    }
}

/// For "bash: …: NAME: command not found", the commands on `path` whose names start with
/// NAME (`python` → `python3`): the model tends to assume `python`, `pip` or `node` exist.
fn missing_command_hint(output: &str, path: Option<&str>) -> Option<String> {
    let missing = output.lines().find_map(|line| {
        let rest = line.strip_suffix(": command not found")?;
        rest.rsplit(": ").next().map(str::trim)
    })?;
    if missing.is_empty() || missing.contains('/') {
        return None;
    }
    let mut similar: Vec<String> = std::env::split_paths(path?)
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name != missing && name.starts_with(missing))
        .collect();
    similar.sort();
    similar.dedup();
    similar.truncate(5);
    (!similar.is_empty()).then(|| {
        format!(
            "`{missing}` is not installed here. Commands with similar names: {}",
            similar.join(", ")
        )
    })
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
    fn a_missing_file_names_files_of_the_same_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("deploy")).unwrap();
        std::fs::write(dir.path().join("deploy/service.toml"), "port = 1\n").unwrap();
        let wrong = dir.path().join("service.toml");
        assert_eq!(
            not_found(&wrong.display().to_string(), dir.path()),
            format!(
                "{} does not exist. Files with that name: deploy/service.toml",
                wrong.display()
            )
        );
        assert!(not_found("/nope/x.txt", dir.path()).contains("list_dir"));
    }

    #[test]
    fn a_missing_command_names_similar_commands() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["python3", "python3.11", "pip3"] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        let path = dir.path().display().to_string();
        let output = "Exit code: 127\nOutput:\n/bin/bash: line 1: python: command not found\n";
        assert_eq!(
            missing_command_hint(output, Some(&path)).as_deref(),
            Some(
                "`python` is not installed here. Commands with similar names: python3, python3.11"
            )
        );
        let output = "bash: node: command not found";
        assert_eq!(missing_command_hint(output, Some(&path)), None);
        assert_eq!(missing_command_hint("all fine", Some(&path)), None);
    }
}
