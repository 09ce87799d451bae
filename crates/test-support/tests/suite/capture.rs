//! What the server records about each request.

use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn requests_are_captured_with_lowercase_headers_and_json_body() {
    let server = MockModelServer::start(vec![sse_turn(vec![]), sse_turn(vec![])]).await;
    let body = json!({
        "model": "mock-model",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "first"}]},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "files"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second"}]},
        ],
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {}},
            {"type": "custom", "name": "apply_patch"},
        ],
    });
    let response = client()
        .post(format!("{}/responses", server.base_url()))
        .header("Authorization", "Bearer test-key")
        .header("X-Osprey-Trace", "Abc")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    post(&server.base_url(), "/responses", &responses_body("next")).await;
    server.wait_for_requests(2).await;

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.path, "/v1/responses");
    assert_eq!(first.headers["authorization"], "Bearer test-key");
    assert_eq!(first.headers["x-osprey-trace"], "Abc");
    assert_eq!(first.header("Content-Type"), Some("application/json"));
    assert_eq!(first.body, body);
    assert_eq!(first.input().len(), 4);
    assert_eq!(first.user_texts(), vec!["first", "second"]);
    assert_eq!(first.tool_names(), vec!["exec_command", "apply_patch"]);
    assert_eq!(first.output_for("c1").as_deref(), Some("files"));
    assert_eq!(requests[1].user_texts(), vec!["next"]);
    server.verify();
}

#[tokio::test]
async fn chat_requests_expose_messages_tools_and_outputs() {
    let server =
        MockModelServer::start(vec![MockResponse::ChatSse(chat_text_chunks("done"))]).await;
    let body = json!({
        "model": "mock-model",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "run it"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "exec_command", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "t1", "content": "ran"},
        ],
        "tools": [{"type": "function", "function": {"name": "exec_command", "parameters": {}}}],
    });
    post(&server.base_url(), "/chat/completions", &body).await;

    let request = server.single_request();
    assert_eq!(request.wire(), Some(WireApi::Chat));
    assert_eq!(request.messages().len(), 4);
    assert_eq!(request.user_texts(), vec!["run it"]);
    assert_eq!(request.tool_names(), vec!["exec_command"]);
    let outputs = request.function_call_outputs();
    assert_eq!(outputs.len(), 1);
    assert_eq!(
        (outputs[0].call_id.as_str(), outputs[0].output.as_str()),
        ("t1", "ran")
    );
    server.verify();
}
