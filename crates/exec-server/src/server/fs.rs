//! The `fs/*` methods, each checked against the server's roots: writes (and, with
//! `--restrict-reads`, reads) only inside them, judged on the resolved path so a symlink
//! cannot lead outside. Errors carry the OS's words (`No such file or directory (os error
//! 2)`) under code -32004, as Codex sends them.

use std::collections::HashSet;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::RpcError;
use crate::protocol::{
    CanonicalizeResponse, CopyParams, CreateDirectoryParams, DirectoryEntry, Metadata,
    ReadDirectoryResponse, ReadFileResponse, RemoveParams, WalkEntry, WalkError, WalkOptions,
    WalkResponse,
};
use crate::uri;

/// Where the server lets clients read and write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    /// Writable directories (resolved).
    pub write: Vec<PathBuf>,
    /// When set, reads are allowed only under these (resolved); otherwise anywhere.
    pub read: Option<Vec<PathBuf>>,
}

impl Roots {
    /// Roots from the command line: `write` made absolute against `cwd` and resolved.
    pub fn new(write: &[PathBuf], restrict_reads: bool, cwd: &Path) -> Self {
        let write: Vec<PathBuf> = write.iter().map(|p| resolve(&cwd.join(p))).collect();
        let read = restrict_reads.then(|| write.clone());
        Self { write, read }
    }

    pub(crate) fn check_read(&self, path: &Path) -> Result<(), String> {
        let Some(read) = &self.read else {
            return Ok(());
        };
        let resolved = resolve(path);
        if read.iter().any(|root| resolved.starts_with(root)) {
            return Ok(());
        }
        Err(outside(path, "read", read))
    }

    pub(crate) fn check_write(&self, path: &Path) -> Result<(), String> {
        let resolved = resolve(path);
        let Some(root) = self.write.iter().find(|root| resolved.starts_with(root)) else {
            return Err(outside(path, "write", &self.write));
        };
        // `.git` and `.osprey` inside a root stay read-only, as they do for processes: a
        // written hook or project config would run or load outside any sandbox later.
        let inside = resolved.strip_prefix(root).unwrap_or(Path::new(""));
        if let Some(name) = inside.components().find_map(|c| match c {
            Component::Normal(name) => osprey_sandboxing::PROTECTED_NAMES
                .iter()
                .find(|p| super::platform::is_protected_name(name, p)),
            _ => None,
        }) {
            return Err(format!(
                "{} is inside a {name} folder, which this exec server keeps read-only",
                path.display()
            ));
        }
        Ok(())
    }

    /// Whether `path` is one of the roots itself (which may not be removed).
    pub(crate) fn is_root(&self, path: &Path) -> bool {
        let resolved = resolve(path);
        self.write.contains(&resolved)
    }
}

fn outside(path: &Path, what: &str, roots: &[PathBuf]) -> String {
    let list: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    format!(
        "{} is outside the directories this exec server may {what} ({}); start the server with --root for more",
        path.display(),
        list.join(", ")
    )
}

/// The path with every existing ancestor's symlinks resolved; the part that does not
/// exist yet is appended as written (it holds no `..`: URIs arrive normalised). On Windows
/// a drive path reads `C:\x`, not `\\?\C:\x`, for roots and resolved paths alike.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = super::platform::plain_path(real);
            out.extend(rest.iter().rev());
            return out;
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn fs_error(err: io::Error) -> RpcError {
    RpcError::fs(err.to_string())
}

fn path_of(uri_text: &str) -> Result<PathBuf, RpcError> {
    let path = uri::to_path(uri_text).map_err(RpcError::invalid_params)?;
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(RpcError::invalid_params(format!(
            "invalid URI: `{uri_text}` contains `..`"
        )));
    }
    Ok(path)
}

pub(crate) fn readable(roots: &Roots, uri_text: &str) -> Result<PathBuf, RpcError> {
    let path = path_of(uri_text)?;
    roots.check_read(&path).map_err(RpcError::fs)?;
    Ok(path)
}

pub(crate) fn writable(roots: &Roots, uri_text: &str) -> Result<PathBuf, RpcError> {
    let path = path_of(uri_text)?;
    roots.check_write(&path).map_err(RpcError::fs)?;
    Ok(path)
}

