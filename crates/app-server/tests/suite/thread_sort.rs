//! `thread/list`'s `sortKey`: `created_at` (the default) lists the newest thread first,
//! `updated_at` the one whose session changed last; an unknown key is refused.

use osprey_test_support::{MockModelServer, TempHome, WireApi, ev_assistant_message, sse_turn};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::client::Client;

fn ids(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sort_key_orders_by_creation_or_last_change() {
    let answers = (0..3)
        .map(|n| sse_turn(vec![ev_assistant_message(&format!("m{n}"), "ok")]))
        .collect();
    let server = MockModelServer::start(answers).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let params = json!({"approvalPolicy": "never", "sandbox": "danger-full-access"});
    let older = client.start_thread(work.path(), params.clone()).await;
    client.start_turn(&older, "first").await;
    client.turn_completed(&older).await;
    let newer = client.start_thread(work.path(), params).await;
    client.start_turn(&newer, "second").await;
    client.turn_completed(&newer).await;
    // The older thread goes on: its session file changes last.
    std::thread::sleep(std::time::Duration::from_millis(20));
    client.start_turn(&older, "again").await;
    client.turn_completed(&older).await;

    let by_created = client.request("thread/list", json!({})).await;
    assert_eq!(ids(&by_created), [newer.clone(), older.clone()]);
    let by_created = client
        .request("thread/list", json!({"sortKey": "created_at"}))
        .await;
    assert_eq!(ids(&by_created), [newer.clone(), older.clone()]);
    let by_updated = client
        .request("thread/list", json!({"sortKey": "updated_at"}))
        .await;
    assert_eq!(ids(&by_updated), [older, newer]);

    let error = client
        .request_error("thread/list", json!({"sortKey": "size"}))
        .await;
    assert!(error.contains("unknown variant `size`"), "{error}");
    client.close().await;
}
