//! A short listing of a project's files for the start of a conversation.
//!
//! Small models do not explore before they act: asked where a setting lives, the embedded
//! model guessed a file name and read a file that did not exist. Showing the first levels of
//! the tree up front removes that guess. The walk honours `.gitignore`, skips `.git` but not
//! other hidden entries (asked to edit `.github/workflows/ci.yml`, the model was told the
//! directory was empty), visits names in order, and stops at a fixed count so a huge
//! repository costs no more than a small one.

use std::path::Path;

/// Relative paths of the files and directories under `root` down to `max_depth` levels,
/// directories ending in `/`, at most `max_entries` of them, in name order (depth-first).
/// The second value is true when the listing was cut short.
pub fn project_overview(root: &Path, max_depth: usize, max_entries: usize) -> (Vec<String>, bool) {
    let walker = ignore::WalkBuilder::new(root)
        .max_depth(Some(max_depth))
        .sort_by_file_name(|a, b| a.cmp(b))
        .require_git(false)
        .hidden(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut entries = Vec::new();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() == max_entries {
            return (entries, true);
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let mut name = relative.display().to_string();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            name.push('/');
        }
        entries.push(name);
    }
    (entries, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn lists_two_levels_with_hidden_entries_but_without_git_or_ignored_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in [
            "deploy/service.toml",
            "src/app/main.py",
            "README.md",
            ".git/HEAD",
            ".github/workflows/ci.yml",
            "build/out.o",
        ] {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        let (entries, cut) = project_overview(root, 2, 50);
        assert_eq!(
            entries,
            [
                ".github/",
                ".github/workflows/",
                ".gitignore",
                "README.md",
                "deploy/",
                "deploy/service.toml",
                "src/",
                "src/app/"
            ]
        );
        assert!(!cut);
        let (entries, cut) = project_overview(root, 2, 2);
        assert_eq!(entries, [".github/", ".github/workflows/"]);
        assert!(cut);
    }
}
