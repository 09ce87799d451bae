//! What the UI reads from the working directory itself: `git diff` for `/diff` (through
//! `osprey-process`, the one crate that spawns programs) and the AGENTS.md files for
//! `/status`. The model's commands never come here; they go through the app server.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use osprey_process::{ExecExpiration, ExecRequest, OutputCaps, run_to_completion};

/// How long one git command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(20);

struct GitOutput {
    code: Option<i32>,
    text: String,
}

async fn git(cwd: &str, args: &[&str]) -> Result<GitOutput, String> {
    let env: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let request = ExecRequest::new("git", cwd)
        .args(
            ["--no-pager", "-c", "core.quotepath=off"]
                .iter()
                .chain(args)
                .copied(),
        )
        .envs(env);
    let outcome = run_to_completion(
        request,
        ExecExpiration::timeout(GIT_TIMEOUT),
        OutputCaps::default(),
        None,
    )
    .await
    .map_err(|e| format!("could not run git in {cwd}: {e}; is git installed?"))?;
    if outcome.timed_out {
        return Err(format!(
            "git {} in {cwd} took longer than {}s; run it in a shell instead",
            args.join(" "),
            GIT_TIMEOUT.as_secs()
        ));
    }
    Ok(GitOutput {
        code: outcome.exit_code,
        text: outcome.output_lossy(),
    })
}

/// The working tree's changes against HEAD (against the index in a repository without
/// commits) followed by every untracked, not ignored file as an added file.
pub async fn diff(cwd: &str) -> Result<String, String> {
    let inside = git(cwd, &["rev-parse", "--is-inside-work-tree"]).await?;
    if inside.code != Some(0) {
        return Err(format!(
            "/diff needs a git repository, and {cwd} is not inside one"
        ));
    }
    let has_head = git(cwd, &["rev-parse", "--verify", "--quiet", "HEAD"])
        .await?
        .code
        == Some(0);
    let tracked = if has_head {
        git(cwd, &["diff", "--no-color", "HEAD"]).await?
    } else {
        git(cwd, &["diff", "--no-color"]).await?
    };
    if tracked.code != Some(0) {
        return Err(format!("git diff failed in {cwd}: {}", tracked.text.trim()));
    }
    let mut text = tracked.text;
    let untracked = git(cwd, &["ls-files", "--others", "--exclude-standard", "-z"]).await?;
    for file in untracked.text.split('\0').filter(|f| !f.is_empty()) {
        // Exit code 1 means "they differ", which a new file always does.
        let added = git(
            cwd,
            &["diff", "--no-color", "--no-index", "--", "/dev/null", file],
        )
        .await?;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&added.text);
    }
    Ok(text)
}

/// The AGENTS.md files that apply in `cwd`: from the repository root (the nearest folder
/// with `.git`) down to `cwd`, an `AGENTS.override.md` taking the place of its folder's
/// AGENTS.md.
pub fn agents_files(cwd: &Path) -> Vec<String> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            break;
        }
    }
    // Without a repository only `cwd` itself counts.
    if !dirs.last().is_some_and(|d| d.join(".git").exists()) {
        dirs.truncate(1);
    }
    dirs.reverse();
    dirs.into_iter()
        .filter_map(|dir| {
            ["AGENTS.override.md", "AGENTS.md"]
                .iter()
                .map(|name| dir.join(name))
                .find(|p| p.is_file())
        })
        .map(|p| p.display().to_string())
        .collect()
}

/// Files `@` completion offers: at most this many.
const MAX_FILES: usize = 50_000;

/// The files under `cwd` as relative paths, skipping what `.gitignore` (and `.ignore`,
/// and git's global excludes) leave out and hidden files, sorted.
pub fn repository_files(cwd: &Path) -> Vec<String> {
    let mut files: Vec<String> = ignore::WalkBuilder::new(cwd)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|entry| {
            entry
                .path()
                .strip_prefix(cwd)
                .ok()
                .map(|p| p.display().to_string())
        })
        .take(MAX_FILES)
        .collect();
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_files_leave_out_what_gitignore_ignores() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("src")).unwrap();
        std::fs::create_dir_all(root.path().join("target")).unwrap();
        std::fs::write(root.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.path().join("src/main.rs"), "").unwrap();
        std::fs::write(root.path().join("target/big.o"), "").unwrap();
        assert_eq!(
            repository_files(root.path()),
            vec!["src/main.rs".to_owned()]
        );
    }

    #[test]
    fn agents_files_go_from_the_repository_root_down_and_overrides_win() {
        let root = tempfile::tempdir().unwrap();
        let sub = root.path().join("crates/x");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir(root.path().join(".git")).unwrap();
        std::fs::write(root.path().join("AGENTS.md"), "root").unwrap();
        std::fs::write(sub.join("AGENTS.md"), "sub").unwrap();
        std::fs::write(sub.join("AGENTS.override.md"), "override").unwrap();
        assert_eq!(
            agents_files(&sub),
            vec![
                root.path().join("AGENTS.md").display().to_string(),
                sub.join("AGENTS.override.md").display().to_string(),
            ]
        );
    }
}
