//! `apply_patch` end to end: the tool, the shell-wrapped forms, failures and events; and the
//! patch corpus through the built binary in every way it can be invoked, against the
//! reference Codex CLI.

use super::common::*;
use corpus_support::{Case, Sandbox, corpus_in, snapshot};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

// The corpus format and its helpers live with the patcher's own tests.
#[path = "../../../apply-patch/tests/suite/common.rs"]
#[allow(
    dead_code,
    reason = "the shared helpers include an in-process runner this suite does not use"
)]
mod corpus_support;

fn patch_call(call_id: &str, patch: &str) -> MockResponse {
    sse_turn(vec![ev_custom_tool_call(call_id, "apply_patch", patch)])
}

fn answer() -> MockResponse {
    sse_turn(vec![ev_assistant_message("msg_final", "done")])
}

fn file_changes(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "file_change")
        .map(|e| e["item"].clone())
        .collect()
}

async fn run(server: &MockModelServer, repo: &tempfile::TempDir) -> Vec<Value> {
    let home = TempHome::for_server(server, WireApi::Responses);
    // /tmp and $TMPDIR are writable under workspace-write; these tests put "outside"
    // directories there, so they exclude them.
    home.write_config(
        "sandbox_mode = \"workspace-write\"\napproval_policy = \"never\"\n\
         sandbox_workspace_write.exclude_slash_tmp = true\n\
         sandbox_workspace_write.exclude_tmpdir_env_var = true\n",
    );
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "edit"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    jsonl(&out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_update_move_and_delete() {
    let repo = temp_git_repo();
    let dir = repo.path();
    std::fs::write(dir.join("two.txt"), "a\nb\nc\nd\ne\nf\ng\n").unwrap();
    std::fs::write(dir.join("old.txt"), "keep\nchange me\n").unwrap();
    std::fs::write(dir.join("gone.txt"), "bye\n").unwrap();
    let patch = "*** Begin Patch\n\
*** Add File: hello.txt\n+hello\n\
*** Update File: two.txt\n@@\n a\n-b\n+B\n c\n@@\n f\n-g\n+G\n\
*** Update File: old.txt\n*** Move to: new.txt\n@@\n keep\n-change me\n+changed\n\
*** Delete File: gone.txt\n\
*** End Patch";
    let server = MockModelServer::start(vec![patch_call("call_1", patch), answer()]).await;
    let events = run(&server, &repo).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("hello.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("two.txt")).unwrap(),
        "a\nB\nc\nd\ne\nf\nG\n"
    );
    assert!(!dir.join("old.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("new.txt")).unwrap(),
        "keep\nchanged\n"
    );
    assert!(!dir.join("gone.txt").exists());
    let changes = file_changes(&events);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["status"], "completed");
    let kinds: Vec<&str> = changes[0]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["add", "update", "update", "delete"]);
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(
        output.contains("Success. Updated the following files:"),
        "{output}"
    );
    assert!(
        output.contains("A hello.txt")
            && output.contains("M new.txt")
            && output.contains("D gone.txt"),
        "{output}"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_chunk_changes_nothing_and_reports_a_failed_item() {
    let repo = temp_git_repo();
    let dir = repo.path();
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    std::fs::write(dir.join("b.txt"), "two\n").unwrap();
    let patch = "*** Begin Patch\n\
*** Update File: a.txt\n@@\n-one\n+ONE\n\
*** Update File: b.txt\n@@\n-not there\n+x\n\
*** End Patch";
    let server = MockModelServer::start(vec![patch_call("call_1", patch), answer()]).await;
    let events = run(&server, &repo).await;
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "one\n",
        "first file untouched"
    );
    assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "two\n");
    let changes = file_changes(&events);
    assert_eq!(changes[0]["status"], "failed");
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(
        output.starts_with("apply_patch verification failed"),
        "{output}"
    );
    assert!(
        output.contains("b.txt") && output.contains("not there"),
        "{output}"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heredoc_through_the_shell_tool_is_applied_by_the_patcher() {
    let repo = temp_git_repo();
    let script = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: via_shell.txt\n+from heredoc\n*** End Patch\nEOF\n";
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_1",
            "exec_command",
            &json!({"cmd": script}).to_string(),
        )]),
        answer(),
    ])
    .await;
    let events = run(&server, &repo).await;
    assert_eq!(
        std::fs::read_to_string(repo.path().join("via_shell.txt")).unwrap(),
        "from heredoc\n"
    );
    assert_eq!(file_changes(&events)[0]["status"], "completed");
    assert!(
        !events
            .iter()
            .any(|e| e["item"]["type"] == "command_execution"),
        "no shell ran: {events:?}"
    );
    server.verify();
}

