//! What a person reads when something goes wrong is words, never Rust Debug text: each CLI
//! error path below is driven through the real binary and its stderr is scanned for
//! `Some(…)`, `None`, `Ok(…)`/`Err(…)` and `Name { field: … }` struct syntax. Each case also
//! checks that the message names what failed, so an empty stderr cannot pass.

use super::common::*;
use osprey_test_support::*;
use serde_json::json;
use std::path::Path;
use std::process::Output;

/// The Debug fragments no user-facing message may contain; `None` only as a whole word (and
/// not in "None of …").
fn debug_fragments(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for needle in ["Some(", "Ok(", "Err(", "Os {", "kind: "] {
        if text.contains(needle) {
            found.push(needle.to_owned());
        }
    }
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    for (at, _) in text.match_indices("None") {
        let before = text[..at].chars().next_back();
        let after = &text[at + "None".len()..];
        if !is_word(before) && !is_word(after.chars().next()) && !after.starts_with(" of") {
            found.push(format!("None at byte {at}"));
        }
    }
    // `Name { field: …`: an identifier, " { ", then `ident:`.
    for (at, _) in text.match_indices(" { ") {
        let named = text[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        let rest = &text[at + 3..];
        let field_len = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(0);
        if named && field_len > 0 && rest[field_len..].starts_with(':') {
            found.push(format!("struct syntax at byte {at}"));
        }
    }
    found
}

#[test]
fn the_scanner_catches_debug_text_and_passes_words() {
    for debug in [
        "exit code Some(1)",
        "turn aborted (None)",
        "got Err(\"x\")",
        "Ok(())",
        "status RestrictionStatus { ruleset: NotEnforced }",
        "Os { code: 2, kind: NotFound, message: \"No such file\" }",
    ] {
        assert!(!debug_fragments(debug).is_empty(), "missed: {debug}");
    }
    for words in [
        "pip exited with code 1",
        "None of the rules matched",
        "the value of `approval_policy` in /h/config.toml:3:19 must be a string",
        "a shell snippet such as `f() { rm x; }` is refused",
        "NoneSuch is not a model",
    ] {
        assert_eq!(debug_fragments(words), Vec::<String>::new(), "{words}");
    }
}

/// Runs `osprey` with the home's environment minus the variables in `without`.
fn run(home: &TempHome, cwd: &Path, args: &[&str], without: &[&str]) -> Output {
    let mut cmd = assert_cmd::Command::cargo_bin("osprey").expect("osprey binary is built");
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SHELL", "/bin/bash")
        .envs(home.env().into_iter().filter(|(k, _)| !without.contains(k)))
        .args(args)
        .write_stdin(Vec::new())
        .timeout(std::time::Duration::from_secs(60));
    cmd.output().expect("osprey runs")
}

/// Asserts the run failed, its stderr names `expected`, and holds no Debug text.
fn assert_plain_failure(case: &str, out: &Output, expected: &[&str]) {
    let err = stderr(out);
    assert!(
        !out.status.success(),
        "{case}: expected a failure, got {:?}\nstderr: {err}",
        out.status
    );
    for text in expected {
        assert!(
            err.contains(text),
            "{case}: stderr should name {text:?}: {err}"
        );
    }
    let found = debug_fragments(&err);
    assert!(
        found.is_empty(),
        "{case}: Rust Debug text in what a person reads ({found:?}):\n{err}"
    );
}

#[test]
fn config_errors_read_as_words() {
    let repo = temp_git_repo();
    let cases: [(&str, &str, &[&str]); 3] = [
        ("invalid TOML", "model = \n", &["config.toml"]),
        (
            "a key of the wrong type",
            "approval_policy = 5\n",
            &["config.toml", "approval_policy"],
        ),
        (
            "an unknown enum value",
            "sandbox_mode = \"sometimes\"\n",
            &["config.toml", "sandbox_mode"],
        ),
    ];
    for (case, toml, expected) in cases {
        let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
        std::fs::write(home.config_path(), toml).unwrap();
        let out = run(&home, repo.path(), &["exec", "hi"], &[]);
        assert_plain_failure(case, &out, expected);
    }
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let out = run(
        &home,
        repo.path(),
        &["exec", "-c", "approval_policy=\"bogus\"", "hi"],
        &[],
    );
    assert_plain_failure("a bad -c override", &out, &["approval_policy"]);
}

#[test]
fn a_missing_api_key_reads_as_words() {
    let repo = temp_git_repo();
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let out = run(
        &home,
        repo.path(),
        &["exec", "hi"],
        &[TempHome::API_KEY_ENV],
    );
    assert_plain_failure("missing key", &out, &[TempHome::API_KEY_ENV]);
}

#[test]
fn bad_patches_read_as_words() {
    let repo = temp_git_repo();
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let cases: [(&str, &str, &[&str]); 4] = [
        ("an empty patch", "", &["empty"]),
        (
            "a garbled operation",
            "*** Begin Patch\nnope\n*** End Patch\n",
            &["line 2", "nope"],
        ),
        (
            "an update of a missing file",
            "*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch\n",
            &["missing.txt"],
        ),
        (
            "a cd wrapper",
            "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n",
            &["cd sub"],
        ),
    ];
    for (case, patch, expected) in cases {
        let out = run(
            &home,
            repo.path(),
            &["--osprey-run-as-apply-patch", patch],
            &[],
        );
        assert_plain_failure(case, &out, expected);
    }
}

#[test]
fn bad_rules_files_read_as_words() {
    let dir = tempfile::tempdir().unwrap();
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            "Starlark that does not parse",
            "prefix_rule(pattern = [\"ls\"\n",
            &["bad.rules"],
        ),
        (
            "a bad decision",
            "prefix_rule(pattern = [\"ls\"], decision = \"maybe\")\n",
            &["bad.rules", "maybe"],
        ),
        (
            "an unknown function",
            "frobnicate(pattern = [\"ls\"])\n",
            &["bad.rules", "frobnicate"],
        ),
    ];
    let rules = dir.path().join("bad.rules");
    let rules_arg = rules.to_str().unwrap();
    for (case, text, expected) in cases {
        std::fs::write(&rules, text).unwrap();
        let out = run(
            &home,
            dir.path(),
            &["execpolicy", "check", "--rules", rules_arg, "--", "ls"],
            &[],
        );
        assert_plain_failure(case, &out, expected);
    }
    let missing = dir.path().join("missing.rules");
    let out = run(
        &home,
        dir.path(),
        &[
            "execpolicy",
            "check",
            "--rules",
            missing.to_str().unwrap(),
            "--",
            "ls",
        ],
        &[],
    );
    assert_plain_failure("a missing rules file", &out, &["missing.rules"]);
}

