//! The per-request history check, script exhaustion and `verify`.

use std::panic::AssertUnwindSafe;

use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::support::*;

/// The panic message of `check`, or `None` when it did not panic.
fn panic_message(check: impl FnOnce()) -> Option<String> {
    let payload = std::panic::catch_unwind(AssertUnwindSafe(check)).err()?;
    Some(
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default(),
    )
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

#[tokio::test]
async fn missing_tool_output_is_rejected_and_recorded() {
    let server = MockModelServer::start(vec![sse_turn(vec![])]).await;
    let body = json!({"input": [
        user("go"),
        {"type": "function_call", "call_id": "call_9", "name": "exec_command", "arguments": "{}"},
    ]});
    let response = post(&server.base_url(), "/responses", &body).await;

    assert_eq!(response.status(), 500);
    let error: Value = response.json().await.unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("`call_9`"), "{message}");
    assert!(message.contains("has no function_call_output"), "{message}");

    let failures = server.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("request #1 (POST /v1/responses)"),
        "{failures:?}"
    );
    // The rejected request did not consume the script entry.
    assert_eq!(server.unused(), 1);
    let verdict = panic_message(|| server.verify()).unwrap();
    assert!(verdict.contains("call_9"), "{verdict}");
    assert!(verdict.contains("never requested"), "{verdict}");
}

/// Codex's deferred tools: a `tool_search_call` needs its `tool_search_output`.
#[tokio::test]
async fn tool_search_call_without_its_output_is_rejected() {
    let server = MockModelServer::start(vec![sse_turn(vec![])]).await;
    let call = json!({"type": "tool_search_call", "call_id": "ts1", "execution": "client",
                      "arguments": {"query": "agents"}});
    let answered = json!({"input": [
        user("go"),
        call,
        {"type": "tool_search_output", "call_id": "ts1", "execution": "client", "tools": []},
    ]});
    assert_eq!(
        history_problems(WireApi::Responses, &answered),
        Vec::<String>::new()
    );
    let body = json!({"input": [user("go"), call]});
    let response = post(&server.base_url(), "/responses", &body).await;
    assert_eq!(response.status(), 500);
    let failures = server.failures();
    assert!(
        failures[0].contains("tool_search_call `ts1` at input[1] has no tool_search_output"),
        "{failures:?}"
    );
}

#[tokio::test]
async fn duplicate_tool_output_is_rejected() {
    let server = MockModelServer::start(vec![sse_turn(vec![])]).await;
    let body = json!({"input": [
        user("go"),
        {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "p1", "output": "ok"},
        {"type": "custom_tool_call_output", "call_id": "p1", "output": "ok again"},
    ]});
    let response = post(&server.base_url(), "/responses", &body).await;
    assert_eq!(response.status(), 500);
    let failures = server.failures();
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].contains("duplicate output for call_id `p1`"),
        "{failures:?}"
    );
}

#[tokio::test]
async fn chat_tool_call_without_tool_message_is_rejected() {
    let server = MockModelServer::start(vec![MockResponse::ChatSse(chat_text_chunks("x"))]).await;
    let body = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "t2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "ok"},
    ]});
    let response = post(&server.base_url(), "/chat/completions", &body).await;
    assert_eq!(response.status(), 500);
    let failures = server.failures();
    assert_eq!(failures.len(), 1);
    assert!(failures[0].contains("`t2`"), "{failures:?}");
    assert!(!failures[0].contains("`t1`"), "{failures:?}");
}

#[tokio::test]
async fn well_formed_history_with_local_shell_call_passes() {
    let server = MockModelServer::start(vec![sse_turn(vec![])]).await;
    let body = json!({"input": [
        user("go"),
        {"type": "local_shell_call", "call_id": "ls1", "status": "completed",
         "action": {"type": "exec", "command": ["ls"]}},
        {"type": "function_call_output", "call_id": "ls1", "output": "a\nb"},
    ]});
    let response = post(&server.base_url(), "/responses", &body).await;
    assert_eq!(response.status(), 200);
    server.verify();
}

#[tokio::test]
async fn exhausted_script_answers_500_and_fails_verify() {
    let server = MockModelServer::start(vec![sse_turn(vec![])]).await;
    let first = post(&server.base_url(), "/responses", &responses_body("1")).await;
    assert_eq!(first.status(), 200);
    let second = post(&server.base_url(), "/responses", &responses_body("2")).await;
    assert_eq!(second.status(), 500);
    let error: Value = second.json().await.unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("used up"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 2);
    let verdict = panic_message(|| server.verify()).unwrap();
    assert!(verdict.contains("request #2"), "{verdict}");
    assert!(verdict.contains("1 problem(s)"), "{verdict}");
}

#[tokio::test]
async fn unused_entries_fail_verify_unless_allowed() {
    let server = MockModelServer::start(vec![sse_turn(vec![]), sse_turn(vec![])]).await;
    post(&server.base_url(), "/responses", &responses_body("1")).await;
    let verdict = panic_message(|| server.verify()).unwrap();
    assert!(
        verdict.contains("1 of 2 scripted responses were never requested"),
        "{verdict}"
    );
    assert_eq!(panic_message(|| server.verify_allow_unused()), None);
}

#[tokio::test]
async fn bodies_over_the_window_are_refused_without_using_the_script() {
    let options = ServerOptions {
        max_body_bytes: Some(200),
        ..ServerOptions::default()
    };
    let server = MockModelServer::start_with(vec![MockResponse::http(201, "")], options)
        .await
        .unwrap();
    let long = "x".repeat(300);
    let refused = post(&server.base_url(), "/responses", &responses_body(&long)).await;
    assert_eq!(refused.status(), 400);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "context_length_exceeded");
    let served = post(&server.base_url(), "/responses", &responses_body("short")).await;
    assert_eq!(served.status(), 201, "the script entry was still there");
    assert_eq!(server.rejected().len(), 1);
    assert!(server.rejected()[0] > 200);
    server.verify();
}

#[tokio::test]
async fn repeat_mode_cycles_the_script() {
    let options = ServerOptions {
        repeat: true,
        ..ServerOptions::default()
    };
    let server = MockModelServer::start_with(vec![MockResponse::http(201, "")], options)
        .await
        .unwrap();
    for _ in 0..3 {
        let response = post(&server.base_url(), "/responses", &responses_body("x")).await;
        assert_eq!(response.status(), 201);
    }
    server.verify();
}

#[tokio::test]
async fn unknown_path_and_wire_mismatch_are_recorded() {
    let server = MockModelServer::start(vec![MockResponse::ChatSse(chat_text_chunks("x"))]).await;
    let unknown = client()
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    // A Responses request answered by a chat script entry is served, but recorded.
    let mismatched = post(&server.base_url(), "/responses", &responses_body("x")).await;
    assert_eq!(mismatched.status(), 200);

    let failures = server.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(
        failures[0].contains("unexpected request GET /v1/models"),
        "{failures:?}"
    );
    assert!(
        failures[1].contains("wire_api and the script disagree"),
        "{failures:?}"
    );
}

#[tokio::test]
async fn non_json_body_is_rejected() {
    let server = MockModelServer::start(vec![sse_turn(vec![])]).await;
    let response = client()
        .post(format!("{}/responses", server.base_url()))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert!(server.failures()[0].contains("body is not JSON"));
    assert_eq!(server.single_request().body, Value::Null);
}
