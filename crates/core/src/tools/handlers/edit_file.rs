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
use osprey_tools::{EditFileArgs, ToolSpec, edit_file_spec, replace_span};
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
            Err(why) => return refuse(format!("{} was not changed: {why}", args.path)),
        };
        let patch = replace_patch(&args.path, &old, &edit.text);
        run_patch_text(&inv, &self.commands, &patch, &cwd).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
