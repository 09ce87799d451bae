//! `osprey model serve`: the embedded model as an OpenAI-compatible HTTP server.
//!
//! Two endpoints, both streaming (SSE) when the request says `"stream": true`:
//! `POST /v1/chat/completions` and `POST /v1/responses`. Requests are translated into a
//! [`Prompt`] and run through the same adapter the agent uses, so tool calls are
//! grammar-constrained here too. Requests queue: one runs at a time. The server binds
//! wherever it is told; the CLI passes 127.0.0.1 only.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::{Stream, StreamExt};
use osprey_model::{ModelError, Prompt, ResponseEvent, ToolChoice, WireAdapter};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem, TokenUsage};
use serde_json::{Value, json};

use crate::LocalModelAdapter;

/// The model name the server reports.
pub const SERVED_MODEL: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m";

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    #[error("could not listen on {addr}: {source}; pick another port with --port")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("the server on {addr} failed: {source}")]
    Serve {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// The router, for tests that serve on their own listener.
pub fn router(adapter: Arc<LocalModelAdapter>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/responses", post(responses))
        .route("/v1/models", get(models))
        .with_state(adapter)
}

/// Serves until the process is stopped.
pub async fn serve(addr: SocketAddr, adapter: Arc<LocalModelAdapter>) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    axum::serve(listener, router(adapter))
        .await
        .map_err(|source| ServeError::Serve { addr, source })
}

async fn models() -> Json<Value> {
    Json(
        json!({"object": "list", "data": [{"id": SERVED_MODEL, "object": "model", "owned_by": "osprey"}]}),
    )
}

fn bad_request(message: impl Into<String>) -> Response {
    let body = json!({"error": {"message": message.into(), "type": "invalid_request_error"}});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// A failed request as OpenAI reports it. A prompt too long for the context is the
/// client's to fix (compact and resend), so it is a 400 with OpenAI's
/// `context_length_exceeded` code, which harnesses recognise.
fn server_error(err: &ModelError) -> Response {
    let code = error_code(err);
    let (status, kind) = if err.is_context_window_exceeded() {
        (StatusCode::BAD_REQUEST, "invalid_request_error")
    } else {
        (StatusCode::INTERNAL_SERVER_ERROR, "server_error")
    };
    let body = json!({"error": {"message": err.to_string(), "type": kind, "code": code}});
    (status, Json(body)).into_response()
}

/// The OpenAI error code for `err`.
fn error_code(err: &ModelError) -> &'static str {
    if err.is_context_window_exceeded() {
        "context_length_exceeded"
    } else {
        "server_error"
    }
}

/// Logs what a request asks for: enough to see what a client sends.
fn log_request(endpoint: &str, prompt: &Prompt, stream: bool) {
    let tools: Vec<&str> = prompt
        .tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let instructions = prompt.instructions.as_deref().map_or(0, str::len);
    tracing::info!(
        "{endpoint}: {} input items, instructions {instructions} bytes, tools [{}]{}",
        prompt.input.len(),
        tools.join(", "),
        if stream { ", streaming" } else { "" }
    );
}

/// The finished parts of one response.
#[derive(Default)]
struct Collected {
    text: String,
    calls: Vec<(String, String, String)>,
    usage: Option<TokenUsage>,
}

async fn collect(
    stream: impl Stream<Item = Result<ResponseEvent, ModelError>>,
) -> Result<Collected, ModelError> {
    let mut out = Collected::default();
    futures::pin_mut!(stream);
    while let Some(event) = stream.next().await {
        match event? {
            ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
                name,
                arguments,
                call_id,
                ..
            }) => out.calls.push((call_id, name, arguments)),
            ResponseEvent::OutputItemDone(item) => {
                out.text.push_str(&item.message_text().unwrap_or_default());
            }
            ResponseEvent::Completed { usage, .. } => out.usage = usage,
            _ => {}
        }
    }
    Ok(out)
}

// ---- Chat Completions ----

fn chat_prompt(body: &Value) -> Result<Prompt, String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("the request needs a \"messages\" array")?;
    let mut input = Vec::new();
    for m in messages {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let content = content_text(m.get("content"));
        match role {
            "tool" => input.push(ResponseItem::FunctionCallOutput {
                call_id: str_field(m, "tool_call_id"),
                output: FunctionCallOutputPayload::from(content),
            }),
            "assistant" => {
                if !content.is_empty() {
                    input.push(ResponseItem::assistant_text(content));
                }
                for call in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let f = call.get("function").cloned().unwrap_or(Value::Null);
                    input.push(ResponseItem::FunctionCall {
                        id: None,
                        name: str_field(&f, "name"),
                        arguments: str_field(&f, "arguments"),
                        call_id: str_field(call, "id"),
                        extra: Default::default(),
                    });
                }
            }
            "system" | "developer" => input.push(ResponseItem::developer_text(content)),
            _ => input.push(ResponseItem::user_text(content)),
        }
    }
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.get("function"))
                .map(|f| {
                    json!({"type": "function", "name": f.get("name"), "description": f.get("description"),
                        "parameters": f.get("parameters")})
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Prompt {
        model: SERVED_MODEL.to_string(),
        input,
        tools,
        tool_choice: tool_choice(body),
        ..Prompt::default()
    })
}

