//! Interrupting a turn: the running command is stopped, its call still gets an output, and
//! the next turn's history is well-formed.

use super::harness::*;
use osprey_protocol::{AbortReason, EventMsg, Op, ThreadItem, UserInput};
use osprey_test_support::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_aborts_the_turn_and_records_an_aborted_output() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "c1",
            "shell_command",
            &json!({"command": "echo started; sleep 60", "timeout_ms": 120000}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m", "ok")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\ntools.shell_type = \"shell_command\"\n",
    );
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    thread
        .submit(turn_with(vec![UserInput::Text { text: "run".into() }]))
        .await
        .unwrap();
    // Interrupt as soon as the command has printed something.
    let started = std::time::Instant::now();
    let mut command_completed = None;
    loop {
        let event = thread.next_event().await.unwrap();
        match &event.msg {
            EventMsg::CommandOutputDelta { chunk, .. } if chunk.contains("started") => {
                thread.submit(Op::Interrupt).await.unwrap();
            }
            EventMsg::TurnAborted { reason } => {
                assert_eq!(*reason, AbortReason::Interrupted);
                break;
            }
            EventMsg::TurnCompleted { .. } | EventMsg::TurnFailed { .. } => {
                panic!("the turn should have been aborted: {event:?}")
            }
            EventMsg::ItemCompleted {
                item:
                    ThreadItem::CommandExecution {
                        status,
                        aggregated_output,
                        ..
                    },
            } => command_completed = Some((*status, aggregated_output.clone())),
            _ => {}
        }
    }
    // Regression: the interrupted command's item used to stay "in progress" for good.
    let (status, output) =
        command_completed.expect("the command item was completed before the turn ended");
    assert_eq!(status, osprey_protocol::ItemStatus::Failed);
    let _ = output;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the sleep was stopped"
    );
    // The next turn sends a history where the interrupted call has its output.
    let events = run_turn(&thread, "again", vec![]).await;
    assert!(matches!(
        events.last().unwrap().msg,
        EventMsg::TurnCompleted { .. }
    ));
    let output = server.requests()[1].output_for("c1").unwrap();
    assert!(output.starts_with("aborted"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_exec_session_completes_its_item() {
    // exec_command yields while the process keeps running; interrupting the turn kills the
    // session, and its item must still end.
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "c1",
            "exec_command",
            &json!({"cmd": "echo begun; sleep 60", "yield_time_ms": 500, "login": false})
                .to_string(),
        )]),
        MockResponse::Hang(vec![ev_response_created("r2")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    thread
        .submit(turn_with(vec![UserInput::Text { text: "run".into() }]))
        .await
        .unwrap();
    // The call returns with the session still running; once the next request is hanging,
    // interrupt.
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        server.wait_for_requests(2),
    )
    .await
    .expect("the second request within 30 s");
    thread.submit(Op::Interrupt).await.unwrap();
    let mut started = None;
    let mut completed = None;
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), thread.next_event())
            .await
            .expect("an event within 30 s")
            .unwrap();
        match &event.msg {
            EventMsg::ItemStarted {
                item: ThreadItem::CommandExecution { id, .. },
            } => started = Some(id.clone()),
            EventMsg::ItemCompleted {
                item: ThreadItem::CommandExecution { id, status, .. },
            } => completed = Some((id.clone(), *status)),
            EventMsg::TurnAborted { .. } => break,
            _ => {}
        }
    }
    let started = started.expect("the command started");
    let (id, status) = completed.expect("the session's item was completed");
    assert_eq!(id, started);
    assert_eq!(status, osprey_protocol::ItemStatus::Failed);
}
