//! Reading one HTTP response body as SSE, with an idle timeout, through a wire-specific
//! [`Decoder`], and forwarding the resulting events to the consumer.

use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures::StreamExt;
use tokio::sync::mpsc;

use crate::ModelError;
use crate::error::StreamFault;
use crate::prompt::ResponseEvent;
use crate::retry::error_body_message;

/// Whether a decoder wants more frames.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The response is complete; stop reading.
    Done,
}

/// Why an attempt did not complete.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The stream itself is broken: dropped, stalled, ended early or garbled.
    Broken(StreamFault),
    /// The provider reported a failure in the stream (`response.failed`, an error chunk).
    Provider {
        code: Option<String>,
        message: String,
    },
}

/// A wire protocol's view of an SSE body.
pub(crate) trait Decoder: Send {
    /// Handles one frame, appending the events it yields to `out`. `event` is the frame's SSE
    /// `event:` name (`message` when the server sent none), for naming the frame in errors.
    fn frame(
        &mut self,
        event: &str,
        data: &str,
        out: &mut Vec<ResponseEvent>,
    ) -> Result<Flow, Failure>;
    /// The body ended without [`Flow::Done`]: finish (appending to `out`) or fail.
    fn end(&mut self, out: &mut Vec<ResponseEvent>) -> Result<(), Failure>;
}

/// How pumping one body ended.
pub(crate) enum Pumped {
    Completed,
    /// The consumer dropped the stream; stop quietly.
    ConsumerGone,
    Failed(Failure),
}

type Sender = mpsc::Sender<Result<ResponseEvent, ModelError>>;

/// Forwards events and makes sure each attempt opens with exactly one `Created`.
struct Forwarder<'a> {
    tx: &'a Sender,
    created: bool,
}

impl Forwarder<'_> {
    /// Sends the events; `false` when the consumer is gone.
    async fn send_all(&mut self, events: &mut Vec<ResponseEvent>) -> bool {
        for event in events.drain(..) {
            if matches!(event, ResponseEvent::Created) {
                if self.created {
                    continue;
                }
            } else if !self.created && self.tx.send(Ok(ResponseEvent::Created)).await.is_err() {
                return false;
            }
            self.created = true;
            if self.tx.send(Ok(event)).await.is_err() {
                return false;
            }
        }
        true
    }
}

/// Reads `response` as SSE until the decoder is done, the body fails, or nothing arrives
/// for `idle_timeout`.
pub(crate) async fn pump(
    response: reqwest::Response,
    decoder: &mut dyn Decoder,
    tx: &Sender,
    idle_timeout: Duration,
) -> Pumped {
    if is_json(response.headers()) {
        // That is a clear failure, not a stream worth retrying.
        let text = match tokio::time::timeout(idle_timeout, response.text()).await {
            Ok(Ok(text)) => text,
            _ => String::new(),
        };
        let (message, code) = error_body_message(&text);
        return Pumped::Failed(Failure::Provider {
            code: Some(code.unwrap_or_else(|| "not_an_event_stream".to_owned())),
            message: format!(
                "expected an event stream, but the server answered with JSON \
                 (does it support `stream: true`?): {message}"
            ),
        });
    }
    let mut frames = response.bytes_stream().eventsource();
    let mut forward = Forwarder { tx, created: false };
    let mut out = Vec::new();
    loop {
        let next = tokio::select! {
            () = tx.closed() => return Pumped::ConsumerGone,
            next = tokio::time::timeout(idle_timeout, frames.next()) => next,
        };
        let frame = match next {
            Err(_elapsed) => {
                return Pumped::Failed(Failure::Broken(StreamFault::Idle(idle_timeout)));
            }
            Ok(None) => {
                return match decoder.end(&mut out) {
                    Ok(()) if forward.send_all(&mut out).await => Pumped::Completed,
                    Ok(()) => Pumped::ConsumerGone,
                    Err(failure) => Pumped::Failed(failure),
                };
            }
            Ok(Some(Err(err))) => return Pumped::Failed(Failure::Broken(sse_fault(err))),
            Ok(Some(Ok(frame))) => frame,
        };
        if frame.data.is_empty() {
            // Comments and keep-alives carry no data.
            continue;
        }
        let flow = decoder.frame(&frame.event, &frame.data, &mut out);
        if !forward.send_all(&mut out).await {
            return Pumped::ConsumerGone;
        }
        match flow {
            Ok(Flow::Continue) => {}
            Ok(Flow::Done) => return Pumped::Completed,
            Err(failure) => return Pumped::Failed(failure),
        }
    }
}

/// The name an error gives a frame whose data could not be read: its SSE `event:` name, or
/// else the `"type"` its data declares (read leniently, since the data is not valid JSON).
pub(crate) fn frame_name(event: &str, data: &str) -> Option<String> {
    let event = event.trim();
    if !event.is_empty() && event != "message" {
        return Some(event.to_owned());
    }
    let after_key = &data[data.find("\"type\"")? + "\"type\"".len()..];
    let value = after_key.trim_start().strip_prefix(':')?.trim_start();
    let value = value.strip_prefix('"')?;
    let name = &value[..value.find('"')?];
    (!name.is_empty() && name.len() <= 100).then(|| name.to_owned())
}

/// Whether the body is JSON: a server that ignores `stream: true`, or a proxy answering
/// with an error object and a success status.
fn is_json(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

fn sse_fault(err: EventStreamError<reqwest::Error>) -> StreamFault {
    match err {
        EventStreamError::Transport(err) => StreamFault::Dropped(error_chain(&err)),
        EventStreamError::Utf8(err) => StreamFault::Malformed(format!("invalid UTF-8 ({err})")),
        EventStreamError::Parser(err) => {
            StreamFault::Malformed(format!("invalid SSE framing ({err})"))
        }
    }
}

/// An error and its causes, joined with `: ` (reqwest's own message omits the cause).
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
