//! Files on an exec server's machine, through its `fs/*` calls.
//!
//! [`RemoteFiles`] offers the calls as blocking methods, for the file tools and the patch
//! applier, which are written against `std::io` and run on the blocking pool: each method
//! blocks that thread (never a runtime worker) on one call to the server.

use super::remote::{RemoteEnvironment, RemoteError};
use base64::Engine;
use osprey_exec_server::protocol::{
    CanonicalizeResponse, CreateDirectoryParams, Metadata, PathParams, ReadDirectoryResponse,
    ReadFileResponse, RemoveParams, WalkOptions, WalkParams, WalkResponse, WriteFileParams, method,
};
use osprey_exec_server::uri;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Blocking access to a remote environment's files.
#[derive(Clone)]
pub struct RemoteFiles {
    env: Arc<RemoteEnvironment>,
    runtime: tokio::runtime::Handle,
}

impl std::fmt::Debug for RemoteFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteFiles")
            .field("environment", &self.env.id())
            .finish()
    }
}

fn path_params(path: &Path) -> PathParams {
    PathParams {
        path: uri::from_path(path),
        sandbox: None,
    }
}

impl RemoteFiles {
    /// Must be made on the runtime (it keeps a handle to block on from other threads).
    pub fn new(env: Arc<RemoteEnvironment>) -> Self {
        Self {
            env,
            runtime: tokio::runtime::Handle::current(),
        }
    }

    fn call<T: DeserializeOwned>(&self, name: &str, params: impl Serialize) -> std::io::Result<T> {
        let env = Arc::clone(&self.env);
        self.runtime
            .block_on(async move { env.call(name, params).await })
            .map_err(RemoteError::into_io)
    }

    pub fn metadata(&self, path: &Path) -> std::io::Result<Metadata> {
        self.call(method::FS_GET_METADATA, path_params(path))
    }

    pub fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        let reply: ReadFileResponse = self.call(method::FS_READ_FILE, path_params(path))?;
        base64::engine::general_purpose::STANDARD
            .decode(reply.data_base64)
            .map_err(|e| {
                std::io::Error::other(format!(
                    "the exec server sent {} in a form that is not base64: {e}",
                    path.display()
                ))
            })
    }

    /// Replaces or creates `path` atomically (the server writes beside it and renames).
    pub fn write(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        let params = WriteFileParams {
            path: uri::from_path(path),
            data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            sandbox: None,
        };
        self.call::<serde_json::Value>(method::FS_WRITE_FILE, params)
            .map(drop)
    }

    pub fn read_dir(&self, path: &Path) -> std::io::Result<ReadDirectoryResponse> {
        self.call(method::FS_READ_DIRECTORY, path_params(path))
    }

    pub fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        let reply: CanonicalizeResponse = self.call(method::FS_CANONICALIZE, path_params(path))?;
        uri::to_path(&reply.path).map_err(std::io::Error::other)
    }

    pub fn walk(&self, root: &Path, options: WalkOptions) -> std::io::Result<WalkResponse> {
        let params = WalkParams {
            path: uri::from_path(root),
            options,
            sandbox: None,
        };
        self.call(method::FS_WALK, params)
    }

    pub fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        let params = RemoveParams {
            path: uri::from_path(path),
            recursive: Some(false),
            force: Some(false),
            sandbox: None,
        };
        self.call::<serde_json::Value>(method::FS_REMOVE, params)
            .map(drop)
    }
}

fn millis_to_time(ms: i64) -> Option<std::time::SystemTime> {
    let ms = u64::try_from(ms).ok().filter(|ms| *ms > 0)?;
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_millis(ms))
}

/// The patch applier's file system on the server: no permission bits (a replaced file
/// keeps its own, the server's `fs/writeFile` sees to that), no links read or made.
impl osprey_apply_patch::PatchFileSystem for RemoteFiles {
    fn entry(&self, path: &Path) -> std::io::Result<Option<osprey_apply_patch::EntryKind>> {
        use osprey_apply_patch::EntryKind;
        let meta = match self.metadata(path) {
            Ok(meta) => meta,
            Err(err)
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Ok(None);
            }
            Err(err) => return Err(err),
        };
        Ok(Some(if meta.is_symlink {
            EntryKind::Symlink
        } else if meta.is_file {
            EntryKind::File {
                len: meta.size,
                modified: millis_to_time(meta.modified_at_ms),
                permissions: None,
            }
        } else if meta.is_directory {
            EntryKind::Directory
        } else {
            EntryKind::Other
        }))
    }

    fn is_dir(&self, path: &Path) -> std::io::Result<bool> {
        self.metadata(path).map(|meta| meta.is_directory)
    }

    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        RemoteFiles::read(self, path)
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        RemoteFiles::canonicalize(self, path)
    }

    fn write_atomic(
        &self,
        path: &Path,
        bytes: &[u8],
        _permissions: Option<&std::fs::Permissions>,
    ) -> std::io::Result<()> {
        self.write(path, bytes)
    }

    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        RemoteFiles::remove_file(self, path)
    }

    /// One level (the server refuses with "File exists" when something is there).
    fn create_dir(&self, path: &Path) -> std::io::Result<()> {
        let params = CreateDirectoryParams {
            path: uri::from_path(path),
            recursive: Some(false),
            sandbox: None,
        };
        self.call::<serde_json::Value>(method::FS_CREATE_DIRECTORY, params)
            .map(drop)
    }

    /// Only an empty directory (the server's non-recursive remove refuses others).
    fn remove_dir(&self, path: &Path) -> std::io::Result<()> {
        let params = RemoveParams {
            path: uri::from_path(path),
            recursive: Some(false),
            force: Some(false),
            sandbox: None,
        };
        self.call::<serde_json::Value>(method::FS_REMOVE, params)
            .map(drop)
    }
}
