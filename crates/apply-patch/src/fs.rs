//! The file-system seam: every file operation of verification and
//! application goes through [`PatchFileSystem`], so a patch can be applied to
//! files on another machine (an exec server's `fs/*` calls) as well as to the
//! local disk ([`LocalFileSystem`]).
//!
//! The trait asks only for what a remote exec server can give: metadata
//! (directory / file / symlink, size, modification time), whole-file reads,
//! atomic whole-file writes, one-level directory creation and removal, file
//! removal and canonicalisation. Reading and creating symlinks, permission
//! bits and staged writes (a temporary file renamed into place later) are
//! optional: the provided methods say "not available" and the applier copes
//! (a deleted symlink that must be restored is then reported as not
//! restored; a new or moved file gets the implementation's default mode).

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// What a path holds, without following a final symlink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File {
        /// Its size in bytes.
        len: u64,
        /// Its modification time, when known. Together with `len` this is
        /// how the applier notices a file changed after verification, so it
        /// must be the same on every call while the file is untouched.
        modified: Option<SystemTime>,
        /// Its permission bits, when the implementation has them (local
        /// only). They are handed back to [`PatchFileSystem::write_atomic`]
        /// when the file's content is replaced, moved or restored.
        permissions: Option<Permissions>,
    },
    /// A directory.
    Directory,
    /// A symbolic link (whatever it points at).
    Symlink,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

/// The file operations a patch needs. Paths are absolute. An error of kind
/// `NotFound` or `NotADirectory` means "nothing is there"; any other error is
/// reported to the model as a failure to touch that path.
///
/// [`crate::verify_patch_in`] and [`crate::apply_verified_in`] take one;
/// [`LocalFileSystem`] is the local disk.
pub trait PatchFileSystem: Send + Sync {
    /// What is at `path`, not following a final symlink; `Ok(None)` when
    /// nothing is there (also when an ancestor is missing or is a file).
    fn entry(&self, path: &Path) -> io::Result<Option<EntryKind>>;

    /// Whether `path`, following symlinks, is a directory: `Ok(false)` when
    /// it exists and is something else, an error when it does not exist.
    fn is_dir(&self, path: &Path) -> io::Result<bool>;

    /// The whole content of the file at `path`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// `path` with every symlink and `..` resolved, as the machine holding
    /// the files resolves it; `NotFound` when it does not exist.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;

    /// Replaces or creates the file `path` with `bytes` atomically: a reader
    /// sees the old content or the new, never part of it, and a failed write
    /// leaves the old content. The parent directory exists (the applier
    /// creates missing ones with [`PatchFileSystem::create_dir`] first, so it
    /// can remove them again on failure). `permissions` are those an earlier
    /// [`PatchFileSystem::entry`] reported for the file this content comes
    /// from (`None` for a new file: the implementation's default mode);
    /// implementations without permission bits ignore them.
    fn write_atomic(
        &self,
        path: &Path,
        bytes: &[u8],
        permissions: Option<&Permissions>,
    ) -> io::Result<()>;

    /// Removes the file or symlink at `path` (never a directory).
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// Creates the directory `path`, whose parent exists; `AlreadyExists`
    /// when something is there.
    fn create_dir(&self, path: &Path) -> io::Result<()>;

    /// Removes the directory `path` if it is empty (used to undo
    /// [`PatchFileSystem::create_dir`] after a failure).
    fn remove_dir(&self, path: &Path) -> io::Result<()>;

    /// The target of the symlink at `path`, exactly as stored, or `Ok(None)`
    /// when this file system cannot read links (the default). With a target
    /// the applier can recreate a deleted link if the patch fails later.
    fn read_link(&self, _path: &Path) -> io::Result<Option<PathBuf>> {
        Ok(None)
    }

    /// Creates a symlink at `path` pointing at `target` (restoring a deleted
    /// link). The default refuses: this file system cannot create links.
    fn create_symlink(&self, _target: &Path, _path: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this file system cannot create symbolic links, so the deleted link was not recreated",
        ))
    }

    /// Optionally writes `bytes` to a new temporary file beside `path` and
    /// returns its path, so that every content is written before any file is
    /// replaced and the replacement itself is a cheap
    /// [`PatchFileSystem::rename`]. `Ok(None)` (the default) stages nothing:
    /// the applier then calls [`PatchFileSystem::write_atomic`] when it
    /// replaces the file. A staged file that is not used is removed with
    /// [`PatchFileSystem::remove_file`].
    fn stage(
        &self,
        _path: &Path,
        _bytes: &[u8],
        _permissions: Option<&Permissions>,
    ) -> io::Result<Option<PathBuf>> {
        Ok(None)
    }

    /// Renames a file returned by [`PatchFileSystem::stage`] over `to`,
    /// atomically. Called only for staged files.
    fn rename(&self, _from: &Path, _to: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this file system stages no files, so it has nothing to rename",
        ))
    }
}