/// Regression: the sandboxed path passed the patch as one argument, and Linux refuses a
/// single argument over 128 KiB (MAX_ARG_STRLEN), so big patches failed to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_over_128_kib_applies_in_the_sandbox() {
    let repo = temp_git_repo();
    std::fs::write(repo.path().join("small.txt"), "old\n").unwrap();
    let lines: Vec<String> = (0..4000)
        .map(|i| format!("line {i:05} of a generated file that is long enough to add up"))
        .collect();
    let body: String = lines.iter().map(|l| format!("+{l}\n")).collect();
    let patch = format!(
        "*** Begin Patch\n*** Add File: big.txt\n{body}\
         *** Update File: small.txt\n@@\n-old\n+new\n*** End Patch"
    );
    assert!(patch.len() > 200 * 1024, "{} bytes", patch.len());
    let server = MockModelServer::start(vec![patch_call("call_1", &patch), answer()]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "approval_policy = \"never\"\n\
         sandbox_workspace_write.exclude_slash_tmp = true\n\
         sandbox_workspace_write.exclude_tmpdir_env_var = true\n",
    );
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "--json", "-s", "workspace-write", "edit"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(
        output.contains("A big.txt") && output.contains("M small.txt"),
        "{}",
        &output[..output.len().min(2000)]
    );
    let want: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert!(
        std::fs::read_to_string(repo.path().join("big.txt")).unwrap() == want,
        "big.txt differs from the patch"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("small.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(file_changes(&jsonl(&out))[0]["status"], "completed");
    server.verify();
}

/// Regression: the sandboxed virtual command was allowed only the cwd and the configured
/// writable roots, not the temp dirs workspace-write makes writable, so a patch the policy
/// let through without asking failed in the sandbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_into_a_writable_temp_dir_applies_in_the_sandbox() {
    let repo = temp_git_repo();
    let scratch = tempfile::tempdir_in("/tmp").unwrap();
    let target = scratch.path().join("notes.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+scratch\n*** End Patch",
        target.display()
    );
    let server = MockModelServer::start(vec![patch_call("call_1", &patch), answer()]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("sandbox_mode = \"workspace-write\"\napproval_policy = \"never\"\n");
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "edit"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert_eq!(
        std::fs::read_to_string(&target).ok().as_deref(),
        Some("scratch\n"),
        "{output}"
    );
    assert_eq!(file_changes(&jsonl(&out))[0]["status"], "completed");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_outside_the_workspace_is_refused_under_never() {
    let repo = temp_git_repo();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escape.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+nope\n*** End Patch",
        target.display()
    );
    let server = MockModelServer::start(vec![patch_call("call_1", &patch), answer()]).await;
    let events = run(&server, &repo).await;
    assert!(!target.exists());
    assert_eq!(file_changes(&events)[0]["status"], "declined");
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(
        output.contains("outside the sandbox's writable roots"),
        "{output}"
    );
    server.verify();
}

/// Runs `osprey exec` under `never` with permission profile `work`, whose filesystem table
/// is `filesystem` (TOML lines). The coarse policy leaves out /tmp and $TMPDIR (where the
/// temporary "outside" directories are), so only the profile can make them writable.
async fn run_with_profile(
    server: &MockModelServer,
    repo: &tempfile::TempDir,
    filesystem: &str,
) -> std::process::Output {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config(&format!(
        "sandbox_mode = \"workspace-write\"\napproval_policy = \"never\"\n\
         sandbox_workspace_write.exclude_slash_tmp = true\n\
         sandbox_workspace_write.exclude_tmpdir_env_var = true\n\
         default_permissions = \"work\"\n[permissions.work.filesystem]\n{filesystem}\n"
    ));
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "edit"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    out
}

/// Regression: whether a patch needed approval was judged by the coarse policy's writable
/// roots while the sandbox enforced the permission profile, so a directory the profile
/// makes writable was "outside" and the patch was refused under `never`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_where_the_permission_profile_allows_writing_applies_without_asking() {
    let repo = temp_git_repo();
    let outside = tempfile::tempdir().unwrap();
    let outside_dir = std::fs::canonicalize(outside.path()).unwrap();
    let target = outside_dir.join("notes.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+granted\n*** End Patch",
        target.display()
    );
    let server = MockModelServer::start(vec![patch_call("call_1", &patch), answer()]).await;
    let filesystem = format!(
        "\":root\" = \"read\"\n\":workspace_roots\" = \"write\"\n{:?} = \"write\"",
        outside_dir.display().to_string()
    );
    let out = run_with_profile(&server, &repo, &filesystem).await;
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert_eq!(
        std::fs::read_to_string(&target).ok().as_deref(),
        Some("granted\n"),
        "{output}"
    );
    assert_eq!(file_changes(&jsonl(&out))[0]["status"], "completed");
    server.verify();
}

