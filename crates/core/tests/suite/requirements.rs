//! Managed requirements bind every way in: a turn's policy overrides are checked like the
//! configuration is.

use super::harness::*;
use osprey_protocol::{EventMsg, Op, SandboxPolicy, UserInput};
use osprey_test_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_cannot_loosen_the_pinned_sandbox() {
    // Regression: Op::UserTurn overrides used to skip the requirements check.
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    std::fs::write(
        home.path().join("requirements.toml"),
        "allowed_sandbox_modes = [\"read-only\"]\n",
    )
    .unwrap();
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    thread
        .submit(Op::UserTurn {
            items: vec![UserInput::Text { text: "go".into() }],
            cwd: None,
            approval_policy: None,
            sandbox_policy: Some(SandboxPolicy::DangerFullAccess),
            model: None,
            effort: None,
            output_schema: None,
        })
        .await
        .unwrap();
    let error = loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(10), thread.next_event())
            .await
            .expect("an event")
            .unwrap();
        match event.msg {
            EventMsg::TurnFailed { error, .. } => break error,
            EventMsg::TurnCompleted { .. } => panic!("the turn must not run"),
            _ => {}
        }
    };
    assert!(
        error.message.contains("danger-full-access"),
        "{}",
        error.message
    );
    assert!(
        server.requests().is_empty(),
        "nothing was sent to the model"
    );
    // The thread still works within the requirements.
    run_turn(&thread, "go", vec![]).await;
    assert_eq!(server.requests().len(), 1);
    server.verify();
}
