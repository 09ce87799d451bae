//! Files on an exec server's machine, through its `fs/*` calls.
//!
//! [`RemoteFiles`] offers the calls as blocking methods, for the file tools and the patch
//! applier, which are written against `std::io` and run on the blocking pool: each method
//! blocks that thread (never a runtime worker) on one call to the server.

use super::remote::{RemoteEnvironment, RemoteError};
use base64::Engine;
use osprey_exec_server::protocol::{
    CanonicalizeResponse, CreateDirectoryParams, Metadata, PathParams, ReadFileResponse,
    RemoveParams, WalkOptions, WalkParams, WalkResponse, WriteFileParams, method,
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
        path: wire_path(path),
        sandbox: None,
    }
}

/// `path` as the server takes it: a `file://` URI with `.` and `..` resolved lexically
/// (the model writes `src/../README.md`; the server refuses `..`).
fn wire_path(path: &Path) -> String {
    use std::path::Component;
    let mut clean = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    uri::from_path(&clean)
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
            path: wire_path(path),
            data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            sandbox: None,
        };
        self.call::<serde_json::Value>(method::FS_WRITE_FILE, params)
            .map(drop)
    }

    pub fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        let reply: CanonicalizeResponse = self.call(method::FS_CANONICALIZE, path_params(path))?;
        uri::to_path(&reply.path).map_err(std::io::Error::other)
    }

    pub fn walk(&self, root: &Path, options: WalkOptions) -> std::io::Result<WalkResponse> {
        let params = WalkParams {
            path: wire_path(root),
            options,
            sandbox: None,
        };
        self.call(method::FS_WALK, params)
    }

    pub fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        let params = RemoveParams {
            path: wire_path(path),
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
            path: wire_path(path),
            recursive: Some(false),
            sandbox: None,
        };
        self.call::<serde_json::Value>(method::FS_CREATE_DIRECTORY, params)
            .map(drop)
    }

    /// Only an empty directory (the server's non-recursive remove refuses others).
    fn remove_dir(&self, path: &Path) -> std::io::Result<()> {
        let params = RemoveParams {
            path: wire_path(path),
            recursive: Some(false),
            force: Some(false),
            sandbox: None,
        };
        self.call::<serde_json::Value>(method::FS_REMOVE, params)
            .map(drop)
    }
}

/// AGENTS.md and the `.git` probes on the server (Codex's V1 discovery does the same
/// `fs/getMetadata` walk up from the working directory).
impl crate::project_doc::DocFiles for RemoteFiles {
    fn exists(&self, path: &Path) -> bool {
        self.metadata(path).is_ok()
    }

    fn read_file(&self, path: &Path) -> Option<Vec<u8>> {
        match self.metadata(path) {
            Ok(meta) if meta.is_file => RemoteFiles::read(self, path).ok(),
            _ => None,
        }
    }
}

fn walk_kind(kind: &str) -> osprey_tools::EntryKind {
    match kind {
        "file" => osprey_tools::EntryKind::File,
        "directory" => osprey_tools::EntryKind::Directory,
        "symlink" => osprey_tools::EntryKind::Symlink,
        _ => osprey_tools::EntryKind::Other,
    }
}

/// The read-only file tools on the server: `fs/getMetadata`, `fs/readFile` (size checked
/// first, so a huge file is refused, never fetched) and `fs/walk` (also for one
/// directory: `fs/readDirectory` does not tell symlinks apart).
impl osprey_tools::FileAccess for RemoteFiles {
    fn metadata(&self, path: &Path) -> std::io::Result<osprey_tools::FileMeta> {
        let meta = RemoteFiles::metadata(self, path)?;
        Ok(osprey_tools::FileMeta {
            is_dir: meta.is_directory,
            is_file: meta.is_file,
            is_symlink: meta.is_symlink,
            len: meta.size,
            modified: millis_to_time(meta.modified_at_ms),
        })
    }

    fn read(&self, path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
        let meta = RemoteFiles::metadata(self, path)?;
        if meta.size > max_bytes {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!(
                    "{} holds {} bytes, more than the {max_bytes} read at once",
                    path.display(),
                    meta.size
                ),
            ));
        }
        RemoteFiles::read(self, path)
    }

    fn read_dir(&self, path: &Path) -> std::io::Result<Vec<osprey_tools::DirEntryInfo>> {
        let options = WalkOptions {
            max_depth: 1,
            max_directories: 1,
            max_entries: osprey_tools::MAX_LIST_ENTRIES.max(100_000),
            follow_directory_symlinks: false,
            prune_hidden_directories: false,
        };
        let listing = RemoteFiles::walk(self, path, options)?;
        listing
            .entries
            .into_iter()
            .map(|entry| {
                let full = uri::to_path(&entry.path).map_err(std::io::Error::other)?;
                let name = full.file_name().map(ToOwned::to_owned).unwrap_or_default();
                Ok(osprey_tools::DirEntryInfo {
                    name,
                    kind: walk_kind(&entry.kind),
                })
            })
            .collect()
    }

    fn walk(
        &self,
        root: &Path,
        limits: osprey_tools::WalkLimits,
    ) -> std::io::Result<osprey_tools::WalkListing> {
        let options = WalkOptions {
            max_depth: limits.max_depth,
            max_directories: limits.max_directories,
            max_entries: limits.max_entries,
            follow_directory_symlinks: false,
            prune_hidden_directories: limits.prune_hidden_directories,
        };
        let listing = RemoteFiles::walk(self, root, options)?;
        let mut entries = Vec::with_capacity(listing.entries.len());
        for entry in listing.entries {
            entries.push(osprey_tools::WalkEntry {
                path: uri::to_path(&entry.path).map_err(std::io::Error::other)?,
                kind: walk_kind(&entry.kind),
            });
        }
        let errors = listing
            .errors
            .into_iter()
            .map(|error| osprey_tools::WalkError {
                path: uri::to_path(&error.path).unwrap_or_else(|_| PathBuf::from(&error.path)),
                message: error.message,
            })
            .collect();
        Ok(osprey_tools::WalkListing {
            entries,
            errors,
            truncated: listing.truncated,
        })
    }
}
