//! `apply_patch` end to end: the tool, the shell-wrapped forms, failures and events.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

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
