//! Verification: every operation is checked against the file system and its
//! result computed in memory, before anything is written.
//!
//! Operations run in patch order against an overlay of file states (so a file
//! added and then updated in one patch works); the overlay remembers what each
//! path held on disk, which is what [`crate::apply_verified`] restores if a
//! later step fails. Every look at the files goes through a
//! [`PatchFileSystem`], so the files may live on another machine.

use std::collections::HashMap;
use std::fs::Permissions;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use crate::error::ApplyError;
use crate::fs::{EntryKind, LocalFileSystem, PatchFileSystem};
use crate::matcher::{MatchFailure, TextView, plan, render};
use crate::parser::{FileOp, Patch};
use crate::paths::{canonical_roots, check_roots, resolve};

/// What an operation does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A new file.
    Add,
    /// An edited (and possibly moved) file.
    Update,
    /// A removed file.
    Delete,
}

/// File content held in memory, shared between the change list and the
/// write plan so a large file is not copied.
#[derive(Debug, Clone)]
pub(crate) enum Content {
    Disk(Arc<Vec<u8>>),
    Text(Arc<String>),
}

impl Content {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Content::Disk(b) => b,
            Content::Text(s) => s.as_bytes(),
        }
    }
}

/// One verified file operation.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub(crate) path: PathBuf,
    pub(crate) display: String,
    pub(crate) kind: ChangeKind,
    pub(crate) move_to: Option<PathBuf>,
    pub(crate) move_display: Option<String>,
    pub(crate) old: Option<Content>,
    pub(crate) new: Option<Content>,
}

impl FileChange {
    /// The absolute, resolved path of the file (the source of a move).
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The path as the patch wrote it.
    pub fn display_path(&self) -> &str {
        &self.display
    }
    /// Add, update or delete.
    pub fn kind(&self) -> ChangeKind {
        self.kind
    }
    /// The absolute, resolved destination of a move.
    pub fn move_to(&self) -> Option<&Path> {
        self.move_to.as_deref()
    }
    /// The destination of a move as the patch wrote it.
    pub fn move_display_path(&self) -> Option<&str> {
        self.move_display.as_deref()
    }
    /// The content before the change (`None` for an add).
    pub fn old_content(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.old
            .as_ref()
            .map(|c| String::from_utf8_lossy(c.bytes()))
    }
    /// The content after the change (`None` for a delete).
    pub fn new_content(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.new
            .as_ref()
            .map(|c| String::from_utf8_lossy(c.bytes()))
    }
    /// A unified diff (one line of context, no file header) from the old to
    /// the new content, computed on demand with `similar`.
    pub fn unified_diff(&self) -> String {
        let old = self.old_content().unwrap_or_default();
        let new = self.new_content().unwrap_or_default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        similar::TextDiff::configure()
            .deadline(deadline)
            .diff_lines(old.as_ref(), new.as_ref())
            .unified_diff()
            .context_radius(1)
            .to_string()
    }
}

/// What a path held on disk when it was first looked at.
#[derive(Debug, Clone)]
pub(crate) enum Disk {
    Absent,
    File {
        bytes: Arc<Vec<u8>>,
        perms: Option<Permissions>,
        len: u64,
        modified: Option<SystemTime>,
    },
    /// `target` is `None` when the file system cannot read links.
    Symlink {
        target: Option<PathBuf>,
    },
    Other,
}

/// What a path should hold after the patch.
#[derive(Debug, Clone)]
pub(crate) enum Final {
    Absent,
    File {
        content: Content,
        perms: Option<Permissions>,
    },
    Unchanged,
}

#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub(crate) path: PathBuf,
    pub(crate) original: Disk,
    pub(crate) fin: Final,
}

/// A patch whose every operation was checked; holds the computed results.
/// Apply it with [`crate::apply_verified`].
#[derive(Debug, Clone)]
pub struct VerifiedPatch {
    pub(crate) changes: Vec<FileChange>,
    pub(crate) touched: Vec<PathBuf>,
    pub(crate) slots: Vec<Slot>,
    pub(crate) cwd: PathBuf,
}

