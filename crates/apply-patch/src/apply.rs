//! Atomic application of a verified patch.
//!
//! Order of work, so that a failure at any point leaves the tree as it was:
//! 1. re-check that every file still looks as it did at verification;
//! 2. create missing parent directories (remembered for cleanup);
//! 3. stage every new content (locally: a temporary file beside its target)
//!    when the file system can;
//! 4. commit: put each content in place (rename the staged file, or an atomic
//!    write) and remove deleted files; if one of these fails, undo the ones
//!    already done from the contents held in memory (original bytes written
//!    back, created files removed, deleted links recreated), then remove the
//!    staged files and created directories.
//!
//! Every step goes through a [`PatchFileSystem`], so this holds for remote
//! files as well as local ones.

use std::fs::Permissions;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::ApplyError;
use crate::fs::{EntryKind, LocalFileSystem, PatchFileSystem};
use crate::verify::{ChangeKind, Content, Disk, FileChange, Final, VerifiedPatch};

/// The first line of every successful application's summary. Callers that only see a
/// tool's text output (the local model's finish check) recognise a write that took effect
/// by it.
pub const SUCCESS_HEADER: &str = "Success. Updated the following files:";

/// The result of a successful application.
#[derive(Debug, Clone)]
pub struct ApplySummary {
    /// `Success. Updated the following files:` followed by `A path`,
    /// `M path` and `D path` lines (a move shows its new path), each ending
    /// with a newline.
    pub text: String,
    /// The applied changes, in patch order.
    pub changes: Vec<FileChange>,
}

/// Builds the success text for a list of changes: additions, then updates,
/// then deletions, each with the path as the patch wrote it.
pub fn summary_text(changes: &[FileChange]) -> String {
    let mut text = format!("{SUCCESS_HEADER}\n");
    for (kind, letter) in [
        (ChangeKind::Add, 'A'),
        (ChangeKind::Update, 'M'),
        (ChangeKind::Delete, 'D'),
    ] {
        for change in changes.iter().filter(|c| c.kind == kind) {
            let shown = change.move_display_path().unwrap_or(change.display_path());
            text.push(letter);
            text.push(' ');
            text.push_str(shown);
            text.push('\n');
        }
    }
    text
}

enum Step<'a> {
    Write {
        path: &'a Path,
        content: &'a Content,
        perms: Option<&'a Permissions>,
    },
    Remove {
        path: &'a Path,
    },
}

/// Applies a verified patch to the local disk: every file is replaced
/// through a temporary file and a rename; if any step fails, what was
/// already replaced is restored and the error says so.
pub fn apply_verified(verified: &VerifiedPatch) -> Result<ApplySummary, ApplyError> {
    apply_verified_in(&LocalFileSystem, verified)
}

