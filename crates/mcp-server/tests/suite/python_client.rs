//! The official Python MCP SDK as the client, the server binary over stdio, and the scripted
//! mock model behind it.

use std::collections::BTreeSet;

use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{event_types, python, run_client};

fn exec_call(id: &str, cmd: &str) -> SseEvent {
    ev_function_call(id, "exec_command", &json!({"cmd": cmd}).to_string())
}

fn message(id: &str, text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message(id, text)])
}

fn texts(result: &Value) -> Vec<String> {
    result["text"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_starts_continues_and_keeps_its_history() {
    let Some(python) = python() else { return };
    let server = MockModelServer::start(vec![
        message("m1", "First answer."),
        message("m2", "Second answer."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let cwd_arg = cwd.path().to_str().unwrap();
    let out = run_client(&python, &home, "conversation", &[cwd_arg]).await;

    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, vec!["osprey", "osprey-reply"]);
    assert_eq!(out["serverInfo"]["name"], "osprey-mcp-server");

    let first = &out["first"];
    assert_eq!(first["isError"], false, "{first}");
    assert_eq!(texts(first), vec!["First answer."]);
    let thread_id = first["structured"]["threadId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(first["structured"]["content"], "First answer.");

    let second = &out["second"];
    assert_eq!(second["isError"], false, "{second}");
    assert_eq!(texts(second), vec!["Second answer."]);
    assert_eq!(
        second["structured"]["threadId"], thread_id,
        "osprey-reply answers for the thread it was given"
    );

    // The second model request carries the first turn: its question and its answer.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["model"], "model-from-config",
        "the `config` argument overrides config.toml"
    );
    let user_texts = requests[1].user_texts();
    assert!(
        user_texts.iter().any(|t| t == "first question")
            && user_texts.iter().any(|t| t == "second question"),
        "{user_texts:?}"
    );
    let history = serde_json::to_string(requests[1].input()).unwrap();
    assert!(history.contains("First answer."), "{history}");

    let unknown = &out["unknown"];
    assert_eq!(unknown["isError"], true);
    assert!(texts(unknown)[0].contains("no thread"), "{unknown}");
    let bad = &out["bad"];
    assert_eq!(bad["isError"], true);
    assert!(texts(bad)[0].contains("sandbox"), "{bad}");

    // Events stream as notifications tagged with the thread and the request.
    let types = event_types(&out);
    for expected in [
        "thread_started",
        "turn_started",
        "item_completed",
        "turn_completed",
    ] {
        assert!(
            types.iter().any(|t| t == expected),
            "{expected} in {types:?}"
        );
    }
    for event in out["events"].as_array().unwrap() {
        assert_eq!(event["_meta"]["threadId"], thread_id, "{event}");
        assert!(!event["_meta"]["requestId"].is_null(), "{event}");
    }
    // Only the first call asked for progress.
    let progress: Vec<&str> = out["progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert!(progress.contains(&"turn started"), "{progress:?}");
    assert!(!progress.contains(&"Second answer."), "{progress:?}");
    server.verify();
}

/// Runs the approval scenario with the client answering `answer` and returns the client's
/// report, the mock server and the working directory.
async fn approval_run(
    python: &str,
    answer: &str,
    script: Vec<MockResponse>,
) -> (Value, MockModelServer, tempfile::TempDir) {
    let server = MockModelServer::start(script).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let out = run_client(
        python,
        &home,
        "approval",
        &[cwd.path().to_str().unwrap(), answer],
    )
    .await;
    (out, server, cwd)
}

fn touch_script() -> Vec<MockResponse> {
    vec![
        sse_turn(vec![exec_call("c1", "touch marker.txt")]),
        message("m2", "done"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepted_elicitation_runs_the_command() {
    let Some(python) = python() else { return };
    let (out, server, cwd) = approval_run(&python, "accept", touch_script()).await;
    assert_eq!(out["result"]["isError"], false, "{out}");
    assert_eq!(texts(&out["result"]), vec!["done"]);
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{out}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(message.contains("`touch marker.txt`"), "{message}");
    let thread_id = &out["result"]["structured"]["threadId"];
    assert_eq!(&asked[0]["meta"]["threadId"], thread_id);
    let choices: Vec<&str> = asked[0]["schema"]["properties"]["decision"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["const"].as_str().unwrap())
        .collect();
    assert!(
        choices.contains(&"approved") && choices.contains(&"abort"),
        "{choices:?}"
    );
    assert!(cwd.path().join("marker.txt").exists());
    let output = server.requests()[1].output_for("c1").unwrap();
    assert!(output.contains("exited with code 0"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declined_elicitation_skips_the_command_and_tells_the_model() {
    let Some(python) = python() else { return };
    let (out, server, cwd) = approval_run(&python, "decline", touch_script()).await;
    assert_eq!(out["result"]["isError"], false, "{out}");
    assert_eq!(out["elicitations"].as_array().unwrap().len(), 1);
    assert!(!cwd.path().join("marker.txt").exists());
    let output = server.requests()[1].output_for("c1").unwrap();
    assert!(output.contains("declined"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_elicitation_aborts_the_turn() {
    let Some(python) = python() else { return };
    let script = vec![sse_turn(vec![exec_call("c1", "touch marker.txt")])];
    let (out, server, cwd) = approval_run(&python, "cancel", script).await;
    assert_eq!(out["result"]["isError"], true, "{out}");
    let text = &texts(&out["result"])[0];
    assert!(text.contains("abort"), "{text}");
    assert!(!cwd.path().join("marker.txt").exists());
    assert!(event_types(&out).iter().any(|t| t == "turn_aborted"));
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_without_elicitation_gets_approvals_declined() {
    let Some(python) = python() else { return };
    let (out, server, cwd) = approval_run(&python, "none", touch_script()).await;
    assert_eq!(out["result"]["isError"], false, "{out}");
    assert!(out["elicitations"].as_array().unwrap().is_empty());
    assert!(
        event_types(&out).iter().any(|t| t == "approval_requested"),
        "the request is still reported as an event"
    );
    assert!(!cwd.path().join("marker.txt").exists());
    let output = server.requests()[1].output_for("c1").unwrap();
    assert!(output.contains("declined"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_threads_run_at_once() {
    let Some(python) = python() else { return };
    let server = MockModelServer::start(vec![
        message("m1", "Answer one."),
        message("m2", "Answer two."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let out = run_client(
        &python,
        &home,
        "concurrent",
        &[cwd.path().to_str().unwrap()],
    )
    .await;
    let results = &out["results"];
    let a = &results["a"];
    let b = &results["b"];
    assert_eq!(a["isError"], false, "{a}");
    assert_eq!(b["isError"], false, "{b}");
    assert_ne!(a["structured"]["threadId"], b["structured"]["threadId"]);
    let answers: BTreeSet<String> = [texts(a), texts(b)].concat().into_iter().collect();
    assert_eq!(
        answers,
        BTreeSet::from(["Answer one.".to_string(), "Answer two.".to_string()])
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_call_interrupts_the_turn_and_the_thread_takes_a_reply() {
    let Some(python) = python() else { return };
    let server = MockModelServer::start(vec![
        // A turn that has started answering and then stalls; the client cancels once it has
        // seen the first words, so the model request has certainly been made.
        MockResponse::Hang(vec![
            ev_response_created("resp_1"),
            ev_output_item_added(json!({
                "type": "message", "role": "assistant", "id": "msg_1",
                "status": "in_progress", "content": []
            })),
            ev_output_text_delta("Working"),
        ]),
        message("m2", "Still here."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let out = run_client(&python, &home, "cancel", &[cwd.path().to_str().unwrap()]).await;
    assert_eq!(out["cancelledCallReturned"], false);
    let reply = &out["reply"];
    assert_eq!(reply["isError"], false, "{out}");
    assert_eq!(texts(reply), vec!["Still here."]);
    assert_eq!(reply["structured"]["threadId"], out["threadId"]);
    let types = event_types(&out);
    let aborted = types.iter().position(|t| t == "turn_aborted");
    let completed = types.iter().position(|t| t == "turn_completed");
    assert!(
        matches!((aborted, completed), (Some(a), Some(c)) if a < c),
        "the cancelled turn was aborted before the reply's turn completed: {types:?}"
    );
    server.verify();
}
