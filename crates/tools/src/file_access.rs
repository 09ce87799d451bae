//! Where the read-only file tools read from: [`FileAccess`].
//!
//! `read_file`, `list_dir`, `grep_files` and `view_image` need five things from a file system:
//! the metadata of a path, a whole (bounded) file, one directory's entries, and a bounded walk
//! of a tree. [`FileAccess`] is exactly that, synchronous, so the tools stay plain functions
//! that callers run on a blocking thread. [`LocalFiles`] is this machine's file system; the
//! core supplies another implementation for an exec server, whose `fs/*` calls map one to one:
//!
//! | method | exec-server call |
//! |---|---|
//! | [`FileAccess::metadata`] | `fs/getMetadata` (`isDirectory`/`isFile` follow symlinks) |
//! | [`FileAccess::read`] | `fs/readFile` (whole file; the server refuses files over 48 MiB) |
//! | [`FileAccess::read_dir`] | `fs/walk` with `maxDepth: 1`, `followDirectorySymlinks: false`, `pruneHiddenDirectories: false` (it names symlinks, which `fs/readDirectory` does not) |
//! | [`FileAccess::walk`] | `fs/walk` with `followDirectorySymlinks: false` |
//!
//! The shape follows from that remote side: there is no partial read (so every read is of a
//! whole file, refused beyond a limit), no open handle, and the walk is one request returning
//! a flat list rather than a callback per entry, so ignore rules are applied by the caller.
//! Symlinks are never followed by [`FileAccess::read_dir`] or [`FileAccess::walk`]: they come
//! back as [`EntryKind::Symlink`], as the local tools have always shown them.
//!
//! Implementations are called from several threads at once, including threads the caller
//! did not create (`grep_files_in` reads files on a few scoped threads), hence `Send + Sync`:
//! an implementation that blocks on an async client should hold its runtime handle rather
//! than look one up from the current thread.
//!
//! Paths are passed as the model wrote them once made absolute, so they may hold `.` or `..`
//! components; an implementation whose transport refuses those (an exec server does) should
//! resolve them lexically before sending.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a path is, as [`FileAccess::metadata`] sees it (following symlinks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// The path (after following symlinks) is a directory.
    pub is_dir: bool,
    /// The path (after following symlinks) is a regular file.
    pub is_file: bool,
    /// The path itself is a symlink.
    pub is_symlink: bool,
    /// Size in bytes of what the path points at.
    pub len: u64,
    /// Last modification time, when known (an exec server's `modifiedAtMs: 0` is unknown).
    pub modified: Option<SystemTime>,
}

/// The kind of a directory entry itself: a symlink is a symlink, not what it points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (never followed).
    Symlink,
    /// A FIFO, socket, device, or anything else.
    Other,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntryInfo {
    /// The entry's file name (no directory part).
    pub name: OsString,
    /// What the entry itself is.
    pub kind: EntryKind,
}

/// How far a [`FileAccess::walk`] may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkLimits {
    /// Levels below the root: 1 lists only the root's own entries.
    pub max_depth: usize,
    /// Most directories read (the root counts).
    pub max_directories: usize,
    /// Most entries returned.
    pub max_entries: usize,
    /// Leave out directories whose name starts with `.`, and everything in them. Hidden
    /// files are still listed.
    pub prune_hidden_directories: bool,
}

/// One entry found by a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    /// The entry's path: the walk's root joined with the path below it.
    pub path: PathBuf,
    /// What the entry itself is.
    pub kind: EntryKind,
}

/// A directory a walk could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkError {
    /// The directory.
    pub path: PathBuf,
    /// Why, in the OS's words.
    pub message: String,
}

/// What a walk found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalkListing {
    /// Every entry found, each directory listed before what is inside it.
    pub entries: Vec<WalkEntry>,
    /// Directories below the root that could not be read (they are listed, not entered).
    pub errors: Vec<WalkError>,
    /// A limit stopped the walk before it saw everything.
    pub truncated: bool,
}

