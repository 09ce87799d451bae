//! Git facts read from `.git` without running git.

use osprey_rollout::{GitInfo, git_info};
use pretty_assertions::assert_eq;
use std::fs;
use std::path::Path;

const SHA_A: &str = "0123456789abcdef0123456789abcdef01234567";
const SHA_B: &str = "89abcdef0123456789abcdef0123456789abcdef";

fn repo(root: &Path) {
    let git = root.join(".git");
    fs::create_dir_all(git.join("refs/heads/feature")).unwrap();
    fs::write(git.join("HEAD"), "ref: refs/heads/feature/x\n").unwrap();
    fs::write(git.join("refs/heads/feature/x"), format!("{SHA_A}\n")).unwrap();
    fs::write(
        git.join("packed-refs"),
        format!("# pack-refs with: peeled fully-peeled sorted\n{SHA_B} refs/heads/main\n"),
    )
    .unwrap();
    fs::write(
        git.join("config"),
        "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://example.com/o/r.git\n\
         \tfetch = +refs/heads/*:refs/remotes/origin/*\n",
    )
    .unwrap();
}

#[test]
fn branch_commit_and_origin_come_from_dot_git_also_from_a_subfolder() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let sub = dir.path().join("src/deep");
    fs::create_dir_all(&sub).unwrap();
    let expected = GitInfo {
        commit_hash: Some(SHA_A.into()),
        branch: Some("feature/x".into()),
        repository_url: Some("https://example.com/o/r.git".into()),
    };
    assert_eq!(git_info(dir.path()), Some(expected.clone()));
    assert_eq!(git_info(&sub), Some(expected));
}

#[test]
fn a_branch_only_in_packed_refs_is_resolved() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let info = git_info(dir.path()).unwrap();
    assert_eq!(info.branch.as_deref(), Some("main"));
    assert_eq!(info.commit_hash.as_deref(), Some(SHA_B));
}

#[test]
fn a_detached_head_has_a_commit_and_no_branch() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    fs::write(dir.path().join(".git/HEAD"), format!("{SHA_B}\n")).unwrap();
    let info = git_info(dir.path()).unwrap();
    assert_eq!(info.branch, None);
    assert_eq!(info.commit_hash.as_deref(), Some(SHA_B));
}

#[test]
fn a_linked_worktree_reads_refs_and_config_from_the_main_repository() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main");
    repo(&main);
    let admin = main.join(".git/worktrees/wt");
    fs::create_dir_all(&admin).unwrap();
    fs::write(admin.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(admin.join("commondir"), "../..\n").unwrap();
    let worktree = dir.path().join("wt");
    fs::create_dir_all(&worktree).unwrap();
    fs::write(worktree.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
    let info = git_info(&worktree).unwrap();
    assert_eq!(
        info,
        GitInfo {
            commit_hash: Some(SHA_B.into()),
            branch: Some("main".into()),
            repository_url: Some("https://example.com/o/r.git".into()),
        }
    );
}

#[test]
fn an_unborn_branch_has_a_name_but_no_commit() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/trunk\n").unwrap();
    let info = git_info(dir.path()).unwrap();
    assert_eq!(info.branch.as_deref(), Some("trunk"));
    assert_eq!(info.commit_hash, None);
    assert_eq!(info.repository_url, None);
}