/// [`apply_verified`] through `fs`, which must be the file system the patch
/// was verified against ([`crate::verify_patch_in`]). All or nothing holds
/// for any implementation: when a write or removal fails, the files already
/// changed are put back through `fs` and the error says whether that worked.
pub fn apply_verified_in(
    fs: &dyn PatchFileSystem,
    verified: &VerifiedPatch,
) -> Result<ApplySummary, ApplyError> {
    let mut steps = Vec::new();
    for slot in &verified.slots {
        check_unchanged(fs, &slot.path, &slot.original)?;
        match (&slot.fin, &slot.original) {
            (Final::Unchanged, _) | (Final::Absent, Disk::Absent) => {}
            (Final::Absent, _) => steps.push((Step::Remove { path: &slot.path }, slot)),
            (Final::File { content, perms }, _) => steps.push((
                Step::Write {
                    path: &slot.path,
                    content,
                    perms: perms.as_ref(),
                },
                slot,
            )),
        }
    }

    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut temps: Vec<Option<PathBuf>> = Vec::with_capacity(steps.len());
    let prepared = (|| {
        for (step, _) in &steps {
            match step {
                Step::Write {
                    path,
                    content,
                    perms,
                } => {
                    create_parents(fs, path, &mut created_dirs)?;
                    let temp = fs
                        .stage(path, content.bytes(), *perms)
                        .map_err(|e| ApplyError::io(path, "write a temporary file for", e))?;
                    temps.push(temp);
                }
                Step::Remove { .. } => temps.push(None),
            }
        }
        Ok(())
    })();
    if let Err(err) = prepared {
        cleanup(fs, &mut temps, &created_dirs);
        return Err(err);
    }

    for index in 0..steps.len() {
        let (step, _) = &steps[index];
        let result = match step {
            Step::Write {
                path,
                content,
                perms,
            } => match temps[index].take() {
                Some(temp) => {
                    let r = fault::check().and_then(|()| fs.rename(&temp, path));
                    if r.is_err() {
                        temps[index] = Some(temp);
                    }
                    r.map_err(|e| (*path, "replace", e))
                }
                None => fault::check()
                    .and_then(|()| fs.write_atomic(path, content.bytes(), *perms))
                    .map_err(|e| (*path, "replace", e)),
            },
            Step::Remove { path } => fault::check()
                .and_then(|()| fs.remove_file(path))
                .map_err(|e| (*path, "delete", e)),
        };
        if let Err((path, action, source)) = result {
            let mut restore_failures = Vec::new();
            for (_, slot) in steps[..index].iter().rev() {
                if let Err(e) = restore(fs, &slot.path, &slot.original) {
                    restore_failures.push(format!("{}: {e}", slot.path.display()));
                }
            }
            cleanup(fs, &mut temps, &created_dirs);
            return Err(ApplyError::Commit {
                path: path.to_path_buf(),
                action,
                source,
                restore_failures,
            });
        }
    }

    Ok(ApplySummary {
        text: summary_text(&verified.changes),
        changes: verified.changes.clone(),
    })
}

fn check_unchanged(
    fs: &dyn PatchFileSystem,
    path: &Path,
    original: &Disk,
) -> Result<(), ApplyError> {
    let changed = || ApplyError::Changed {
        path: path.to_path_buf(),
    };
    let now = fs.entry(path);
    match original {
        Disk::Absent => match now {
            Ok(None) => Ok(()),
            _ => Err(changed()),
        },
        Disk::File { len, modified, .. } => match now {
            Ok(Some(EntryKind::File {
                len: l,
                modified: m,
                ..
            })) if l == *len && m == *modified => Ok(()),
            _ => Err(changed()),
        },
        Disk::Symlink {
            target: Some(target),
        } => match fs.read_link(path) {
            Ok(Some(t)) if &t == target => Ok(()),
            _ => Err(changed()),
        },
        Disk::Symlink { target: None } => match now {
            Ok(Some(EntryKind::Symlink)) => Ok(()),
            _ => Err(changed()),
        },
        Disk::Other => Ok(()),
    }
}

fn create_parents(
    fs: &dyn PatchFileSystem,
    path: &Path,
    created: &mut Vec<PathBuf>,
) -> Result<(), ApplyError> {
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    let is_dir = |dir: &Path| fs.is_dir(dir).unwrap_or(false);
    let mut missing = Vec::new();
    let mut cur = Some(parent);
    while let Some(dir) = cur {
        if is_dir(dir) {
            break;
        }
        missing.push(dir.to_path_buf());
        cur = dir.parent();
    }
    for dir in missing.into_iter().rev() {
        match fs.create_dir(&dir) {
            Ok(()) => created.push(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && is_dir(&dir) => {}
            Err(e) => return Err(ApplyError::io(&dir, "create directory", e)),
        }
    }
    Ok(())
}

fn restore(fs: &dyn PatchFileSystem, path: &Path, original: &Disk) -> io::Result<()> {
    match original {
        Disk::Absent => match fs.remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        },
        Disk::File { bytes, perms, .. } => fs.write_atomic(path, bytes, perms.as_ref()),
        Disk::Symlink {
            target: Some(target),
        } => fs.create_symlink(target, path),
        Disk::Symlink { target: None } => Err(io::Error::other(
            "the link's target could not be read before it was deleted, so it was not recreated",
        )),
        Disk::Other => Ok(()),
    }
}

