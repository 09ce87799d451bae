//! Sub-agents through the app server: a child thread is announced with `thread/started`,
//! its events and approval requests stream on the parent's connection under its own
//! `threadId`, the client answers them, `thread/loaded/list` shows it and `thread/list`
//! leaves it out unless asked.

use osprey_test_support::{
    MockModelServer, TempHome, WireApi, ev_assistant_message, ev_function_call, sse_turn,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::client::Client;

fn call(id: &str, name: &str, args: Value) -> osprey_test_support::SseEvent {
    ev_function_call(id, name, &args.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_approval_reaches_the_client_under_the_childs_thread_and_is_answered() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "spawn",
                "spawn_agent",
                json!({"message": "make the file"}),
            )]),
            sse_turn(vec![call(
                "wait",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 60000}),
            )]),
            sse_turn(vec![ev_assistant_message("m", "The child made it.")]),
        ],
        vec![(
            "Planck",
            vec![
                sse_turn(vec![call(
                    "c1",
                    "exec_command",
                    json!({"cmd": "touch child.txt"}),
                )]),
                sse_turn(vec![ev_assistant_message("m", "made child.txt")]),
            ],
        )],
    )
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let parent = client
        .start_thread(
            work.path(),
            json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write"}),
        )
        .await;
    client.notification("thread/started").await;
    client.start_turn(&parent, "use a sub-agent").await;

    let started = client.notification("thread/started").await;
    let child_thread = &started["params"]["thread"];
    let child = child_thread["id"].as_str().unwrap().to_owned();
    assert_ne!(child, parent);
    assert_eq!(child_thread["parentThreadId"], parent.as_str());
    assert_eq!(child_thread["agentNickname"], "Planck");
    assert_eq!(child_thread["threadSource"], "subagent");

    let ask = client
        .server_request("item/commandExecution/requestApproval")
        .await;
    assert_eq!(ask["params"]["threadId"], child.as_str(), "{ask}");
    assert_eq!(ask["params"]["itemId"], "c1");
    client.answer(&ask, json!({"decision": "accept"})).await;
    let child_turn = client.turn_completed(&child).await;
    assert_eq!(child_turn["status"], "completed");
    let done = client.turn_completed(&parent).await;
    assert_eq!(done["status"], "completed");
    assert!(work.path().join("child.txt").exists());

    // The child's own notifications came on this connection, under its id.
    let child_methods = client.methods_for(&child);
    for method in [
        "thread/started",
        "turn/started",
        "item/started",
        "item/completed",
        "turn/completed",
    ] {
        assert!(
            child_methods.contains(&method.to_owned()),
            "{child_methods:?}"
        );
    }
    let spawn_item = client
        .completed_items(&parent)
        .into_iter()
        .find(|i| i["type"] == "collabAgentToolCall" && i["tool"] == "spawnAgent")
        .unwrap();
    assert_eq!(spawn_item["receiverThreadIds"], json!([child]));
    assert_eq!(
        spawn_item["agentsStates"][&child],
        json!({"status": "pendingInit", "message": null})
    );
    let wait_item = client
        .completed_items(&parent)
        .into_iter()
        .find(|i| i["type"] == "collabAgentToolCall" && i["tool"] == "wait")
        .unwrap();
    assert_eq!(
        wait_item["agentsStates"][&child],
        json!({"status": "completed", "message": "made child.txt"})
    );

    let loaded = client.request("thread/loaded/list", json!({})).await;
    let mut ids: Vec<String> = serde_json::from_value(loaded["data"].clone()).unwrap();
    ids.sort();
    let mut expected = vec![parent.clone(), child.clone()];
    expected.sort();
    assert_eq!(ids, expected);
    let listed = client.request("thread/list", json!({})).await;
    let listed: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(listed, [parent.as_str()]);
    let with_children = client
        .request(
            "thread/list",
            json!({"sourceKinds": ["subAgentThreadSpawn"]}),
        )
        .await;
    assert_eq!(with_children["data"].as_array().unwrap().len(), 2);
    server.verify();
}
