//! Talking to language models: one client, two wire APIs, one stream of events.
//!
//! [`ModelClient`] takes a [`Prompt`] (model, history as Responses-API items, tool specs,
//! reasoning and output-schema options) and returns a [`ResponseStream`] of
//! [`ResponseEvent`]s. Whether the provider speaks the OpenAI Responses API or Chat
//! Completions (`wire_api` in its [`osprey_config::ModelProviderInfo`]) is invisible to the
//! caller: both adapters produce the same sequence — `Created`, deltas for live display,
//! `OutputItemDone` per finished item (the only thing history is built from), and
//! `Completed` with token usage.
//!
//! Failures are handled here so the agent loop does not have to:
//!
//! * **before streaming**, 408/429/5xx answers and connection failures are retried with
//!   exponential backoff and jitter (honouring `Retry-After`, each wait capped at 60 s) up
//!   to the provider's `request_max_retries`; other statuses fail at once with the
//!   server's own message;
//! * **while streaming**, a body that drops, stalls past `stream_idle_timeout_ms`, ends
//!   early or is garbled — or a stream-level rate limit — makes the client send the same
//!   request again, up to `stream_max_retries`, after announcing
//!   [`ResponseEvent::RetryingStream`] so consumers discard the partial attempt. Because
//!   tools run only after `Completed`, nothing runs twice.
//!
//! Every error is a [`ModelError`] naming the provider and URL, with
//! [`ModelError::to_wire`] mapping it to the protocol's [`osprey_protocol::ErrorKind`]
//! (context window exceeded, quota, rate limit, unauthorized, …). The API key is resolved
//! when the client is built, so a missing key fails before any request exists.
//!
//! The [`WireAdapter`] trait is the seam for providers that are not HTTP at all (the
//! embedded local model): [`ModelClient::from_adapter`] wraps any implementation.
//!
//! # Module layout
//!
//! * `client` — [`ModelClient`] and the [`WireAdapter`] trait.
//! * `prompt` — [`Prompt`], [`ResponseEvent`], [`ResponseStream`].
//! * `http` — the HTTP adapter: endpoint, headers and key, request retries, and the task
//!   that reads a stream and re-requests it when it breaks.
//! * `decode` — reading an SSE body with an idle timeout through a per-wire decoder.
//! * `responses` — Responses API request body (keys in Codex's order) and event decoder.
//! * `chat` — Chat Completions: history → messages, tool conversion (custom tools as
//!   single-string functions), and assembling streamed deltas into items.
//! * `retry` — backoff, `Retry-After` and "try again in" parsing, error-body messages.
//! * `error` — [`ModelError`] and [`StreamFault`].

mod chat;
mod client;
mod decode;
mod error;
mod http;
mod prompt;
mod provider;
mod responses;
mod retry;

pub use client::{ModelClient, WireAdapter};
pub use error::{ModelError, StreamFault};
pub use http::{DEFAULT_BACKOFF_BASE, DEFAULT_BASE_URL};
pub use prompt::{Prompt, ResponseEvent, ResponseStream, ToolChoice};
pub use provider::{ModelProviderFactory, ProviderRegistry};
