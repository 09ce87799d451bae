//! `osprey exec` flags a Codex user expects, end to end: `--full-auto`,
//! `--dangerously-bypass-approvals-and-sandbox` (`--yolo`), and what a refused write under
//! the default read-only sandbox tells the model and the user.

use super::common::*;
use osprey_test_support::*;
use serde_json::json;

fn command(call_id: &str, args: serde_json::Value) -> MockResponse {
    sse_turn(vec![ev_function_call(
        call_id,
        "exec_command",
        &args.to_string(),
    )])
}

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("msg_final", text)])
}

/// The settings block the transcript opens with, as `key: value` pairs.
fn header_value(stderr: &str, key: &str) -> String {
    stderr
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no `{key}:` line in the transcript:\n{stderr}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_auto_writes_in_the_workspace_with_approvals_on_request() {
    let server = MockModelServer::start(vec![
        command("call_1", json!({"cmd": "echo hi > out.txt"})),
        answer("Wrote out.txt."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("sandbox_mode = \"read-only\"\napproval_policy = \"never\"\n");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--full-auto", "write it"], "").await;
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert_eq!(header_value(&err, "sandbox"), "workspace-write");
    assert_eq!(header_value(&err, "approval"), "on-request");
    assert_eq!(
        std::fs::read_to_string(repo.path().join("out.txt")).unwrap(),
        "hi\n"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yolo_runs_unsandboxed_without_approvals_even_outside_a_repo() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("outside.txt");
    let cmd = format!("echo free > '{}'", target.display());
    for flag in ["--yolo", "--dangerously-bypass-approvals-and-sandbox"] {
        let _ = std::fs::remove_file(&target);
        let server = MockModelServer::start(vec![
            command("call_1", json!({"cmd": cmd})),
            answer("Done."),
        ])
        .await;
        let home = TempHome::for_server(&server, WireApi::Responses);
        // Not a git repository: like Codex, the flag implies --skip-git-repo-check.
        let work = tempfile::tempdir().unwrap();
        let out = osprey_async(&home, work.path(), &["exec", flag, "write outside"], "").await;
        let err = stderr(&out);
        assert!(out.status.success(), "{flag}: stderr: {err}");
        assert_eq!(
            header_value(&err, "sandbox"),
            "danger-full-access",
            "{flag}"
        );
        assert_eq!(header_value(&err, "approval"), "never", "{flag}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "free\n",
            "{flag}"
        );
        server.verify();
    }
}

#[test]
fn permission_flags_that_contradict_each_other_are_a_usage_error() {
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let repo = temp_git_repo();
    for args in [
        &["exec", "--full-auto", "-s", "read-only", "x"][..],
        &["exec", "--yolo", "--full-auto", "x"][..],
        &["exec", "--yolo", "-s", "workspace-write", "x"][..],
    ] {
        let out = osprey(&home, repo.path(), args, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot be used with"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_refused_under_read_only_says_why_to_the_model_and_names_the_flag() {
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n";
    let server = MockModelServer::start(vec![
        command("call_1", json!({"cmd": "echo hi > out.txt"})),
        command(
            "call_2",
            json!({"cmd": "echo hi > out.txt", "sandbox_permissions": "require_escalated",
                   "justification": "the task needs the file"}),
        ),
        sse_turn(vec![ev_custom_tool_call("call_3", "apply_patch", patch)]),
        answer("I could not write: the sandbox is read-only."),
    ])
    .await;
    // The defaults: read-only sandbox, approvals on request.
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "write it"], "").await;
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert!(!repo.path().join("out.txt").exists());
    assert!(!repo.path().join("new.txt").exists());

    let requests = server.requests();
    // The blocked command: the model is not told to ask again, since nobody can say yes.
    let blocked = requests[1].output_for("call_1").unwrap();
    assert!(blocked.contains("Read-only file system"), "{blocked}");
    assert!(!blocked.contains("require_escalated"), "{blocked}");
    assert!(blocked.contains("Nobody can approve"), "{blocked}");
    // The declined escalation and patch: why, in words, and no "the user declined".
    for (request, call) in [(&requests[2], "call_2"), (&requests[3], "call_3")] {
        let output = request.output_for(call).unwrap();
        assert!(output.contains("this run cannot ask a person"), "{output}");
        assert!(output.contains("the sandbox is read-only"), "{output}");
        assert!(output.contains("Do not try it again"), "{output}");
        assert!(!output.contains("The user declined"), "{output}");
    }

    // The transcript names the flag that allows it, once.
    let hints: Vec<&str> = err.lines().filter(|l| l.starts_with("hint:")).collect();
    assert_eq!(hints.len(), 1, "{err}");
    assert!(hints[0].contains("-s workspace-write"), "{err}");
    assert!(hints[0].contains("--full-auto"), "{err}");
    server.verify();
}
