//! Threads: list with pagination and filters, read with turns, resume (loaded and from the
//! session file), fork, archive / unarchive, unsubscribe, and a client that leaves mid-turn.

use std::time::Duration;

use osprey_test_support::{
    MockModelServer, MockResponse, TempHome, WireApi, ev_assistant_message, ev_function_call,
    sse_turn,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::client::Client;

fn full_access() -> Value {
    json!({"approvalPolicy": "never", "sandbox": "danger-full-access"})
}

fn answer(n: usize) -> MockResponse {
    sse_turn(vec![ev_assistant_message(
        &format!("m{n}"),
        &format!("answer {n}"),
    )])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_read_resume_fork_and_archive() {
    let server = MockModelServer::start((0..5).map(answer).collect()).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let mut ids = Vec::new();
    for (n, cwd) in [work.path(), work.path(), other.path()]
        .into_iter()
        .enumerate()
    {
        let id = client.start_thread(cwd, full_access()).await;
        client.start_turn(&id, &format!("question {n}")).await;
        client.turn_completed(&id).await;
        ids.push(id);
    }

    // Pages of two, newest first, until the cursor runs out.
    let first = client.request("thread/list", json!({"limit": 2})).await;
    let page1: Vec<&str> = first["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(page1, [ids[2].as_str(), ids[1].as_str()]);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    assert!(cursor.ends_with(&format!("|{}", ids[1])), "{cursor}");
    let second = client
        .request("thread/list", json!({"limit": 2, "cursor": cursor}))
        .await;
    assert_eq!(second["data"][0]["id"], ids[0].as_str());
    assert!(second["nextCursor"].is_null());
    assert_eq!(second["data"][0]["preview"], "question 0");
    let in_other = client
        .request(
            "thread/list",
            json!({"cwd": other.path().display().to_string()}),
        )
        .await;
    assert_eq!(in_other["data"].as_array().unwrap().len(), 1);
    let search = client
        .request("thread/list", json!({"searchTerm": "QUESTION 1"}))
        .await;
    assert_eq!(search["data"][0]["id"], ids[1].as_str());
    let bad = client
        .request_error("thread/list", json!({"cursor": "garbage"}))
        .await;
    assert!(bad.contains("invalid cursor"), "{bad}");

    // Read with turns: one completed turn with the user message and the answer.
    let read = client
        .request(
            "thread/read",
            json!({"threadId": ids[0], "includeTurns": true}),
        )
        .await;
    let turns = read["thread"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0]["status"], "completed");
    let kinds: Vec<&str> = turns[0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["userMessage", "agentMessage"]);
    assert_eq!(turns[0]["id"], "turn-1");

    // Resume a loaded thread: same settings, the turns come back.
    let resumed = client
        .request("thread/resume", json!({"threadId": ids[0]}))
        .await;
    assert_eq!(resumed["approvalPolicy"], "never");
    assert_eq!(resumed["sandbox"]["type"], "dangerFullAccess");
    assert_eq!(resumed["thread"]["turns"].as_array().unwrap().len(), 1);

    // Fork: a new id, forkedFromId set, and it can run a turn of its own.
    let fork = client
        .request("thread/fork", json!({"threadId": ids[0]}))
        .await;
    let fork_id = fork["thread"]["id"].as_str().unwrap().to_owned();
    assert_ne!(fork_id, ids[0]);
    assert_eq!(fork["thread"]["forkedFromId"], ids[0].as_str());
    client.start_turn(&fork_id, "in the fork").await;
    assert_eq!(client.turn_completed(&fork_id).await["status"], "completed");
    let fork_turns = client
        .request(
            "thread/read",
            json!({"threadId": fork_id, "includeTurns": true}),
        )
        .await;
    assert_eq!(fork_turns["thread"]["turns"].as_array().unwrap().len(), 2);

    // Archive: gone from the list, listed as archived, back after unarchive.
    assert_eq!(
        client
            .request("thread/archive", json!({"threadId": ids[1]}))
            .await,
        json!({})
    );
    let archived_note = client.notification("thread/archived").await;
    assert_eq!(archived_note["params"]["threadId"], ids[1].as_str());
    let listed = client.request("thread/list", json!({})).await;
    assert!(
        !listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == ids[1].as_str())
    );
    let archived = client
        .request("thread/list", json!({"archived": true}))
        .await;
    assert_eq!(archived["data"][0]["id"], ids[1].as_str());
    let loaded = client.request("thread/loaded/list", json!({})).await;
    assert!(
        !loaded["data"].as_array().unwrap().contains(&json!(ids[1])),
        "archived threads are unloaded"
    );
    client
        .request("thread/unarchive", json!({"threadId": ids[1]}))
        .await;
    let listed = client.request("thread/list", json!({})).await;
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == ids[1].as_str())
    );

    // Unsubscribe: the last subscriber leaving unloads an idle thread.
    let gone = client
        .request("thread/unsubscribe", json!({"threadId": ids[2]}))
        .await;
    assert_eq!(gone["status"], "unsubscribed");
    let mut unloaded = false;
    for _ in 0..100 {
        let loaded = client.request("thread/loaded/list", json!({})).await;
        if !loaded["data"].as_array().unwrap().contains(&json!(ids[2])) {
            unloaded = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(unloaded, "an idle thread nobody watches is unloaded");
    let again = client
        .request("thread/unsubscribe", json!({"threadId": ids[2]}))
        .await;
    assert_eq!(again["status"], "notLoaded");
    // …and resuming it from its file works, with a turn after.
    client
        .request("thread/resume", json!({"threadId": ids[2]}))
        .await;
    client.start_turn(&ids[2], "back again").await;
    assert_eq!(client.turn_completed(&ids[2]).await["status"], "completed");
    let third = server.requests().last().unwrap().user_texts();
    assert!(
        third.iter().any(|t| t.contains("question 2")),
        "the resumed history reaches the model: {third:?}"
    );
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_leaves_mid_turn_leaves_a_resumable_thread() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "slow",
            "exec_command",
            &json!({"cmd": "sleep 5"}).to_string(),
        )]),
        answer(1),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), full_access()).await;
    client.start_turn(&thread, "slow work").await;
    client
        .wait_for("the command to start", |m| {
            m["method"] == "item/started" && m["params"]["item"]["type"] == "commandExecution"
        })
        .await;
    let status = client.close().await;
    assert!(
        status.success(),
        "the server exits cleanly when its client leaves"
    );

    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let read = client
        .request(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        )
        .await;
    let turns = read["thread"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0]["status"], "interrupted");
    assert_eq!(turns[0]["items"][0]["type"], "userMessage");
    client
        .request("thread/resume", json!({"threadId": thread}))
        .await;
    client.start_turn(&thread, "carry on").await;
    assert_eq!(client.turn_completed(&thread).await["status"], "completed");
    let last = server.requests().last().unwrap().clone();
    assert!(
        last.output_for("slow").is_some(),
        "the interrupted call has its output in the resumed history"
    );
    assert!(client.close().await.success());
    server.verify();
}
