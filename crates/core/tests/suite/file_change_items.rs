//! A file change item starts, with its changes and diffs, before the patch is approved and
//! applied: front ends read the files' old contents then (the app server's turn diff).

use super::harness::*;
use osprey_protocol::{
    EventMsg, FileChangeKind, ItemStatus, Op, ReviewDecision, ThreadItem, UserInput,
};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_change_starts_before_its_approval_and_before_it_is_applied() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("notes.txt");
    std::fs::write(&target, "old line\n").unwrap();
    let patch = format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n-old line\n+new line\n*** End Patch",
        target.display()
    );
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_custom_tool_call("p1", "apply_patch", &patch)]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "approval_policy = \"on-request\"\nsandbox_mode = \"workspace-write\"\n\
         sandbox_workspace_write.exclude_slash_tmp = true\n\
         sandbox_workspace_write.exclude_tmpdir_env_var = true\n",
    );
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    thread
        .submit(turn_with(vec![UserInput::Text {
            text: "edit".into(),
        }]))
        .await
        .unwrap();
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), thread.next_event())
            .await
            .expect("an event within 30 s")
            .unwrap();
        match event.msg {
            EventMsg::ItemStarted {
                item:
                    ThreadItem::FileChange {
                        id,
                        changes,
                        status,
                        ..
                    },
            } => {
                assert_eq!(status, ItemStatus::InProgress);
                assert_eq!(changes.len(), 1);
                assert_eq!(changes[0].kind, FileChangeKind::Update);
                let diff = changes[0].diff.as_deref().unwrap_or_default();
                assert!(
                    diff.contains("-old line") && diff.contains("+new line"),
                    "{diff}"
                );
                assert_eq!(
                    std::fs::read_to_string(&target).unwrap(),
                    "old line\n",
                    "not applied yet when the item starts"
                );
                seen.push(format!("started {id}"));
            }
            EventMsg::ApprovalRequested(request) => {
                seen.push("approval".to_string());
                thread
                    .submit(Op::ResolveApproval {
                        id: request.id,
                        decision: ReviewDecision::Approved,
                    })
                    .await
                    .unwrap();
            }
            EventMsg::ItemCompleted {
                item: ThreadItem::FileChange { id, status, .. },
            } => {
                assert_eq!(status, ItemStatus::Completed);
                seen.push(format!("completed {id}"));
            }
            EventMsg::TurnCompleted { .. } => break,
            EventMsg::TurnFailed { .. } | EventMsg::TurnAborted { .. } => {
                panic!("the turn should complete: {:?}", event.msg)
            }
            _ => {}
        }
    }
    let id = seen[0].trim_start_matches("started ").to_string();
    assert_eq!(
        seen,
        vec![
            format!("started {id}"),
            "approval".to_string(),
            format!("completed {id}")
        ]
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new line\n");
    server.verify();
}
