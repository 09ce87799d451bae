//! Differential test against the published Codex CLI: each corpus case is
//! applied by `$OSPREY_CODEX_BIN --codex-run-as-apply-patch PATCH` and by our
//! CLI entry, each in its own copy of the case's tree. Outside the documented
//! differences (`difference=` in case.txt, listed in the README) both must
//! leave identical sandboxes, exit with the same code and print the same
//! success summary. For documented differences, Codex's exit code is checked
//! and its tree must still differ from ours, so the README stays true.
//!
//! This compares the library; the CLI suite (`crates/cli/tests/suite/apply_patch.rs`) runs
//! the same corpus through the built `osprey` binary, by flag and by argv[0], against Codex.

use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;

use super::common::{Sandbox, corpus, run_ours, snapshot};

#[expect(
    clippy::print_stdout,
    reason = "the skip note must be visible in test output"
)]
fn reference_binary() -> Option<String> {
    match std::env::var("OSPREY_CODEX_BIN") {
        Ok(bin) if !bin.is_empty() => Some(bin),
        _ => {
            assert!(
                std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() != Ok("1"),
                "OSPREY_REQUIRE_REFERENCE=1 but OSPREY_CODEX_BIN is unset; run \
                 `eval \"$(bash scripts/install-test-deps.sh)\"`"
            );
            println!(
                "note: OSPREY_CODEX_BIN is unset; skipping the differential test against Codex"
            );
            None
        }
    }
}

struct CodexRun {
    code: i32,
    stdout: String,
}

#[expect(
    clippy::disallowed_methods,
    reason = "the differential test runs the reference Codex binary"
)]
fn run_codex(bin: &str, patch: &str, cwd: &Path, home: &Path) -> CodexRun {
    let out = Command::new(bin)
        .arg("--codex-run-as-apply-patch")
        .arg(patch)
        .current_dir(cwd)
        .env("CODEX_HOME", home)
        .output()
        .unwrap();
    CodexRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

#[test]
fn corpus_matches_codex_except_documented_differences() {
    let Some(bin) = reference_binary() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for case in corpus() {
        let theirs = Sandbox::from_case(&case);
        let ours = Sandbox::from_case(&case);
        let codex = run_codex(&bin, &case.patch, &theirs.tree, home.path());
        let mine = run_ours(&case.patch, &ours.tree);
        match &case.difference {
            None => {
                assert_eq!(mine.code, codex.code, "{}: exit codes differ", case.name);
                assert_eq!(
                    snapshot(&ours.root),
                    snapshot(&theirs.root),
                    "{}: trees differ",
                    case.name
                );
                if codex.code == 0 {
                    assert_eq!(mine.stdout, codex.stdout, "{}: summaries differ", case.name);
                }
                compared += 1;
            }
            Some(reason) => {
                let expected = case.codex_exit.unwrap_or(case.exit);
                assert_eq!(
                    codex.code, expected,
                    "{}: Codex's exit code changed; update case.txt and the README ({reason})",
                    case.name
                );
                assert_ne!(
                    snapshot(&ours.root),
                    snapshot(&theirs.root),
                    "{}: Codex now behaves like us; drop the documented difference ({reason})",
                    case.name
                );
            }
        }
    }
    assert!(
        compared >= 30,
        "only {compared} cases were compared with Codex"
    );
}
