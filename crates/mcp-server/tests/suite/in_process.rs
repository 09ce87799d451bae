//! The server over in-memory pipes with rmcp's client as the peer: error paths that need no
//! Python, and the shutdown of threads when the client leaves.

use std::collections::HashMap;

use osprey_mcp_server::{ServerOptions, serve};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

struct Connection {
    client: RunningService<RoleClient, ()>,
    server: tokio::task::JoinHandle<Result<(), osprey_mcp_server::McpServerError>>,
}

async fn connect(env: HashMap<String, String>, cwd: &std::path::Path) -> Connection {
    let options = ServerOptions {
        version: "test".to_string(),
        env,
        process_cwd: cwd.to_path_buf(),
        osprey_exe: None,
        providers: Vec::new(),
    };
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = tokio::spawn(serve(options, server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_io);
    let client = ().serve((client_read, client_write)).await.unwrap();
    Connection { client, server }
}

fn home_env(home: &TempHome) -> HashMap<String, String> {
    home.env()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_string().unwrap()))
        .collect()
}

fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

async fn call(conn: &Connection, tool: &str, args: Value) -> CallToolResult {
    conn.client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments(args)))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    value["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_api_key_is_a_tool_error_that_says_so() {
    let server = MockModelServer::start(vec![]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let mut env = home_env(&home);
    env.remove(TempHome::API_KEY_ENV);
    let cwd = tempfile::tempdir().unwrap();
    let conn = connect(env, cwd.path()).await;
    let result = call(&conn, "osprey", json!({"prompt": "hi"})).await;
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(message.contains(TempHome::API_KEY_ENV), "{message}");
    assert!(server.requests().is_empty(), "nothing reached the model");
    conn.client.cancel().await.unwrap();
    conn.server.await.unwrap().unwrap();
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_and_config_errors_name_what_to_fix() {
    let server = MockModelServer::start(vec![]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let conn = connect(home_env(&home), cwd.path()).await;

    let no_dir = call(&conn, "osprey", json!({"prompt": "hi", "cwd": "nowhere"})).await;
    assert_eq!(no_dir.is_error, Some(true));
    assert!(text(&no_dir).contains("nowhere"), "{}", text(&no_dir));

    let null = call(
        &conn,
        "osprey",
        json!({"prompt": "hi", "config": {"model": null}}),
    )
    .await;
    assert_eq!(null.is_error, Some(true));
    assert!(text(&null).contains("config.model"), "{}", text(&null));

    let no_thread = call(&conn, "osprey-reply", json!({"prompt": "more"})).await;
    assert_eq!(no_thread.is_error, Some(true));
    assert!(
        text(&no_thread).contains("threadId"),
        "{}",
        text(&no_thread)
    );

    let unknown_tool = conn
        .client
        .call_tool(CallToolRequestParams::new("codex"))
        .await
        .unwrap_err()
        .to_string();
    assert!(unknown_tool.contains("osprey-reply"), "{unknown_tool}");

    conn.client.cancel().await.unwrap();
    conn.server.await.unwrap().unwrap();
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_returns_when_the_client_leaves_with_an_mcp_session_on_disk() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m1", "Hello.")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let conn = connect(home_env(&home), cwd.path()).await;
    let result = call(&conn, "osprey", json!({"prompt": "hi", "cwd": "."})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let thread_id = result.structured_content.as_ref().unwrap()["threadId"]
        .as_str()
        .unwrap()
        .to_string();
    conn.client.cancel().await.unwrap();
    // Shutting the threads down must not hang the server's exit.
    tokio::time::timeout(std::time::Duration::from_secs(10), conn.server)
        .await
        .expect("serve returned after the client left")
        .unwrap()
        .unwrap();

    // The session file exists and holds the answer.
    let sessions = home.path().join("sessions");
    let file = find_file(&sessions, &thread_id).expect("a session file named for the thread");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("Hello."), "{text}");
    let meta: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(meta["payload"]["source"], "mcp", "{meta}");
    assert_eq!(meta["payload"]["originator"], "osprey_mcp_server", "{meta}");
    server.verify();
}

fn find_file(dir: &std::path::Path, needle: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, needle) {
                return Some(found);
            }
        } else if path.extension().is_some_and(|e| e == "jsonl")
            && path.to_string_lossy().contains(needle)
        {
            return Some(path);
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_to_one_thread_take_turns() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m1", "one")]),
        sse_turn(vec![ev_assistant_message("m2", "two")]),
        sse_turn(vec![ev_assistant_message("m3", "three")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let conn = connect(home_env(&home), cwd.path()).await;
    let first = call(&conn, "osprey", json!({"prompt": "q1"})).await;
    let thread_id = first.structured_content.as_ref().unwrap()["threadId"].clone();
    let (a, b) = tokio::join!(
        call(
            &conn,
            "osprey-reply",
            json!({"threadId": thread_id, "prompt": "q2"})
        ),
        call(
            &conn,
            "osprey-reply",
            json!({"threadId": thread_id, "prompt": "q3"})
        ),
    );
    assert_eq!(a.is_error, Some(false), "{a:?}");
    assert_eq!(b.is_error, Some(false), "{b:?}");
    let mut answers = vec![text(&a), text(&b)];
    answers.sort();
    assert_eq!(answers, vec!["three", "two"]);
    // The turns ran one after the other: the last request carries all three questions.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let asked = requests[2].user_texts();
    for question in ["q1", "q2", "q3"] {
        assert!(
            asked.iter().any(|t| t == question),
            "{question} in {asked:?}"
        );
    }
    conn.client.cancel().await.unwrap();
    conn.server.await.unwrap().unwrap();
    server.verify();
}
