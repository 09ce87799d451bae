//! The JSON-RPC envelope as Codex's app-server puts it on the wire: no `jsonrpc` field (one
//! is accepted and ignored), ids echoed as sent, and `emittedAtMs` beside `method`/`params`
//! on server notifications.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every error Codex 0.171 was seen to send uses this code: unknown methods, bad params,
/// "Not initialized", and domain errors such as "thread not found: ID".
pub const INVALID_REQUEST_CODE: i64 = -32600;

/// A request id exactly as the peer sent it.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(untagged)]
pub enum RequestId {
    Integer(i64),
    String(String),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Integer(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

/// A request, in either direction: `{id, method, params?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcRequest {
    pub id: RequestId,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A notification, in either direction: `{method, params?, emittedAtMs?}`. Codex stamps
/// `emittedAtMs` (Unix milliseconds) on every server notification; clients send none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JsonRpcNotification {
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emitted_at_ms: Option<i64>,
}

/// A successful reply: `{id, result}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcResponse {
    pub id: RequestId,
    pub result: Value,
}

/// The body of an error reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcErrorBody {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// An error reply: `{id, error: {code, message, data?}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct JsonRpcError {
    pub id: RequestId,
    pub error: JsonRpcErrorBody,
}

impl JsonRpcError {
    /// The `-32600` error Codex sends for every failure, with `message` for the person.
    pub fn invalid_request(id: RequestId, message: impl Into<String>) -> Self {
        Self {
            id,
            error: JsonRpcErrorBody {
                code: INVALID_REQUEST_CODE,
                message: message.into(),
                data: None,
            },
        }
    }
}

/// One line of the protocol, whichever of the four kinds it is.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonRpcMessage {
    Request(JsonRpcRequest),
    Notification(JsonRpcNotification),
    Response(JsonRpcResponse),
    Error(JsonRpcError),
}

/// Why a line is not a JSON-RPC message.
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    #[error("the line is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("the message is not a JSON object")]
    NotAnObject,
    #[error("the message has none of `method`, `result` or `error`")]
    Unrecognised,
    #[error("the message has a malformed {kind}: {source}")]
    Malformed {
        kind: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

impl JsonRpcMessage {
    /// Parses one line (or any JSON text) into a message. A `jsonrpc` member is ignored.
    pub fn parse(text: &str) -> Result<Self, EnvelopeError> {
        let value: Value = serde_json::from_str(text).map_err(EnvelopeError::NotJson)?;
        Self::from_value(value)
    }

    /// Classifies a parsed JSON value: `method` with `id` is a request, `method` alone a
    /// notification, `result` a response and `error` an error reply.
    pub fn from_value(mut value: Value) -> Result<Self, EnvelopeError> {
        let object = value.as_object_mut().ok_or(EnvelopeError::NotAnObject)?;
        object.remove("jsonrpc");
        let has = |key: &str| object.contains_key(key);
        let (kind, parsed) = if has("method") && has("id") {
            let r = serde_json::from_value(value).map(JsonRpcMessage::Request);
            ("request", r)
        } else if has("method") {
            let r = serde_json::from_value(value).map(JsonRpcMessage::Notification);
            ("notification", r)
        } else if has("result") {
            let r = serde_json::from_value(value).map(JsonRpcMessage::Response);
            ("response", r)
        } else if has("error") {
            let r = serde_json::from_value(value).map(JsonRpcMessage::Error);
            ("error reply", r)
        } else {
            return Err(EnvelopeError::Unrecognised);
        };
        parsed.map_err(|source| EnvelopeError::Malformed { kind, source })
    }

    /// The message as a JSON value, without a `jsonrpc` member (as Codex writes it).
    pub fn to_value(&self) -> Value {
        let value = match self {
            JsonRpcMessage::Request(m) => serde_json::to_value(m),
            JsonRpcMessage::Notification(m) => serde_json::to_value(m),
            JsonRpcMessage::Response(m) => serde_json::to_value(m),
            JsonRpcMessage::Error(m) => serde_json::to_value(m),
        };
        // These types hold only strings, numbers and JSON values: serialising cannot fail.
        value.unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonrpc_field_is_accepted_and_dropped() {
        let m = JsonRpcMessage::parse(r#"{"jsonrpc":"2.0","id":"a","method":"x","params":{}}"#)
            .unwrap();
        assert_eq!(m.to_value(), json!({"id":"a","method":"x","params":{}}));
    }

    #[test]
    fn kinds_are_told_apart() {
        assert!(matches!(
            JsonRpcMessage::parse(r#"{"method":"initialized"}"#).unwrap(),
            JsonRpcMessage::Notification(_)
        ));
        assert!(matches!(
            JsonRpcMessage::parse(r#"{"id":3,"result":{}}"#).unwrap(),
            JsonRpcMessage::Response(JsonRpcResponse {
                id: RequestId::Integer(3),
                ..
            })
        ));
        assert!(matches!(
            JsonRpcMessage::parse(
                r#"{"error":{"code":-32600,"message":"Not initialized"},"id":0}"#
            )
            .unwrap(),
            JsonRpcMessage::Error(_)
        ));
        assert!(matches!(
            JsonRpcMessage::parse("{this is not json"),
            Err(EnvelopeError::NotJson(_))
        ));
        assert!(matches!(
            JsonRpcMessage::parse("{}"),
            Err(EnvelopeError::Unrecognised)
        ));
    }
}
