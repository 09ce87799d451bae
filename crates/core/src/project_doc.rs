//! Project instructions: `AGENTS.md` files, gathered once when a thread starts.
//!
//! Order, outermost first: the global file in `$OSPREY_HOME`, then one file per directory from
//! the project root (the nearest ancestor with `.git`, else the cwd) down to the cwd. In each
//! directory `AGENTS.override.md` wins over `AGENTS.md`, which wins over the configured
//! fallback names. The concatenation is capped at `project_doc_max_bytes`, cut at a character
//! boundary with a note saying so. The result is sent to the model as a user-context message.

use std::path::{Path, PathBuf};

pub const DEFAULT_FILENAME: &str = "AGENTS.md";
pub const OVERRIDE_FILENAME: &str = "AGENTS.override.md";

/// Where the project's files are read: this machine, or an exec server's (the global
/// file in `$OSPREY_HOME` is always read here).
pub trait DocFiles {
    /// Whether something (a file or a directory) is at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// The bytes of the regular file at `path`; `None` when it is not one or unreadable.
    fn read_file(&self, path: &Path) -> Option<Vec<u8>>;
}

/// This machine's files.
pub struct LocalDocFiles;

impl DocFiles for LocalDocFiles {
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn read_file(&self, path: &Path) -> Option<Vec<u8>> {
        if !path.is_file() {
            return None;
        }
        std::fs::read(path).ok()
    }
}

/// The instructions found, ready for the model, or `None` when there are none.
pub fn load_project_instructions(
    home: &Path,
    cwd: &Path,
    fallback_names: &[String],
    max_bytes: usize,
) -> Option<String> {
    load_project_instructions_in(&LocalDocFiles, home, cwd, fallback_names, max_bytes)
}

/// As [`load_project_instructions`], with the project's files read through `project`.
pub fn load_project_instructions_in(
    project: &dyn DocFiles,
    home: &Path,
    cwd: &Path,
    fallback_names: &[String],
    max_bytes: usize,
) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(text) = read_doc_in(&LocalDocFiles, home, &[]) {
        parts.push(text);
    }
    for dir in directories_root_to_cwd(project, cwd) {
        if let Some(text) = read_doc_in(project, &dir, fallback_names) {
            parts.push(text);
        }
    }
    if parts.is_empty() || max_bytes == 0 {
        return None;
    }
    let mut joined = parts.join("\n\n");
    if joined.len() > max_bytes {
        let mut cut = max_bytes;
        while !joined.is_char_boundary(cut) {
            cut -= 1;
        }
        joined.truncate(cut);
        joined.push_str(&format!(
            "\n\n[project instructions cut at {max_bytes} bytes (project_doc_max_bytes)]"
        ));
    }
    Some(joined)
}

/// The message text the model gets.
pub fn instructions_message(cwd: &Path, instructions: &str) -> String {
    format!(
        "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{instructions}\n</INSTRUCTIONS>",
        cwd.display()
    )
}

fn read_doc_in(files: &dyn DocFiles, dir: &Path, fallback_names: &[String]) -> Option<String> {
    let names = [OVERRIDE_FILENAME, DEFAULT_FILENAME]
        .into_iter()
        .map(str::to_string)
        .chain(fallback_names.iter().cloned());
    for name in names {
        let path = dir.join(&name);
        if let Some(bytes) = files.read_file(&path) {
            let text = String::from_utf8_lossy(&bytes).trim().to_string();
            if !text.is_empty() {
                return Some(text);
            }
        }
    }
    None
}

/// The project root (nearest ancestor with `.git`) and every directory below it down to
/// `cwd`, root first. Without a repository, just `cwd`.
fn directories_root_to_cwd(files: &dyn DocFiles, cwd: &Path) -> Vec<PathBuf> {
    let root = cwd.ancestors().find(|d| files.exists(&d.join(".git")));
    match root {
        None => vec![cwd.to_path_buf()],
        Some(root) => {
            let mut dirs: Vec<PathBuf> = cwd
                .ancestors()
                .take_while(|d| d.starts_with(root))
                .map(Path::to_path_buf)
                .collect();
            dirs.reverse();
            dirs
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn hierarchy_is_root_first_and_override_wins() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        let sub = repo.path().join("a/b");
        write(&home.path().join("AGENTS.md"), "global");
        write(&repo.path().join("AGENTS.md"), "root");
        write(&repo.path().join("a/AGENTS.md"), "a plain");
        write(&repo.path().join("a/AGENTS.override.md"), "a override");
        write(&sub.join("AGENTS.md"), "b");
        let text = load_project_instructions(home.path(), &sub, &[], 32 * 1024).unwrap();
        assert_eq!(text, "global\n\nroot\n\na override\n\nb");
    }

    #[test]
    fn fallback_names_are_used_when_agents_md_is_missing() {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("CLAUDE.md"), "fallback");
        let text = load_project_instructions(home.path(), dir.path(), &["CLAUDE.md".into()], 1000);
        assert_eq!(text.as_deref(), Some("fallback"));
    }

    #[test]
    fn cap_cuts_with_a_note() {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("AGENTS.md"), &"é".repeat(100));
        let text = load_project_instructions(home.path(), dir.path(), &[], 51).unwrap();
        assert!(text.starts_with(&"é".repeat(25)));
        assert!(text.contains("cut at 51 bytes"));
    }

    #[test]
    fn nothing_found_is_none() {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            load_project_instructions(home.path(), dir.path(), &[], 100),
            None
        );
    }
}
