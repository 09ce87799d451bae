//! A stream that breaks after a message and is retried: through `osprey exec --json`, the
//! message is shown once and the tool runs once.

use super::common::*;
use osprey_test_support::*;
use serde_json::{Value, json};

fn completed_messages(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
        .map(|e| e["item"]["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn retrying_args(prompt: &str) -> Vec<&str> {
    vec![
        "exec",
        "--json",
        "-s",
        "workspace-write",
        "-c",
        "model_providers.mock.stream_max_retries=2",
        prompt,
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_stream_shows_its_message_once_and_runs_its_tool_once() {
    let append = ev_function_call(
        "c1",
        "exec_command",
        &json!({"cmd": "echo ran >> log.txt", "login": false}).to_string(),
    );
    let server = MockModelServer::start(vec![
        // Cut after the message and the call, before response.completed.
        MockResponse::DropAfter(vec![
            ev_response_created("r1"),
            ev_assistant_message("m1", "Appending to the log."),
            append.clone(),
        ]),
        sse_turn(vec![
            ev_assistant_message("m1", "Appending to the log."),
            append,
        ]),
        sse_turn(vec![ev_assistant_message("m2", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &retrying_args("log it"), "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = jsonl(&out);
    assert_eq!(
        completed_messages(&events),
        ["Appending to the log.", "done"],
        "the message before the cut is shown once"
    );
    let started_messages = events
        .iter()
        .filter(|e| e["type"] == "item.started" && e["item"]["type"] == "agent_message")
        .count();
    assert!(started_messages <= 2, "{events:#?}");
    let log = std::fs::read_to_string(repo.path().join("log.txt")).unwrap();
    assert_eq!(log, "ran\n", "the command ran exactly once");
    let commands = events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .count();
    assert_eq!(commands, 1);
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_that_says_something_else_replaces_the_shown_text() {
    let server = MockModelServer::start(vec![
        MockResponse::DropAfter(vec![
            ev_response_created("r1"),
            ev_assistant_message("m1", "first draft"),
        ]),
        sse_turn(vec![ev_assistant_message("m1", "second draft")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &retrying_args("say"), "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = jsonl(&out);
    let completed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
        .collect();
    assert_eq!(completed.len(), 2, "{events:#?}");
    assert_eq!(
        completed[0]["item"]["id"], completed[1]["item"]["id"],
        "the same item, corrected"
    );
    assert_eq!(stdout_last_message(&events), "second draft");
    server.verify();
}

fn stdout_last_message(events: &[Value]) -> String {
    completed_messages(events)
        .last()
        .cloned()
        .unwrap_or_default()
}
