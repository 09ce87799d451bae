//! `edit_file {path, old, new}`: the local profile's exact-span edit. Whole-file writes by a
//! small model drop what it does not repeat (JSON keys, a `print` call); an edit replaces one
//! unique span ([`osprey_tools::replace_span`]) and keeps the rest of the file as it is.
//!
//! Like `write_file` it becomes a patch — a whole-file replacement of the old text by the
//! edited one — so approvals, the sandbox and `file_change` events apply exactly as for
//! `apply_patch`. Every refusal is a failed output that says what to do next: read the file,
//! give more context, or use `write_file` to create a file.

use super::apply_patch::run_patch_text;
use super::write_file::{current_text, replace_patch};
use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::context::{CommandServices, ToolInvocation};
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_tools::{EditFileArgs, SpanEditError, ToolSpec, edit_file_spec, replace_span};
use std::path::Path;
use std::sync::Arc;

pub struct EditFileHandler {
    pub commands: Arc<CommandServices>,
}

#[async_trait]
impl ToolHandler for EditFileHandler {
    fn spec(&self) -> ToolSpec {
        edit_file_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: EditFileArgs = inv.call.arguments()?;
        let refuse = |why: String| Err(ToolError::RespondToModel(format!("edit_file: {why}")));
        if args.path.trim().is_empty() {
            return refuse(
                "the path is empty; give the file to change, such as src/main.py".into(),
            );
        }
        let cwd = inv.turn.cwd.clone();
        let target = if Path::new(&args.path).is_absolute() {
            Path::new(&args.path).to_path_buf()
        } else {
            cwd.join(&args.path)
        };
        let old = match current_text(&self.commands, &target).await {
            Ok(old) => old,
            Err(true) => {
                return refuse(format!(
                    "{} exists but is not a readable text file",
                    args.path
                ));
            }
            Err(false) => {
                return refuse(format!(
                    "{} does not exist. To create it, call write_file with its whole content.",
                    args.path
                ));
            }
        };
        let edit = match replace_span(&old, &args.old, &args.new) {
            Ok(edit) => edit,
            Err(why) => {
                let hint = match why {
                    SpanEditError::Ambiguous { .. } => {
                        rename_hint(&args.path, &args.old, &args.new)
                    }
                    _ => None,
                };
                return refuse(format!(
                    "{} was not changed: {why}{}",
                    args.path,
                    hint.unwrap_or_default()
                ));
            }
        };
        let patch = replace_patch(&args.path, &old, &edit.text);
        run_patch_text(&inv, &self.commands, &patch, &cwd).await
    }
}

/// When a bare name that occurs several times is to become another name — a rename, which
/// one span edit cannot do — the command that renames every whole-word use in the file.
/// Seen: asked to rename a function, the model sent `old: calc_tax` again and again, each
/// time told to add context.
fn rename_hint(path: &str, old: &str, new: &str) -> Option<String> {
    let is_name = |word: &str| {
        word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let plain_path = !path.is_empty()
        && !path.starts_with('-')
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c));
    (is_name(old) && is_name(new) && plain_path).then(|| {
        // The command stands alone on its line: the model copied a trailing remark into it.
        format!(
            "\nTo rename every use of `{old}` in this file instead, run this command with \
             shell_command:\nsed -i 's/\\b{old}\\b/{new}/g' {path}\nThen run it for each \
             other file that uses `{old}`."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_found_several_times_gets_the_rename_command() {
        let hint = rename_hint("invoice.py", "calc_tax", "compute_tax").unwrap();
        assert!(
            hint.lines()
                .any(|line| line == r"sed -i 's/\bcalc_tax\b/compute_tax/g' invoice.py"),
            "the command alone on its line: {hint}"
        );
        // Not for text that is not a name, nor for a path the shell would split.
        assert_eq!(rename_hint("invoice.py", "x = 1", "x = 2"), None);
        assert_eq!(rename_hint("my file.py", "a", "b"), None);
        assert_eq!(rename_hint("a.py", "calc_tax", "compute tax"), None);
    }

    #[test]
    fn an_edit_becomes_a_patch_that_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.json");
        let old = "{\n  \"debug\": true,\n  \"port\": 8080\n}\n";
        std::fs::write(&file, old).unwrap();
        let edit = replace_span(old, "\"debug\": true", "\"debug\": false").unwrap();
        let patch = replace_patch("config.json", old, &edit.text);
        osprey_apply_patch::apply_patch_text(&patch, dir.path(), None).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "{\n  \"debug\": false,\n  \"port\": 8080\n}\n"
        );
    }
}
