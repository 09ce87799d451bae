//! The routed mock: each sub-agent thread answered from its own script.

use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::support::*;

/// A sub-agent's request: `x-openai-subagent` plus turn metadata naming its thread.
async fn child_request(
    base_url: &str,
    nickname: Option<&str>,
    thread: &str,
    body: &Value,
) -> String {
    let mut metadata = json!({"thread_id": thread, "thread_source": "subagent"});
    if let Some(nickname) = nickname {
        metadata["agent_nickname"] = json!(nickname);
    }
    client()
        .post(format!("{base_url}/responses"))
        .header("x-openai-subagent", "collab_spawn")
        .header("x-codex-turn-metadata", metadata.to_string())
        .json(body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

fn said(body: &str) -> Vec<String> {
    parse_responses_frames(body)
        .into_iter()
        .filter_map(|(_, data)| {
            data["item"]["content"][0]["text"]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("m", text)])
}

#[tokio::test]
async fn the_catch_all_route_walks_its_script_once_per_thread() {
    let server = MockModelServer::start_routed(
        vec![],
        vec![
            ("Planck", vec![answer("planck")]),
            (EVERY_AGENT, vec![answer("first"), answer("second")]),
        ],
    )
    .await;
    let url = server.base_url();
    let body = responses_body("go");
    let mut heard = Vec::new();
    heard.extend(said(&child_request(&url, None, "t-a", &body).await));
    heard.extend(said(&child_request(&url, None, "t-b", &body).await));
    heard.extend(said(
        &child_request(&url, Some("Planck"), "t-p", &body).await,
    ));
    heard.extend(said(&child_request(&url, None, "t-a", &body).await));
    heard.extend(said(&child_request(&url, None, "t-b", &body).await));
    assert_eq!(heard, ["first", "first", "planck", "second", "second"]);
    assert_eq!(
        server.requests()[0].thread_id().as_deref(),
        Some("t-a"),
        "the thread id is read from the turn metadata"
    );

    // A third request of the same thread has nothing left to be answered with.
    child_request(&url, None, "t-a", &body).await;
    let failures = server.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("thread t-a") && failures[0].contains("catch-all route `*`"),
        "{failures:?}"
    );
}

#[tokio::test]
async fn spawned_agents_are_addressable_by_spawn_order() {
    let server = MockModelServer::start(vec![sse_turn(vec![ev_function_call(
        "w",
        "wait_agent",
        r#"{"targets":["{{agent:#1}}","{{agent:#0}}"]}"#,
    )])])
    .await;
    let spawned = |call: &str, id: &str, nickname: &str| {
        [
            json!({"type": "function_call", "call_id": call, "name": "spawn_agent", "arguments": "{}"}),
            json!({"type": "function_call_output", "call_id": call,
                   "output": json!({"agent_id": id, "nickname": nickname}).to_string()}),
        ]
    };
    let mut input = vec![json!({"type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": "go"}]})];
    input.extend(spawned("s1", "id-first", "Kant"));
    input.extend(spawned("s2", "id-second", "Nash"));
    let body = post(
        &server.base_url(),
        "/responses",
        &json!({"model": "m", "input": input}),
    )
    .await
    .text()
    .await
    .unwrap();
    let call = parse_responses_frames(&body)
        .into_iter()
        .find_map(|(_, data)| data["item"]["arguments"].as_str().map(str::to_owned))
        .unwrap();
    assert_eq!(call, r#"{"targets":["id-second","id-first"]}"#);
    server.verify();
}

/// A thread the catch-all route served must run its whole script: `verify` names the one
/// that stopped early (leftovers of `*` used to go unchecked).
#[tokio::test]
async fn a_thread_that_leaves_catch_all_entries_unrequested_is_reported() {
    let server = MockModelServer::start_routed(
        vec![],
        vec![(EVERY_AGENT, vec![answer("first"), answer("second")])],
    )
    .await;
    let url = server.base_url();
    let body = responses_body("go");
    for thread in ["t-a", "t-b", "t-a"] {
        child_request(&url, None, thread, &body).await;
    }
    assert_eq!(server.unused(), 1);
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.verify()))
        .expect_err("verify must fail");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("never requested by thread t-b") && !message.contains("thread t-a"),
        "{message}"
    );
}
