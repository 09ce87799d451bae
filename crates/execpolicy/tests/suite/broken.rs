//! Files that must not load, and the positions their errors point at.

use std::path::Path;

use osprey_execpolicy::LoadError;
use osprey_execpolicy::Policy;
use osprey_execpolicy::TextPosition;
use pretty_assertions::assert_eq;

fn error_of(source: &str) -> LoadError {
    match Policy::from_source(Path::new("bad.rules"), source) {
        Ok(_) => panic!("should not load: {source}"),
        Err(err) => err,
    }
}

fn invalid_at(source: &str) -> (Option<TextPosition>, String) {
    match error_of(source) {
        LoadError::Invalid {
            path,
            position,
            message,
        } => {
            assert_eq!(path, Path::new("bad.rules"));
            (position, message)
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn syntax_error_reports_file_line_and_column() {
    let (position, _) = invalid_at("prefix_rule(pattern=[\"a\"])\nx = 1 +\n");
    assert_eq!(position, Some(TextPosition { line: 2, column: 8 }));
    let text = error_of("prefix_rule(pattern=[\"a\"])\nx = 1 +\n").to_string();
    assert!(text.starts_with("bad.rules:2:8: "), "{text}");
}

#[test]
fn wrong_argument_types_are_errors_at_the_call() {
    for (source, column) in [
        (r#"prefix_rule(pattern="git")"#, 1),
        (r#"prefix_rule(pattern=("git",))"#, 1),
        (r#"prefix_rule(pattern=["git", 3])"#, 1),
        (r#"prefix_rule(pattern=["git", ["a", None]])"#, 1),
        (r#"prefix_rule(pattern=["git"], decision=None)"#, 1),
        (r#"prefix_rule(pattern=["git"], justification=3)"#, 1),
        (
            r#"_ = prefix_rule(pattern=["git"], canonical_matching="yes")"#,
            5,
        ),
    ] {
        let (position, _) = invalid_at(source);
        assert_eq!(position, Some(TextPosition { line: 1, column }), "{source}");
    }
}

#[test]
fn unknown_decision_is_named() {
    let (_, message) = invalid_at(r#"prefix_rule(pattern=["git"], decision="deny")"#);
    assert!(message.contains("\"deny\""), "{message}");
    assert!(message.contains("forbidden"), "{message}");
}

#[test]
fn empty_pattern_and_empty_alternatives_are_errors() {
    let (_, message) = invalid_at("prefix_rule(pattern=[])");
    assert!(message.contains("empty"), "{message}");
    let (_, message) = invalid_at(r#"prefix_rule(pattern=["git", []])"#);
    assert!(message.contains("empty"), "{message}");
}

#[test]
fn other_mistakes_are_errors() {
    for source in [
        "prefix_rule()",
        r#"prefix_rule(pattern=["a"], unknown="x")"#,
        r#"prefix_rule(pattern=["a"], justification="   ")"#,
        r#"load("other.star", "x")"#,
        "undefined_function()",
        r#"host_executable(name="git", paths=["git"])"#,
        r#"host_executable(name="git", paths=["/bin/hg"])"#,
        r#"host_executable(name="a/git", paths=[])"#,
        r#"network_rule(host="https://x.com", protocol="https", decision="allow")"#,
        r#"network_rule(host="x.com", protocol="ftp", decision="allow")"#,
        "fail(\"written by hand\")",
    ] {
        invalid_at(source);
    }
}

#[test]
fn a_failing_file_contributes_no_rules() {
    // The first rule evaluated fine, but the file as a whole failed.
    let source = "prefix_rule(pattern=[\"ls\"])\nprefix_rule(pattern=[])\n";
    assert!(Policy::from_source(Path::new("bad.rules"), source).is_err());
}

#[test]
fn unreadable_file_is_a_read_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.rules");
    match Policy::load_files(std::slice::from_ref(&missing)) {
        Err(LoadError::Read { path, .. }) => assert_eq!(path, missing),
        other => panic!("expected Read error, got {other:?}"),
    }
}