/// The largest file `fs/readFile` returns (it travels base64 in one message).
pub const MAX_READ_BYTES: u64 = 48 * 1024 * 1024;

pub(crate) fn read_file(path: &Path) -> Result<ReadFileResponse, RpcError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(fs_error)?;
    let meta = file.metadata().map_err(fs_error)?;
    if !meta.is_file() {
        return Err(RpcError::fs(format!(
            "{} is not a regular file; read devices and pipes with a process",
            path.display()
        )));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(RpcError::fs(format!(
            "{} is {} bytes, over the {MAX_READ_BYTES}-byte limit of fs/readFile; read it in parts with a process",
            path.display(),
            meta.len()
        )));
    }
    let mut data = Vec::new();
    file.take(MAX_READ_BYTES)
        .read_to_end(&mut data)
        .map_err(fs_error)?;
    Ok(ReadFileResponse {
        data_base64: BASE64.encode(data),
    })
}

/// Writes through a temporary file in the same directory and a rename, so a reader never
/// sees half a file; an existing file keeps its permissions.
pub(crate) fn write_file(path: &Path, data_base64: &str) -> Result<(), RpcError> {
    let data = BASE64
        .decode(data_base64)
        .map_err(|e| RpcError::invalid_params(format!("dataBase64 is not base64: {e}")))?;
    write_bytes(path, &data, None)
}

/// Writes `data` to a temporary file beside `path` and renames it over `path`. A rename
/// replaces a symlink at `path` instead of following it, so the bytes land where the roots
/// check looked. `mode_from` gives the new file's permissions (else an existing file's).
fn write_bytes(path: &Path, data: &[u8], mode_from: Option<&Path>) -> Result<(), RpcError> {
    let dir = path
        .parent()
        .ok_or_else(|| RpcError::fs(format!("{} has no parent directory", path.display())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let temp = dir.join(format!(
        ".{}.osprey-write-{}",
        name.unwrap_or_default(),
        uuid::Uuid::now_v7().simple()
    ));
    let written = std::fs::write(&temp, data).and_then(|()| {
        if let Ok(meta) = std::fs::metadata(mode_from.unwrap_or(path)) {
            std::fs::set_permissions(&temp, meta.permissions())?;
        }
        std::fs::rename(&temp, path)
    });
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(fs_error(err));
    }
    Ok(())
}

fn millis(time: io::Result<SystemTime>) -> i64 {
    time.ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

pub(crate) fn metadata(path: &Path) -> Result<Metadata, RpcError> {
    let link = std::fs::symlink_metadata(path).map_err(fs_error)?;
    let meta = std::fs::metadata(path).unwrap_or_else(|_| link.clone());
    Ok(Metadata {
        is_directory: meta.is_dir(),
        is_file: meta.is_file(),
        is_symlink: link.file_type().is_symlink(),
        size: meta.len(),
        created_at_ms: millis(meta.created()),
        modified_at_ms: millis(meta.modified()),
    })
}

pub(crate) fn read_directory(path: &Path) -> Result<ReadDirectoryResponse, RpcError> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(path).map_err(fs_error)? {
        let entry = entry.map_err(fs_error)?;
        let meta = std::fs::metadata(entry.path()).or_else(|_| entry.metadata());
        let (is_directory, is_file) = meta.map_or((false, false), |m| (m.is_dir(), m.is_file()));
        entries.push(DirectoryEntry {
            file_name: entry.file_name().to_string_lossy().into_owned(),
            is_directory,
            is_file,
        });
    }
    entries.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    Ok(ReadDirectoryResponse { entries })
}

pub(crate) fn canonicalize(path: &Path) -> Result<CanonicalizeResponse, RpcError> {
    let real = super::platform::plain_path(std::fs::canonicalize(path).map_err(fs_error)?);
    Ok(CanonicalizeResponse {
        path: uri::from_path(&real),
    })
}

const MAX_WALK_DEPTH: usize = 64;
const MAX_WALK_DIRECTORIES: usize = 20_000;
const MAX_WALK_ENTRIES: usize = 200_000;

/// Depth-first walk under `root` within the limits; entries in name order. With
/// restricted reads, a followed symlink out of the roots is listed but not entered.
pub(crate) fn walk(
    roots: &Roots,
    root: &Path,
    options: &WalkOptions,
) -> Result<WalkResponse, RpcError> {
    std::fs::metadata(root).map_err(fs_error)?;
    // The server's own ceilings, whatever the client asks.
    let options = &WalkOptions {
        max_depth: options.max_depth.min(MAX_WALK_DEPTH),
        max_directories: options.max_directories.min(MAX_WALK_DIRECTORIES),
        max_entries: options.max_entries.min(MAX_WALK_ENTRIES),
        ..options.clone()
    };
    let mut out = WalkResponse {
        entries: Vec::new(),
        errors: Vec::new(),
        truncated: false,
    };
    let mut seen = HashSet::new();
    if let Ok(real) = std::fs::canonicalize(root) {
        seen.insert(real);
    }
    let mut directories = 0usize;
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        if depth >= options.max_depth {
            continue;
        }
        directories += 1;
        if directories > options.max_directories {
            out.truncated = true;
            break;
        }
        let mut children: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(read) => read.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(err) => {
                out.errors.push(WalkError {
                    path: uri::from_path(&dir),
                    message: err.to_string(),
                });
                continue;
            }
        };
        children.sort();
        let mut subdirs = Vec::new();
        for child in children {
            if out.entries.len() >= options.max_entries {
                out.truncated = true;
                return Ok(out);
            }
            let Some(kind) = walk_kind(&child, options, &mut seen) else {
                continue;
            };
            if kind == "directory" && roots.check_read(&child).is_ok() {
                subdirs.push(child.clone());
            }
            out.entries.push(WalkEntry {
                path: uri::from_path(&child),
                kind: kind.to_owned(),
            });
        }
        stack.extend(subdirs.into_iter().rev().map(|d| (d, depth + 1)));
    }
    Ok(out)
}