impl VerifiedPatch {
    /// The file operations, in patch order.
    pub fn changes(&self) -> &[FileChange] {
        &self.changes
    }
    /// Every absolute path the patch touches, move sources and destinations
    /// included, in order of first appearance and without duplicates.
    pub fn touched_paths(&self) -> &[PathBuf] {
        &self.touched
    }
    /// The directory relative paths were resolved against.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }
}

/// Checks every operation of `patch` without writing anything: paths resolve
/// inside `allowed_roots` (when given; `..` and symlinks resolved first),
/// files exist or not as each operation requires, and every chunk matches.
/// Looks at the local disk ([`LocalFileSystem`]).
pub fn verify_patch(
    patch: &Patch,
    cwd: &Path,
    allowed_roots: Option<&[PathBuf]>,
) -> Result<VerifiedPatch, ApplyError> {
    verify_patch_in(&LocalFileSystem, patch, cwd, allowed_roots)
}

/// [`verify_patch`] against the files of `fs` (for instance a remote
/// machine's). Apply the result with [`crate::apply_verified_in`] and the
/// same `fs`.
pub fn verify_patch_in(
    fs: &dyn PatchFileSystem,
    patch: &Patch,
    cwd: &Path,
    allowed_roots: Option<&[PathBuf]>,
) -> Result<VerifiedPatch, ApplyError> {
    if patch.operations.is_empty() {
        return Err(ApplyError::NoOperations);
    }
    let roots = allowed_roots.map(|roots| canonical_roots(fs, roots));
    let mut v = Verifier {
        fs,
        cwd,
        roots: roots.as_deref(),
        slots: Vec::new(),
        index: HashMap::new(),
        changes: Vec::new(),
        touched: Vec::new(),
    };
    for op in &patch.operations {
        v.operation(op)?;
    }
    Ok(VerifiedPatch {
        changes: v.changes,
        touched: v.touched,
        slots: v.slots,
        cwd: cwd.to_path_buf(),
    })
}

struct Verifier<'a> {
    fs: &'a dyn PatchFileSystem,
    cwd: &'a Path,
    roots: Option<&'a [PathBuf]>,
    slots: Vec<Slot>,
    index: HashMap<PathBuf, usize>,
    changes: Vec<FileChange>,
    touched: Vec<PathBuf>,
}

/// The current state of a slot, seen through the overlay.
enum Now {
    Absent,
    File(Content, Option<Permissions>),
    Symlink,
    Other,
}

