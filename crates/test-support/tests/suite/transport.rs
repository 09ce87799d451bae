//! Broken, stalled and plain-HTTP answers.

use std::time::Duration;

use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::support::*;

/// Reads the body chunk by chunk until it ends; returns the text and the error, if any.
async fn read_to_end(mut response: reqwest::Response) -> (String, Option<reqwest::Error>) {
    let mut text = String::new();
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => text.push_str(std::str::from_utf8(&bytes).unwrap()),
            Ok(None) => return (text, None),
            Err(err) => return (text, Some(err)),
        }
    }
}

#[tokio::test]
async fn drop_after_breaks_the_connection_before_completed() {
    let server = MockModelServer::start(vec![MockResponse::DropAfter(vec![
        ev_response_created("r1"),
        ev_assistant_message("m1", "partial answer"),
    ])])
    .await;
    let response = post(&server.base_url(), "/responses", &responses_body("x")).await;
    assert_eq!(response.status(), 200);

    let (text, error) = read_to_end(response).await;
    assert!(
        error.is_some(),
        "expected a broken stream, got a clean end after {text:?}"
    );
    assert!(
        text.contains("partial answer"),
        "events before the drop arrive: {text:?}"
    );
    assert!(!text.contains("response.completed"), "{text:?}");
    server.verify();
}

#[tokio::test]
async fn clean_end_without_completed_is_possible_with_plain_sse() {
    let server =
        MockModelServer::start(vec![MockResponse::Sse(vec![ev_response_created("r")])]).await;
    let response = post(&server.base_url(), "/responses", &responses_body("x")).await;
    let (text, error) = read_to_end(response).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(parse_responses_frames(&text).len(), 1);
    server.verify();
}

#[tokio::test]
async fn hang_keeps_the_stream_open_until_the_server_stops() {
    let server = MockModelServer::start(vec![MockResponse::Hang(vec![
        ev_response_created("r1"),
        ev_output_text_delta("partial"),
    ])])
    .await;
    let mut response = post(&server.base_url(), "/responses", &responses_body("x")).await;
    let mut text = String::new();
    while !text.contains("partial") {
        let bytes = response.chunk().await.unwrap().unwrap();
        text.push_str(std::str::from_utf8(&bytes).unwrap());
    }
    // Nothing more arrives while the server runs: a bounded wait must time out.
    let next = tokio::time::timeout(Duration::from_millis(300), response.chunk()).await;
    assert!(next.is_err(), "the hanging stream sent more: {next:?}");
    server.verify();

    let stopping = tokio::spawn(server.shutdown());
    let (rest, _) = read_to_end(response).await;
    assert!(!rest.contains("response.completed"), "{rest:?}");
    stopping.await.unwrap();
}

#[tokio::test]
async fn http_answers_carry_status_headers_and_body() {
    let server = MockModelServer::start(vec![
        MockResponse::rate_limited(7),
        MockResponse::http_json(400, &json!({"error": {"message": "bad tool schema"}})),
        MockResponse::Http {
            status: 503,
            headers: vec![("x-request-id".to_owned(), "req_42".to_owned())],
            body: "overloaded".to_owned(),
        },
    ])
    .await;
    let base = server.base_url();

    let limited = post(&base, "/responses", &responses_body("1")).await;
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["retry-after"], "7");
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");

    let bad = post(&base, "/chat/completions", &chat_body("2")).await;
    assert_eq!(bad.status(), 400);
    assert_eq!(bad.headers()["content-type"], "application/json");
    let body: Value = bad.json().await.unwrap();
    assert_eq!(body["error"]["message"], "bad tool schema");

    let busy = post(&base, "/responses", &responses_body("3")).await;
    assert_eq!(busy.status(), 503);
    assert_eq!(busy.headers()["x-request-id"], "req_42");
    assert_eq!(busy.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(busy.text().await.unwrap(), "overloaded");
    server.verify();
}

#[tokio::test]
async fn invalid_scripted_status_is_reported() {
    let server = MockModelServer::start(vec![MockResponse::http(42, "")]).await;
    let response = post(&server.base_url(), "/responses", &responses_body("x")).await;
    assert_eq!(response.status(), 500);
    assert!(
        server.failures()[0].contains("invalid HTTP status 42"),
        "{:?}",
        server.failures()
    );
}