/// `"tool_choice": "required"` makes the answer a call; anything else lets the model choose.
/// (Naming one function is treated like "required"; the grammar does not narrow further.)
fn tool_choice(body: &Value) -> ToolChoice {
    match body.get("tool_choice") {
        Some(Value::String(choice)) if choice == "required" => ToolChoice::Required,
        Some(Value::Object(_)) => ToolChoice::Required,
        _ => ToolChoice::Auto,
    }
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn chat_usage(usage: Option<&TokenUsage>) -> Value {
    usage.map_or(Value::Null, |u| {
        json!({"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
            "total_tokens": u.total_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_input_tokens}})
    })
}

fn chat_tool_calls(calls: &[(String, String, String)]) -> Value {
    Value::Array(
        calls
            .iter()
            .enumerate()
            .map(|(i, (id, name, args))| {
                json!({"index": i, "id": id, "type": "function",
                    "function": {"name": name, "arguments": args}})
            })
            .collect(),
    )
}

async fn chat_completions(
    State(adapter): State<Arc<LocalModelAdapter>>,
    Json(body): Json<Value>,
) -> Response {
    let prompt = match chat_prompt(&body) {
        Ok(p) => p,
        Err(msg) => return bad_request(msg),
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    log_request("/v1/chat/completions", &prompt, streaming);
    let stream = match adapter.stream(&prompt).await {
        Ok(s) => s,
        Err(err) => return server_error(&err),
    };
    let created = now();
    let id = format!("chatcmpl-local-{created}");
    if !streaming {
        return match collect(stream).await {
            Ok(c) => {
                let finish = if c.calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                };
                let mut message = json!({"role": "assistant", "content": c.text});
                if !c.calls.is_empty() {
                    message["tool_calls"] = chat_tool_calls(&c.calls);
                }
                Json(
                    json!({"id": id, "object": "chat.completion", "created": created,
                    "model": SERVED_MODEL,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": chat_usage(c.usage.as_ref())}),
                )
                .into_response()
            }
            Err(err) => server_error(&err),
        };
    }
    let chunk = move |delta: Value, finish: Value, usage: Value| {
        let mut v = json!({"id": id, "object": "chat.completion.chunk", "created": created,
            "model": SERVED_MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if !usage.is_null() {
            v["usage"] = usage;
        }
        Event::default().data(v.to_string())
    };
    let events = stream
        .scan(false, move |saw_call, event| {
            let out: Vec<Event> = match event {
                Ok(ResponseEvent::Created) => vec![chunk(
                    json!({"role": "assistant", "content": ""}),
                    Value::Null,
                    Value::Null,
                )],
                Ok(ResponseEvent::OutputTextDelta { delta, .. }) => {
                    vec![chunk(json!({"content": delta}), Value::Null, Value::Null)]
                }
                Ok(ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
                    name,
                    arguments,
                    call_id,
                    ..
                })) => {
                    *saw_call = true;
                    vec![chunk(
                        json!({"tool_calls": chat_tool_calls(&[(call_id, name, arguments)])}),
                        Value::Null,
                        Value::Null,
                    )]
                }
                Ok(ResponseEvent::Completed { usage, .. }) => {
                    let finish = if *saw_call { "tool_calls" } else { "stop" };
                    vec![
                        chunk(json!({}), json!(finish), chat_usage(usage.as_ref())),
                        Event::default().data("[DONE]"),
                    ]
                }
                Ok(_) => vec![],
                Err(err) => vec![
                    Event::default().data(
                        json!({"error": {"message": err.to_string(), "code": error_code(&err)}})
                            .to_string(),
                    ),
                ],
            };
            futures::future::ready(Some(out))
        })
        .flat_map(|events| futures::stream::iter(events.into_iter().map(Ok::<_, Infallible>)));
    Sse::new(events).into_response()
}

// ---- Responses ----

fn responses_prompt(body: &Value) -> Result<Prompt, String> {
    let input = match body.get("input") {
        Some(Value::String(text)) => vec![ResponseItem::user_text(text.clone())],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                serde_json::from_value::<ResponseItem>(item.clone())
                    .map_err(|e| format!("bad input item: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err("the request needs \"input\" (a string or an array of items)".to_string()),
    };
    Ok(Prompt {
        model: SERVED_MODEL.to_string(),
        instructions: body
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string),
        input,
        tools: body
            .get("tools")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        parallel_tool_calls: body
            .get("parallel_tool_calls")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        tool_choice: tool_choice(body),
        ..Prompt::default()
    })
}

fn responses_usage(usage: Option<&TokenUsage>) -> Value {
    usage.map_or(Value::Null, |u| {
        json!({"input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "total_tokens": u.total_tokens,
            "input_tokens_details": {"cached_tokens": u.cached_input_tokens},
            "output_tokens_details": {"reasoning_tokens": 0}})
    })
}

async fn responses(
    State(adapter): State<Arc<LocalModelAdapter>>,
    Json(body): Json<Value>,
) -> Response {
    let prompt = match responses_prompt(&body) {
        Ok(p) => p,
        Err(msg) => return bad_request(msg),
    };
    let streaming = body.get("stream").and_then(Value::as_bool) == Some(true);
    log_request("/v1/responses", &prompt, streaming);
    let stream = match adapter.stream(&prompt).await {
        Ok(s) => s,
        Err(err) => return server_error(&err),
    };
    let id = format!("resp_local_{}", now());
    if !streaming {
        return match collect(stream).await {
            Ok(c) => {
                let mut output = Vec::new();
                if !c.text.is_empty() || c.calls.is_empty() {
                    output.push(
                        serde_json::to_value(ResponseItem::assistant_text(c.text))
                            .unwrap_or(Value::Null),
                    );
                }
                for (call_id, name, arguments) in c.calls {
                    output.push(json!({"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}));
                }
                Json(json!({"id": id, "object": "response", "status": "completed", "model": SERVED_MODEL,
                    "output": output, "usage": responses_usage(c.usage.as_ref())}))
                .into_response()
            }
            Err(err) => server_error(&err),
        };
    }
    let named = |kind: &str, data: Value| Event::default().event(kind).data(data.to_string());
    let events = stream.map(move |event| {
        let ev = match event {
            Ok(ResponseEvent::Created) => named("response.created",
                json!({"type": "response.created", "response": {"id": id, "status": "in_progress"}})),
            Ok(ResponseEvent::OutputItemAdded(item)) => named("response.output_item.added",
                json!({"type": "response.output_item.added", "item": item})),
            Ok(ResponseEvent::OutputTextDelta { delta, .. }) => named("response.output_text.delta",
                json!({"type": "response.output_text.delta", "delta": delta})),
            Ok(ResponseEvent::OutputItemDone(item)) => named("response.output_item.done",
                json!({"type": "response.output_item.done", "item": item})),
            Ok(ResponseEvent::Completed { response_id, usage }) => named("response.completed",
                json!({"type": "response.completed", "response": {"id": response_id.unwrap_or_else(|| id.clone()),
                    "status": "completed", "usage": responses_usage(usage.as_ref())}})),
            Ok(_) => Event::default().comment("ignored"),
            Err(err) => named("response.failed",
                json!({"type": "response.failed", "response": {"id": id, "status": "failed",
                    "error": {"code": error_code(&err), "message": err.to_string()}}})),
        };
        Ok::<_, Infallible>(ev)
    });
    Sse::new(events).into_response()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn a_prompt_too_long_for_the_context_is_reported_as_openai_does() {
        let overflow = ModelError::ContextWindowExceeded {
            provider: "local".into(),
            message: "the prompt is 2000 tokens".into(),
        };
        let response = server_error(&overflow);
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "context_length_exceeded");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        // Osprey's own HTTP client reads it as an overflow (and compacts).
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("context window"), "{message}");

        let other = ModelError::ResponseFailed {
            provider: "local".into(),
            code: None,
            message: "x".into(),
        };
        assert_eq!(
            server_error(&other).status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(error_code(&other), "server_error");
    }

    #[test]
    fn chat_messages_become_prompt_items() {
        let body = json!({"messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "write_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}],
            "tools": [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]});
        let prompt = chat_prompt(&body).unwrap();
        assert_eq!(prompt.input.len(), 4);
        assert_eq!(prompt.input[1], ResponseItem::user_text("hi"));
        assert_eq!(prompt.input[2].tool_call_id(), Some("c1"));
        assert_eq!(prompt.input[3].tool_output_call_id(), Some("c1"));
        assert_eq!(prompt.tools[0]["name"], "write_file");
        assert!(chat_prompt(&json!({})).is_err());
    }

    #[test]
    fn responses_input_accepts_text_or_items() {
        let p = responses_prompt(&json!({"input": "hello"})).unwrap();
        assert_eq!(p.input, vec![ResponseItem::user_text("hello")]);
        let p = responses_prompt(&json!({"input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "x"}]}]}))
        .unwrap();
        assert_eq!(p.input, vec![ResponseItem::user_text("x")]);
        assert!(responses_prompt(&json!({"input": 3})).is_err());
        assert_eq!(p.tool_choice, ToolChoice::Auto);
        let p = responses_prompt(&json!({"input": "x", "tool_choice": "required"})).unwrap();
        assert_eq!(p.tool_choice, ToolChoice::Required);
    }
}
