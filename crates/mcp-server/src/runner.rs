//! Running one turn for one `tools/call`: submit the prompt, relay every event to the
//! client, answer approval requests, and turn the end of the turn into the tool result.
//!
//! The loop waits on three things at once: the thread's next event, the elicitations in
//! flight, and the request's cancellation. Elicitations are polled inside the same future
//! as the loop (not spawned), so a request to the client stays tied to the `tools/call` it
//! belongs to and is dropped with it. A cancelled `tools/call` (the client sent
//! `notifications/cancelled`, or the connection closed) interrupts the turn, and the loop
//! goes on reading until the turn has really stopped, so the thread is idle and its event
//! stream clean for the next `osprey-reply`.

use std::pin::Pin;

use futures::stream::{FuturesUnordered, StreamExt};
use osprey_core::OspreyThread;
use osprey_protocol::{
    AbortReason, ApprovalRequest, EventMsg, Op, ReviewDecision, ThreadId, UserInput,
};
use rmcp::model::{
    CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken, RequestId,
    ServerNotification,
};
use rmcp::service::{ElicitationMode, Peer, RoleServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::approval;
use crate::notify;

/// Where a turn's notifications and approval questions go.
pub struct TurnClient {
    pub peer: Peer<RoleServer>,
    /// The `tools/call` request this turn answers.
    pub request_id: RequestId,
    pub progress_token: Option<ProgressToken>,
    /// Cancelled when the client cancels the request or the connection ends.
    pub cancel: CancellationToken,
}

impl TurnClient {
    fn can_elicit(&self) -> bool {
        self.peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
    }
}

/// How a turn ended, before it becomes a tool result.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    Completed {
        last_agent_message: Option<String>,
    },
    Failed {
        message: String,
    },
    Aborted {
        reason: AbortReason,
    },
    /// The thread shut down or its actor went away before the turn ended.
    ThreadGone,
    /// The prompt could not be submitted.
    NotSubmitted {
        message: String,
    },
}

type PendingAnswer = Pin<Box<dyn Future<Output = (String, ReviewDecision)> + Send>>;