/// The other way round: a directory inside the workspace that the profile makes read-only
/// is not a place a patch may write without asking (it was, by the coarse policy, and the
/// sandboxed write then failed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_into_a_directory_the_permission_profile_makes_read_only_is_refused() {
    let repo = temp_git_repo();
    std::fs::create_dir(repo.path().join("docs")).unwrap();
    let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+no\n*** End Patch";
    let server = MockModelServer::start(vec![patch_call("call_1", patch), answer()]).await;
    let out = run_with_profile(
        &server,
        &repo,
        "\":root\" = \"read\"\n\":workspace_roots\" = { \".\" = \"write\", \"docs\" = \"read\" }",
    )
    .await;
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(!repo.path().join("docs/new.md").exists(), "{output}");
    assert_eq!(
        file_changes(&jsonl(&out))[0]["status"],
        "declined",
        "{output}"
    );
    assert!(
        output.contains("outside the sandbox's writable roots"),
        "{output}"
    );
    server.verify();
}

/// How the patch reaches the virtual `apply_patch` command.
#[derive(Debug, Clone, Copy)]
enum Form {
    /// `osprey --osprey-run-as-apply-patch PATCH`
    FlagArgument,
    /// `osprey --osprey-run-as-apply-patch < PATCH` (how the agent applies patches in the sandbox)
    FlagStdin,
    /// `apply_patch PATCH`, the binary reached through a link of that name
    Argv0Argument,
    /// `applypatch < PATCH`
    Argv0Stdin,
}

const FORMS: [Form; 4] = [
    Form::FlagArgument,
    Form::FlagStdin,
    Form::Argv0Argument,
    Form::Argv0Stdin,
];

type SnapshotOf = std::collections::BTreeMap<std::path::PathBuf, corpus_support::Entry>;

struct BinRun {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `apply_patch` and `applypatch` links to the built binary, in a folder of their own.
fn argv0_links() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let osprey = assert_cmd::cargo::cargo_bin("osprey");
    for name in ["apply_patch", "applypatch"] {
        std::os::unix::fs::symlink(&osprey, dir.path().join(name)).unwrap();
    }
    dir
}

