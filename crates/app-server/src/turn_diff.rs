//! The turn's unified diff (`turn/diff/updated`): every file a patch touched in this turn,
//! from its content before the turn's first change to it, to what is on disk now.
//!
//! A file's "before" is read when the first `fileChange` item naming it starts (before the
//! patch is applied, as core emits the item first). The diff is git-style: `diff --git`
//! headers, `new file mode` / `deleted file mode` for adds and deletes, paths relative to
//! the thread's working directory when they lie inside it, else absolute (`a//abs/path`, as
//! Codex writes them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use similar::TextDiff;

#[derive(Debug, Default)]
pub struct TurnDiff {
    /// Content before the turn touched the file; `None`: it did not exist.
    before: BTreeMap<PathBuf, Option<String>>,
}

impl TurnDiff {
    /// Remembers the current content of `path` unless this turn already did.
    pub fn track(&mut self, path: &Path) {
        if !self.before.contains_key(path) {
            self.before.insert(path.to_path_buf(), read(path));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.before.is_empty()
    }

    /// The diff of every tracked file against what is on disk now (empty when nothing
    /// differs).
    pub fn unified(&self, cwd: &Path) -> String {
        let mut out = String::new();
        for (path, before) in &self.before {
            let after = read(path);
            if &after == before {
                continue;
            }
            let name = display_path(path, cwd);
            out.push_str(&format!("diff --git a/{name} b/{name}\n"));
            match (before, &after) {
                (None, Some(_)) => out.push_str("new file mode 100644\n"),
                (Some(_), None) => out.push_str("deleted file mode 100644\n"),
                _ => {}
            }
            let old_header = before
                .as_ref()
                .map_or_else(|| "/dev/null".to_owned(), |_| format!("a/{name}"));
            let new_header = after
                .as_ref()
                .map_or_else(|| "/dev/null".to_owned(), |_| format!("b/{name}"));
            let old = before.as_deref().unwrap_or("");
            let new = after.as_deref().unwrap_or("");
            let diff = TextDiff::from_lines(old, new);
            let body = diff
                .unified_diff()
                .context_radius(3)
                .header(&old_header, &new_header)
                .to_string();
            out.push_str(&body);
            if !body.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }
}

fn read(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn display_path(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_updates_and_deletes_show_as_one_git_style_diff() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept.txt");
        let gone = dir.path().join("gone.txt");
        let new = dir.path().join("new.txt");
        std::fs::write(&kept, "one\ntwo\n").unwrap();
        std::fs::write(&gone, "bye\n").unwrap();
        let mut diff = TurnDiff::default();
        for path in [&kept, &gone, &new] {
            diff.track(path);
        }
        std::fs::write(&kept, "one\nTWO\n").unwrap();
        std::fs::remove_file(&gone).unwrap();
        std::fs::write(&new, "hi\n").unwrap();
        // Tracking again keeps the first "before".
        diff.track(&kept);
        let text = diff.unified(dir.path());
        assert!(
            text.contains("diff --git a/kept.txt b/kept.txt\n--- a/kept.txt\n+++ b/kept.txt\n"),
            "{text}"
        );
        assert!(text.contains("-two\n+TWO\n"), "{text}");
        assert!(text.contains("diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n"), "{text}");
        assert!(text.contains("diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n"), "{text}");
        assert!(text.contains("+hi\n"), "{text}");
    }

    #[test]
    fn an_unchanged_file_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("same.txt");
        std::fs::write(&path, "x\n").unwrap();
        let mut diff = TurnDiff::default();
        diff.track(&path);
        assert_eq!(diff.unified(dir.path()), "");
    }
}