/// The entry's kind for a walk, or `None` when it is left out (a pruned hidden
/// directory, a symlink loop).
fn walk_kind(
    path: &Path,
    options: &WalkOptions,
    seen: &mut HashSet<PathBuf>,
) -> Option<&'static str> {
    let link = std::fs::symlink_metadata(path).ok()?;
    let hidden = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'));
    let is_dir = if link.file_type().is_symlink() {
        if !options.follow_directory_symlinks {
            return Some("symlink");
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => true,
            Ok(meta) if meta.is_file() => return Some("file"),
            _ => return Some("symlink"),
        }
    } else {
        link.is_dir()
    };
    if !is_dir {
        return Some(if link.is_file() { "file" } else { "other" });
    }
    if hidden && options.prune_hidden_directories {
        return None;
    }
    let real = std::fs::canonicalize(path).ok()?;
    seen.insert(real).then_some("directory")
}

pub(crate) fn create_directory(
    path: &Path,
    params: &CreateDirectoryParams,
) -> Result<(), RpcError> {
    if params.recursive.unwrap_or(true) {
        std::fs::create_dir_all(path)
    } else {
        std::fs::create_dir(path)
    }
    .map_err(fs_error)
}

pub(crate) fn remove(path: &Path, params: &RemoveParams) -> Result<(), RpcError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound && params.force.unwrap_or(false) => {
            return Ok(());
        }
        Err(err) => return Err(fs_error(err)),
    };
    if meta.is_dir() {
        if params.recursive.unwrap_or(false) {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_dir(path)
        }
    } else {
        std::fs::remove_file(path)
    }
    .map_err(fs_error)
}

/// `fs/copy`. Symlinks in the source are copied as symlinks, never followed (a link to
/// `/etc/shadow` stays a link); every destination entry is written by rename or created
/// fresh, so a symlink planted in the destination cannot redirect the copy; a folder is
/// not copied into itself.
pub(crate) fn copy(
    roots: &Roots,
    source: &Path,
    destination: &Path,
    params: &CopyParams,
) -> Result<(), RpcError> {
    let meta = std::fs::symlink_metadata(source).map_err(fs_error)?;
    if !meta.is_dir() {
        return copy_entry(source, destination, &meta);
    }
    if !params.recursive {
        return Err(RpcError::fs(format!(
            "{} is a directory; copy it with recursive: true",
            source.display()
        )));
    }
    if resolve(destination).starts_with(resolve(source)) {
        return Err(RpcError::fs(format!(
            "cannot copy {} into itself ({})",
            source.display(),
            destination.display()
        )));
    }
    copy_tree(roots, source, destination)
}

