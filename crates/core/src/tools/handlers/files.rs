//! The read-only file tools: `read_file`, `list_dir`, `grep_files`, `view_image`.
//!
//! The logic lives in `osprey-tools` as plain functions; these handlers parse arguments,
//! run the function off the async runtime (against the exec server's files in a remote
//! environment), and turn errors into plain-words outputs. They
//! never change anything, so they run side by side with each other.

use crate::environment::ToolEnvironment;
use crate::environment::paths::WindowsPaths;
use crate::environment::remote_files::RemoteFiles;
use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::context::ToolInvocation;
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_tools::{
    GrepFilesArgs, ListDirArgs, ReadFileArgs, ToolSpec, ViewImageArgs, grep_files, grep_files_in,
    list_dir, list_dir_in, load_image_for_model, load_image_for_model_in, read_file, read_file_in,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Runs blocking file work on the blocking pool.
async fn blocking<F>(f: F) -> Result<ToolOutput, ToolError>
where
    F: FnOnce() -> Result<ToolOutput, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::RespondToModel(format!("the tool stopped unexpectedly: {e}")))?
}

/// The path arguments of a file tool call (`file_path`, `dir_path`, `path`) written the
/// Windows way, in this side's form of a Windows server's paths.
fn windows_arguments(inv: &mut ToolInvocation, windows: WindowsPaths) {
    let crate::tools::call::ToolPayload::Function { arguments } = &mut inv.call.payload else {
        return;
    };
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(arguments) else {
        return;
    };
    for key in ["file_path", "dir_path", "path"] {
        if let Some(serde_json::Value::String(path)) = map.get_mut(key) {
            *path = windows.local_form(path);
        }
    }
    *arguments = serde_json::Value::Object(map).to_string();
}

macro_rules! file_tool {
    ($handler:ident, $name:path, $args:ty, $spec:path, $func:path, $remote_func:path) => {
        /// Reads here, or through the exec server of a remote environment.
        pub struct $handler {
            pub environment: ToolEnvironment,
        }

        #[async_trait]
        impl ToolHandler for $handler {
            fn spec(&self) -> ToolSpec {
                $spec()
            }

            fn is_mutating(&self, _call: &crate::tools::call::ToolCall) -> bool {
                false
            }

            async fn handle(&self, mut inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
                let windows = self.environment.windows_paths();
                if let Some(windows) = windows {
                    windows_arguments(&mut inv, windows);
                }
                let args: $args = inv.call.arguments()?;
                let cwd: PathBuf = inv.turn.cwd.clone();
                let remote = self
                    .environment
                    .remote()
                    .map(|env| RemoteFiles::new(Arc::clone(env)));
                blocking(move || {
                    let result = match &remote {
                        Some(files) => $remote_func(files, &args, &cwd),
                        None => $func(&args, &cwd),
                    };
                    let for_model = |text: String| match windows {
                        Some(windows) => windows.output_for_model(&text),
                        None => text,
                    };
                    result
                        .map(|text| ToolOutput::success(for_model(text)))
                        .map_err(|e| ToolError::RespondToModel(for_model(e.to_string())))
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
    read_file,
    read_file_in
);
file_tool!(
    ListDirHandler,
    osprey_tools::names::LIST_DIR,
    ListDirArgs,
    osprey_tools::list_dir_spec,
    list_dir,
    list_dir_in
);
file_tool!(
    GrepFilesHandler,
    osprey_tools::names::GREP_FILES,
    GrepFilesArgs,
    osprey_tools::grep_files_spec,
    grep_files,
    grep_files_in
);

/// `view_image {path}`: attaches an image (here, or on the exec server's side) to the
/// conversation.
pub struct ViewImageHandler {
    pub environment: ToolEnvironment,
}

#[async_trait]
impl ToolHandler for ViewImageHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::view_image_spec()
    }

    fn is_mutating(&self, _call: &crate::tools::call::ToolCall) -> bool {
        false
    }

    async fn handle(&self, mut inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        if let Some(windows) = self.environment.windows_paths() {
            windows_arguments(&mut inv, windows);
        }
        let args: ViewImageArgs = inv.call.arguments()?;
        let path = if Path::new(&args.path).is_absolute() {
            PathBuf::from(&args.path)
        } else {
            inv.turn.cwd.join(&args.path)
        };
        let max = inv.turn.config.tools.view_image_max_dimension;
        let remote = self
            .environment
            .remote()
            .map(|env| RemoteFiles::new(Arc::clone(env)));
        blocking(move || {
            let image = match &remote {
                Some(files) => load_image_for_model_in(files, &path, max),
                None => load_image_for_model(&path, max),
            }
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
