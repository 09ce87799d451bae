//! Runs one response's tool calls: read-only calls side by side, mutating calls one at a
//! time, outputs returned in call order.

use super::call::{ToolCall, ToolError, ToolOutput};
use super::context::{SessionServices, ToolInvocation};
use super::registry::ToolRegistry;
use crate::turn_context::TurnContext;
use futures::future::join_all;
use osprey_protocol::ResponseItem;
use std::sync::Arc;
use tokio::sync::RwLock;
use tokio_util::sync::CancellationToken;

/// The text a call gets when the turn is interrupted before it finishes.
pub const ABORTED_OUTPUT: &str = "aborted: the turn was interrupted before this call finished";

/// The outcome of running a batch of calls.
pub struct BatchOutcome {
    /// One output item per call, in call order (also for aborted calls).
    pub outputs: Vec<ResponseItem>,
    /// Set when a call failed fatally; the turn must end.
    pub fatal: Option<String>,
}

pub async fn run_tool_calls(
    calls: Vec<ToolCall>,
    registry: Arc<ToolRegistry>,
    turn: Arc<TurnContext>,
    services: Arc<SessionServices>,
    cancel: CancellationToken,
) -> BatchOutcome {
    // A fair lock: acquisition order follows call order, so a mutating call waits for the
    // read-only calls before it and blocks the ones after it.
    let gate = Arc::new(RwLock::new(()));
    let futures = calls.into_iter().map(|call| {
        let registry = Arc::clone(&registry);
        let gate = Arc::clone(&gate);
        let invocation = ToolInvocation {
            call: call.clone(),
            turn: Arc::clone(&turn),
            services: Arc::clone(&services),
            cancel: cancel.clone(),
        };
        let cancel = cancel.clone();
        async move {
            let mutating = registry.is_mutating(&call);
            let result = async {
                let _shared;
                let _exclusive;
                if mutating {
                    _exclusive = gate.write().await;
                } else {
                    _shared = gate.read().await;
                }
                if cancel.is_cancelled() {
                    return Ok(ToolOutput::failure(ABORTED_OUTPUT));
                }
                tokio::select! {
                    result = registry.dispatch(invocation) => result,
                    _ = cancel.cancelled() => Ok(ToolOutput::failure(ABORTED_OUTPUT)),
                }
            }
            .await;
            (call, result)
        }
    });
    let mut outputs = Vec::new();
    let mut fatal = None;
    for (call, result) in join_all(futures).await {
        let output = match result {
            Ok(output) => output,
            Err(ToolError::RespondToModel(message)) => ToolOutput::failure(message),
            Err(ToolError::Fatal(message)) => {
                let text = format!("aborted: {message}");
                fatal.get_or_insert(message);
                ToolOutput::failure(text)
            }
        };
        outputs.push(call.output_item(output));
    }
    BatchOutcome { outputs, fatal }
}
