//! What the Responses adapter puts on the wire: path, query, headers, body keys in order.

use std::collections::BTreeMap;

use osprey_config::WireApi;
use osprey_model::{ModelClient, ResponseEvent};
use osprey_protocol::{ReasoningEffort, ResponseItem};
use osprey_test_support::{MockModelServer, SseEvent, ev_assistant_message, sse_turn};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{
    KEY, KEY_VAR, collect, done_items, prompt, provider, raw_server, run, top_level_keys,
};

fn sse_text(events: &[SseEvent]) -> String {
    events.iter().map(SseEvent::to_frame).collect()
}

#[tokio::test]
async fn responses_body_keys_go_out_in_codex_order_with_query_and_headers() {
    let reply = sse_text(&[
        ev_assistant_message("msg_1", "ok"),
        osprey_test_support::ev_completed("resp_1"),
    ]);
    let (base_url, server) = raw_server(reply).await;
    let mut provider = provider(&base_url, WireApi::Responses);
    provider.query_params = BTreeMap::from([("api-version".into(), "2025-04-01".into())]);
    provider.http_headers = BTreeMap::from([("x-static".into(), "static-value".into())]);
    provider.env_http_headers = BTreeMap::from([
        ("x-from-env".into(), "OSPREY_MODEL_TEST_HEADER".into()),
        ("x-unset".into(), "OSPREY_MODEL_TEST_UNSET".into()),
    ]);
    let env = |name: &str| match name {
        KEY_VAR => Some(KEY.to_owned()),
        "OSPREY_MODEL_TEST_HEADER" => Some("env-value".to_owned()),
        _ => None,
    };
    let client = ModelClient::new(provider, &env).unwrap();
    let mut prompt = prompt(vec![
        ResponseItem::developer_text("base instructions"),
        ResponseItem::user_text("hi"),
    ]);
    prompt.tools = vec![
        json!({"type": "function", "name": "exec_command", "description": "d",
        "strict": false, "parameters": {"type": "object", "properties": {}}}),
    ];
    prompt.reasoning_effort = Some(ReasoningEffort::High);
    prompt.reasoning_summary = true;
    prompt.output_schema = Some(json!({"type": "object"}));

    let (events, error) = run(&client, &prompt).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        done_items(&events),
        vec![ResponseItem::Message {
            id: Some("msg_1".into()),
            role: "assistant".into(),
            content: vec![osprey_protocol::ContentItem::output_text("ok")],
            extra: serde_json::from_value(json!({"status": "completed"})).unwrap(),
        }]
    );

    let raw = server.await.unwrap();
    let request_line = raw.head.lines().next().unwrap();
    assert_eq!(
        request_line,
        "POST /v1/responses?api-version=2025-04-01 HTTP/1.1"
    );
    let header = |name: &str| {
        raw.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    assert_eq!(
        header("authorization").as_deref(),
        Some("Bearer sk-test-123")
    );
    assert_eq!(header("content-type").as_deref(), Some("application/json"));
    assert_eq!(header("accept").as_deref(), Some("text/event-stream"));
    assert_eq!(header("x-static").as_deref(), Some("static-value"));
    assert_eq!(header("x-from-env").as_deref(), Some("env-value"));
    assert_eq!(header("x-unset"), None);

    assert_eq!(
        top_level_keys(&raw.body),
        [
            "model",
            "stream",
            "input",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "reasoning",
            "store",
            "include",
            "prompt_cache_key",
            "text"
        ]
    );
    let body: Value = serde_json::from_str(&raw.body).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "test-model",
            "stream": true,
            "input": [
                {"type": "message", "role": "developer",
                 "content": [{"type": "input_text", "text": "base instructions"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            ],
            "tools": prompt.tools,
            "tool_choice": "auto",
            "parallel_tool_calls": true,
            "reasoning": {"effort": "high", "summary": "auto"},
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "thread-1",
            "text": {"format": {"type": "json_schema", "strict": true,
                "schema": {"type": "object"}, "name": "osprey_output_schema"}},
        })
    );
}

#[tokio::test]
async fn responses_body_without_reasoning_or_schema_omits_those_keys() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let client = super::common::client(provider(&server.base_url(), WireApi::Responses));
    let mut prompt = prompt(vec![ResponseItem::user_text("hi")]);
    prompt.instructions = Some("system words".into());
    let (_, error) = collect(client.stream(&prompt).await.unwrap()).await;
    assert!(error.is_none(), "{error:?}");
    let request = server.single_request();
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-123"));
    for absent in ["reasoning", "include", "text"] {
        assert!(
            request.body.get(absent).is_none(),
            "{absent} should be omitted"
        );
    }
    assert_eq!(request.body["instructions"], "system words");
    server.verify();
}

#[tokio::test]
async fn a_base_url_with_a_trailing_slash_still_hits_the_endpoint() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let base = format!("{}/", server.base_url());
    let client = super::common::client(provider(&base, WireApi::Responses));
    assert_eq!(
        client.endpoint(),
        Some(format!("{}/responses", server.base_url()).as_str())
    );
    let (events, error) = run(&client, &prompt(vec![ResponseItem::user_text("hi")])).await;
    assert!(error.is_none(), "{error:?}");
    assert!(matches!(
        events.last(),
        Some(ResponseEvent::Completed { .. })
    ));
    server.verify();
}