#[test]
fn an_unknown_session_reads_as_words() {
    let repo = temp_git_repo();
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let id = "0199a213-81c0-7800-8aa1-bbab2a035a53";
    let out = run(&home, repo.path(), &["exec", "resume", id, "go on"], &[]);
    assert_plain_failure("unknown session", &out, &[id]);
}

#[test]
fn bad_exec_arguments_read_as_words() {
    let repo = temp_git_repo();
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let out = run(
        &home,
        repo.path(),
        &["exec", "-C", "/nonexistent/osprey-dir", "hi"],
        &[],
    );
    assert_plain_failure("a missing -C folder", &out, &["/nonexistent/osprey-dir"]);
    let out = run(
        &home,
        repo.path(),
        &["exec", "-i", "no-such-image.png", "hi"],
        &[],
    );
    assert_plain_failure("a missing image", &out, &["no-such-image.png"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_failures_read_as_words() {
    let repo = temp_git_repo();
    let cases: [(&str, MockResponse, &[&str]); 3] = [
        (
            "a 400 with an OpenAI error body",
            MockResponse::http_json(
                400,
                &json!({"error": {"message": "model `x` does not exist", "code": "model_not_found"}}),
            ),
            &["model `x` does not exist"],
        ),
        ("a 401", MockResponse::http(401, "unauthorized"), &["401"]),
        (
            "malformed stream data",
            MockResponse::Malformed("event: response.created\ndata: {not json\n\n".to_owned()),
            &["`response.created` event"],
        ),
    ];
    for (case, response, expected) in cases {
        let server = MockModelServer::start(vec![response]).await;
        let home = TempHome::for_server(&server, WireApi::Responses);
        let out = osprey_async(&home, repo.path(), &["exec", "hi"], "").await;
        assert_plain_failure(case, &out, expected);
    }
    // Nothing listens on this port: a connection failure.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let home = TempHome::for_base_url(&url, WireApi::Responses);
    let out = osprey_async(&home, repo.path(), &["exec", "hi"], "").await;
    assert_plain_failure("an unreachable provider", &out, &[&url[7..]]);
}