impl Verifier<'_> {
    fn resolve(&mut self, given: &Path, follow: bool) -> Result<PathBuf, ApplyError> {
        let resolved = resolve(self.fs, self.cwd, given, follow)?;
        check_roots(given, &resolved, self.roots)?;
        if !self.touched.contains(&resolved) {
            self.touched.push(resolved.clone());
        }
        Ok(resolved)
    }

    fn slot(&mut self, path: &Path) -> Result<usize, ApplyError> {
        if let Some(&i) = self.index.get(path) {
            return Ok(i);
        }
        let original = read_disk(self.fs, path)?;
        self.slots.push(Slot {
            path: path.to_path_buf(),
            original,
            fin: Final::Unchanged,
        });
        let i = self.slots.len() - 1;
        self.index.insert(path.to_path_buf(), i);
        Ok(i)
    }

    fn now(&self, i: usize) -> Now {
        let slot = &self.slots[i];
        match &slot.fin {
            Final::Absent => Now::Absent,
            Final::File { content, perms } => Now::File(content.clone(), perms.clone()),
            Final::Unchanged => match &slot.original {
                Disk::Absent => Now::Absent,
                Disk::File { bytes, perms, .. } => {
                    Now::File(Content::Disk(bytes.clone()), perms.clone())
                }
                Disk::Symlink { .. } => Now::Symlink,
                Disk::Other => Now::Other,
            },
        }
    }

    fn operation(&mut self, op: &FileOp) -> Result<(), ApplyError> {
        match op {
            FileOp::Add { path, contents } => {
                let abs = self.resolve(path, false)?;
                let i = self.slot(&abs)?;
                match self.now(i) {
                    Now::Absent => {}
                    Now::File(..) | Now::Symlink => {
                        return Err(ApplyError::Exists {
                            path: abs,
                            action: "add",
                        });
                    }
                    Now::Other => {
                        return Err(ApplyError::NotAFile {
                            path: abs,
                            action: "add",
                        });
                    }
                }
                check_parents(self.fs, &abs)?;
                let content = Content::Text(Arc::new(contents.clone()));
                self.slots[i].fin = Final::File {
                    content: content.clone(),
                    perms: None,
                };
                self.changes.push(FileChange {
                    path: abs,
                    display: path.display().to_string(),
                    kind: ChangeKind::Add,
                    move_to: None,
                    move_display: None,
                    old: None,
                    new: Some(content),
                });
            }
            FileOp::Delete { path } => {
                let abs = self.resolve(path, false)?;
                let i = self.slot(&abs)?;
                let old = match self.now(i) {
                    Now::File(content, _) => Some(content),
                    Now::Symlink => None,
                    Now::Absent => {
                        return Err(ApplyError::Missing {
                            path: abs,
                            action: "delete",
                        });
                    }
                    Now::Other => {
                        return Err(ApplyError::NotAFile {
                            path: abs,
                            action: "delete",
                        });
                    }
                };
                self.slots[i].fin = Final::Absent;
                self.changes.push(FileChange {
                    path: abs,
                    display: path.display().to_string(),
                    kind: ChangeKind::Delete,
                    move_to: None,
                    move_display: None,
                    old,
                    new: None,
                });
            }
            FileOp::Update {
                path,
                move_to,
                chunks,
            } => {
                let abs = self.resolve(path, move_to.is_none())?;
                let action = if move_to.is_some() { "move" } else { "update" };
                let i = self.slot(&abs)?;
                let (old, perms) = match self.now(i) {
                    Now::File(content, perms) => (content, perms),
                    Now::Absent => {
                        return Err(ApplyError::Missing {
                            path: abs,
                            action: "update",
                        });
                    }
                    Now::Symlink | Now::Other => {
                        return Err(ApplyError::NotAFile { path: abs, action });
                    }
                };
                let Ok(text) = std::str::from_utf8(old.bytes()) else {
                    return Err(ApplyError::NotText { path: abs });
                };
                let view = TextView::new(text);
                let edits = plan(&view, chunks).map_err(|failure| match failure {
                    MatchFailure::Anchor { chunk, anchor } => ApplyError::AnchorNotFound {
                        path: abs.clone(),
                        chunk,
                        line: chunks[chunk - 1].line,
                        anchor,
                    },
                    MatchFailure::Lines { chunk } => {
                        let c = &chunks[chunk - 1];
                        ApplyError::LinesNotFound {
                            path: abs.clone(),
                            chunk,
                            line: c.line,
                            expected: c.old_lines.clone(),
                            end_of_file: c.end_of_file,
                        }
                    }
                    MatchFailure::Overlap { chunk } => ApplyError::Overlap {
                        path: abs.clone(),
                        chunk,
                    },
                })?;
                let new = Content::Text(Arc::new(render(&view, &edits)));
                drop(edits);
                drop(view);
                let mut dest = None;
                if let Some(to) = move_to {
                    let dst = self.resolve(to, false)?;
                    if dst != abs {
                        let j = self.slot(&dst)?;
                        match self.now(j) {
                            Now::Absent => {}
                            Now::Other => {
                                return Err(ApplyError::NotAFile {
                                    path: dst,
                                    action: "move to",
                                });
                            }
                            Now::File(..) | Now::Symlink => {
                                return Err(ApplyError::Exists {
                                    path: dst,
                                    action: "move to",
                                });
                            }
                        }
                        check_parents(self.fs, &dst)?;
                        self.slots[i].fin = Final::Absent;
                        self.slots[j].fin = Final::File {
                            content: new.clone(),
                            perms: perms.clone(),
                        };
                        dest = Some((dst, to.display().to_string()));
                    }
                }
                if dest.is_none() {
                    self.slots[i].fin = Final::File {
                        content: new.clone(),
                        perms,
                    };
                }
                let (move_to, move_display) = match dest {
                    Some((a, b)) => (Some(a), Some(b)),
                    None => (None, None),
                };
                self.changes.push(FileChange {
                    path: abs,
                    display: path.display().to_string(),
                    kind: ChangeKind::Update,
                    move_to,
                    move_display,
                    old: Some(old),
                    new: Some(new),
                });
            }
        }
        Ok(())
    }
}

