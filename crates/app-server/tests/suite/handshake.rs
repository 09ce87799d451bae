//! The handshake and every error path of the envelope: Codex's exact messages, all `-32600`,
//! and no reply at all to malformed JSON (the server keeps serving).

use osprey_test_support::{MockModelServer, TempHome, WireApi};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::client::Client;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_follow_codex_and_the_server_keeps_serving() {
    let server = MockModelServer::start(Vec::new()).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());

    let early = client
        .request_error(
            "thread/start",
            json!({"cwd": work.path().display().to_string()}),
        )
        .await;
    assert_eq!(early, "Not initialized");

    let init = client.initialize().await;
    assert!(
        init["userAgent"]
            .as_str()
            .unwrap()
            .starts_with("osprey-tests/"),
        "{init}"
    );
    assert_eq!(init["codexHome"], home.path().display().to_string());
    assert_eq!(init["ospreyHome"], home.path().display().to_string());
    assert_eq!(init["platformFamily"], "unix");
    assert_eq!(init["platformOs"], "linux");

    let again = client
        .request_error(
            "initialize",
            json!({"clientInfo": {"name": "x", "version": "1"}}),
        )
        .await;
    assert_eq!(again, "Already initialized");

    // Malformed JSON: no reply; the next request is answered normally.
    client.send_line("{this is not json").await;
    let unknown = client.request_error("no/such/method", json!({})).await;
    assert!(
        unknown.starts_with(
            "Invalid request: unknown variant `no/such/method`, expected one of `initialize`"
        ),
        "{unknown}"
    );
    let bad = client
        .request_error("thread/start", json!({"cwd": 42}))
        .await;
    assert_eq!(
        bad,
        "Invalid request: invalid type: integer `42`, expected a string"
    );

    let zero = "00000000-0000-0000-0000-000000000000";
    let not_found = client
        .request_error(
            "turn/start",
            json!({"threadId": zero, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    assert_eq!(not_found, format!("thread not found: {zero}"));
    let no_rollout = client
        .request_error("thread/resume", json!({"threadId": zero}))
        .await;
    assert_eq!(no_rollout, format!("no rollout found for thread id {zero}"));
    let bad_id = client
        .request_error("thread/read", json!({"threadId": "nope"}))
        .await;
    assert!(bad_id.contains("invalid thread id `nope`"), "{bad_id}");

    let thread = client.start_thread(work.path(), json!({})).await;
    let no_turn = client
        .request_error(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": "turn-1"}),
        )
        .await;
    assert_eq!(no_turn, "no active turn to interrupt");
    let no_steer = client
        .request_error(
            "turn/steer",
            json!({"threadId": thread, "expectedTurnId": "turn-1", "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert_eq!(no_steer, "no active turn to steer");
    let missing_dir = client
        .request_error(
            "thread/start",
            json!({"cwd": work.path().join("missing").display().to_string()}),
        )
        .await;
    assert!(missing_dir.contains("is not a directory"), "{missing_dir}");

    // A `jsonrpc` member is accepted; the reply carries none.
    client
        .send(&json!({"jsonrpc": "2.0", "id": 99, "method": "thread/loaded/list", "params": {}}))
        .await;
    let listed = client.response(99).await;
    assert_eq!(listed["result"]["data"], json!([thread]));
    assert!(listed.get("jsonrpc").is_none(), "{listed}");

    assert!(
        client.stderr().contains("not JSON-RPC"),
        "malformed input is logged: {}",
        client.stderr()
    );
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_list_and_config_read_reflect_the_real_config() {
    let server = MockModelServer::start(Vec::new()).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("[profiles.fast]\nmodel = \"fast-model\"\n");
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let models = client.request("model/list", json!({})).await;
    let data = models["data"].as_array().unwrap();
    assert_eq!(data[0]["id"], "mock-model");
    assert_eq!(data[0]["isDefault"], true);
    assert_eq!(data[0]["modelProvider"], "mock");
    assert!(
        data.iter().any(|m| m["modelProvider"] == "local"),
        "the embedded model is offered: {models}"
    );
    assert!(
        data.iter().any(|m| m["id"] == "fast-model"),
        "profile models are offered: {models}"
    );
    let page = client.request("model/list", json!({"limit": 1})).await;
    assert_eq!(page["data"].as_array().unwrap().len(), 1);
    assert_eq!(page["nextCursor"], "1");

    let config = client.request("config/read", json!({})).await;
    assert_eq!(config["config"]["model"], "mock-model");
    assert_eq!(config["config"]["model_provider"], "mock");
    assert_eq!(
        config["config"]["model_providers"]["mock"]["base_url"],
        server.base_url()
    );
    assert_eq!(
        config["config"]["model_providers"]["local"]["in_process"],
        true
    );
    assert!(client.close().await.success());
    server.verify();
}
