//! `write_file {path, content}`: the whole-file write the embedded local model uses instead of
//! patches (small models copy patch syntax badly). It is turned into a patch — add for a new
//! file, a whole-file replacement otherwise — so it goes through the same approval, sandbox
//! and `file_change` events as `apply_patch`.

use super::apply_patch::run_patch_text;
use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::context::{CommandServices, ToolInvocation};
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_tools::{ToolSpec, WriteFileArgs, write_file_spec};
use std::path::Path;
use std::sync::Arc;

pub struct WriteFileHandler {
    pub commands: Arc<CommandServices>,
}

#[async_trait]
impl ToolHandler for WriteFileHandler {
    fn spec(&self) -> ToolSpec {
        write_file_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: WriteFileArgs = inv.call.arguments()?;
        if args.path.trim().is_empty() {
            return Err(ToolError::RespondToModel(
                "write_file: the path is empty; give a file name such as src/main.py".to_string(),
            ));
        }
        let cwd = inv.turn.cwd.clone();
        let target = if Path::new(&args.path).is_absolute() {
            Path::new(&args.path).to_path_buf()
        } else {
            cwd.join(&args.path)
        };
        let patch = match current_text(&self.commands, &target).await {
            Ok(old) if old == args.content => {
                return Ok(ToolOutput::success(format!(
                    "{} already has this content",
                    args.path
                )));
            }
            Ok(old) => replace_patch(&args.path, &old, &args.content),
            Err(exists) if exists => {
                return Err(ToolError::RespondToModel(format!(
                    "write_file: {} exists but is not a readable text file",
                    target.display()
                )));
            }
            Err(_) => add_patch(&args.path, &args.content),
        };
        run_patch_text(&inv, &self.commands, &patch, &cwd).await
    }
}

/// The file's text where the tools act (here, or on the exec server's side); `Err(true)`
/// when something is there that is not a readable text file, `Err(false)` when nothing is.
pub(super) async fn current_text(
    commands: &CommandServices,
    target: &Path,
) -> Result<String, bool> {
    let Some(remote) = commands.environment.remote() else {
        return std::fs::read_to_string(target).map_err(|_| target.exists());
    };
    let files = crate::environment::remote_files::RemoteFiles::new(Arc::clone(remote));
    let target = target.to_path_buf();
    tokio::task::spawn_blocking(move || match files.read(&target) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| true),
        Err(err) => Err(err.kind() != std::io::ErrorKind::NotFound),
    })
    .await
    .unwrap_or(Err(true))
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.strip_suffix('\n').unwrap_or(text).split('\n')
}

fn add_patch(path: &str, content: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
    if !content.is_empty() {
        for line in lines(content) {
            patch.push('+');
            patch.push_str(line);
            patch.push('\n');
        }
    }
    patch.push_str("*** End Patch\n");
    patch
}

pub(super) fn replace_patch(path: &str, old: &str, new: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
    for line in lines(old) {
        patch.push('-');
        patch.push_str(line);
        patch.push('\n');
    }
    for line in lines(new) {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End of File\n*** End Patch\n");
    patch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_and_replacement_patches_apply_to_the_wanted_content() {
        let dir = tempfile::tempdir().unwrap();
        let add = add_patch("hello.py", "print('hello')\n");
        osprey_apply_patch::apply_patch_text(&add, dir.path(), None).unwrap();
        let file = dir.path().join("hello.py");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "print('hello')\n");
        let replace = replace_patch("hello.py", "print('hello')\n", "x = 1\nprint(x)\n");
        osprey_apply_patch::apply_patch_text(&replace, dir.path(), None).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = 1\nprint(x)\n");
    }
}
