//! What goes into a model request ([`Prompt`]) and what comes out ([`ResponseEvent`]).

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use osprey_protocol::{ReasoningEffort, ResponseItem, TokenUsage};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::ModelError;

/// One model request, independent of the wire API that carries it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    pub model: String,
    /// Sent as the Responses `instructions` field (or a leading Chat `system` message) only
    /// when set. Osprey's core sends its base instructions as a developer message in `input`.
    pub instructions: Option<String>,
    /// The whole history, oldest first; nothing is kept server-side between requests.
    pub input: Vec<ResponseItem>,
    /// Responses-API tool specs: `{"type":"function","name","description","strict",
    /// "parameters"}` or `{"type":"custom","name","description","format"}`. The Chat adapter
    /// converts them.
    pub tools: Vec<Value>,
    pub parallel_tool_calls: bool,
    /// Sent (with `include: ["reasoning.encrypted_content"]`) only when set.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Ask for reasoning summaries (`"summary":"auto"`) when reasoning is sent.
    pub reasoning_summary: bool,
    /// A JSON schema the final answer must follow.
    pub output_schema: Option<Value>,
    /// Lets the provider reuse its prompt cache across requests; the thread id.
    pub prompt_cache_key: String,
    /// Whether the answer may skip calling a tool (sent as `tool_choice` with tools).
    pub tool_choice: ToolChoice,
}

/// `tool_choice`: may the model answer in text, or must it call one of the tools?
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (`"auto"`).
    #[default]
    Auto,
    /// The answer must contain a tool call (`"required"`).
    Required,
    /// The answer must be a call of this function tool.
    Function(&'static str),
}

impl ToolChoice {
    /// The Responses API's spelling.
    pub fn responses_value(self) -> serde_json::Value {
        match self {
            Self::Function(name) => serde_json::json!({"type": "function", "name": name}),
            other => serde_json::Value::from(other.keyword()),
        }
    }

    /// The Chat Completions API's spelling.
    pub fn chat_value(self) -> serde_json::Value {
        match self {
            Self::Function(name) => {
                serde_json::json!({"type": "function", "function": {"name": name}})
            }
            other => serde_json::Value::from(other.keyword()),
        }
    }

    fn keyword(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Required | Self::Function(_) => "required",
        }
    }

    /// Whether the answer must be a call.
    pub fn requires_call(self) -> bool {
        !matches!(self, Self::Auto)
    }
}

/// One event of a streamed model response.
///
/// Every attempt starts with [`ResponseEvent::Created`] and, if it succeeds, ends with
/// [`ResponseEvent::Completed`]. History is built from [`ResponseEvent::OutputItemDone`]
/// alone; the deltas exist for live display.
///
/// Not `non_exhaustive` on purpose: a new event must make every consumer decide what to do.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseEvent {
    /// The provider accepted the request and started answering.
    Created,
    /// An output item started; it is repeated whole in [`ResponseEvent::OutputItemDone`].
    OutputItemAdded(ResponseItem),
    /// A piece of assistant text.
    OutputTextDelta {
        item_id: Option<String>,
        delta: String,
    },
    /// A piece of a reasoning summary (or, on Chat servers, of the raw reasoning).
    ReasoningSummaryDelta {
        item_id: Option<String>,
        delta: String,
    },
    /// A piece of a tool call's arguments or freeform input. `item_id` is the Responses item
    /// id, or the call id on Chat Completions (whose calls have no item id).
    ToolCallInputDelta {
        item_id: Option<String>,
        delta: String,
    },
    /// A finished output item, exactly as the provider sent it: append it to history.
    OutputItemDone(ResponseItem),
    /// The response is complete; nothing follows.
    Completed {
        response_id: Option<String>,
        usage: Option<TokenUsage>,
    },
    /// The stream broke and the client is sending the same request again. Everything
    /// received since the last [`ResponseEvent::Created`] is void: discard partial output.
    /// (Tools only run after `Completed`, so nothing runs twice.)
    RetryingStream {
        attempt: u64,
        max: u64,
        reason: String,
    },
}

/// A live model response: a [`Stream`] of events, ending after `Completed` or an error.
///
/// Dropping it cancels the request. Wire adapters outside this crate build one from the
/// receiving half of a channel with [`ResponseStream::new`].
#[derive(Debug)]
pub struct ResponseStream {
    rx: mpsc::Receiver<Result<ResponseEvent, ModelError>>,
}

impl ResponseStream {
    pub fn new(rx: mpsc::Receiver<Result<ResponseEvent, ModelError>>) -> Self {
        Self { rx }
    }

    /// The next event, or `None` once the stream has ended.
    pub async fn recv(&mut self) -> Option<Result<ResponseEvent, ModelError>> {
        self.rx.recv().await
    }
}

impl Stream for ResponseStream {
    type Item = Result<ResponseEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}
