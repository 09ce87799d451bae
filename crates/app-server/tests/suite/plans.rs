//! The model's `update_plan` calls: `turn/plan/updated` live (as Codex sends them, with no
//! `plan` item), and a `plan` item per call in the thread's history.

use osprey_test_support::{
    MockModelServer, TempHome, WireApi, ev_assistant_message, ev_function_call, sse_turn,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::client::Client;

fn update_plan(
    call_id: &str,
    explanation: &str,
    statuses: [&str; 3],
) -> osprey_test_support::MockResponse {
    let args = json!({
        "explanation": explanation,
        "plan": [
            {"step": "Read the failing test", "status": statuses[0]},
            {"step": "Fix the parser", "status": statuses[1]},
            {"step": "Run the suite", "status": statuses[2]},
        ],
    });
    sse_turn(vec![ev_function_call(
        call_id,
        "update_plan",
        &args.to_string(),
    )])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_update_plan_call_is_a_turn_plan_updated_and_a_plan_item_in_history() {
    let server = MockModelServer::start(vec![
        update_plan(
            "plan_1",
            "Starting with the test.",
            ["in_progress", "pending", "pending"],
        ),
        update_plan(
            "plan_2",
            "The test fails as reported; fixing.",
            ["completed", "in_progress", "pending"],
        ),
        sse_turn(vec![ev_assistant_message("m1", "Fixed.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client
        .start_thread(
            work.path(),
            json!({"approvalPolicy": "never", "sandbox": "danger-full-access"}),
        )
        .await;
    let turn = client.start_turn(&thread, "fix the parser").await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "completed");

    let step = |step: &str, status: &str| json!({"step": step, "status": status});
    let updates: Vec<Value> = client
        .log_of("turn/plan/updated")
        .into_iter()
        .map(|m| m["params"].clone())
        .collect();
    assert_eq!(
        updates,
        [
            json!({
                "threadId": thread,
                "turnId": turn,
                "explanation": "Starting with the test.",
                "plan": [
                    step("Read the failing test", "inProgress"),
                    step("Fix the parser", "pending"),
                    step("Run the suite", "pending"),
                ],
            }),
            json!({
                "threadId": thread,
                "turnId": turn,
                "explanation": "The test fails as reported; fixing.",
                "plan": [
                    step("Read the failing test", "completed"),
                    step("Fix the parser", "inProgress"),
                    step("Run the suite", "pending"),
                ],
            }),
        ]
    );
    // Codex sends no item for `update_plan` (its `plan` item is plan mode's), so a client
    // never sees the same plan twice.
    let plan_items = client
        .log_of("item/started")
        .into_iter()
        .chain(client.log_of("item/completed"))
        .filter(|m| m["params"]["item"]["type"] == "plan")
        .count();
    assert_eq!(plan_items, 0);
    // The model was told the plan was taken.
    assert_eq!(
        server.requests()[1].output_for("plan_1").as_deref(),
        Some("Plan updated")
    );

    // The history keeps each plan, explanation first, in the order the calls came.
    let expected = [
        "Starting with the test.\n\n- [~] Read the failing test\n- [ ] Fix the parser\n- [ ] Run the suite",
        "The test fails as reported; fixing.\n\n- [x] Read the failing test\n- [~] Fix the parser\n- [ ] Run the suite",
    ];
    let read = client
        .request(
            "thread/read",
            json!({"threadId": thread, "includeTurns": true}),
        )
        .await;
    let resumed = client
        .request("thread/resume", json!({"threadId": thread}))
        .await;
    for thread in [&read["thread"], &resumed["thread"]] {
        let items = thread["turns"][0]["items"].as_array().unwrap();
        let kinds: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["userMessage", "plan", "plan", "agentMessage"]);
        let texts: Vec<&str> = items
            .iter()
            .filter(|i| i["type"] == "plan")
            .map(|i| i["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, expected);
        assert_ne!(items[1]["id"], items[2]["id"]);
    }
    assert!(client.close().await.success());
    server.verify();
}
