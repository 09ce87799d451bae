//! The virtual CLI's contract: exit codes, output texts, stdin.

use std::ffi::OsString;

use pretty_assertions::assert_eq;

use super::common::{run_ours, run_ours_args};

fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("f.txt"), "a\nb\n").unwrap();
    (dir, root)
}

#[test]
fn no_input_prints_usage_and_exits_2() {
    let (_d, root) = tree();
    let run = run_ours_args(&[], b"", &root);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with("Usage: apply_patch 'PATCH'"),
        "{}",
        run.stderr
    );
}

#[test]
fn two_arguments_exit_2() {
    let (_d, root) = tree();
    let run = run_ours_args(&[OsString::from("a"), OsString::from("b")], b"", &root);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("exactly one argument"),
        "{}",
        run.stderr
    );
}

#[test]
fn patch_on_stdin_is_applied() {
    let (_d, root) = tree();
    let patch = b"*** Begin Patch\n*** Add File: s.txt\n+hi\n*** End Patch\n";
    let run = run_ours_args(&[], patch, &root);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "Success. Updated the following files:\nA s.txt\n"
    );
    assert_eq!(std::fs::read_to_string(root.join("s.txt")).unwrap(), "hi\n");
}

#[test]
fn missing_lines_message_names_absolute_path_and_lines() {
    let (_d, root) = tree();
    let run = run_ours(
        "*** Begin Patch\n*** Update File: f.txt\n@@\n-zzz\n-yyy\n+x\n*** End Patch",
        &root,
    );
    assert_eq!(run.code, 1);
    let expected = format!(
        "Failed to find expected lines in {}:\nzzz\nyyy\n",
        root.join("f.txt").display()
    );
    assert!(run.stderr.starts_with(&expected), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn invalid_patch_message() {
    let (_d, root) = tree();
    let run = run_ours("nonsense", &root);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "Invalid patch: line 1: expected '*** Begin Patch' as the first line, found 'nonsense'\n"
    );
}

#[test]
fn move_shows_new_path_as_given() {
    let (_d, root) = tree();
    let run = run_ours(
        "*** Begin Patch\n*** Update File: ./f.txt\n*** Move to: sub/../g.txt\n@@\n-a\n+A\n*** End Patch",
        &root,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "Success. Updated the following files:\nM sub/../g.txt\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("g.txt")).unwrap(),
        "A\nb\n"
    );
}

#[test]
fn absolute_paths_inside_cwd_are_accepted() {
    let (_d, root) = tree();
    let abs = root.join("f.txt");
    let run = run_ours(
        &format!(
            "*** Begin Patch\n*** Delete File: {}\n*** End Patch",
            abs.display()
        ),
        &root,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!abs.exists());
}

#[test]
fn absolute_path_outside_cwd_is_refused() {
    let (_d, root) = tree();
    let other = tempfile::tempdir().unwrap();
    let target = other.path().join("x.txt");
    let run = run_ours(
        &format!(
            "*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch",
            target.display()
        ),
        &root,
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("outside the allowed directories"),
        "{}",
        run.stderr
    );
    assert!(!target.exists());
}

#[test]
fn explicit_roots_allow_a_sibling_directory() {
    let (_d, root) = tree();
    let other = tempfile::tempdir().unwrap();
    let other_root = std::fs::canonicalize(other.path()).unwrap();
    let target = other_root.join("x.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch",
        target.display()
    );
    let mut out = Vec::new();
    let mut err = Vec::new();
    let roots = [root.clone(), other_root];
    let code = osprey_apply_patch::run_cli_with_roots(
        &[OsString::from(patch)],
        &mut &b""[..],
        &mut out,
        &mut err,
        &root,
        Some(&roots),
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    assert_eq!(std::fs::read_to_string(target).unwrap(), "x\n");
}