fn run_binary(form: Form, links: &Path, patch: &str, cwd: &Path) -> BinRun {
    let mut cmd = match form {
        Form::FlagArgument | Form::FlagStdin => {
            let mut cmd = assert_cmd::Command::cargo_bin("osprey").unwrap();
            cmd.arg("--osprey-run-as-apply-patch");
            cmd
        }
        Form::Argv0Argument => assert_cmd::Command::new(links.join("apply_patch")),
        Form::Argv0Stdin => assert_cmd::Command::new(links.join("applypatch")),
    };
    match form {
        Form::FlagArgument | Form::Argv0Argument => {
            cmd.arg(patch);
        }
        Form::FlagStdin | Form::Argv0Stdin => {
            cmd.write_stdin(patch.as_bytes().to_vec());
        }
    }
    // No OSPREY_APPLY_PATCH_ROOTS: by hand, the command may touch only the current directory.
    let out = cmd
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    BinRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn codex_binary() -> Option<String> {
    match std::env::var("OSPREY_CODEX_BIN") {
        Ok(bin) if !bin.is_empty() => Some(bin),
        _ => {
            assert!(
                std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() != Ok("1"),
                "OSPREY_REQUIRE_REFERENCE=1 but OSPREY_CODEX_BIN is unset; run \
                 `eval \"$(bash scripts/install-test-deps.sh)\"`"
            );
            println!("note: OSPREY_CODEX_BIN is unset; comparing with the recorded results only");
            None
        }
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "the differential test runs the reference Codex binary"
)]
fn run_codex(bin: &str, patch: &str, cwd: &Path, home: &Path) -> BinRun {
    let out = std::process::Command::new(bin)
        .arg("--codex-run-as-apply-patch")
        .arg(patch)
        .current_dir(cwd)
        .env("CODEX_HOME", home)
        .output()
        .unwrap();
    BinRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Checks one binary run against the case's recorded outcome: its exit code, an untouched
/// tree on failure, exactly `expected/` on success.
fn check_recorded(case: &Case, form: Form, sandbox: &Sandbox, before: &SnapshotOf, run: &BinRun) {
    let what = format!("{} ({form:?})", case.name);
    assert_eq!(run.code, case.exit, "{what}: stderr: {}", run.stderr);
    if run.code == 0 {
        assert_eq!(
            snapshot(&sandbox.tree),
            snapshot(&case.dir.join("expected")),
            "{what}: result differs from expected/"
        );
        assert!(
            run.stdout
                .starts_with("Success. Updated the following files:\n"),
            "{what}: {}",
            run.stdout
        );
    } else {
        assert_eq!(&snapshot(&sandbox.root), before, "{what} changed the tree");
        assert!(!run.stderr.is_empty(), "{what}: failure without a message");
    }
}

/// Every corpus case through the real binary, as `osprey --osprey-run-as-apply-patch` and as
/// `apply_patch`/`applypatch` by argv[0], with the patch as argument and on stdin: each run
/// gives the recorded outcome, and (with `OSPREY_CODEX_BIN`) the same exit code, tree and
/// summary as `codex --codex-run-as-apply-patch` outside the documented differences.
#[test]
fn corpus_through_the_binary_matches_codex() {
    let corpus_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../apply-patch/tests/corpus");
    let cases = corpus_in(&corpus_dir);
    assert!(cases.len() >= 30, "the corpus shrank to {}", cases.len());
    let links = argv0_links();
    let codex = codex_binary();
    let codex_home = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for case in &cases {
        let reference = codex.as_deref().map(|bin| {
            let sandbox = Sandbox::from_case(case);
            let run = run_codex(bin, &case.patch, &sandbox.tree, codex_home.path());
            (sandbox, run)
        });
        if let (Some((_, theirs)), Some(reason)) = (&reference, &case.difference) {
            let expected = case.codex_exit.unwrap_or(case.exit);
            assert_eq!(
                theirs.code, expected,
                "{}: Codex's exit code changed; update case.txt and the README ({reason})",
                case.name
            );
        }
        for form in FORMS {
            // Nothing on stdin is a usage error, not an empty patch.
            if matches!(form, Form::FlagStdin | Form::Argv0Stdin) && case.patch.trim().is_empty() {
                continue;
            }
            let ours = Sandbox::from_case(case);
            let before = snapshot(&ours.root);
            let run = run_binary(form, links.path(), &case.patch, &ours.tree);
            check_recorded(case, form, &ours, &before, &run);
            let Some((theirs, codex_run)) = &reference else {
                continue;
            };
            let what = format!("{} ({form:?})", case.name);
            match &case.difference {
                None => {
                    assert_eq!(run.code, codex_run.code, "{what}: exit codes differ");
                    assert_eq!(
                        snapshot(&ours.root),
                        snapshot(&theirs.root),
                        "{what}: trees differ"
                    );
                    if codex_run.code == 0 {
                        assert_eq!(run.stdout, codex_run.stdout, "{what}: summaries differ");
                    }
                    compared += 1;
                }
                Some(reason) => assert_ne!(
                    snapshot(&ours.root),
                    snapshot(&theirs.root),
                    "{what}: Codex now behaves like us; drop the documented difference ({reason})"
                ),
            }
        }
    }
    if codex.is_some() {
        assert!(
            compared >= 30 * FORMS.len(),
            "only {compared} runs were compared with Codex"
        );
    }
}
