//! Sub-agents through `osprey exec --json`: the parent's stream shows Codex's
//! `collab_tool_call` items and none of the children's own items, and a child's approval
//! request is declined (and said so) instead of hanging.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn call(id: &str, name: &str, args: Value) -> SseEvent {
    ev_function_call(id, name, &args.to_string())
}

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("m", text)])
}

fn shell(id: &str, command: &str) -> MockResponse {
    sse_turn(vec![call(id, "shell_command", json!({"command": command}))])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_json_shows_collab_items_and_declines_a_childs_approval() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![
                call(
                    "spawn_a",
                    "spawn_agent",
                    json!({"message": "Run echo A and report."}),
                ),
                call(
                    "spawn_b",
                    "spawn_agent",
                    json!({"message": "Run touch B and report."}),
                ),
            ]),
            sse_turn(vec![call(
                "wait_a",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 30000}),
            )]),
            sse_turn(vec![call(
                "wait_b",
                "wait_agent",
                json!({"targets": ["{{agent:Goodall}}"], "timeout_ms": 30000}),
            )]),
            sse_turn(vec![
                call(
                    "close_a",
                    "close_agent",
                    json!({"target": "{{agent:Planck}}"}),
                ),
                call(
                    "close_b",
                    "close_agent",
                    json!({"target": "{{agent:Goodall}}"}),
                ),
            ]),
            answer("Both children finished."),
        ],
        vec![
            ("Planck", vec![shell("a1", "echo A-out"), answer("A done")]),
            (
                "Goodall",
                vec![shell("b1", "touch b-created"), answer("B done")],
            ),
        ],
    )
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n\
         tools.shell_type = \"shell_command\"\n",
    );
    let repo = temp_git_repo();
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "--json", "spawn two agents"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = jsonl(&out);
    let parent = events[0]["thread_id"].as_str().unwrap().to_string();
    let last = server.root_requests().pop().unwrap();
    let id_of = |call: &str| {
        let output: Value = serde_json::from_str(&last.output_for(call).unwrap()).unwrap();
        output["agent_id"].as_str().unwrap().to_string()
    };
    let (a, b) = (id_of("spawn_a"), id_of("spawn_b"));
    let items: Vec<Value> = events
        .iter()
        .filter(|e| e["type"] == "item.started" || e["type"] == "item.completed")
        .map(|e| json!({"event": e["type"], "item": e["item"]}))
        .collect();
    let collab = |n: usize,
                  event: &str,
                  tool: &str,
                  receivers: Value,
                  prompt: Value,
                  states: Value,
                  status: &str| {
        json!({"event": event, "item": {
            "id": format!("item_{n}"), "type": "collab_tool_call", "tool": tool,
            "sender_thread_id": parent, "receiver_thread_ids": receivers, "prompt": prompt,
            "agents_states": states, "status": status,
        }})
    };
    let pending = json!({"status": "pending_init", "message": null});
    let done = |m: &str| json!({"status": "completed", "message": m});
    let expected = vec![
        collab(
            0,
            "item.started",
            "spawn_agent",
            json!([]),
            json!("Run echo A and report."),
            json!({}),
            "in_progress",
        ),
        collab(
            0,
            "item.completed",
            "spawn_agent",
            json!([a]),
            json!("Run echo A and report."),
            json!({a.clone(): pending}),
            "completed",
        ),
        collab(
            1,
            "item.started",
            "spawn_agent",
            json!([]),
            json!("Run touch B and report."),
            json!({}),
            "in_progress",
        ),
        collab(
            1,
            "item.completed",
            "spawn_agent",
            json!([b]),
            json!("Run touch B and report."),
            json!({b.clone(): pending}),
            "completed",
        ),
        collab(
            2,
            "item.started",
            "wait",
            json!([a]),
            Value::Null,
            json!({}),
            "in_progress",
        ),
        collab(
            2,
            "item.completed",
            "wait",
            json!([a]),
            Value::Null,
            json!({a.clone(): done("A done")}),
            "completed",
        ),
        collab(
            3,
            "item.started",
            "wait",
            json!([b]),
            Value::Null,
            json!({}),
            "in_progress",
        ),
        collab(
            3,
            "item.completed",
            "wait",
            json!([b]),
            Value::Null,
            json!({b.clone(): done("B done")}),
            "completed",
        ),
        collab(
            4,
            "item.started",
            "close_agent",
            json!([a]),
            Value::Null,
            json!({}),
            "in_progress",
        ),
        collab(
            4,
            "item.completed",
            "close_agent",
            json!([a]),
            Value::Null,
            json!({a: done("A done")}),
            "completed",
        ),
        collab(
            5,
            "item.started",
            "close_agent",
            json!([b]),
            Value::Null,
            json!({}),
            "in_progress",
        ),
        collab(
            5,
            "item.completed",
            "close_agent",
            json!([b]),
            Value::Null,
            json!({b: done("B done")}),
            "completed",
        ),
        json!({"event": "item.completed", "item": {"id": "item_6", "type": "agent_message", "text": "Both children finished."}}),
    ];
    assert_eq!(items, expected);
    // The child's command ran; the other's approval request was declined and said so.
    let planck = server.requests_for("Planck");
    assert!(planck[1].output_for("a1").unwrap().contains("A-out"));
    let goodall = server.requests_for("Goodall");
    assert!(!repo.path().join("b-created").exists());
    let declined = goodall[1].output_for("b1").unwrap();
    assert!(
        declined.contains("declined") || declined.contains("not run"),
        "{declined}"
    );
    let err = stderr(&out);
    assert!(
        err.contains("declined an approval request of sub-agent Goodall"),
        "{err}"
    );
    server.verify();
}
