//! The script a [`crate::MockModelServer`] plays: one [`MockResponse`] per incoming request.
//!
//! Scripts are plain data so that the same scenario can be written in Rust by a test or as
//! JSON by a benchmark script (see the `osprey-mock-model` binary). The JSON form is:
//!
//! ```json
//! [
//!   {"sse": [{"type": "response.created", "response": {"id": "r1"}}, …]},
//!   {"chat_sse": [{"choices": [{"index": 0, "delta": {"content": "hi"}}]}]},
//!   {"http": {"status": 429, "headers": {"retry-after": "1"}, "body": {"error": {}}}},
//!   {"drop_after": [...]}, {"hang": [...]}, {"malformed": "data: {not json\n\n"},
//!   {"delayed": {"delay_ms": 250, "response": {"sse": [...]}}}
//! ]
//! ```
//!
//! An `http` body given as a JSON string is sent verbatim; any other JSON value is sent as its
//! compact serialisation.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

/// One Responses-API server-sent event: a JSON object whose `type` names the event.
///
/// It is framed on the wire as `event: <type>\ndata: <json>\n\n`. Build them with the `ev_*`
/// functions or [`SseEvent::new`] for shapes the builders do not cover.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SseEvent(Value);

impl SseEvent {
    /// Wraps an arbitrary event object. Its `type` field becomes the `event:` line; an event
    /// without a string `type` is sent as a bare `data:` frame.
    pub fn new(data: Value) -> Self {
        Self(data)
    }

    /// The event's `type`, e.g. `response.output_item.done`.
    pub fn kind(&self) -> Option<&str> {
        self.0.get("type").and_then(Value::as_str)
    }

    /// The whole event object, as sent in the `data:` line.
    pub fn data(&self) -> &Value {
        &self.0
    }

    /// The SSE frame for this event, including the blank line that ends it.
    pub fn to_frame(&self) -> String {
        match self.kind() {
            Some(kind) => format!("event: {kind}\ndata: {}\n\n", self.0),
            None => format!("data: {}\n\n", self.0),
        }
    }
}

impl From<Value> for SseEvent {
    fn from(data: Value) -> Self {
        Self(data)
    }
}

/// The SSE frame for one Chat Completions chunk: `data: <json>\n\n`.
pub fn chat_frame(chunk: &Value) -> String {
    format!("data: {chunk}\n\n")
}

/// The frame that ends every Chat Completions stream.
pub const CHAT_DONE_FRAME: &str = "data: [DONE]\n\n";

/// What the server does with one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "ResponseRepr", into = "ResponseRepr")]
pub enum MockResponse {
    /// A Responses-API stream: status 200, `text/event-stream`, each event one frame, then
    /// a clean end of body. Leave out `response.completed` to script a stream that ends
    /// cleanly but early.
    Sse(Vec<SseEvent>),
    /// A Chat Completions stream: each chunk as `data: <json>`, then `data: [DONE]`.
    ChatSse(Vec<Value>),
    /// A plain HTTP answer (errors, rate limits). When `headers` has no `content-type`, the
    /// server picks `application/json` for a JSON body and `text/plain` otherwise.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Sends these Responses events, then aborts the connection mid-body: the client sees a
    /// transport error, never `response.completed`.
    DropAfter(Vec<SseEvent>),
    /// Sends these Responses events, then keeps the connection open, sending nothing, until
    /// the client hangs up or the server stops. For idle-timeout tests.
    Hang(Vec<SseEvent>),
    /// Status 200 `text/event-stream` with this raw text as the body, for parser tests.
    Malformed(String),
    /// Waits this long before producing the inner response (headers included).
    Delayed(Duration, Box<MockResponse>),
}

impl MockResponse {
    /// An HTTP answer with a text body and no extra headers.
    pub fn http(status: u16, body: impl Into<String>) -> Self {
        Self::Http {
            status,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// An HTTP answer with a JSON body, e.g. `400` with `{"error": {…}}`.
    pub fn http_json(status: u16, body: &Value) -> Self {
        Self::Http {
            status,
            headers: vec![("content-type".to_owned(), "application/json".to_owned())],
            body: body.to_string(),
        }
    }

    /// A `429 Too Many Requests` with `Retry-After: <seconds>` and an OpenAI-style error body.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let body = serde_json::json!({
            "error": {
                "message": "mock rate limit reached; retry after the given delay",
                "type": "requests",
                "param": null,
                "code": "rate_limit_exceeded",
            }
        });
        Self::Http {
            status: 429,
            headers: vec![
                ("content-type".to_owned(), "application/json".to_owned()),
                ("retry-after".to_owned(), retry_after_secs.to_string()),
            ],
            body: body.to_string(),
        }
    }

    /// `inner`, produced only after `delay`.
    pub fn delayed(delay: Duration, inner: MockResponse) -> Self {
        Self::Delayed(delay, Box::new(inner))
    }

    /// Which wire API this response only makes sense for; `None` for neutral answers
    /// (`Http`, `Malformed`).
    pub fn wire(&self) -> Option<WireApi> {
        match self {
            Self::Sse(_) | Self::DropAfter(_) | Self::Hang(_) => Some(WireApi::Responses),
            Self::ChatSse(_) => Some(WireApi::Chat),
            Self::Http { .. } | Self::Malformed(_) => None,
            Self::Delayed(_, inner) => inner.wire(),
        }
    }
}

