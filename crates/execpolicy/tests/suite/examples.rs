//! `match` / `not_match` examples are unit tests run when the file loads.

use std::path::Path;

use osprey_execpolicy::LoadError;
use osprey_execpolicy::Policy;
use osprey_execpolicy::TextPosition;
use pretty_assertions::assert_eq;

fn load(source: &str) -> Result<Policy, LoadError> {
    Policy::from_source(Path::new("ex.rules"), source)
}

#[test]
fn examples_as_strings_and_argv_lists_that_hold_load_fine() {
    let result = load(
        r#"
prefix_rule(
    pattern = ["git", ["status", "log"]],
    match = ["git status", ["git", "log", "--oneline"], "git log 'with space'"],
    not_match = ["git push", ["git"], "hg status"],
)
"#,
    );
    assert!(result.is_ok(), "{:?}", result.err());
}

#[test]
fn failing_match_example_names_file_rule_and_example() {
    let err = load("\nprefix_rule(pattern=[\"git\", \"status\"], match=[\"git stash\"])\n")
        .expect_err("should fail");
    match &err {
        LoadError::ExampleNotMatched {
            path,
            position,
            rule,
            example,
        } => {
            assert_eq!(path, Path::new("ex.rules"));
            assert_eq!(*position, Some(TextPosition { line: 2, column: 1 }));
            assert_eq!(rule, r#"["git", "status"]"#);
            assert_eq!(example, "git stash");
        }
        other => panic!("wrong error: {other:?}"),
    }
    let text = err.to_string();
    assert!(text.starts_with("ex.rules:2:1: "), "{text}");
    assert!(text.contains("git stash"), "{text}");
}

#[test]
fn failing_not_match_example_is_an_error() {
    let err = load(r#"prefix_rule(pattern=["git"], not_match=[["git", "push"]])"#)
        .expect_err("should fail");
    match err {
        LoadError::ExampleMatched { rule, example, .. } => {
            assert_eq!(rule, r#"["git"]"#);
            assert_eq!(example, "git push");
        }
        other => panic!("wrong error: {other:?}"),
    }
}

#[test]
fn examples_only_test_their_own_rule() {
    // The second rule would match "git push", but the first rule's not_match is about itself.
    let result = load(
        r#"
prefix_rule(pattern=["git", "status"], not_match=["git push"])
prefix_rule(pattern=["git"], decision="prompt", match=["git push"])
"#,
    );
    assert!(result.is_ok(), "{:?}", result.err());
    // And a match example does not pass because some other rule matches it.
    let result = load(
        r#"
prefix_rule(pattern=["git"])
prefix_rule(pattern=["git", "status"], match=["git push"])
"#,
    );
    assert!(matches!(result, Err(LoadError::ExampleNotMatched { .. })));
}

#[test]
fn examples_resolve_absolute_paths_like_codex() {
    assert!(load(r#"prefix_rule(pattern=["git"], match=["/usr/bin/git status"])"#).is_ok());
    // A host_executable list later in the file already restricts the example.
    let err = load(
        r#"
prefix_rule(pattern=["git"], match=["/opt/git status"])
host_executable(name="git", paths=["/usr/bin/git"])
"#,
    );
    assert!(matches!(err, Err(LoadError::ExampleNotMatched { .. })));
}

#[test]
fn malformed_examples_are_errors() {
    for source in [
        r#"prefix_rule(pattern=["a"], match=[""])"#,
        r#"prefix_rule(pattern=["a"], match=[[]])"#,
        r#"prefix_rule(pattern=["a"], match=["a \"b"])"#,
        r#"prefix_rule(pattern=["a"], match=[1])"#,
        r#"prefix_rule(pattern=["a"], not_match=[["a", 2]])"#,
        r#"prefix_rule(pattern=["a"], match="a")"#,
    ] {
        assert!(
            matches!(load(source), Err(LoadError::Invalid { .. })),
            "{source}"
        );
    }
}
