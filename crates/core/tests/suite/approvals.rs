//! Approval decisions from a front end: once, for the session, with a persisted rule,
//! denied, aborted; and patch approvals keyed by path.

use super::harness::*;
use osprey_protocol::{ApprovalRequestKind, EventMsg, ReviewDecision};
use osprey_test_support::*;
use serde_json::json;

fn exec_call(id: &str, cmd: &str) -> SseEvent {
    ev_function_call(id, "exec_command", &json!({"cmd": cmd}).to_string())
}

fn done() -> MockResponse {
    sse_turn(vec![ev_assistant_message("m", "done")])
}

fn home_with(server: &MockModelServer, approval: &str, sandbox: &str) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config(&format!(
        "approval_policy = \"{approval}\"\nsandbox_mode = \"{sandbox}\"\n\
         sandbox_workspace_write.exclude_slash_tmp = true\n\
         sandbox_workspace_write.exclude_tmpdir_env_var = true\n"
    ));
    home
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_for_session_is_not_asked_again() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![exec_call("c1", "touch a.txt")]),
        sse_turn(vec![exec_call("c2", "touch a.txt")]),
        done(),
    ])
    .await;
    let home = home_with(&server, "untrusted", "danger-full-access");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "touch", vec![ReviewDecision::ApprovedForSession]).await;
    assert_eq!(
        approval_count(&events),
        1,
        "the second identical command was not asked"
    );
    let requests = server.requests();
    assert!(
        requests[1]
            .output_for("c1")
            .unwrap()
            .contains("exited with code 0")
    );
    assert!(
        requests[2]
            .output_for("c2")
            .unwrap()
            .contains("exited with code 0")
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amendment_persists_a_rule_used_by_the_next_run() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![exec_call("c1", "touch b.txt")]),
        done(),
        sse_turn(vec![exec_call("c2", "touch c.txt")]),
        done(),
    ])
    .await;
    let home = home_with(&server, "untrusted", "danger-full-access");
    let repo = temp_git_repo();
    let first = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(
        &first,
        "touch b",
        vec![ReviewDecision::ApprovedExecpolicyAmendment {
            prefix: vec!["touch".to_string()],
        }],
    )
    .await;
    let offered = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ApprovalRequested(r) => Some(r.available_decisions.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        offered
            .iter()
            .any(|d| matches!(d, ReviewDecision::ApprovedExecpolicyAmendment { .. })),
        "an amendment is offered for a plain command no rule matches: {offered:?}"
    );
    let rules = std::fs::read_to_string(home.path().join("rules/default.rules")).unwrap();
    assert!(rules.contains("prefix_rule(pattern=[\"touch\"]"), "{rules}");
    assert!(repo.path().join("b.txt").exists());

    // A second run with a fresh thread manager: the persisted rule allows it.
    let second = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&second, "touch c", vec![]).await;
    assert_eq!(approval_count(&events), 0);
    assert!(repo.path().join("c.txt").exists());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_command_is_reported_to_the_model_and_the_turn_goes_on() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![exec_call("c1", "touch d.txt")]), done()]).await;
    let home = home_with(&server, "untrusted", "danger-full-access");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "touch", vec![ReviewDecision::Denied]).await;
    assert!(matches!(
        events.last().unwrap().msg,
        EventMsg::TurnCompleted { .. }
    ));
    assert!(!repo.path().join("d.txt").exists());
    let output = server.requests()[1].output_for("c1").unwrap();
    assert!(output.contains("declined"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_stops_the_turn_and_still_answers_the_call() {
    let server = MockModelServer::start(vec![sse_turn(vec![exec_call("c1", "touch e.txt")])]).await;
    let home = home_with(&server, "untrusted", "danger-full-access");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "touch", vec![ReviewDecision::Abort]).await;
    assert!(matches!(
        events.last().unwrap().msg,
        EventMsg::TurnAborted { .. }
    ));
    assert!(!repo.path().join("e.txt").exists());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patch_approval_is_keyed_by_path() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("notes.txt");
    let add = format!(
        "*** Begin Patch\n*** Add File: {}\n+one\n*** End Patch",
        target.display()
    );
    let update = format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n-one\n+two\n*** End Patch",
        target.display()
    );
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_custom_tool_call("p1", "apply_patch", &add)]),
        sse_turn(vec![ev_custom_tool_call("p2", "apply_patch", &update)]),
        done(),
    ])
    .await;
    let home = home_with(&server, "on-request", "workspace-write");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "patch", vec![ReviewDecision::ApprovedForSession]).await;
    assert_eq!(
        approval_count(&events),
        1,
        "the second patch touches only an approved path"
    );
    let kind = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::ApprovalRequested(r) => Some(r.kind.clone()),
            _ => None,
        })
        .unwrap();
    let ApprovalRequestKind::Patch { changes, .. } = kind else {
        panic!("{kind:?}")
    };
    assert_eq!(changes[0].path, target.canonicalize().unwrap());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "two\n");
    server.verify();
}
