//! Helpers shared by the suite: providers pointed at a test server, event collection, and
//! a raw one-shot HTTP server for checks the JSON-level capture cannot make (key order,
//! query string).

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers outside #[test] functions may panic on setup failures"
)]

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use osprey_config::{ModelProviderInfo, WireApi};
use osprey_model::{ModelClient, ModelError, Prompt, ResponseEvent, ResponseStream};
use osprey_protocol::ResponseItem;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

pub const KEY_VAR: &str = "OSPREY_MODEL_TEST_KEY";
pub const KEY: &str = "sk-test-123";

/// A provider at `base_url` needing [`KEY_VAR`], with small retry budgets.
pub fn provider(base_url: &str, wire_api: WireApi) -> ModelProviderInfo {
    ModelProviderInfo {
        id: "mock".into(),
        name: "Mock Provider".into(),
        base_url: Some(base_url.to_owned()),
        env_key: Some(KEY_VAR.into()),
        env_key_instructions: None,
        wire_api,
        http_headers: BTreeMap::new(),
        env_http_headers: BTreeMap::new(),
        query_params: BTreeMap::new(),
        request_max_retries: Some(2),
        stream_max_retries: Some(1),
        stream_idle_timeout_ms: Some(10_000),
    }
}

pub fn env_with_key(name: &str) -> Option<String> {
    (name == KEY_VAR).then(|| KEY.to_owned())
}

/// A client for `provider` with the test key and a 1 ms backoff base.
pub fn client(provider: ModelProviderInfo) -> ModelClient {
    ModelClient::new(provider, &env_with_key)
        .unwrap()
        .with_backoff_base(Duration::from_millis(1))
}

pub fn prompt(input: Vec<ResponseItem>) -> Prompt {
    Prompt {
        model: "test-model".into(),
        input,
        parallel_tool_calls: true,
        prompt_cache_key: "thread-1".into(),
        ..Prompt::default()
    }
}

/// Every event until the stream ends, and the error that ended it, if any.
pub async fn collect(mut stream: ResponseStream) -> (Vec<ResponseEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    let drained = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => events.push(event),
                Err(err) => return Some(err),
            }
        }
        None
    })
    .await;
    match drained {
        Ok(error) => (events, error),
        Err(_) => panic!("stream did not end within 30 s; events so far: {events:?}"),
    }
}

/// Streams `prompt` and collects; panics if the request itself fails.
pub async fn run(
    client: &ModelClient,
    prompt: &Prompt,
) -> (Vec<ResponseEvent>, Option<ModelError>) {
    collect(client.stream(prompt).await.unwrap()).await
}

/// The finished items among `events`.
pub fn done_items(events: &[ResponseEvent]) -> Vec<ResponseItem> {
    events
        .iter()
        .filter_map(|event| match event {
            ResponseEvent::OutputItemDone(item) => Some(item.clone()),
            _ => None,
        })
        .collect()
}

/// What the raw server saw: the request head (request line and headers) and the body text.
pub struct RawRequest {
    pub head: String,
    pub body: String,
}

/// A server that accepts one request, answers it with `sse_body` as an event stream, and
/// hands back the request exactly as it arrived.
pub async fn raw_server(sse_body: String) -> (String, tokio::task::JoinHandle<RawRequest>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            let n = socket.read(&mut chunk).await.unwrap();
            assert!(n > 0, "client closed before sending a full request head");
            buf.extend_from_slice(&chunk[..n]);
            if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break pos + 4;
            }
        };
        let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().unwrap())
            })
            .expect("request without content-length");
        while buf.len() < head_end + length {
            let n = socket.read(&mut chunk).await.unwrap();
            assert!(n > 0, "client closed mid-body");
            buf.extend_from_slice(&chunk[..n]);
        }
        let body = String::from_utf8(buf[head_end..head_end + length].to_vec()).unwrap();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{sse_body}",
            sse_body.len()
        );
        socket.write_all(response.as_bytes()).await.unwrap();
        socket.shutdown().await.unwrap();
        RawRequest { head, body }
    });
    (base_url, task)
}

/// The top-level keys of a JSON object text, in the order they appear in the text.
pub fn top_level_keys(text: &str) -> Vec<String> {
    let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap();
    let mut found: Vec<(usize, String)> = Vec::new();
    // Walk the text at nesting depth 1 so nested keys with the same names are not found.
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = None;
    for (i, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                if depth == 1
                    && let Some(s) = start.take()
                {
                    let key = &text[s..i];
                    if text[i + 1..].trim_start().starts_with(':') && value.contains_key(key) {
                        found.push((s, key.to_owned()));
                    }
                }
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                start = Some(i + 1);
            }
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    found.into_iter().map(|(_, key)| key).collect()
}
