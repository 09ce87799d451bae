//! Path checks shared by the file tools.

use std::path::{Path, PathBuf};

use crate::error::{FileToolError, ToolInputError};
use crate::file_access::{FileAccess, FileMeta};

/// `raw` as an absolute path, or an error that names `field` and, when `cwd` is absolute,
/// suggests `cwd` joined with `raw`.
pub(crate) fn require_absolute(
    tool: &str,
    field: &'static str,
    raw: &str,
    cwd: &Path,
) -> Result<PathBuf, FileToolError> {
    if raw.trim().is_empty() {
        return Err(ToolInputError::invalid(
            tool,
            field,
            "the path is empty; pass the absolute path to use",
        )
        .into());
    }
    let path = PathBuf::from(raw);
    if path.is_absolute() {
        return Ok(path);
    }
    let suggestion = cwd.is_absolute().then(|| cwd.join(&path));
    Err(FileToolError::RelativePath {
        field,
        path: raw.to_string(),
        suggestion,
    })
}

/// `raw` resolved against `cwd` when relative.
pub(crate) fn resolve(raw: &str, cwd: &Path) -> PathBuf {
    let path = Path::new(raw);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// What `path` is, through `fs`, following symlinks. A missing path — or a symlink whose
/// target is missing — is [`FileToolError::NotFound`] with a hint; other failures say they
/// happened while trying to `action` it.
pub(crate) fn stat(
    fs: &dyn FileAccess,
    path: &Path,
    action: &'static str,
) -> Result<FileMeta, FileToolError> {
    let not_found = || FileToolError::NotFound {
        hint: missing_path_hint_in(fs, path),
        path: path.to_path_buf(),
    };
    match fs.metadata(path) {
        Ok(meta) if meta.is_symlink && !meta.is_dir && !meta.is_file => Err(not_found()),
        Ok(meta) => Ok(meta),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(not_found()),
        Err(err) => Err(FileToolError::from_io(action, path.to_path_buf(), err)),
    }
}

/// A hint for a missing path: the nearest existing ancestor (as `fs` sees it), so the model
/// can look there.
pub(crate) fn missing_path_hint_in(fs: &dyn FileAccess, path: &Path) -> Option<String> {
    let ancestor = path
        .ancestors()
        .skip(1)
        .find(|p| fs.metadata(p).is_ok_and(|m| m.is_dir))?;
    Some(format!(
        "the closest existing directory is {}; call list_dir on it to see what is there",
        ancestor.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn relative_path_suggests_the_cwd_joined_form() {
        let err = require_absolute("read_file", "file_path", "src/lib.rs", Path::new("/repo"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "`file_path` must be an absolute path, but \"src/lib.rs\" is relative; relative to \
             the working directory that is \"/repo/src/lib.rs\", so pass that instead"
        );
    }
}
