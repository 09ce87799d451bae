//! Shared helpers: a proxy-free HTTP client and request shortcuts.

use serde_json::Value;
use serde_json::json;

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// POSTs `body` to `base_url` + `path` (path relative to `/v1`).
pub async fn post(base_url: &str, path: &str, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{base_url}{path}"))
        .json(body)
        .send()
        .await
        .unwrap()
}

/// A minimal valid Responses request with a user message.
pub fn responses_body(text: &str) -> Value {
    json!({
        "model": "mock-model",
        "stream": true,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}],
    })
}

/// A minimal valid Chat Completions request with a user message.
pub fn chat_body(text: &str) -> Value {
    json!({
        "model": "mock-model",
        "stream": true,
        "messages": [{"role": "user", "content": text}],
    })
}

/// Splits a Responses SSE body into (event line, parsed data) pairs, asserting the framing.
pub fn parse_responses_frames(body: &str) -> Vec<(String, Value)> {
    assert!(
        body.ends_with("\n\n"),
        "body must end with a blank line: {body:?}"
    );
    body.trim_end_matches('\n')
        .split("\n\n")
        .map(|frame| {
            let mut lines = frame.lines();
            let event = lines
                .next()
                .unwrap()
                .strip_prefix("event: ")
                .unwrap()
                .to_owned();
            let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
            assert_eq!(lines.next(), None, "one event and one data line per frame");
            (event, serde_json::from_str(data).unwrap())
        })
        .collect()
}
