//! Path resolution for safety checks: `..` and symlinks are resolved the way
//! the operating system would before a path is compared with the allowed
//! roots, and the resolved path is the one written, so what is checked is
//! what is touched.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::ApplyError;
use crate::fs::{EntryKind, PatchFileSystem};

/// Resolves `given` against `cwd`. Every existing ancestor is canonicalised
/// (following symlinks and `..` as the OS does); components that do not exist
/// yet are appended lexically. The final component is followed only when
/// `follow_final` is set and it is a symlink (by canonicalising the link).
pub(crate) fn resolve(
    fs: &dyn PatchFileSystem,
    cwd: &Path,
    given: &Path,
    follow_final: bool,
) -> Result<PathBuf, ApplyError> {
    let invalid = |reason| ApplyError::InvalidPath {
        given: given.to_path_buf(),
        reason,
    };
    if given.as_os_str().is_empty() {
        return Err(invalid("the path is empty"));
    }
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        cwd.join(given)
    };
    let Some(Component::Normal(name)) = joined.components().next_back() else {
        return Err(invalid("the path must end in a file name"));
    };
    let parent = joined.parent().unwrap_or(Path::new("/"));
    let full = canonical_prefix(fs, parent)
        .map_err(|e| ApplyError::io(parent, "resolve", e))?
        .join(name);
    if follow_final
        && fs
            .entry(&full)
            .is_ok_and(|kind| kind == Some(EntryKind::Symlink))
        && let Ok(target) = fs.canonicalize(&full)
    {
        return Ok(target);
    }
    Ok(full)
}

/// Canonicalises the longest existing prefix of `path` and appends the rest.
pub(crate) fn canonical_prefix(fs: &dyn PatchFileSystem, path: &Path) -> io::Result<PathBuf> {
    match fs.canonicalize(path) {
        Ok(p) => return Ok(p),
        Err(e) if is_missing(&e) => {}
        Err(e) => return Err(e),
    }
    let Some(last) = path.components().next_back() else {
        return Ok(path.to_path_buf());
    };
    let Some(parent) = path.parent() else {
        return Ok(path.to_path_buf());
    };
    let mut base = canonical_prefix(fs, parent)?;
    match last {
        Component::Normal(name) => base.push(name),
        Component::ParentDir => {
            base.pop();
        }
        Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
    }
    Ok(base)
}

fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// Canonicalised allowed roots.
pub(crate) fn canonical_roots(fs: &dyn PatchFileSystem, roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .map(|r| canonical_prefix(fs, r).unwrap_or_else(|_| r.clone()))
        .collect()
}

/// Checks that `resolved` lies under one of `roots` (when roots are given).
pub(crate) fn check_roots(
    given: &Path,
    resolved: &Path,
    roots: Option<&[PathBuf]>,
) -> Result<(), ApplyError> {
    match roots {
        None => Ok(()),
        Some(roots) if roots.iter().any(|root| resolved.starts_with(root)) => Ok(()),
        Some(roots) => Err(ApplyError::OutsideRoots {
            given: given.to_path_buf(),
            resolved: resolved.to_path_buf(),
            roots: roots.to_vec(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::LocalFileSystem;
    use pretty_assertions::assert_eq;

    #[test]
    fn dotdot_is_resolved_before_checking() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let got = resolve(
            &LocalFileSystem,
            &root.join("sub"),
            Path::new("../x.txt"),
            false,
        )
        .unwrap();
        assert_eq!(got, root.join("x.txt"));
        let got = resolve(
            &LocalFileSystem,
            &root,
            Path::new("new/dir/../../../y.txt"),
            false,
        )
        .unwrap();
        assert_eq!(got, root.parent().unwrap().join("y.txt"));
        assert!(check_roots(Path::new("y"), &got, Some(&[root])).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directory_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let out = std::fs::canonicalize(outside.path()).unwrap();
        std::os::unix::fs::symlink(&out, root.join("link")).unwrap();
        let got = resolve(&LocalFileSystem, &root, Path::new("link/f.txt"), false).unwrap();
        assert_eq!(got, out.join("f.txt"));
        assert!(check_roots(Path::new("link/f.txt"), &got, Some(&[root])).is_err());
    }

    #[test]
    fn file_name_is_required() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            resolve(&LocalFileSystem, dir.path(), Path::new(""), false),
            Err(ApplyError::InvalidPath { .. })
        ));
        assert!(matches!(
            resolve(&LocalFileSystem, dir.path(), Path::new("a/.."), false),
            Err(ApplyError::InvalidPath { .. })
        ));
    }
}
