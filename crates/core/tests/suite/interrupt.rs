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
        .submit(Op::UserTurn {
            items: vec![UserInput::Text { text: "run".into() }],
            cwd: None,
            approval_policy: None,
            sandbox_policy: None,
            model: None,
            effort: None,
            output_schema: None,
        })
        .await
        .unwrap();
    // Interrupt as soon as the command has printed something.
    let started = std::time::Instant::now();
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
                item: ThreadItem::CommandExecution { .. },
            } => {}
            _ => {}
        }
    }
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
