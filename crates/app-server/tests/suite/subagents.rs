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

/// A child's turns carry `rootTurnId` = the parent's (root's) turn, as in Codex's capture;
/// and a child closed and reopened by `resume_agent` stays loaded and streams its new turn
/// (the old registration's cleanup must not drop the reopened one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_turns_carry_the_root_turn_and_a_reopened_child_stays_loaded() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "spawn",
                "spawn_agent",
                json!({"message": "first task"}),
            )]),
            sse_turn(vec![call(
                "wait1",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 60000}),
            )]),
            sse_turn(vec![call(
                "close",
                "close_agent",
                json!({"target": "{{agent:Planck}}"}),
            )]),
            sse_turn(vec![call(
                "resume",
                "resume_agent",
                json!({"id": "{{agent:Planck}}"}),
            )]),
            sse_turn(vec![call(
                "send",
                "send_input",
                json!({"target": "{{agent:Planck}}", "message": "second task"}),
            )]),
            sse_turn(vec![call(
                "wait2",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 60000}),
            )]),
            sse_turn(vec![ev_assistant_message("m", "done twice")]),
        ],
        vec![(
            "Planck",
            vec![
                sse_turn(vec![ev_assistant_message("m", "first done")]),
                sse_turn(vec![ev_assistant_message("m", "second done")]),
            ],
        )],
    )
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let parent = client
        .start_thread(work.path(), json!({"approvalPolicy": "never"}))
        .await;
    client.notification("thread/started").await;
    let parent_turn = client.start_turn(&parent, "use a sub-agent twice").await;
    let done = client.turn_completed(&parent).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["rootTurnId"], parent_turn.as_str());

    let child = client
        .completed_items(&parent)
        .into_iter()
        .find(|i| i["tool"] == "spawnAgent")
        .and_then(|i| i["receiverThreadIds"][0].as_str().map(str::to_owned))
        .expect("the spawn item names the child");
    let child_turns: Vec<Value> = client
        .log
        .iter()
        .filter(|m| {
            matches!(
                m["method"].as_str(),
                Some("turn/started" | "turn/completed")
            ) && m["params"]["threadId"] == child.as_str()
        })
        .map(|m| m["params"]["turn"].clone())
        .collect();
    assert_eq!(
        child_turns.len(),
        4,
        "two turns started and completed: {child_turns:#?}"
    );
    for turn in &child_turns {
        assert_eq!(turn["rootTurnId"], parent_turn.as_str(), "{turn}");
    }
    // (Turn ids count per thread: the child's second turn is the one whose own id differs.)
    assert_ne!(child_turns[2]["id"], parent_turn.as_str());
    let wait2 = client
        .completed_items(&parent)
        .into_iter()
        .rfind(|i| i["tool"] == "wait")
        .unwrap();
    assert_eq!(
        wait2["agentsStates"][&child],
        json!({"status": "completed", "message": "second done"})
    );

    // The closed registration's pump says nothing about the child once the reopened one
    // has been announced (its late `notLoaded` would leave the client thinking the child
    // unloaded).
    let reopened_at = client
        .log
        .iter()
        .rposition(|m| {
            m["method"] == "thread/started" && m["params"]["thread"]["id"] == child.as_str()
        })
        .expect("the reopened child is announced");
    let late: Vec<&Value> = client.log[reopened_at..]
        .iter()
        .filter(|m| {
            m["method"] == "thread/status/changed"
                && m["params"]["threadId"] == child.as_str()
                && m["params"]["status"]["type"] == "notLoaded"
        })
        .collect();
    assert!(late.is_empty(), "{late:#?}");

    // The reopened child is still loaded after the closed one's events ended.
    let loaded = client.request("thread/loaded/list", json!({})).await;
    let ids: Vec<String> = serde_json::from_value(loaded["data"].clone()).unwrap();
    assert!(ids.contains(&child), "{ids:?}");
    server.verify();
}