/// Read-only access to a file system, local or remote. See the module documentation for how
/// each method maps onto an exec server's `fs/*` calls.
///
/// Errors are `std::io::Error`s; a path that does not exist must fail with
/// [`io::ErrorKind::NotFound`] so the tools can say so plainly.
pub trait FileAccess: Send + Sync {
    /// What `path` is, following symlinks (with [`FileMeta::is_symlink`] about the path
    /// itself). A dangling symlink fails with `NotFound`, or (as an exec server reports it) is
    /// a symlink that is neither file nor directory, which the tools treat as missing.
    fn metadata(&self, path: &Path) -> io::Result<FileMeta>;

    /// The whole content of the regular file at `path`. A file holding more than `max_bytes`
    /// bytes fails with [`io::ErrorKind::FileTooLarge`] instead of being read in part.
    fn read(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>>;

    /// The entries of the directory at `path`, in any order, with the kind of each entry
    /// itself (symlinks not followed).
    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntryInfo>>;

    /// Every entry under the directory `root`, depth first in name order, within `limits`;
    /// symlinks are listed, never followed. Fails only when `root` itself cannot be read;
    /// unreadable directories below it go in [`WalkListing::errors`].
    fn walk(&self, root: &Path, limits: WalkLimits) -> io::Result<WalkListing>;
}

/// This machine's file system, through `std::fs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalFiles;

impl FileAccess for LocalFiles {
    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        let link = fs::symlink_metadata(path)?;
        let is_symlink = link.file_type().is_symlink();
        let meta = if is_symlink {
            fs::metadata(path)?
        } else {
            link
        };
        Ok(FileMeta {
            is_dir: meta.is_dir(),
            is_file: meta.is_file(),
            is_symlink,
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }

    fn read(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        let file = fs::File::open(path)?;
        let len = file.metadata()?.len();
        if len > max_bytes {
            return Err(too_large(path, len, max_bytes));
        }
        let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut data)?;
        if data.len() as u64 > max_bytes {
            return Err(too_large(path, data.len() as u64, max_bytes));
        }
        Ok(data)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntryInfo>> {
        let mut entries = Vec::new();
        for entry in fs::read_dir(path)? {
            let entry = entry?;
            entries.push(DirEntryInfo {
                name: entry.file_name(),
                kind: kind_of(entry.file_type().ok()),
            });
        }
        Ok(entries)
    }

    fn walk(&self, root: &Path, limits: WalkLimits) -> io::Result<WalkListing> {
        let mut listing = WalkListing::default();
        let first = sorted_children(root)?;
        let mut directories = 1usize;
        if limits.max_depth == 0 || limits.max_directories == 0 {
            listing.truncated = limits.max_directories == 0;
            return Ok(listing);
        }
        // Each stack frame is one directory's remaining children, with its depth.
        let mut stack = vec![(first.into_iter(), 1usize)];
        while let Some((children, depth)) = stack.last_mut() {
            let depth = *depth;
            let Some((path, kind)) = children.next() else {
                stack.pop();
                continue;
            };
            if kind == EntryKind::Directory && limits.prune_hidden_directories && is_hidden(&path) {
                continue;
            }
            if listing.entries.len() >= limits.max_entries {
                listing.truncated = true;
                break;
            }
            listing.entries.push(WalkEntry {
                path: path.clone(),
                kind,
            });
            if kind != EntryKind::Directory || depth >= limits.max_depth {
                continue;
            }
            if directories >= limits.max_directories {
                listing.truncated = true;
                break;
            }
            directories += 1;
            match sorted_children(&path) {
                Ok(children) => stack.push((children.into_iter(), depth + 1)),
                Err(err) => listing.errors.push(WalkError {
                    path,
                    message: err.to_string(),
                }),
            }
        }
        Ok(listing)
    }
}

fn too_large(path: &Path, len: u64, max_bytes: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!(
            "{} holds {len} bytes, more than the {max_bytes} that may be read at once",
            path.display()
        ),
    )
}

fn kind_of(file_type: Option<fs::FileType>) -> EntryKind {
    match file_type {
        Some(t) if t.is_symlink() => EntryKind::Symlink,
        Some(t) if t.is_dir() => EntryKind::Directory,
        Some(t) if t.is_file() => EntryKind::File,
        _ => EntryKind::Other,
    }
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name.as_encoded_bytes().starts_with(b"."))
}

