//! Turns: streaming, interrupt, steer, the user's shell command, failures, compaction, and
//! many threads at once on one connection.

use std::time::Duration;

use osprey_test_support::{
    MockModelServer, MockResponse, TempHome, WireApi, ev_assistant_message, ev_completed,
    ev_failed, ev_function_call, ev_output_text_delta, ev_response_created, sse_turn,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::client::Client;

fn full_access() -> Value {
    json!({"approvalPolicy": "never", "sandbox": "danger-full-access"})
}

async fn setup(script: Vec<MockResponse>) -> (MockModelServer, TempHome, tempfile::TempDir) {
    let server = MockModelServer::start(script).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    (server, home, work)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_mid_stream_ends_the_turn_as_interrupted() {
    let (server, home, work) = setup(vec![MockResponse::Hang(vec![
        ev_response_created("r1"),
        ev_output_text_delta("partial answ"),
    ])])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), full_access()).await;
    let turn = client.start_turn(&thread, "talk").await;
    let delta = client.notification("item/agentMessage/delta").await;
    assert_eq!(delta["params"]["delta"], "partial answ");
    assert_eq!(delta["params"]["turnId"], turn.as_str());
    client
        .request(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        )
        .await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "interrupted");
    assert_eq!(done["items"], json!([]));
    let methods = client.methods_for(&thread);
    let started = methods.iter().position(|m| m == "turn/started").unwrap();
    assert!(
        methods[..started].contains(&"thread/status/changed".to_owned()),
        "{methods:?}"
    );
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_adds_input_to_the_running_turn() {
    let (server, home, work) = setup(vec![
        sse_turn(vec![ev_function_call(
            "s1",
            "exec_command",
            &json!({"cmd": "sleep 1"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "steered answer")]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), full_access()).await;
    let turn = client.start_turn(&thread, "start slow").await;
    client
        .wait_for("the sleep to start", |m| {
            m["method"] == "item/started" && m["params"]["item"]["type"] == "commandExecution"
        })
        .await;
    let wrong = client
        .request_error(
            "turn/steer",
            json!({"threadId": thread, "expectedTurnId": "turn-999", "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert!(wrong.contains("turn-999"), "{wrong}");
    let steered = client
        .request(
            "turn/steer",
            json!({"threadId": thread, "expectedTurnId": turn, "input": [{"type": "text", "text": "also mention steering"}]}),
        )
        .await;
    assert_eq!(steered, json!({"turnId": turn}));
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["id"], turn.as_str());
    let users: Vec<Value> = client
        .completed_items(&thread)
        .into_iter()
        .filter(|i| i["type"] == "userMessage")
        .collect();
    assert_eq!(users.len(), 2, "{users:#?}");
    assert_eq!(users[1]["content"][0]["text"], "also mention steering");
    let second = &server.requests()[1];
    assert!(
        second
            .user_texts()
            .iter()
            .any(|t| t.contains("also mention steering")),
        "the steered text reaches the model: {:?}",
        second.user_texts()
    );
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_shell_command_is_a_turn_with_one_command_item() {
    let (server, home, work) =
        setup(vec![sse_turn(vec![ev_assistant_message("m1", "I saw it")])]).await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), json!({})).await;
    let result = client
        .request(
            "thread/shellCommand",
            json!({"threadId": thread, "command": "echo from-user-shell"}),
        )
        .await;
    assert_eq!(result, json!({}));
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "completed");
    let items = client.completed_items(&thread);
    assert_eq!(items.len(), 1, "{items:#?}");
    assert_eq!(items[0]["type"], "commandExecution");
    assert_eq!(items[0]["source"], "userShell");
    assert_eq!(items[0]["aggregatedOutput"], "from-user-shell\n");
    assert_eq!(items[0]["exitCode"], 0);
    // Shared with the model by default: the next turn's request carries it.
    client.start_turn(&thread, "what did I run?").await;
    client.turn_completed(&thread).await;
    let body = server.requests()[0].input().to_vec();
    assert!(
        serde_json::to_string(&body)
            .unwrap()
            .contains("from-user-shell"),
        "the command and its output are in the history: {body:#?}"
    );
    // shareWithModel: false runs it for the user only.
    client
        .request(
            "thread/shellCommand",
            json!({"threadId": thread, "command": "echo private-output", "shareWithModel": false}),
        )
        .await;
    client.turn_completed(&thread).await;
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_sends_the_error_then_completes_as_failed() {
    let (server, home, work) = setup(vec![
        MockResponse::http(500, "upstream exploded"),
        sse_turn(vec![
            ev_response_created("r2"),
            ev_failed(
                "context_length_exceeded",
                "Your input exceeds the context window of this model.",
            ),
        ]),
        sse_turn(vec![ev_assistant_message("sum", "a summary")]),
        sse_turn(vec![
            ev_response_created("r4"),
            ev_failed(
                "context_length_exceeded",
                "Your input exceeds the context window of this model.",
            ),
        ]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), full_access()).await;
    client.start_turn(&thread, "fail please").await;
    let error = client.notification("error").await;
    assert_eq!(error["params"]["willRetry"], false);
    assert_eq!(
        error["params"]["error"]["codexErrorInfo"],
        "internalServerError"
    );
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["codexErrorInfo"], "internalServerError");
    let status_idx = client
        .log
        .iter()
        .position(|m| {
            m["method"] == "thread/status/changed" && m["params"]["status"]["type"] == "systemError"
        })
        .expect("systemError status");
    let error_idx = client
        .log
        .iter()
        .position(|m| m["method"] == "error")
        .unwrap();
    assert!(status_idx < error_idx);

    client.start_turn(&thread, "overflow").await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(
        done["error"]["codexErrorInfo"], "contextWindowExceeded",
        "{done}"
    );
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_threads_run_at_once_without_cross_talk() {
    const N: usize = 20;
    let script = (0..N)
        .map(|n| {
            sse_turn(vec![
                ev_response_created(&format!("r{n}")),
                ev_output_text_delta(&format!("answer number {n}")),
                ev_assistant_message(&format!("m{n}"), &format!("answer number {n}")),
                ev_completed(&format!("r{n}")),
            ])
        })
        .collect();
    let (server, home, work) = setup(script).await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let mut threads = Vec::new();
    for _ in 0..N {
        threads.push(client.start_thread(work.path(), full_access()).await);
    }
    for thread in &threads {
        client.start_turn(thread, "go").await;
    }
    let mut answers = Vec::new();
    for thread in &threads {
        let done = client.turn_completed(thread).await;
        assert_eq!(done["status"], "completed");
        let text = done["items"][0]["text"].as_str().unwrap().to_owned();
        // Everything this thread streamed belongs to its own answer.
        let streamed: String = client
            .log
            .iter()
            .filter(|m| {
                m["method"] == "item/agentMessage/delta"
                    && m["params"]["threadId"] == thread.as_str()
            })
            .map(|m| m["params"]["delta"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(streamed, text, "thread {thread}");
        let completed: Vec<Value> = client
            .completed_items(thread)
            .into_iter()
            .filter(|i| i["type"] == "agentMessage")
            .collect();
        assert_eq!(completed.len(), 1);
        assert_eq!(completed[0]["text"], text.as_str());
        answers.push(text);
    }
    answers.sort();
    answers.dedup();
    assert_eq!(answers.len(), N, "every thread got its own answer");
    let loaded = client
        .request("thread/loaded/list", json!({"limit": 5}))
        .await;
    assert_eq!(loaded["data"].as_array().unwrap().len(), 5);
    assert!(loaded["nextCursor"].is_string());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_start_runs_a_compaction_turn() {
    let (server, home, work) = setup(vec![
        sse_turn(vec![ev_assistant_message("m1", "first answer")]),
        sse_turn(vec![ev_assistant_message(
            "s1",
            "SUMMARY: the user asked a question",
        )]),
        sse_turn(vec![ev_assistant_message("m2", "after compaction")]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), full_access()).await;
    client.start_turn(&thread, "a question").await;
    client.turn_completed(&thread).await;
    assert_eq!(
        client
            .request("thread/compact/start", json!({"threadId": thread}))
            .await,
        json!({})
    );
    assert_eq!(client.turn_completed(&thread).await["status"], "completed");
    assert!(
        client
            .completed_items(&thread)
            .iter()
            .any(|i| i["type"] == "contextCompaction"),
        "{:#?}",
        client.log
    );
    client.start_turn(&thread, "next").await;
    client.turn_completed(&thread).await;
    let last = server.requests().last().unwrap().clone();
    let body = serde_json::to_string(last.input()).unwrap();
    assert!(
        body.contains("SUMMARY: the user asked a question"),
        "the next request starts from the summary"
    );
    assert!(client.close().await.success());
    server.verify();
}

/// A client that stops reading does not hold the turn up: the turn finishes (its session file
/// says so) while nothing is read, and once the client reads again it gets the whole text
/// (deltas merged, none lost) and every item notification.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_does_not_stall_the_turn() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const PIECES: usize = 4000;
    let piece = "0123456789".repeat(10);
    let mut events = vec![ev_response_created("r1")];
    events.extend((0..PIECES).map(|_| ev_output_text_delta(&piece)));
    let full = piece.repeat(PIECES);
    events.push(ev_assistant_message("m1", &full));
    events.push(ev_completed("r1"));
    let (server, home, work) = setup(vec![sse_turn(events)]).await;
    #[expect(clippy::disallowed_methods, reason = "the test runs the osprey binary")]
    let mut child = tokio::process::Command::new(super::client::osprey_bin())
        .arg("app-server")
        .current_dir(work.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .envs(home.env())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let cwd = work.path().display().to_string();
    for line in [
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "slow", "version": "1"}}}),
        json!({"id": 2, "method": "thread/start", "params": {"cwd": cwd, "approvalPolicy": "never", "sandbox": "danger-full-access"}}),
    ] {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let thread = loop {
        let line: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        if line["id"] == 2 {
            break line["result"]["thread"]["id"].as_str().unwrap().to_owned();
        }
    };
    let turn = json!({"id": 3, "method": "turn/start", "params": {"threadId": thread, "input": [{"type": "text", "text": "long answer"}]}});
    stdin
        .write_all(format!("{turn}\n").as_bytes())
        .await
        .unwrap();
    // Read nothing now: the server's stdout pipe fills up long before the 400 kB answer ends.
    let sessions = home.path().join("sessions");
    let mut finished = false;
    for _ in 0..400 {
        let files = walk(&sessions);
        if files.iter().any(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .contains("\"turn_completed\"")
        }) {
            finished = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(finished, "the turn finished while the client read nothing");
    let mut text = String::new();
    let mut completed = false;
    let mut delta_messages = 0;
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await
    {
        let message: Value = serde_json::from_str(&line).unwrap();
        match message["method"].as_str() {
            Some("item/agentMessage/delta") => {
                delta_messages += 1;
                text.push_str(message["params"]["delta"].as_str().unwrap());
            }
            Some("item/completed") if message["params"]["item"]["type"] == "agentMessage" => {
                assert_eq!(
                    message["params"]["item"]["text"].as_str().unwrap().len(),
                    full.len()
                );
            }
            Some("turn/completed") => {
                completed = true;
                break;
            }
            _ => {}
        }
    }
    assert!(
        completed,
        "turn/completed arrives once the client reads again"
    );
    assert_eq!(text.len(), full.len(), "no delta text was lost");
    assert_eq!(text, full);
    assert!(
        delta_messages < PIECES,
        "deltas were merged behind the slow reader ({delta_messages} messages)"
    );
    drop(stdin);
    let _ = child.wait().await;
    server.verify();
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}
