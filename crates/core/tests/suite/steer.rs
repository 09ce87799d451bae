//! Steering: input added to the running turn reaches the model in that turn's next request,
//! shows as a user message of the same turn, and the turn ends once.

use super::harness::*;
use osprey_core::{CoreError, OspreyThread};
use osprey_protocol::{Event, EventMsg, Op, ThreadItem, TurnId, UserInput};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const STEERED: &str = "also mention steering";

fn text(t: &str) -> Vec<UserInput> {
    vec![UserInput::Text { text: t.into() }]
}

async fn next(thread: &Arc<OspreyThread>) -> Event {
    tokio::time::timeout(Duration::from_secs(30), thread.next_event())
        .await
        .expect("an event within 30 s")
        .expect("thread open")
}

fn is_end(msg: &EventMsg) -> bool {
    matches!(
        msg,
        EventMsg::TurnCompleted { .. } | EventMsg::TurnFailed { .. } | EventMsg::TurnAborted { .. }
    )
}

/// Reads events until the turn ends; returns them all.
async fn rest_of_turn(thread: &Arc<OspreyThread>, mut events: Vec<Event>) -> Vec<Event> {
    while !events.last().is_some_and(|e| is_end(&e.msg)) {
        events.push(next(thread).await);
    }
    events
}

/// The (phase, turn id) of every user-message item with this text.
fn user_message_events(events: &[Event], wanted: &str) -> Vec<(&'static str, Option<TurnId>)> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ItemStarted {
                item: ThreadItem::UserMessage { text, .. },
            } if text == wanted => Some(("started", e.turn_id.clone())),
            EventMsg::ItemCompleted {
                item: ThreadItem::UserMessage { text, .. },
            } if text == wanted => Some(("completed", e.turn_id.clone())),
            _ => None,
        })
        .collect()
}

fn ends(events: &[Event]) -> usize {
    events.iter().filter(|e| is_end(&e.msg)).count()
}

async fn thread_for(server: &MockModelServer) -> (TempHome, tempfile::TempDir, Arc<OspreyThread>) {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config(
        "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\ntools.shell_type = \"shell_command\"\n",
    );
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    (home, repo, thread)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_steered_during_a_tool_call_reaches_the_next_request_of_the_same_turn() {
    // The command waits for a file the test creates after steering, so the steer surely
    // arrives while the call runs.
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "c1",
            "shell_command",
            &json!({"command": "while [ ! -f go ]; do sleep 0.05; done; echo went", "timeout_ms": 60000})
                .to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m", "done, and steering noted")]),
    ])
    .await;
    let (_home, repo, thread) = thread_for(&server).await;
    let turn_id = thread.start_turn(user_turn("run it")).await.unwrap();
    let mut events = Vec::new();
    loop {
        let event = next(&thread).await;
        let started = matches!(
            event.msg,
            EventMsg::ItemStarted {
                item: ThreadItem::CommandExecution { .. }
            }
        );
        events.push(event);
        if started {
            break;
        }
    }
    let steered_into = thread.steer(text(STEERED)).await.unwrap();
    assert_eq!(steered_into, turn_id);
    std::fs::write(repo.path().join("go"), "").unwrap();
    let events = rest_of_turn(&thread, events).await;

    assert_eq!(ends(&events), 1, "one turn, ended once");
    assert!(
        matches!(&events.last().unwrap().msg, EventMsg::TurnCompleted { last_agent_message: Some(t), .. } if t == "done, and steering noted"),
        "{:?}",
        events.last()
    );
    assert_eq!(
        user_message_events(&events, STEERED),
        vec![
            ("started", Some(turn_id.clone())),
            ("completed", Some(turn_id))
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(!requests[0].user_texts().iter().any(|t| t == STEERED));
    // In the second request, the steered message comes after the call's output.
    let input = requests[1].input();
    let output_at = input
        .iter()
        .position(|i| i["type"] == "function_call_output" && i["call_id"] == "c1")
        .expect("the call's output");
    let steered_at = input
        .iter()
        .position(|i| i["role"] == "user" && i["content"][0]["text"] == STEERED)
        .expect("the steered input is in the second request");
    assert!(steered_at > output_at, "{input:?}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steer_while_the_model_answers_keeps_the_turn_going() {
    // The model's first answer has no tool calls; it would end the turn, but steered input
    // is waiting, so the turn sends it in another request.
    let server = MockModelServer::start(vec![
        MockResponse::delayed(
            Duration::from_secs(2),
            sse_turn(vec![ev_assistant_message("m1", "first answer")]),
        ),
        sse_turn(vec![ev_assistant_message("m2", "second answer")]),
    ])
    .await;
    let (_home, _repo, thread) = thread_for(&server).await;
    let turn_id = thread.start_turn(user_turn("answer me")).await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), server.wait_for_requests(1))
        .await
        .expect("the first request");
    assert_eq!(thread.steer(text(STEERED)).await.unwrap(), turn_id);
    let events = rest_of_turn(&thread, Vec::new()).await;

    assert_eq!(ends(&events), 1);
    assert!(
        matches!(&events.last().unwrap().msg, EventMsg::TurnCompleted { last_agent_message: Some(t), .. } if t == "second answer"),
        "{:?}",
        events.last()
    );
    assert_eq!(
        user_message_events(&events, STEERED),
        vec![
            ("started", Some(turn_id.clone())),
            ("completed", Some(turn_id))
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let texts = requests[1].user_texts();
    assert_eq!(texts.last().map(String::as_str), Some(STEERED), "{texts:?}");
    assert!(
        requests[1]
            .input()
            .iter()
            .any(|i| i["role"] == "assistant" && i["content"][0]["text"] == "first answer"),
        "the first answer is in the history before the steered input"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_with_no_regular_turn_running_is_refused() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let (_home, repo, thread) = thread_for(&server).await;

    // Nothing runs.
    let error = thread.steer(text("anyone?")).await.unwrap_err();
    assert!(matches!(error, CoreError::NoActiveTurn), "{error:?}");
    assert_eq!(error.to_string(), "no active turn to steer");

    // A user shell command takes no input.
    let shell = thread
        .start_turn(Op::RunUserShellCommand {
            command: "while [ ! -f go ]; do sleep 0.05; done".into(),
            timeout_ms: None,
            share_with_model: false,
        })
        .await
        .unwrap();
    loop {
        if matches!(next(&thread).await.msg, EventMsg::ItemStarted { .. }) {
            break;
        }
    }
    let error = thread.steer(text("into the shell")).await.unwrap_err();
    assert!(matches!(error, CoreError::NoActiveTurn), "{error:?}");
    std::fs::write(repo.path().join("go"), "").unwrap();
    let events = rest_of_turn(&thread, Vec::new()).await;
    assert_eq!(events.last().unwrap().turn_id, Some(shell));

    // After a turn ended.
    run_turn(&thread, "hi", vec![]).await;
    assert!(matches!(
        thread.steer(text("late")).await,
        Err(CoreError::NoActiveTurn)
    ));

    // A plain submit gets a warning instead of an error.
    thread
        .submit(Op::Steer {
            items: text("late"),
        })
        .await
        .unwrap();
    let event = next(&thread).await;
    assert!(
        matches!(&event.msg, EventMsg::Warning { message } if message.starts_with("no active turn to steer")),
        "{event:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        !requests[0]
            .user_texts()
            .iter()
            .any(|t| t == "anyone?" || t == "into the shell"),
        "refused input is not used"
    );
    server.verify();
}