fn read_disk(fs: &dyn PatchFileSystem, path: &Path) -> Result<Disk, ApplyError> {
    let kind = fs
        .entry(path)
        .map_err(|e| ApplyError::io(path, "inspect", e))?;
    let (len, modified, perms) = match kind {
        None => return Ok(Disk::Absent),
        Some(EntryKind::Symlink) => {
            let target = fs
                .read_link(path)
                .map_err(|e| ApplyError::io(path, "read link", e))?;
            return Ok(Disk::Symlink { target });
        }
        Some(EntryKind::Directory | EntryKind::Other) => return Ok(Disk::Other),
        Some(EntryKind::File {
            len,
            modified,
            permissions,
        }) => (len, modified, permissions),
    };
    let bytes = fs.read(path).map_err(|e| ApplyError::io(path, "read", e))?;
    Ok(Disk::File {
        bytes: Arc::new(bytes),
        perms,
        len,
        modified,
    })
}

/// Every existing ancestor of a file to be created must be a directory.
fn check_parents(fs: &dyn PatchFileSystem, path: &Path) -> Result<(), ApplyError> {
    let mut cur = path.parent();
    while let Some(dir) = cur {
        match fs.is_dir(dir) {
            Ok(true) => return Ok(()),
            Ok(false) => {
                return Err(ApplyError::io(
                    path,
                    "create the parent directories of",
                    std::io::Error::other(format!("{} is a file, not a directory", dir.display())),
                ));
            }
            Err(_) => cur = dir.parent(),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_patch;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("f.txt"), "a\nb\nc\n").unwrap();
        std::fs::create_dir(root.join("dir")).unwrap();
        std::fs::write(root.join("bin.dat"), [0xff, 0xfe, 0x00, 0x80]).unwrap();
        (dir, root)
    }

    fn check(root: &Path, body: &str) -> Result<VerifiedPatch, ApplyError> {
        let patch = parse_patch(&format!("*** Begin Patch\n{body}*** End Patch")).unwrap();
        verify_patch(
            &patch,
            root,
            Some(std::slice::from_ref(&root.to_path_buf())),
        )
    }

    #[test]
    fn no_operations() {
        let (_d, root) = root();
        assert!(matches!(check(&root, ""), Err(ApplyError::NoOperations)));
    }

    #[test]
    fn add_existing_is_refused() {
        let (_d, root) = root();
        let err = check(&root, "*** Add File: f.txt\n+x\n").unwrap_err();
        assert!(
            matches!(err, ApplyError::Exists { action: "add", .. }),
            "{err}"
        );
        let err = check(&root, "*** Add File: dir\n+x\n").unwrap_err();
        assert!(matches!(err, ApplyError::NotAFile { .. }), "{err}");
    }

    #[test]
    fn add_under_a_file_is_refused() {
        let (_d, root) = root();
        let err = check(&root, "*** Add File: f.txt/x\n+x\n").unwrap_err();
        assert!(matches!(err, ApplyError::Io { .. }), "{err}");
    }

    #[test]
    fn update_and_delete_need_an_existing_file() {
        let (_d, root) = root();
        let err = check(&root, "*** Update File: nope\n@@\n-a\n+b\n").unwrap_err();
        assert!(
            matches!(
                err,
                ApplyError::Missing {
                    action: "update",
                    ..
                }
            ),
            "{err}"
        );
        let err = check(&root, "*** Delete File: nope\n").unwrap_err();
        assert!(
            matches!(
                err,
                ApplyError::Missing {
                    action: "delete",
                    ..
                }
            ),
            "{err}"
        );
        let err = check(&root, "*** Delete File: dir\n").unwrap_err();
        assert!(matches!(err, ApplyError::NotAFile { .. }), "{err}");
        let err = check(&root, "*** Delete File: f.txt\n*** Delete File: f.txt\n").unwrap_err();
        assert!(matches!(err, ApplyError::Missing { .. }), "{err}");
    }

    #[test]
    fn binary_update_is_refused_but_delete_works() {
        let (_d, root) = root();
        let err = check(&root, "*** Update File: bin.dat\n@@\n-a\n+b\n").unwrap_err();
        assert!(matches!(err, ApplyError::NotText { .. }), "{err}");
        assert!(check(&root, "*** Delete File: bin.dat\n").is_ok());
    }

    #[test]
    fn move_onto_existing_is_refused_but_onto_itself_is_an_update() {
        let (_d, root) = root();
        std::fs::write(root.join("g.txt"), "g\n").unwrap();
        let err = check(
            &root,
            "*** Update File: f.txt\n*** Move to: g.txt\n@@\n-a\n+b\n",
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                ApplyError::Exists {
                    action: "move to",
                    ..
                }
            ),
            "{err}"
        );
        let v = check(
            &root,
            "*** Update File: f.txt\n*** Move to: ./f.txt\n@@\n-a\n+b\n",
        )
        .unwrap();
        assert_eq!(v.changes()[0].move_to(), None);
    }

    #[test]
    fn traversal_attempts_fail_closed() {
        let (_d, root) = root();
        for body in [
            "*** Add File: ../x.txt\n+x\n",
            "*** Add File: dir/../../x.txt\n+x\n",
            "*** Add File: /etc/osprey-should-not-exist\n+x\n",
            "*** Delete File: ../../../../../../etc/hostname\n",
            "*** Update File: f.txt\n*** Move to: ../moved.txt\n@@\n-a\n+b\n",
        ] {
            let err = check(&root, body).unwrap_err();
            assert!(
                matches!(err, ApplyError::OutsideRoots { .. }),
                "{body}: {err}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlink_escapes_fail_closed() {
        let (_d, root) = root();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "s\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), root.join("s.txt")).unwrap();
        for body in [
            "*** Add File: out/new.txt\n+x\n",
            "*** Update File: out/secret.txt\n@@\n-s\n+x\n",
            "*** Update File: s.txt\n@@\n-s\n+x\n",
            "*** Delete File: out/secret.txt\n",
        ] {
            let err = check(&root, body).unwrap_err();
            assert!(
                matches!(err, ApplyError::OutsideRoots { .. }),
                "{body}: {err}"
            );
        }
        // Deleting the link itself stays inside the root.
        assert!(check(&root, "*** Delete File: s.txt\n").is_ok());
    }

    #[test]
    fn chunk_errors_name_file_chunk_and_lines() {
        let (_d, root) = root();
        let err = check(
            &root,
            "*** Update File: f.txt\n@@\n-a\n+A\n@@\n-zz\n-yy\n+x\n",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "Failed to find expected lines in {}:\nzz\nyy\n(chunk 2 at patch line 6; nothing \
                 was changed: re-read the file and copy the context and '-' lines exactly)",
                root.join("f.txt").display()
            )
        );
        let err = check(&root, "*** Update File: f.txt\n@@ nowhere\n-a\n+A\n").unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "Failed to find context 'nowhere' in {}",
                root.join("f.txt").display()
            )),
            "{err}"
        );
    }

    #[test]
    fn verification_writes_nothing() {
        let (_d, root) = root();
        let v = check(
            &root,
            "*** Add File: new/x.txt\n+x\n*** Delete File: f.txt\n",
        )
        .unwrap();
        assert_eq!(v.changes().len(), 2);
        assert!(!root.join("new").exists());
        assert!(root.join("f.txt").exists());
    }
}