fn cleanup(fs: &dyn PatchFileSystem, temps: &mut [Option<PathBuf>], created_dirs: &[PathBuf]) {
    for temp in temps.iter_mut().filter_map(Option::take) {
        let _ = fs.remove_file(&temp);
    }
    for dir in created_dirs.iter().rev() {
        let _ = fs.remove_dir(dir);
    }
}

/// Test-only fault injection: fail the Nth commit step of this thread.
#[cfg(test)]
pub(crate) mod fault {
    use std::cell::Cell;

    thread_local! {
        static FAIL_AT: Cell<Option<usize>> = const { Cell::new(None) };
    }

    pub(crate) fn fail_commit_step(n: Option<usize>) {
        FAIL_AT.with(|f| f.set(n));
    }

    pub(crate) fn check() -> std::io::Result<()> {
        FAIL_AT.with(|f| match f.get() {
            Some(0) => {
                f.set(None);
                Err(std::io::Error::other("injected failure"))
            }
            Some(n) => {
                f.set(Some(n - 1));
                Ok(())
            }
            None => Ok(()),
        })
    }
}

#[cfg(not(test))]
mod fault {
    #[inline]
    pub(crate) fn check() -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_patch, verify_patch};
    use pretty_assertions::assert_eq;
    use std::collections::BTreeMap;

    fn snapshot(root: &Path) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
        let mut out = BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap();
                let path = entry.path();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                if meta.is_dir() {
                    out.insert(rel, (b"<dir>".to_vec(), 0));
                    stack.push(path);
                } else {
                    out.insert(rel, (std::fs::read(&path).unwrap_or_default(), mode(&meta)));
                }
            }
        }
        out
    }

    #[cfg(unix)]
    fn mode(meta: &std::fs::Metadata) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode()
    }

    #[cfg(not(unix))]
    fn mode(_meta: &std::fs::Metadata) -> u32 {
        0
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(root.join("a.txt"), "a1\na2\n").unwrap();
        std::fs::write(root.join("b.txt"), "b1\nb2\n").unwrap();
        std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
        (dir, root)
    }

    const BIG: &str = "*** Begin Patch
