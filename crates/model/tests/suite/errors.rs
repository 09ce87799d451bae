//! Failures that must not be retried, and how they read.

use osprey_config::WireApi;
use osprey_model::{ModelClient, ModelError, ResponseEvent};
use osprey_protocol::{ErrorKind, ResponseItem};
use osprey_test_support::{
    MockModelServer, MockResponse, ev_assistant_message, ev_failed, ev_response_created, sse_turn,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{KEY_VAR, client, prompt, provider, run};

fn hi() -> osprey_model::Prompt {
    prompt(vec![ResponseItem::user_text("hi")])
}

#[tokio::test]
async fn bad_request_shows_the_server_message_and_is_not_retried() {
    let server = MockModelServer::start(vec![MockResponse::http_json(
        400,
        &json!({"error": {"message": "Invalid 'input[3]': unknown item type", "type":
            "invalid_request_error", "code": "invalid_value"}}),
    )])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let err = client.stream(&hi()).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("Invalid 'input[3]': unknown item type"),
        "{text}"
    );
    assert!(
        text.contains("400") && text.contains("/v1/responses"),
        "{text}"
    );
    assert_eq!(err.to_wire().kind, ErrorKind::BadRequest);
    assert_eq!(server.requests().len(), 1);
    server.verify();
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_shows_a_plain_body() {
    let server = MockModelServer::start(vec![MockResponse::http(401, "invalid api key")]).await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let err = client.stream(&hi()).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::Http { status: 401, attempts: 1, message, .. } if message == "invalid api key"),
        "{err:?}"
    );
    assert_eq!(err.to_wire().kind, ErrorKind::Unauthorized);
    assert_eq!(server.requests().len(), 1);
    server.verify();
}

#[tokio::test]
async fn missing_api_key_fails_before_any_request() {
    let server = MockModelServer::start(vec![]).await;
    let mut provider = provider(&server.base_url(), WireApi::Responses);
    provider.env_key_instructions = Some("Create a key in the dashboard.".into());
    let err = ModelClient::new(provider.clone(), &|_| None).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(KEY_VAR) && text.contains("Mock Provider") && text.contains("dashboard"),
        "{text}"
    );
    assert_eq!(err.to_wire().kind, ErrorKind::Unauthorized);
    // An empty value counts as missing too.
    let blank = ModelClient::new(provider, &|_| Some("  ".into())).unwrap_err();
    assert!(matches!(blank, ModelError::MissingApiKey { .. }));
    assert_eq!(server.requests().len(), 0);
    server.verify();
}

#[tokio::test]
async fn unreachable_base_url_names_the_url_after_retries() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let base_url = format!("http://{addr}/v1");
    let mut provider = provider(&base_url, WireApi::Responses);
    provider.request_max_retries = Some(1);
    let err = client(provider).stream(&hi()).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&format!("{base_url}/responses")), "{text}");
    assert!(
        matches!(err, ModelError::Connect { attempts: 2, .. }),
        "{err:?}"
    );
    assert_eq!(err.to_wire().kind, ErrorKind::ConnectionFailed);
}

#[tokio::test]
async fn response_failed_codes_map_to_clear_errors_without_retry() {
    let cases = [
        (
            "context_length_exceeded",
            ErrorKind::ContextWindowExceeded,
            "context window",
        ),
        (
            "insufficient_quota",
            ErrorKind::QuotaExceeded,
            "out of quota",
        ),
        ("invalid_prompt", ErrorKind::Other, "invalid_prompt"),
    ];
    for (code, kind, phrase) in cases {
        let server = MockModelServer::start(vec![MockResponse::Sse(vec![
            ev_response_created("resp_1"),
            ev_failed(code, "the provider explains"),
        ])])
        .await;
        let client = client(provider(&server.base_url(), WireApi::Responses));
        let (events, error) = run(&client, &hi()).await;
        let err = error.unwrap_or_else(|| panic!("{code}: expected an error"));
        assert_eq!(events, vec![ResponseEvent::Created], "{code}");
        assert_eq!(err.to_wire().kind, kind, "{code}");
        let text = err.to_string();
        assert!(
            text.contains(phrase) && text.contains("the provider explains"),
            "{text}"
        );
        assert_eq!(server.requests().len(), 1, "{code} must not be retried");
        server.verify();
    }
}

#[tokio::test]
async fn error_event_in_stream_is_reported() {
    let server = MockModelServer::start(vec![MockResponse::Sse(vec![
        ev_response_created("resp_1"),
        osprey_test_support::SseEvent::new(json!({"type": "error",
            "code": "context_length_exceeded", "message": "too long"})),
    ])])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (_, error) = run(&client, &hi()).await;
    assert_eq!(
        error.unwrap().to_wire().kind,
        ErrorKind::ContextWindowExceeded
    );
    server.verify();
}

#[tokio::test]
async fn a_stream_rate_limit_is_retried_after_the_hinted_delay() {
    let server = MockModelServer::start(vec![
        MockResponse::Sse(vec![
            ev_response_created("resp_1"),
            ev_failed(
                "rate_limit_exceeded",
                "Rate limit reached. Please try again in 20ms.",
            ),
        ]),
        sse_turn(vec![ev_assistant_message("msg_1", "ok")]),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (events, error) = run(&client, &hi()).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        matches!(
            &events[1],
            ResponseEvent::RetryingStream { attempt: 1, max: 1, reason } if reason.contains("rate_limit_exceeded")
        ),
        "{events:?}"
    );
    assert!(matches!(
        events.last(),
        Some(ResponseEvent::Completed { .. })
    ));
    server.verify();
}

#[tokio::test]
async fn a_stream_rate_limit_that_persists_ends_as_rate_limited() {
    let server = MockModelServer::start(vec![MockResponse::Sse(vec![ev_failed(
        "rate_limit_exceeded",
        "slow down",
    )])])
    .await;
    let mut provider = provider(&server.base_url(), WireApi::Responses);
    provider.stream_max_retries = Some(0);
    let (_, error) = run(&client(provider), &hi()).await;
    assert_eq!(error.unwrap().to_wire().kind, ErrorKind::RateLimited);
    server.verify();
}

#[tokio::test]
async fn json_instead_of_an_event_stream_is_a_clear_error_not_a_retry() {
    let server = MockModelServer::start(vec![MockResponse::http_json(
        200,
        &json!({"id": "chatcmpl-1", "choices": [{"message": {"content": "whole"}}]}),
    )])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Chat));
    let (events, error) = run(&client, &hi()).await;
    assert_eq!(events, vec![]);
    let text = error.unwrap().to_string();
    assert!(text.contains("expected an event stream"), "{text}");
    assert_eq!(server.requests().len(), 1);
    server.verify();
}