/// The two model wire APIs the server speaks, told apart by request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireApi {
    /// `POST …/responses`.
    Responses,
    /// `POST …/chat/completions`.
    Chat,
}

impl WireApi {
    /// The wire API a request path belongs to, if any.
    pub fn from_path(path: &str) -> Option<Self> {
        if path.ends_with("/chat/completions") {
            Some(Self::Chat)
        } else if path.ends_with("/responses") {
            Some(Self::Responses)
        } else {
            None
        }
    }
}

/// The JSON shape of a [`MockResponse`]; see the module docs.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum ResponseRepr {
    Sse(Vec<SseEvent>),
    ChatSse(Vec<Value>),
    Http {
        status: u16,
        #[serde(default)]
        headers: BTreeMap<String, String>,
        #[serde(default)]
        body: Value,
    },
    DropAfter(Vec<SseEvent>),
    Hang(Vec<SseEvent>),
    Malformed(String),
    Delayed {
        delay_ms: u64,
        response: Box<ResponseRepr>,
    },
}

impl From<ResponseRepr> for MockResponse {
    fn from(repr: ResponseRepr) -> Self {
        match repr {
            ResponseRepr::Sse(events) => Self::Sse(events),
            ResponseRepr::ChatSse(chunks) => Self::ChatSse(chunks),
            ResponseRepr::Http {
                status,
                headers,
                body,
            } => Self::Http {
                status,
                headers: headers.into_iter().collect(),
                body: match body {
                    Value::Null => String::new(),
                    Value::String(text) => text,
                    other => other.to_string(),
                },
            },
            ResponseRepr::DropAfter(events) => Self::DropAfter(events),
            ResponseRepr::Hang(events) => Self::Hang(events),
            ResponseRepr::Malformed(raw) => Self::Malformed(raw),
            ResponseRepr::Delayed { delay_ms, response } => Self::Delayed(
                Duration::from_millis(delay_ms),
                Box::new(Self::from(*response)),
            ),
        }
    }
}

impl From<MockResponse> for ResponseRepr {
    fn from(response: MockResponse) -> Self {
        match response {
            MockResponse::Sse(events) => Self::Sse(events),
            MockResponse::ChatSse(chunks) => Self::ChatSse(chunks),
            MockResponse::Http {
                status,
                headers,
                body,
            } => Self::Http {
                status,
                headers: headers.into_iter().collect(),
                body: Value::String(body),
            },
            MockResponse::DropAfter(events) => Self::DropAfter(events),
            MockResponse::Hang(events) => Self::Hang(events),
            MockResponse::Malformed(raw) => Self::Malformed(raw),
            MockResponse::Delayed(delay, inner) => Self::Delayed {
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                response: Box::new(Self::from(*inner)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn frames_carry_the_event_type_line() {
        let event = SseEvent::new(json!({"type": "response.created", "response": {"id": "r"}}));
        let frame = event.to_frame();
        let data = frame
            .strip_prefix("event: response.created\ndata: ")
            .and_then(|rest| rest.strip_suffix("\n\n"))
            .unwrap();
        assert_eq!(serde_json::from_str::<Value>(data).unwrap(), *event.data());
        let untyped = SseEvent::new(json!({"x": 1}));
        assert_eq!(untyped.to_frame(), "data: {\"x\":1}\n\n");
    }

    #[test]
    fn json_script_round_trips() {
        let script = vec![
            MockResponse::Sse(vec![SseEvent::new(json!({"type": "response.created"}))]),
            MockResponse::ChatSse(vec![json!({"choices": []})]),
            MockResponse::rate_limited(2),
            MockResponse::DropAfter(vec![]),
            MockResponse::Hang(vec![]),
            MockResponse::Malformed("data: {\n\n".to_owned()),
            MockResponse::delayed(Duration::from_millis(15), MockResponse::http(503, "busy")),
        ];
        let text = serde_json::to_string(&script).unwrap();
        let back: Vec<MockResponse> = serde_json::from_str(&text).unwrap();
        // Header order is normalised by the JSON map, so compare after sorting.
        let normalise = |mut list: Vec<MockResponse>| {
            for item in &mut list {
                if let MockResponse::Http { headers, .. } = item {
                    headers.sort();
                }
            }
            list
        };
        assert_eq!(normalise(back), normalise(script));
    }

    #[test]
    fn json_http_body_may_be_an_object() {
        let parsed: MockResponse = serde_json::from_value(json!({
            "http": {"status": 400, "body": {"error": {"message": "bad"}}}
        }))
        .unwrap();
        assert_eq!(
            parsed,
            MockResponse::Http {
                status: 400,
                headers: vec![],
                body: "{\"error\":{\"message\":\"bad\"}}".to_owned(),
            }
        );
    }

    #[test]
    fn unknown_variant_is_rejected() {
        let err = serde_json::from_value::<MockResponse>(json!({"sse_typo": []})).unwrap_err();
        assert!(err.to_string().contains("sse_typo"), "{err}");
    }

    #[test]
    fn wire_is_taken_from_the_path() {
        assert_eq!(
            WireApi::from_path("/v1/responses"),
            Some(WireApi::Responses)
        );
        assert_eq!(WireApi::from_path("/chat/completions"), Some(WireApi::Chat));
        assert_eq!(WireApi::from_path("/v1/models"), None);
    }
}
