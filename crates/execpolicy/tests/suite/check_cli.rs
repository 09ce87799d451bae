//! `run_check` in-process: output shape, exit codes and errors. (The command line of
//! `osprey execpolicy check` is tested in the `cli` crate.)

use std::path::{Path, PathBuf};

use osprey_execpolicy::{CheckRequest, run_check};
use pretty_assertions::assert_eq;

use super::argv;

fn request(rules: &[&str], command: &[&str]) -> CheckRequest {
    CheckRequest {
        rules: rules.iter().map(PathBuf::from).collect(),
        command: argv(command),
        ..CheckRequest::default()
    }
}

fn run(request: &CheckRequest) -> (i32, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run_check(request, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn rules_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn prints_one_json_line_and_exits_zero_even_when_forbidden() {
    let dir = tempfile::tempdir().unwrap();
    let f = rules_file(
        dir.path(),
        "a.rules",
        "prefix_rule(pattern=[\"git\", \"status\"], justification=\"read-only git\")\nprefix_rule(pattern=[\"git\"], decision=\"forbidden\")\n",
    );
    let (code, out, err) = run(&request(&[&f], &["git", "status"]));
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"git\",\"status\"],\"decision\":\"allow\",\"justification\":\"read-only git\"}},{\"prefixRuleMatch\":{\"matchedPrefix\":[\"git\"],\"decision\":\"forbidden\"}}],\"decision\":\"forbidden\"}\n"
    );
    let (code, out, _) = run(&request(&[&f], &["ls"]));
    assert_eq!((code, out.as_str()), (0, "{\"matchedRules\":[]}\n"));
}

#[test]
fn pretty_output_is_indented_json_of_the_same_value() {
    let dir = tempfile::tempdir().unwrap();
    let f = rules_file(dir.path(), "a.rules", "prefix_rule(pattern=[\"ls\"])\n");
    let (_, compact, _) = run(&request(&[&f], &["ls", "-l"]));
    let (code, pretty, _) = run(&CheckRequest {
        pretty: true,
        ..request(&[&f], &["ls", "-l"])
    });
    assert_eq!(code, 0);
    assert!(pretty.lines().count() > 1);
    let a: serde_json::Value = serde_json::from_str(&compact).unwrap();
    let b: serde_json::Value = serde_json::from_str(&pretty).unwrap();
    assert_eq!(a, b);
}

#[test]
fn command_words_may_look_like_flags() {
    let dir = tempfile::tempdir().unwrap();
    let f = rules_file(
        dir.path(),
        "a.rules",
        "prefix_rule(pattern=[\"ls\", \"--pretty\"])\n",
    );
    let (code, out, _) = run(&request(&[&f], &["ls", "--pretty"]));
    assert_eq!(code, 0);
    assert!(out.contains("\"decision\":\"allow\""), "{out}");
}

#[test]
fn load_errors_exit_one_with_the_location_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let good = rules_file(dir.path(), "good.rules", "prefix_rule(pattern=[\"ls\"])\n");
    let bad = rules_file(
        dir.path(),
        "bad.rules",
        "prefix_rule(pattern=[\"ls\"], match=[\"cat\"])\n",
    );
    let (code, out, err) = run(&request(&[&good, &bad], &["ls"]));
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains(&format!("{bad}:1:1")), "{err}");
    assert!(err.contains("cat"), "{err}");
}
