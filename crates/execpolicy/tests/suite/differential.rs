//! Differential test: `run_check` against the published Codex CLI on the corpus in
//! `tests/corpus/` (`cases.jsonl` lists rules files, extra flags and the argv of each case).
//!
//! For cases whose rules load, stdout must be the same line byte for byte (and the same JSON
//! value); for load errors only the exit code is compared. Without `OSPREY_CODEX_BIN` the
//! comparison is skipped with a note, unless `OSPREY_REQUIRE_REFERENCE=1`.

use std::path::Path;
use std::path::PathBuf;

use osprey_execpolicy::{CheckRequest, run_check};
use pretty_assertions::assert_eq;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Case {
    rules: Vec<String>,
    #[serde(default)]
    flags: Vec<String>,
    argv: Vec<String>,
    /// Set when the files load on their own but not together.
    #[serde(default)]
    load_error: bool,
}

struct Outcome {
    code: i32,
    stdout: String,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("corpus")
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(corpus_dir().join("cases.jsonl")).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("bad case {line}: {e}")))
        .collect()
}

fn check_args(case: &Case) -> Vec<String> {
    let mut args = Vec::new();
    for rules in &case.rules {
        args.push("--rules".to_owned());
        args.push(corpus_dir().join(rules).to_string_lossy().into_owned());
    }
    args.extend(case.flags.iter().cloned());
    args.push("--".to_owned());
    args.extend(case.argv.iter().cloned());
    args
}

/// The request `check_args(case)` parses to (the corpus uses only these two flags).
fn check_request(case: &Case) -> CheckRequest {
    let flag = |name: &str| case.flags.iter().any(|f| f == name);
    let known = ["--pretty", "--resolve-host-executables"];
    if let Some(unknown) = case.flags.iter().find(|f| !known.contains(&f.as_str())) {
        panic!("the corpus uses flag {unknown}, which this test does not map: {case:?}");
    }
    CheckRequest {
        rules: case.rules.iter().map(|r| corpus_dir().join(r)).collect(),
        pretty: flag("--pretty"),
        resolve_host_executables: flag("--resolve-host-executables"),
        command: case.argv.clone(),
    }
}

fn ours(case: &Case) -> Outcome {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let code = run_check(&check_request(case), &mut stdout, &mut stderr);
    Outcome {
        code,
        stdout: String::from_utf8(stdout).unwrap(),
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "the test runs the reference Codex binary"
)]
fn theirs(bin: &Path, codex_home: &Path, case: &Case) -> Outcome {
    let output = std::process::Command::new(bin)
        .arg("execpolicy")
        .arg("check")
        .args(check_args(case))
        .env("CODEX_HOME", codex_home)
        .env_remove("RUST_BACKTRACE")
        .current_dir(corpus_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    Outcome {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
    }
}

fn expects_load_error(case: &Case) -> bool {
    case.load_error
        || case
            .rules
            .iter()
            .any(|r| r.starts_with("bad_") || r.starts_with("missing"))
}

#[test]
fn corpus_covers_enough_and_loads_as_labelled() {
    let cases = cases();
    let good = cases.iter().filter(|c| !expects_load_error(c)).count();
    assert!(good >= 60, "only {good} loadable cases");
    let rules_files = std::fs::read_dir(corpus_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".rules") && !name.starts_with("bad_")
        })
        .count();
    assert!(rules_files >= 8, "only {rules_files} good rules files");
    for case in &cases {
        let outcome = ours(case);
        let expected = if expects_load_error(case) { 1 } else { 0 };
        assert_eq!(outcome.code, expected, "{case:?}");
    }
}

#[test]
fn matches_the_published_codex_cli() {
    let Some(bin) = std::env::var_os("OSPREY_CODEX_BIN") else {
        if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") {
            panic!(
                "OSPREY_REQUIRE_REFERENCE=1 but OSPREY_CODEX_BIN is unset; run scripts/install-test-deps.sh"
            );
        }
        println!("note: OSPREY_CODEX_BIN is unset; skipping the differential test against Codex");
        return;
    };
    let bin = PathBuf::from(bin);
    let codex_home = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for case in cases() {
        let reference = theirs(&bin, codex_home.path(), &case);
        let outcome = ours(&case);
        assert_eq!(outcome.code, reference.code, "exit code for {case:?}");
        if reference.code != 0 {
            continue;
        }
        let a: serde_json::Value = serde_json::from_str(&outcome.stdout).unwrap_or_else(|e| {
            panic!(
                "our output is not JSON ({e}) for {case:?}: {}",
                outcome.stdout
            )
        });
        let b: serde_json::Value = serde_json::from_str(&reference.stdout).unwrap_or_else(|e| {
            panic!(
                "Codex output is not JSON ({e}) for {case:?}: {}",
                reference.stdout
            )
        });
        assert_eq!(a, b, "JSON value for {case:?}");
        assert_eq!(
            outcome.stdout, reference.stdout,
            "exact output for {case:?}"
        );
        compared += 1;
    }
    assert!(compared >= 60, "only {compared} outputs compared");
}