/// The local disk through `std::fs`: writes go to a temporary file beside
/// the target that is renamed into place, and replaced files keep their
/// permission bits.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalFileSystem;

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

impl PatchFileSystem for LocalFileSystem {
    fn entry(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if is_missing(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let ft = meta.file_type();
        Ok(Some(if ft.is_symlink() {
            EntryKind::Symlink
        } else if ft.is_dir() {
            EntryKind::Directory
        } else if ft.is_file() {
            EntryKind::File {
                len: meta.len(),
                modified: meta.modified().ok(),
                permissions: Some(meta.permissions()),
            }
        } else {
            EntryKind::Other
        }))
    }

    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        std::fs::metadata(path).map(|m| m.is_dir())
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn write_atomic(
        &self,
        path: &Path,
        bytes: &[u8],
        permissions: Option<&Permissions>,
    ) -> io::Result<()> {
        let temp = write_temp(path, bytes, permissions)?;
        std::fs::rename(&temp, path).inspect_err(|_| {
            let _ = std::fs::remove_file(&temp);
        })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn create_dir(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir(path)
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_dir(path)
    }

    fn read_link(&self, path: &Path) -> io::Result<Option<PathBuf>> {
        std::fs::read_link(path).map(Some)
    }

    fn create_symlink(&self, target: &Path, path: &Path) -> io::Result<()> {
        local_symlink(target, path)
    }

    fn stage(
        &self,
        path: &Path,
        bytes: &[u8],
        permissions: Option<&Permissions>,
    ) -> io::Result<Option<PathBuf>> {
        write_temp(path, bytes, permissions).map(Some)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
}

#[cfg(unix)]
fn local_symlink(target: &Path, path: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, path)
}

#[cfg(not(unix))]
fn local_symlink(_target: &Path, path: &Path) -> io::Result<()> {
    Err(io::Error::other(format!(
        "cannot recreate the symlink {}",
        path.display()
    )))
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates a new temporary file beside `target` holding `bytes`. A new file
/// gets the default mode (as `fs::write` would give); a replaced one gets
/// the permissions of the file it replaces.
fn write_temp(target: &Path, bytes: &[u8], perms: Option<&Permissions>) -> io::Result<PathBuf> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut attempts = 0;
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{}.{n}.osprey-tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => {
                if let Err(e) = fill(file, bytes, perms) {
                    let _ = std::fs::remove_file(&temp);
                    return Err(e);
                }
                return Ok(temp);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 100 => {
                attempts += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

fn fill(mut file: File, bytes: &[u8], perms: Option<&Permissions>) -> io::Result<()> {
    file.write_all(bytes)?;
    if let Some(perms) = perms {
        file.set_permissions(perms.clone())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The local disk speaks the trait's contract: nothing there is `None`,
    /// also below a file; `is_dir` fails on a missing path; writes keep no
    /// temporary file and keep the mode they are given.
    #[test]
    fn local_file_system_follows_the_contract() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let fs = LocalFileSystem;
        let file = root.join("f.txt");
        assert_eq!(fs.entry(&file).unwrap(), None);
        assert!(fs.is_dir(&file).is_err());
        fs.write_atomic(&file, b"x\n", None).unwrap();
        assert!(matches!(
            fs.entry(&file).unwrap(),
            Some(EntryKind::File { len: 2, .. })
        ));
        assert_eq!(fs.entry(&file.join("below")).unwrap(), None);
        assert!(!fs.is_dir(&file).unwrap());
        assert_eq!(fs.entry(&root).unwrap(), Some(EntryKind::Directory));
        assert!(fs.canonicalize(&root.join("missing")).is_err());
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f.txt")]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = Permissions::from_mode(0o751);
            fs.write_atomic(&file, b"y\n", Some(&mode)).unwrap();
            let got = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(got, 0o751);
            std::os::unix::fs::symlink("f.txt", root.join("link")).unwrap();
            assert_eq!(
                fs.entry(&root.join("link")).unwrap(),
                Some(EntryKind::Symlink)
            );
            assert_eq!(
                fs.read_link(&root.join("link")).unwrap(),
                Some(PathBuf::from("f.txt"))
            );
        }
    }
}
