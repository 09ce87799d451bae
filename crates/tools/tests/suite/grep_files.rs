//! grep_files: ordering, ignore rules, globs, limits and errors.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use osprey_tools::{FileToolError, GrepFilesArgs, grep_files};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

fn args(pattern: &str) -> GrepFilesArgs {
    GrepFilesArgs {
        pattern: pattern.into(),
        include: None,
        path: None,
        limit: None,
    }
}

/// Write `contents` to `root/name` with a modification time `age_secs` seconds in the past.
fn write_aged(root: &Path, name: &str, contents: &str, age_secs: u64) -> PathBuf {
    let path = root.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, contents).unwrap();
    let file = File::options().write(true).open(&path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(age_secs))
        .unwrap();
    path
}

fn repo() -> TempDir {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    write_aged(root, "old.rs", "fn needle() {}\n", 300);
    write_aged(root, "src/new.rs", "// needle here\n", 10);
    write_aged(root, "src/middle.ts", "const needle = 1;\n", 100);
    write_aged(root, "src/none.rs", "nothing to see\n", 5);
    write_aged(root, "target/built.rs", "needle in ignored dir\n", 1);
    write_aged(root, ".hidden.rs", "needle in hidden file\n", 1);
    write_aged(root, "data.bin", "needle\0binary", 1);
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    dir
}

fn lines(root: &Path, names: &[&str]) -> String {
    names
        .iter()
        .map(|n| root.join(n).display().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn returns_matching_paths_newest_first_skipping_ignored_hidden_and_binary() {
    let dir = repo();
    assert_eq!(
        grep_files(&args("needle"), dir.path()).unwrap(),
        lines(dir.path(), &["src/new.rs", "src/middle.ts", "old.rs"])
    );
}

#[test]
fn include_glob_limits_the_files_searched() {
    let dir = repo();
    let rs = GrepFilesArgs {
        include: Some("*.rs".into()),
        ..args("needle")
    };
    // As with ripgrep's --glob, a file the glob names explicitly is searched even when
    // hidden; gitignored directories stay skipped.
    assert_eq!(
        grep_files(&rs, dir.path()).unwrap(),
        lines(dir.path(), &[".hidden.rs", "src/new.rs", "old.rs"])
    );
    let braces = GrepFilesArgs {
        include: Some("*.{ts,tsx}".into()),
        ..args("needle")
    };
    assert_eq!(
        grep_files(&braces, dir.path()).unwrap(),
        lines(dir.path(), &["src/middle.ts"])
    );
}

#[test]
fn limit_keeps_the_newest() {
    let dir = repo();
    let one = GrepFilesArgs {
        limit: Some(1),
        ..args("needle")
    };
    assert_eq!(
        grep_files(&one, dir.path()).unwrap(),
        lines(dir.path(), &["src/new.rs"])
    );
}

#[test]
fn path_may_be_relative_to_cwd_or_a_single_file() {
    let dir = repo();
    let sub = GrepFilesArgs {
        path: Some("src".into()),
        ..args("needle")
    };
    assert_eq!(
        grep_files(&sub, dir.path()).unwrap(),
        lines(dir.path(), &["src/new.rs", "src/middle.ts"])
    );
    let file = dir.path().join("old.rs");
    let single = GrepFilesArgs {
        path: Some(file.display().to_string()),
        ..args("fn \\w+")
    };
    assert_eq!(
        grep_files(&single, Path::new("/")).unwrap(),
        file.display().to_string()
    );
}

#[test]
fn regex_syntax_works_and_no_match_is_said_plainly() {
    let dir = repo();
    assert_eq!(
        grep_files(&args(r"const\s+needle\s*="), dir.path()).unwrap(),
        lines(dir.path(), &["src/middle.ts"])
    );
    assert_eq!(
        grep_files(&args("haystack"), dir.path()).unwrap(),
        "No matches found."
    );
}

#[test]
fn invalid_regex_is_a_plain_error() {
    let dir = repo();
    let err = grep_files(&args("fn foo("), dir.path()).unwrap_err();
    assert!(matches!(err, FileToolError::InvalidRegex { .. }));
    let text = err.to_string();
    assert!(
        text.starts_with("the pattern \"fn foo(\" is not a valid regular expression: "),
        "{text}"
    );
    assert!(
        text.ends_with("with a backslash to match them literally"),
        "{text}"
    );
}

#[test]
fn invalid_glob_missing_path_and_bad_numbers_are_errors() {
    let dir = repo();
    let glob = GrepFilesArgs {
        include: Some("[abc".into()),
        ..args("needle")
    };
    assert!(
        grep_files(&glob, dir.path())
            .unwrap_err()
            .to_string()
            .starts_with("the include glob \"[abc\" is not valid: ")
    );
    let missing = GrepFilesArgs {
        path: Some("nowhere".into()),
        ..args("needle")
    };
    assert!(
        grep_files(&missing, dir.path())
            .unwrap_err()
            .to_string()
            .starts_with(&format!(
                "{} does not exist",
                dir.path().join("nowhere").display()
            ))
    );
    let zero = GrepFilesArgs {
        limit: Some(0),
        ..args("needle")
    };
    assert_eq!(
        grep_files(&zero, dir.path()).unwrap_err().to_string(),
        "invalid `limit` for grep_files: must be at least 1"
    );
    assert!(
        grep_files(&args("  "), dir.path())
            .unwrap_err()
            .to_string()
            .contains("the pattern is empty")
    );
}

#[test]
fn huge_limits_are_capped_not_refused() {
    let dir = repo();
    let huge = GrepFilesArgs {
        limit: Some(u64::MAX),
        ..args("needle")
    };
    assert_eq!(grep_files(&huge, dir.path()).unwrap().lines().count(), 3);
}
