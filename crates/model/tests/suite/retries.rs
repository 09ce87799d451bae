//! Retrying requests (429, 5xx) and restarting broken streams (drop, stall, garbage).

use std::time::{Duration, Instant};

use osprey_config::WireApi;
use osprey_model::{ModelError, ResponseEvent, StreamFault};
use osprey_protocol::{ErrorKind, ResponseItem};
use osprey_test_support::{
    MockModelServer, MockResponse, ev_assistant_message, ev_output_text_delta, ev_response_created,
    sse_turn,
};
use pretty_assertions::assert_eq;

use super::common::{client, done_items, prompt, provider, run};

fn hi() -> osprey_model::Prompt {
    prompt(vec![ResponseItem::user_text("hi")])
}

#[tokio::test]
async fn rate_limit_with_retry_after_is_honoured_then_succeeds() {
    let server = MockModelServer::start(vec![
        MockResponse::rate_limited(1),
        sse_turn(vec![ev_assistant_message("msg_1", "ok")]),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let started = Instant::now();
    let (events, error) = run(&client, &hi()).await;
    assert!(error.is_none(), "{error:?}");
    // The backoff base is 1 ms, so only the server's Retry-After explains this wait.
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(done_items(&events).len(), 1);
    assert_eq!(server.requests().len(), 2);
    server.verify();
}

#[tokio::test]
async fn server_errors_are_retried_then_reported_when_retries_run_out() {
    let server = MockModelServer::start(vec![
        MockResponse::http(500, "upstream exploded"),
        MockResponse::http(502, "bad gateway"),
        MockResponse::http(503, "overloaded"),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let err = client.stream(&hi()).await.unwrap_err();
    assert!(
        matches!(&err, ModelError::Http { status: 503, attempts: 3, message, .. } if message == "overloaded"),
        "{err:?}"
    );
    assert!(err.to_string().contains("after 3 attempts"), "{err}");
    assert_eq!(err.to_wire().kind, ErrorKind::ServerError);
    assert_eq!(server.requests().len(), 3);
    server.verify();
}

#[tokio::test]
async fn a_server_error_then_success_streams_normally() {
    let server = MockModelServer::start(vec![
        MockResponse::http(500, "hiccup"),
        sse_turn(vec![ev_assistant_message("msg_1", "ok")]),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (events, error) = run(&client, &hi()).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, ResponseEvent::RetryingStream { .. }))
    );
    server.verify();
}

#[tokio::test]
async fn dropped_stream_is_announced_and_retried_from_the_same_request() {
    let server = MockModelServer::start(vec![
        MockResponse::DropAfter(vec![
            ev_response_created("resp_1"),
            ev_output_text_delta("par"),
        ]),
        sse_turn(vec![ev_assistant_message("msg_1", "whole answer")]),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (events, error) = run(&client, &hi()).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(events[0], ResponseEvent::Created);
    let retry = events
        .iter()
        .position(|e| {
            matches!(
                e,
                ResponseEvent::RetryingStream {
                    attempt: 1,
                    max: 1,
                    ..
                }
            )
        })
        .unwrap_or_else(|| panic!("no RetryingStream in {events:?}"));
    assert_eq!(events[retry + 1], ResponseEvent::Created);
    assert_eq!(
        done_items(&events[retry..])[0].message_text().as_deref(),
        Some("whole answer")
    );
    assert!(matches!(
        events.last(),
        Some(ResponseEvent::Completed { .. })
    ));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body, requests[1].body,
        "the retry must resend the same request"
    );
    server.verify();
}

#[tokio::test]
async fn a_stream_that_ends_before_completed_is_a_disconnect() {
    let server = MockModelServer::start(vec![
        MockResponse::Sse(vec![
            ev_response_created("r"),
            ev_assistant_message("m", "partial"),
        ]),
        MockResponse::Sse(vec![
            ev_response_created("r"),
            ev_assistant_message("m", "partial"),
        ]),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (events, error) = run(&client, &hi()).await;
    let err = error.unwrap();
    assert!(
        matches!(
            &err,
            ModelError::Stream {
                fault: StreamFault::EndedEarly,
                attempts: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.to_wire().kind, ErrorKind::StreamFailed);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ResponseEvent::RetryingStream { .. }))
            .count(),
        1
    );
    server.verify();
}

#[tokio::test]
async fn a_stalled_stream_hits_the_idle_timeout() {
    let server =
        MockModelServer::start(vec![MockResponse::Hang(vec![ev_response_created("r")])]).await;
    let mut provider = provider(&server.base_url(), WireApi::Responses);
    provider.stream_idle_timeout_ms = Some(200);
    provider.stream_max_retries = Some(0);
    let (events, error) = run(&client(provider), &hi()).await;
    assert_eq!(events, vec![ResponseEvent::Created]);
    let err = error.unwrap();
    assert!(
        matches!(&err, ModelError::Stream { fault: StreamFault::Idle(d), .. } if *d == Duration::from_millis(200)),
        "{err:?}"
    );
    assert!(err.to_string().contains("200 ms"), "{err}");
    server.verify();
}

#[tokio::test]
async fn malformed_stream_data_is_retried_then_reported_clearly() {
    let garbage = "event: response.created\ndata: {this is not json\n\n".to_owned();
    let server = MockModelServer::start(vec![
        MockResponse::Malformed(garbage.clone()),
        MockResponse::Malformed(garbage),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (events, error) = run(&client, &hi()).await;
    assert!(
        matches!(
            &events[..],
            [ResponseEvent::RetryingStream { attempt: 1, .. }]
        ),
        "{events:?}"
    );
    let err = error.unwrap();
    assert!(
        matches!(
            &err,
            ModelError::Stream {
                fault: StreamFault::Malformed(_),
                ..
            }
        ),
        "{err:?}"
    );
    // The error names the event that failed to parse and quotes its data.
    let text = err.to_string();
    assert!(
        text.contains("malformed stream data: the `response.created` event is not JSON")
            && text.contains(": {this is not json (after 2 attempts)"),
        "{text}"
    );
    server.verify();
}

fn rate_limited_with(header: &str, value: &str) -> MockResponse {
    MockResponse::Http {
        status: 429,
        headers: vec![(header.to_owned(), value.to_owned())],
        body: r#"{"error":{"message":"slow down","code":"rate_limit_exceeded"}}"#.to_owned(),
    }
}

/// Regression: a huge `retry-after-ms` panicked the request task (a `Duration` was built
/// before the cap), which left a turn hanging; now the wait is capped at 60 s.
#[tokio::test]
async fn a_huge_retry_after_waits_capped_instead_of_panicking() {
    for header in ["retry-after-ms", "retry-after"] {
        let server = MockModelServer::start(vec![
            rate_limited_with(header, "1e300"),
            sse_turn(vec![ev_assistant_message("msg_1", "ok")]),
        ])
        .await;
        let client = client(provider(&server.base_url(), WireApi::Responses));
        let mut task = tokio::spawn(async move { client.stream(&hi()).await.map(|_| ()) });
        // Still waiting (capped at 60 s) after the 429 arrived: no panic, no early retry.
        let outcome = tokio::time::timeout(Duration::from_millis(700), &mut task).await;
        task.abort();
        assert!(
            outcome.is_err(),
            "{header}: 1e300 should mean a capped wait, got {outcome:?}"
        );
        assert_eq!(server.requests().len(), 1, "{header}");
    }
}

#[tokio::test]
async fn negative_or_garbage_retry_after_falls_back_to_backoff() {
    for (header, value) in [
        ("retry-after-ms", "-250"),
        ("retry-after-ms", "NaN"),
        ("retry-after-ms", "-1e300"),
        ("retry-after", "-3"),
        ("retry-after", "inf"),
        ("retry-after", "tomorrow-ish"),
    ] {
        let server = MockModelServer::start(vec![
            rate_limited_with(header, value),
            sse_turn(vec![ev_assistant_message("msg_1", "ok")]),
        ])
        .await;
        let client = client(provider(&server.base_url(), WireApi::Responses));
        let started = Instant::now();
        let (events, error) = run(&client, &hi()).await;
        assert!(error.is_none(), "{header}: {value}: {error:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{header}: {value}: waited {:?}",
            started.elapsed()
        );
        assert_eq!(done_items(&events).len(), 1, "{header}: {value}");
        assert_eq!(server.requests().len(), 2, "{header}: {value}");
        server.verify();
    }
}
