//! Reading the repository a thread starts in straight from `.git`, without running `git`.
//!
//! Starting a process per thread costs more than reading three small files, and a broken or
//! missing `git` must never stop a session. Only what the header needs is read: `HEAD`, the
//! branch's ref (loose file or `packed-refs`) and `config`'s `[remote "origin"] url`. Linked
//! worktrees and submodules (a `.git` *file* pointing elsewhere, plus `commondir`) are
//! followed. Anything unreadable simply leaves that field empty.

use crate::GitInfo;
use std::fs;
use std::path::{Path, PathBuf};

/// Git facts for the repository containing `cwd`, or `None` outside a repository.
pub fn git_info(cwd: &Path) -> Option<GitInfo> {
    let git_dir = find_git_dir(cwd)?;
    let common_dir = common_dir(&git_dir);
    let head = fs::read_to_string(git_dir.join("HEAD")).ok();
    let (commit_hash, branch) = match head.as_deref().map(str::trim) {
        Some(head) => match head.strip_prefix("ref:") {
            Some(reference) => {
                let reference = reference.trim();
                let branch = reference
                    .strip_prefix("refs/heads/")
                    .unwrap_or(reference)
                    .to_string();
                (resolve_ref(&git_dir, &common_dir, reference), Some(branch))
            }
            None if is_object_id(head) => (Some(head.to_string()), None),
            None => (None, None),
        },
        None => (None, None),
    };
    let repository_url = fs::read_to_string(common_dir.join("config"))
        .ok()
        .and_then(|config| origin_url(&config));
    Some(GitInfo {
        commit_hash,
        branch,
        repository_url,
    })
}

/// The nearest `.git` directory at or above `cwd`, following `gitdir:` files.
fn find_git_dir(cwd: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Some(dot_git);
        }
        let text = fs::read_to_string(&dot_git).ok()?;
        let target = text.trim().strip_prefix("gitdir:")?.trim();
        return Some(dir.join(target));
    }
    None
}

/// Where shared refs and config live: the main repository's `.git` for a linked worktree.
fn common_dir(git_dir: &Path) -> PathBuf {
    match fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) if !text.trim().is_empty() => git_dir.join(text.trim()),
        _ => git_dir.to_path_buf(),
    }
}

fn resolve_ref(git_dir: &Path, common_dir: &Path, reference: &str) -> Option<String> {
    let mut reference = reference.to_string();
    // Symbolic refs may point at other refs; a short chain is plenty, and a loop ends here.
    for _ in 0..5 {
        if reference.contains("..") {
            return None;
        }
        let loose = [git_dir, common_dir]
            .iter()
            .find_map(|dir| fs::read_to_string(dir.join(&reference)).ok());
        match loose.as_deref().map(str::trim) {
            Some(text) => match text.strip_prefix("ref:") {
                Some(next) => reference = next.trim().to_string(),
                None if is_object_id(text) => return Some(text.to_string()),
                None => return None,
            },
            None => return packed_ref(common_dir, &reference),
        }
    }
    None
}

fn packed_ref(common_dir: &Path, reference: &str) -> Option<String> {
    let packed = fs::read_to_string(common_dir.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (hash, name) = line.split_once(' ')?;
        (name.trim() == reference && is_object_id(hash)).then(|| hash.to_string())
    })
}

fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `url` of `[remote "origin"]` in a git config file.
fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let header = line.trim_start_matches('[').split(']').next().unwrap_or("");
            let mut words = header.split_whitespace();
            let section = words.next().unwrap_or("");
            let name = words.next().unwrap_or("").trim_matches('"');
            in_origin = section.eq_ignore_ascii_case("remote") && name == "origin";
            continue;
        }
        if !in_origin || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("url")
        {
            let value = value.trim().trim_matches('"');
            if !value.is_empty() {
                return Some(value.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_url_is_found_among_other_sections() {
        let config = "[core]\n\turl = no\n[remote \"upstream\"]\n\turl = wrong\n\
                      [remote \"origin\"]\n\t# comment\n\tfetch = +refs/heads/*\n\
                      \tURL = \"git@example.com:o/r.git\"\n";
        assert_eq!(
            origin_url(config).as_deref(),
            Some("git@example.com:o/r.git")
        );
        assert_eq!(origin_url("[core]\n"), None);
    }

    #[test]
    fn object_ids_are_sha1_or_sha256_hex() {
        assert!(is_object_id(&"a".repeat(40)));
        assert!(is_object_id(&"0".repeat(64)));
        assert!(!is_object_id("ref: refs/heads/main"));
        assert!(!is_object_id(&"g".repeat(40)));
    }
}