fn copy_entry(source: &Path, target: &Path, meta: &std::fs::Metadata) -> Result<(), RpcError> {
    if meta.file_type().is_symlink() {
        let link = std::fs::read_link(source).map_err(fs_error)?;
        let _ = std::fs::remove_file(target);
        #[cfg(unix)]
        return std::os::unix::fs::symlink(link, target).map_err(fs_error);
        // Windows tells file links from folder links; a dangling one is taken as a file's.
        #[cfg(windows)]
        return if std::fs::metadata(source).is_ok_and(|m| m.is_dir()) {
            std::os::windows::fs::symlink_dir(link, target)
        } else {
            std::os::windows::fs::symlink_file(link, target)
        }
        .map_err(fs_error);
    }
    if !meta.is_file() {
        return Err(RpcError::fs(format!(
            "{} is not a regular file, folder or symlink; it was not copied",
            source.display()
        )));
    }
    if meta.len() > MAX_READ_BYTES * 4 {
        return Err(RpcError::fs(format!(
            "{} is {} bytes; copy files this large with a process",
            source.display(),
            meta.len()
        )));
    }
    let data = std::fs::read(source).map_err(fs_error)?;
    write_bytes(target, &data, Some(source))
}

fn copy_tree(roots: &Roots, source: &Path, destination: &Path) -> Result<(), RpcError> {
    match std::fs::symlink_metadata(destination) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(RpcError::fs(format!(
                "{} exists and is not a folder",
                destination.display()
            )));
        }
        Err(_) => std::fs::create_dir(destination).map_err(fs_error)?,
    }
    for entry in std::fs::read_dir(source).map_err(fs_error)? {
        let entry = entry.map_err(fs_error)?;
        let target = destination.join(entry.file_name());
        roots.check_write(&target).map_err(RpcError::fs)?;
        let meta = std::fs::symlink_metadata(entry.path()).map_err(fs_error)?;
        if meta.is_dir() {
            copy_tree(roots, &entry.path(), &target)?;
        } else {
            copy_entry(&entry.path(), &target, &meta)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open_roots() -> Roots {
        Roots {
            write: vec![PathBuf::from("/nonexistent-root")],
            read: None,
        }
    }

    #[cfg(unix)]
    #[test]
    fn writes_outside_the_roots_are_refused_even_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let other = dir.path().join("other");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&other, root.join("escape")).unwrap();
        let roots = Roots::new(std::slice::from_ref(&root), false, dir.path());
        assert!(roots.check_write(&root.join("new/file.txt")).is_ok());
        let err = roots.check_write(&root.join("escape/x")).unwrap_err();
        assert!(err.contains("outside the directories"), "{err}");
        assert!(roots.check_read(&other.join("x")).is_ok());
        let strict = Roots::new(&[root], true, dir.path());
        assert!(strict.check_read(&other.join("x")).is_err());
    }

    #[test]
    fn walk_honours_depth_hidden_and_entry_limits() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::create_dir_all(base.join("a/b/c")).unwrap();
        std::fs::create_dir_all(base.join(".hidden")).unwrap();
        std::fs::write(base.join("a/f.txt"), "x").unwrap();
        let options = WalkOptions {
            max_depth: 2,
            max_directories: 100,
            max_entries: 100,
            follow_directory_symlinks: true,
            prune_hidden_directories: true,
        };
        let got = walk(&open_roots(), base, &options).unwrap();
        let names: Vec<String> = got
            .entries
            .iter()
            .map(|e| e.path.rsplit('/').next().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(names, ["a", "b", "f.txt"], "{got:?}");
        assert!(!got.truncated);
        let tight = WalkOptions {
            max_entries: 1,
            ..options
        };
        assert!(walk(&open_roots(), base, &tight).unwrap().truncated);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_loop_is_walked_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("d")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("d/loop")).unwrap();
        let options = WalkOptions {
            max_depth: 10,
            max_directories: 100,
            max_entries: 100,
            follow_directory_symlinks: true,
            prune_hidden_directories: false,
        };
        let got = walk(&open_roots(), dir.path(), &options).unwrap();
        assert_eq!(got.entries.len(), 1, "{got:?}");
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_the_mode_and_leaves_no_temp_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_file(&file, &BASE64.encode("new")).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