/// Sends `prompt` as a new turn on `thread` and relays events until the turn ends.
pub async fn run_turn(thread: &OspreyThread, prompt: String, client: &TurnClient) -> TurnOutcome {
    let submitted = thread
        .submit(Op::UserTurn {
            items: vec![UserInput::Text { text: prompt }],
            cwd: None,
            approval_policy: None,
            sandbox_policy: None,
            model: None,
            effort: None,
            output_schema: None,
        })
        .await;
    if let Err(e) = submitted {
        return TurnOutcome::NotSubmitted {
            message: e.to_string(),
        };
    }
    let thread_id = thread.id().to_string();
    let can_elicit = client.can_elicit();
    let mut pending: FuturesUnordered<PendingAnswer> = FuturesUnordered::new();
    let mut progress = 0u32;
    let mut interrupted = false;
    loop {
        let event = tokio::select! {
            event = thread.next_event() => event,
            Some((id, decision)) = pending.next(), if !pending.is_empty() => {
                // After an interrupt the request is gone with its turn; answering it would
                // only earn a warning.
                if !interrupted {
                    let _ = thread.submit(Op::ResolveApproval { id, decision }).await;
                }
                continue;
            }
            () = client.cancel.cancelled(), if !interrupted => {
                interrupted = true;
                let _ = thread.submit(Op::Interrupt).await;
                continue;
            }
        };
        let Some(event) = event else {
            return TurnOutcome::ThreadGone;
        };
        if let Some(token) = &client.progress_token
            && let Some(message) = notify::progress_message(&event.msg)
        {
            progress += 1;
            let param = ProgressNotificationParam::new(token.clone(), f64::from(progress))
                .with_message(message);
            let _ = client.peer.notify_progress(param).await;
        }
        let note = notify::event_notification(&event, &client.request_id);
        let _ = client
            .peer
            .send_notification(ServerNotification::CustomNotification(note))
            .await;
        match event.msg {
            EventMsg::ApprovalRequested(request) => {
                if can_elicit && !interrupted {
                    pending.push(ask_client(client, request, thread_id.clone()));
                } else {
                    // Nobody can be asked: decline, as `osprey exec` does. The model is told
                    // the command was not run and the turn goes on.
                    let _ = thread
                        .submit(Op::ResolveApproval {
                            id: request.id,
                            decision: ReviewDecision::Denied,
                        })
                        .await;
                }
            }
            EventMsg::TurnCompleted {
                last_agent_message, ..
            } => return TurnOutcome::Completed { last_agent_message },
            EventMsg::TurnFailed { error, .. } => {
                return TurnOutcome::Failed {
                    message: error.message,
                };
            }
            EventMsg::TurnAborted { reason } => return TurnOutcome::Aborted { reason },
            EventMsg::ShutdownComplete => return TurnOutcome::ThreadGone,
            EventMsg::ThreadStarted { .. }
            | EventMsg::TurnStarted
            | EventMsg::ItemStarted { .. }
            | EventMsg::ItemUpdated { .. }
            | EventMsg::ItemCompleted { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::ReasoningDelta { .. }
            | EventMsg::CommandOutputDelta { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::Warning { .. }
            | EventMsg::Error { .. }
            | EventMsg::Compacted { .. }
            | EventMsg::PlanUpdate { .. }
            | EventMsg::CollabAgentSpawnBegin { .. }
            | EventMsg::CollabAgentSpawnEnd { .. }
            | EventMsg::CollabAgentInteractionBegin { .. }
            | EventMsg::CollabAgentInteractionEnd { .. }
            | EventMsg::CollabWaitingBegin { .. }
            | EventMsg::CollabWaitingEnd { .. }
            | EventMsg::CollabCloseBegin { .. }
            | EventMsg::CollabCloseEnd { .. } => {}
        }
    }
}

/// An elicitation for `request` that resolves to the approval id and the decision.
fn ask_client(client: &TurnClient, request: ApprovalRequest, thread_id: String) -> PendingAnswer {
    let peer = client.peer.clone();
    let params = approval::elicitation_params(&request, &thread_id, &client.request_id);
    Box::pin(async move {
        let answer = peer.create_elicitation(params).await;
        if let Err(e) = &answer {
            tracing::warn!(
                "approval request {} could not be asked ({e}); denying it",
                request.id
            );
        }
        let decision = approval::decision_from_answer(answer, &request.available_decisions);
        (request.id, decision)
    })
}

/// The tool result for a finished turn: the final message as text, and
/// `structuredContent: {threadId, content}` (also for errors once a thread exists).
pub fn tool_result(thread_id: ThreadId, outcome: TurnOutcome) -> CallToolResult {
    let (text, is_error) = match outcome {
        TurnOutcome::Completed { last_agent_message } => {
            (last_agent_message.unwrap_or_default(), false)
        }
        TurnOutcome::Failed { message } => (message, true),
        TurnOutcome::Aborted { reason } => (
            format!("the turn was stopped: {}", abort_reason_text(reason)),
            true,
        ),
        TurnOutcome::ThreadGone => (
            format!(
                "thread {thread_id} shut down before the turn finished; start a new one with the `osprey` tool"
            ),
            true,
        ),
        TurnOutcome::NotSubmitted { message } => (
            format!("the prompt could not be sent to thread {thread_id}: {message}"),
            true,
        ),
    };
    let structured = json!({ "threadId": thread_id.to_string(), "content": text });
    let content = vec![ContentBlock::text(text)];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(structured);
    result
}

fn abort_reason_text(reason: AbortReason) -> &'static str {
    match reason {
        AbortReason::Interrupted => "it was interrupted (the tool call was cancelled)",
        AbortReason::ApprovalAborted => "an approval request was answered with abort",
        AbortReason::Replaced => "a newer turn replaced it",
        AbortReason::Shutdown => "the thread shut down",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn results_carry_thread_id_and_text() {
        let id = ThreadId::new();
        let ok = serde_json::to_value(tool_result(
            id,
            TurnOutcome::Completed {
                last_agent_message: Some("done".to_string()),
            },
        ))
        .unwrap();
        assert_eq!(ok["content"], json!([{"type": "text", "text": "done"}]));
        assert_eq!(
            ok["structuredContent"],
            json!({"threadId": id.to_string(), "content": "done"})
        );
        assert_ne!(ok["isError"], json!(true));

        let failed = serde_json::to_value(tool_result(
            id,
            TurnOutcome::Failed {
                message: "quota exceeded".to_string(),
            },
        ))
        .unwrap();
        assert_eq!(failed["isError"], json!(true));
        assert_eq!(failed["content"][0]["text"], "quota exceeded");
        assert_eq!(failed["structuredContent"]["threadId"], id.to_string());

        let aborted = serde_json::to_value(tool_result(
            id,
            TurnOutcome::Aborted {
                reason: AbortReason::ApprovalAborted,
            },
        ))
        .unwrap();
        assert_eq!(aborted["isError"], json!(true));
        assert!(
            aborted["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("abort")
        );
    }
}