*** Update File: a.txt
@@
-a1
+A1
*** Add File: new/dir/c.txt
+c
*** Delete File: gone.txt
*** Update File: b.txt
*** Move to: moved/b.txt
@@
-b2
+B2
*** End Patch";

    #[test]
    fn every_commit_step_failure_rolls_back_byte_for_byte() {
        for step in 0..5 {
            let (_dir, root) = tree();
            let before = snapshot(&root);
            let patch = parse_patch(BIG).unwrap();
            let verified = verify_patch(&patch, &root, Some(std::slice::from_ref(&root))).unwrap();
            fault::fail_commit_step(Some(step));
            let err = apply_verified(&verified).expect_err("injected failure");
            fault::fail_commit_step(None);
            assert!(
                matches!(&err, ApplyError::Commit { restore_failures, .. } if restore_failures.is_empty()),
                "{err}"
            );
            assert_eq!(snapshot(&root), before, "step {step}");
        }
    }

    #[test]
    fn success_applies_everything() {
        let (_dir, root) = tree();
        let patch = parse_patch(BIG).unwrap();
        let verified = verify_patch(&patch, &root, Some(std::slice::from_ref(&root))).unwrap();
        let summary = apply_verified(&verified).unwrap();
        assert_eq!(
            summary.text,
            "Success. Updated the following files:\nA new/dir/c.txt\nM a.txt\nM moved/b.txt\nD gone.txt\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "A1\na2\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("new/dir/c.txt")).unwrap(),
            "c\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join("moved/b.txt")).unwrap(),
            "b1\nB2\n"
        );
        assert!(!root.join("b.txt").exists());
        assert!(!root.join("gone.txt").exists());
        let names: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("osprey-tmp"))
            .collect();
        assert!(names.is_empty(), "temporaries left: {names:?}");
    }

    #[test]
    fn touched_paths_include_move_source_and_destination() {
        let (_dir, root) = tree();
        let patch = parse_patch(BIG).unwrap();
        let verified = verify_patch(&patch, &root, None).unwrap();
        assert_eq!(
            verified.touched_paths(),
            &[
                root.join("a.txt"),
                root.join("new/dir/c.txt"),
                root.join("gone.txt"),
                root.join("b.txt"),
                root.join("moved/b.txt"),
            ]
        );
    }

    #[test]
    fn file_changed_after_verification_is_refused() {
        let (_dir, root) = tree();
        let patch = parse_patch(BIG).unwrap();
        let verified = verify_patch(&patch, &root, None).unwrap();
        std::fs::write(root.join("b.txt"), "b1\nb2\nextra line\n").unwrap();
        let before = snapshot(&root);
        let err = apply_verified(&verified).expect_err("stale");
        assert!(matches!(err, ApplyError::Changed { .. }), "{err}");
        assert_eq!(snapshot(&root), before);
    }

    #[cfg(unix)]
    #[test]
    fn mode_bits_are_kept_on_update_and_move() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, root) = tree();
        std::fs::set_permissions(root.join("a.txt"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::set_permissions(root.join("b.txt"), std::fs::Permissions::from_mode(0o741))
            .unwrap();
        let patch = parse_patch(BIG).unwrap();
        apply_verified(&verify_patch(&patch, &root, None).unwrap()).unwrap();
        let mode = |p: &str| {
            std::fs::metadata(root.join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("a.txt"), 0o755);
        assert_eq!(mode("moved/b.txt"), 0o741);
    }

    #[cfg(unix)]
    #[test]
    fn deleting_a_symlink_removes_the_link_and_rollback_restores_it() {
        let (_dir, root) = tree();
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        let text = "*** Begin Patch\n*** Delete File: link\n*** Update File: a.txt\n@@\n-a1\n+x\n*** End Patch";
        let verified = verify_patch(&parse_patch(text).unwrap(), &root, None).unwrap();
        let before = snapshot(&root);
        fault::fail_commit_step(Some(1));
        assert!(apply_verified(&verified).is_err());
        fault::fail_commit_step(None);
        assert_eq!(snapshot(&root), before);
        assert_eq!(
            std::fs::read_link(root.join("link")).unwrap(),
            PathBuf::from("a.txt")
        );
        apply_verified(&verified).unwrap();
        assert!(std::fs::symlink_metadata(root.join("link")).is_err());
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "x\na2\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn updating_through_a_symlink_edits_the_target() {
        let (_dir, root) = tree();
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        let text = "*** Begin Patch\n*** Update File: link\n@@\n-a1\n+x\n*** End Patch";
        let verified = verify_patch(&parse_patch(text).unwrap(), &root, None).unwrap();
        assert_eq!(verified.touched_paths(), &[root.join("a.txt")]);
        apply_verified(&verified).unwrap();
        assert_eq!(
            std::fs::read_link(root.join("link")).unwrap(),
            PathBuf::from("a.txt")
        );
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "x\na2\n"
        );
    }

    #[test]
    fn add_then_update_in_one_patch_composes() {
        let (_dir, root) = tree();
        let text = "*** Begin Patch\n*** Add File: n.txt\n+1\n+2\n*** Update File: n.txt\n@@\n-2\n+two\n*** End Patch";
        let verified = verify_patch(&parse_patch(text).unwrap(), &root, None).unwrap();
        apply_verified(&verified).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("n.txt")).unwrap(),
            "1\ntwo\n"
        );
    }

    #[test]
    fn diff_is_unified() {
        let (_dir, root) = tree();
        let text = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a2\n+A2\n*** End Patch";
        let verified = verify_patch(&parse_patch(text).unwrap(), &root, None).unwrap();
        assert_eq!(
            verified.changes()[0].unified_diff(),
            "@@ -1,2 +1,2 @@\n a1\n-a2\n+A2\n"
        );
    }
}
