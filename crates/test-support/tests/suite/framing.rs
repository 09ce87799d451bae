//! Wire framing of Responses and Chat Completions streams, raw bodies and delays.

use std::time::Duration;
use std::time::Instant;

use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::*;

#[tokio::test]
async fn responses_stream_frames_each_event_with_its_type() {
    let turn = sse_turn(vec![
        ev_reasoning_item("rs_1", &["Looking around"], Some("enc")),
        ev_output_text_delta("Hel"),
        ev_output_text_delta("lo"),
        ev_assistant_message("msg_1", "Hello"),
    ]);
    let server = MockModelServer::start(vec![turn]).await;

    let response = post(&server.base_url(), "/responses", &responses_body("hi")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let body = response.text().await.unwrap();

    let frames = parse_responses_frames(&body);
    let kinds: Vec<&str> = frames.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(
        kinds,
        vec![
            "response.created",
            "response.output_item.done",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_item.done",
            "response.completed",
        ]
    );
    for (kind, data) in &frames {
        assert_eq!(data["type"].as_str(), Some(kind.as_str()));
    }
    assert_eq!(frames[4].1["item"]["content"][0]["text"], "Hello");
    assert_eq!(frames[1].1["item"]["encrypted_content"], "enc");
    server.verify();
}

#[tokio::test]
async fn paths_without_v1_are_served_too() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![]),
        MockResponse::ChatSse(chat_text_chunks("ok")),
    ])
    .await;
    let root = server.base_url().trim_end_matches("/v1").to_owned();

    let first = post(&root, "/responses", &responses_body("a")).await;
    assert_eq!(first.status(), 200);
    let second = post(&root, "/chat/completions", &chat_body("b")).await;
    assert_eq!(second.status(), 200);

    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, vec!["/responses", "/chat/completions"]);
    server.verify();
}

#[tokio::test]
async fn chat_stream_sends_data_lines_then_done() {
    let chunks = chat_tool_call_chunks(&[("call_1", "exec_command", r#"{"cmd":"ls -la"}"#)]);
    let server = MockModelServer::start(vec![MockResponse::ChatSse(chunks.clone())]).await;

    let response = post(&server.base_url(), "/chat/completions", &chat_body("list")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let body = response.text().await.unwrap();

    let frames: Vec<&str> = body.trim_end_matches('\n').split("\n\n").collect();
    assert_eq!(frames.last(), Some(&"data: [DONE]"));
    let parsed: Vec<Value> = frames[..frames.len() - 1]
        .iter()
        .map(|frame| serde_json::from_str(frame.strip_prefix("data: ").unwrap()).unwrap())
        .collect();
    assert_eq!(parsed, chunks);
    assert!(
        !body.contains("event:"),
        "chat streams carry no event lines"
    );
    server.verify();
}

#[tokio::test]
async fn malformed_body_is_sent_verbatim() {
    let raw = "event: response.created\ndata: {not json\n\n";
    let server = MockModelServer::start(vec![MockResponse::Malformed(raw.to_owned())]).await;
    let response = post(&server.base_url(), "/responses", &responses_body("x")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), raw);
    server.verify();
}

#[tokio::test]
async fn delayed_response_waits_before_answering() {
    let delay = Duration::from_millis(150);
    let server = MockModelServer::start(vec![MockResponse::delayed(
        delay,
        MockResponse::http(204, ""),
    )])
    .await;
    let started = Instant::now();
    let response = post(&server.base_url(), "/responses", &responses_body("x")).await;
    assert_eq!(response.status(), 204);
    assert!(
        started.elapsed() >= delay,
        "answered after {:?}",
        started.elapsed()
    );
    server.verify();
}