/// The children of `dir` as (path, kind), in name order.
fn sorted_children(dir: &Path) -> io::Result<Vec<(PathBuf, EntryKind)>> {
    let mut children: Vec<(PathBuf, EntryKind)> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| (entry.path(), kind_of(entry.file_type().ok())))
        .collect();
    children.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()));
    Ok(children)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::TempDir::new().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("b/deep")).unwrap();
        fs::create_dir_all(root.join(".hidden")).unwrap();
        fs::write(root.join("a.txt"), "a").unwrap();
        fs::write(root.join("b/deep/c.txt"), "c").unwrap();
        fs::write(root.join(".hidden/x"), "x").unwrap();
        fs::write(root.join(".env"), "e").unwrap();
        dir
    }

    fn names(root: &Path, listing: &WalkListing) -> Vec<String> {
        listing
            .entries
            .iter()
            .map(|e| e.path.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    const ALL: WalkLimits = WalkLimits {
        max_depth: 64,
        max_directories: 100,
        max_entries: 100,
        prune_hidden_directories: true,
    };

    #[test]
    fn walk_lists_depth_first_in_name_order_pruning_hidden_directories_only() {
        let dir = tree();
        let listing = LocalFiles.walk(dir.path(), ALL).unwrap();
        assert_eq!(
            names(dir.path(), &listing),
            [".env", "a.txt", "b", "b/deep", "b/deep/c.txt"]
        );
        assert!(!listing.truncated);
        let everything = LocalFiles
            .walk(
                dir.path(),
                WalkLimits {
                    prune_hidden_directories: false,
                    ..ALL
                },
            )
            .unwrap();
        assert_eq!(
            names(dir.path(), &everything),
            [
                ".env",
                ".hidden",
                ".hidden/x",
                "a.txt",
                "b",
                "b/deep",
                "b/deep/c.txt"
            ]
        );
    }

    #[test]
    fn walk_limits_truncate_and_say_so() {
        let dir = tree();
        let shallow = LocalFiles
            .walk(
                dir.path(),
                WalkLimits {
                    max_depth: 1,
                    ..ALL
                },
            )
            .unwrap();
        assert_eq!(names(dir.path(), &shallow), [".env", "a.txt", "b"]);
        assert!(!shallow.truncated, "a depth limit is asked for, not a cut");
        let few = LocalFiles
            .walk(
                dir.path(),
                WalkLimits {
                    max_entries: 2,
                    ..ALL
                },
            )
            .unwrap();
        assert_eq!(names(dir.path(), &few), [".env", "a.txt"]);
        assert!(few.truncated);
        let one_dir = LocalFiles
            .walk(
                dir.path(),
                WalkLimits {
                    max_directories: 1,
                    ..ALL
                },
            )
            .unwrap();
        assert_eq!(names(dir.path(), &one_dir), [".env", "a.txt", "b"]);
        assert!(one_dir.truncated);
    }

    #[test]
    fn read_refuses_files_over_the_limit() {
        let dir = tree();
        let path = dir.path().join("a.txt");
        assert_eq!(LocalFiles.read(&path, 1).unwrap(), b"a");
        let err = LocalFiles.read(&path, 0).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(
            LocalFiles
                .read(&dir.path().join("nope"), 9)
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_reported_not_followed() {
        let dir = tree();
        std::os::unix::fs::symlink(dir.path().join("b"), dir.path().join("link")).unwrap();
        let meta = LocalFiles.metadata(&dir.path().join("link")).unwrap();
        assert!(meta.is_dir && meta.is_symlink);
        let entries = LocalFiles.read_dir(dir.path()).unwrap();
        assert!(entries.contains(&DirEntryInfo {
            name: "link".into(),
            kind: EntryKind::Symlink
        }));
        let listing = LocalFiles.walk(dir.path(), ALL).unwrap();
        assert!(
            !names(dir.path(), &listing)
                .iter()
                .any(|n| n.starts_with("link/"))
        );
    }
}
