//! The read-only file tools: `read_file`, `list_dir`, `grep_files`, `view_image`.
//!
//! The logic lives in `osprey-tools` as plain functions; these handlers parse arguments,
//! run the function off the async runtime, and turn errors into plain-words outputs. They
//! never change anything, so they run side by side with each other.

use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::context::ToolInvocation;
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_tools::{
    GrepFilesArgs, ListDirArgs, ReadFileArgs, ToolSpec, ViewImageArgs, grep_files, list_dir,
    load_image_for_model, read_file,
};
use std::path::{Path, PathBuf};

/// Runs blocking file work on the blocking pool.
async fn blocking<F>(f: F) -> Result<ToolOutput, ToolError>
where
    F: FnOnce() -> Result<ToolOutput, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::RespondToModel(format!("the tool stopped unexpectedly: {e}")))?
}

macro_rules! file_tool {
    ($handler:ident, $name:path, $args:ty, $spec:path, $func:path) => {
        pub struct $handler;

        #[async_trait]
        impl ToolHandler for $handler {
            fn spec(&self) -> ToolSpec {
                $spec()
            }

            fn is_mutating(&self, _call: &crate::tools::call::ToolCall) -> bool {
                false
            }

            async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
                let args: $args = inv.call.arguments()?;
                let cwd: PathBuf = inv.turn.cwd.clone();
                blocking(move || {
                    $func(&args, &cwd)
                        .map(ToolOutput::success)
                        .map_err(|e| ToolError::RespondToModel(e.to_string()))
                })
                .await
            }
        }
    };
}

file_tool!(
    ReadFileHandler,
    osprey_tools::names::READ_FILE,
    ReadFileArgs,
    osprey_tools::read_file_spec,
    read_file
);
file_tool!(
    ListDirHandler,
    osprey_tools::names::LIST_DIR,
    ListDirArgs,
    osprey_tools::list_dir_spec,
    list_dir
);
file_tool!(
    GrepFilesHandler,
    osprey_tools::names::GREP_FILES,
    GrepFilesArgs,
    osprey_tools::grep_files_spec,
    grep_files
);

/// `view_image {path}`: attaches a local image to the conversation.
pub struct ViewImageHandler;

#[async_trait]
impl ToolHandler for ViewImageHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::view_image_spec()
    }

    fn is_mutating(&self, _call: &crate::tools::call::ToolCall) -> bool {
        false
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: ViewImageArgs = inv.call.arguments()?;
        let path = if Path::new(&args.path).is_absolute() {
            PathBuf::from(&args.path)
        } else {
            inv.turn.cwd.join(&args.path)
        };
        let max = inv.turn.config.tools.view_image_max_dimension;
        blocking(move || {
            let image = load_image_for_model(&path, max)
                .map_err(|e| ToolError::RespondToModel(e.to_string()))?;
            let note = if image.resized {
                format!(
                    "Attached {} (scaled to {}x{}).",
                    path.display(),
                    image.width,
                    image.height
                )
            } else {
                format!(
                    "Attached {} ({}x{}).",
                    path.display(),
                    image.width,
                    image.height
                )
            };
            Ok(ToolOutput {
                text: note,
                images: vec![image.data_url],
                success: true,
            })
        })
        .await
    }
}
