//! The local tool profile: a few simple tools a 1.5B model can use reliably.
//!
//! A small model fails at `apply_patch` (context lines, headers) but manages "write the
//! whole file". When the provider is `local`, the agent should offer exactly
//! [`LOCAL_TOOL_NAMES`]: `write_file` (specified and implemented here, as a pure function
//! of its arguments and the working directory), plus the existing `read_file`, `list_dir`
//! and one-shot `shell_command` (a script string is easier for a small model than
//! `shell`'s argument array) tools.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

/// The tools to offer when the provider is `local`, in this order.
pub const LOCAL_TOOL_NAMES: [&str; 4] = ["write_file", "read_file", "list_dir", "shell_command"];

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteFileArgs {
    path: String,
    content: String,
}

/// Why `write_file` failed; the message is meant for the model, which can retry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteFileError {
    #[error(
        "write_file needs JSON arguments with string fields \"path\" and \"content\": {reason}"
    )]
    BadArguments { reason: String },
    #[error("write_file: the path is empty; give a file name such as src/main.py")]
    EmptyPath,
    #[error("write_file: could not write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Runs `write_file`: parses `arguments` (the model's JSON), creates parent directories and
/// writes the file under `cwd`. Returns the text to send back as the call's output.
///
/// This does no sandboxing or approval: the caller decides whether the path may be
/// written (it is the path returned by [`write_file_target`]).
pub fn write_file(arguments: &str, cwd: &Path) -> Result<String, WriteFileError> {
    let (path, content) = write_file_target(arguments, cwd)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| WriteFileError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    std::fs::write(&path, content.as_bytes()).map_err(|source| WriteFileError::Io {
        path: path.clone(),
        source,
    })?;
    let lines = content.lines().count();
    Ok(format!(
        "Wrote {} ({} bytes, {lines} lines).",
        path.display(),
        content.len()
    ))
}

/// The absolute, lexically normalised path `write_file` would write, and the content.
pub fn write_file_target(arguments: &str, cwd: &Path) -> Result<(PathBuf, String), WriteFileError> {
    let args: WriteFileArgs =
        serde_json::from_str(arguments).map_err(|err| WriteFileError::BadArguments {
            reason: err.to_string(),
        })?;
    if args.path.trim().is_empty() {
        return Err(WriteFileError::EmptyPath);
    }
    Ok((normalize(&cwd.join(args.path.trim())), args.content))
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn writes_relative_paths_and_creates_directories() {
        let dir = tempfile::tempdir().unwrap();
        let out = write_file(
            r#"{"path": "a/b/hello.py", "content": "print('hello')\n"}"#,
            dir.path(),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a/b/hello.py")).unwrap(),
            "print('hello')\n"
        );
        assert!(out.contains("hello.py") && out.contains("1 lines"), "{out}");
    }

    #[test]
    fn bad_arguments_are_reported_to_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_file(r#"{"path": "x"}"#, dir.path()).unwrap_err();
        assert!(err.to_string().contains("\"content\""), "{err}");
        let err = write_file(r#"{"path": " ", "content": ""}"#, dir.path()).unwrap_err();
        assert!(matches!(err, WriteFileError::EmptyPath));
        let err = write_file("not json", dir.path()).unwrap_err();
        assert!(matches!(err, WriteFileError::BadArguments { .. }));
    }

    #[test]
    fn dot_dot_is_resolved_lexically() {
        let (path, _) = write_file_target(
            r#"{"path": "../x/./y.txt", "content": ""}"#,
            Path::new("/w/repo"),
        )
        .unwrap();
        assert_eq!(path, PathBuf::from("/w/x/y.txt"));
    }

    #[test]
    fn the_spec_names_the_tool_and_requires_both_fields() {
        let spec = write_file_spec();
        assert_eq!(spec["name"], "write_file");
        assert_eq!(spec["parameters"]["required"], json!(["path", "content"]));
        assert_eq!(LOCAL_TOOL_NAMES[0], "write_file");
    }
}
