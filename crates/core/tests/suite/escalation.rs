//! Leaving the sandbox: on request (the model asks) and on failure (the sandbox blocked it),
//! both only with a person's approval. Runs the real sandbox helper.

use super::harness::*;
use osprey_protocol::{ApprovalRequestKind, EventMsg, ReviewDecision};
use osprey_test_support::*;
use serde_json::json;

fn home_for(server: &MockModelServer, approval: &str) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config(&format!(
        "approval_policy = \"{approval}\"\nsandbox_mode = \"workspace-write\"\n\
         sandbox_workspace_write.exclude_slash_tmp = true\n\
         sandbox_workspace_write.exclude_tmpdir_env_var = true\n"
    ));
    home
}

fn escalation_flags(events: &[osprey_protocol::Event]) -> Vec<bool> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ApprovalRequested(r) => match &r.kind {
                ApprovalRequestKind::Exec { escalation, .. } => Some(*escalation),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_request_escalation_runs_outside_the_sandbox_once_approved() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escalated.txt");
    let cmd = format!("echo hi > {}", target.display());
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "c1",
            "exec_command",
            &json!({"cmd": cmd, "login": false, "sandbox_permissions": "require_escalated",
                    "justification": "write the report outside the repo"})
            .to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = home_for(&server, "on-request");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .with_osprey_exe(osprey_exe())
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "write it", vec![ReviewDecision::Approved]).await;
    assert_eq!(escalation_flags(&events), [true]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_failure_asks_to_rerun_without_the_sandbox() {
    let outside = tempfile::tempdir().unwrap();
    let approved = outside.path().join("approved.txt");
    let denied = outside.path().join("denied.txt");
    let call = |id: &str, path: &std::path::Path| {
        ev_function_call(
            id,
            "exec_command",
            &json!({"cmd": format!("echo x > {}", path.display()), "login": false}).to_string(),
        )
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![call("c1", &approved)]),
        sse_turn(vec![call("c2", &denied)]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = home_for(&server, "on-failure");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .with_osprey_exe(osprey_exe())
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(
        &thread,
        "write them",
        vec![ReviewDecision::Approved, ReviewDecision::Denied],
    )
    .await;
    assert_eq!(
        escalation_flags(&events),
        [true, true],
        "both failures asked for a rerun"
    );
    assert!(approved.exists(), "the approved rerun ran unsandboxed");
    assert!(!denied.exists(), "the denied one stayed blocked");
    let output = server.requests()[2].output_for("c2").unwrap();
    assert!(
        output.contains("Sandbox: the sandbox blocked this command"),
        "{output}"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_patch_may_write_an_extra_writable_root() {
    let extra = tempfile::tempdir().unwrap();
    let target = extra.path().join("notes.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+extra\n*** End Patch",
        target.display()
    );
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_custom_tool_call("p1", "apply_patch", &patch)]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = home_for(&server, "never");
    home.write_config(&format!(
        "sandbox_workspace_write.writable_roots = [\"{}\"]\n",
        extra.path().display()
    ));
    let repo = temp_git_repo();
    let thread = manager(&home)
        .with_osprey_exe(osprey_exe())
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "add", vec![]).await;
    assert_eq!(
        approval_count(&events),
        0,
        "inside a writable root: no approval"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "extra\n");
    server.verify();
}
