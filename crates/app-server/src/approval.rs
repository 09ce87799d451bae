//! Approvals as server → client requests.
//!
//! Core asks (`ApprovalRequested`); the pump turns the request into
//! `item/commandExecution/requestApproval` or `item/fileChange/requestApproval` and sends it
//! to every subscribed connection, each under its own request id. The first answer
//! wins (an error or a non-decision declines): every connection that got the request is told `serverRequest/resolved`, the thread's
//! status drops `waitingOnApproval`, and the decision goes to core. When the turn ends first
//! (an interrupt, a shutdown), the pump resolves what is still pending the same way, after
//! `turn/completed`. A client error, or an answer that is not a decision, declines (logged).
//! MCP tool approvals have no request on Codex's stable wire; they are sent as command
//! approvals naming the tool.

use std::sync::Arc;

use osprey_app_server_protocol as wire;
use osprey_app_server_protocol::{ServerNotification, method};
use osprey_protocol::{ApprovalRequest, ApprovalRequestKind, Op, ReviewDecision};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::connection::{ClientAnswer, Connection, now_ms, to_value};
use crate::convert;
use crate::loaded::{LoadedThread, PendingApproval};

/// The wire request for a core approval request.
fn request_for(
    thread: &LoadedThread,
    turn_id: &str,
    item_id: &str,
    request: &ApprovalRequest,
) -> (&'static str, Value) {
    let started_at_ms = thread
        .state()
        .turn
        .as_ref()
        .and_then(|t| t.item_started.get(item_id).copied())
        .unwrap_or_else(now_ms);
    let reason = request
        .justification
        .clone()
        .or_else(|| Some(request.reason.clone()));
    match &request.kind {
        ApprovalRequestKind::Patch { .. } => (
            method::ITEM_FILE_CHANGE_REQUEST_APPROVAL,
            to_value(&wire::FileChangeRequestApprovalParams {
                thread_id: thread.id_text(),
                turn_id: turn_id.to_owned(),
                item_id: item_id.to_owned(),
                started_at_ms,
                reason,
                grant_root: None,
            }),
        ),
        ApprovalRequestKind::Exec { command, .. } => {
            let shown = shlex::try_join(command.iter().map(String::as_str))
                .unwrap_or_else(|_| command.join(" "));
            let mut params =
                command_params(thread, turn_id, item_id, request, started_at_ms, reason);
            params.command_actions = Some(crate::command_actions::command_actions(&shown));
            params.command = Some(shown);
            (
                method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
                to_value(&params),
            )
        }
        ApprovalRequestKind::McpTool { server, tool, .. } => {
            let mut params =
                command_params(thread, turn_id, item_id, request, started_at_ms, reason);
            params.command = Some(format!("mcp: {server}.{tool}"));
            (
                method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
                to_value(&params),
            )
        }
    }
}

fn command_params(
    thread: &LoadedThread,
    turn_id: &str,
    item_id: &str,
    request: &ApprovalRequest,
    started_at_ms: i64,
    reason: Option<String>,
) -> wire::CommandExecutionRequestApprovalParams {
    let reason = match (&reason, &request.sandbox_denial) {
        (Some(reason), Some(denial)) => Some(format!("{reason} (the sandbox blocked: {denial})")),
        (None, Some(denial)) => Some(format!("the sandbox blocked: {denial}")),
        _ => reason,
    };
    wire::CommandExecutionRequestApprovalParams {
        kind: "command".to_owned(),
        thread_id: thread.id_text(),
        turn_id: turn_id.to_owned(),
        item_id: item_id.to_owned(),
        started_at_ms,
        approval_id: (request.id != item_id).then(|| request.id.clone()),
        environment_id: Some("local".to_owned()),
        reason,
        command: None,
        cwd: Some(convert::path_text(&request.cwd)),
        command_actions: None,
        proposed_execpolicy_amendment: request.proposed_execpolicy_amendment.clone(),
        available_decisions: Some(convert::command_decisions(&request.available_decisions)),
        sandbox_denial: request.sandbox_denial.clone(),
    }
}

/// Sends a pending request to one more connection and forwards its answer.
pub fn send_to(pending: &mut PendingApproval, connection: &Arc<Connection>) {
    let (request_id, answer) = connection.request(pending.method, pending.params.clone());
    pending.sent_to.push((Arc::clone(connection), request_id));
    let answers = pending.answers.clone();
    let done = pending.done.clone();
    let connection_id = connection.id;
    tokio::spawn(async move {
        tokio::select! {
            answer = answer => {
                if let Ok(answer) = answer {
                    let _ = answers.send((connection_id, answer));
                }
            }
            () = done.cancelled() => {}
        }
    });
}

/// Asks the subscribers about `request` and, in the background, hands the first answer to
/// core.
pub fn ask(thread: &Arc<LoadedThread>, turn_id: &str, item_id: &str, request: ApprovalRequest) {
    let (method, params) = request_for(thread, turn_id, item_id, &request);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let pending = PendingApproval {
        approval_id: request.id.clone(),
        turn_id: turn_id.to_owned(),
        method,
        params,
        sent_to: Vec::new(),
        answers: tx,
        done: CancellationToken::new(),
    };
    let done = pending.done.clone();
    // Codex's order: the status says `waitingOnApproval` before the request goes out.
    thread.state().approvals.push(pending);
    thread.refresh_active_status();
    {
        let subscribers = thread.subscribers();
        let mut state = thread.state();
        if let Some(pending) = state.approvals.last_mut() {
            for connection in &subscribers {
                // A connection that subscribed meanwhile already got it.
                if !pending.sent_to.iter().any(|(c, _)| c.id == connection.id) {
                    send_to(pending, connection);
                }
            }
        }
    }
    let thread = Arc::clone(thread);
    let approval_id = request.id;
    let item_id = item_id.to_owned();
    tokio::spawn(async move {
        let decision = tokio::select! {
            answer = rx.recv() => match answer {
                Some((_, answer)) => decision_from(method, answer),
                None => return,
            },
            () = done.cancelled() => return,
        };
        if decision == ReviewDecision::Abort
            && let Some(turn) = thread.state().turn.as_mut()
        {
            turn.cancelled.push(item_id);
        }
        if resolve(&thread, &approval_id) {
            let _ = thread
                .thread
                .submit(Op::ResolveApproval {
                    id: approval_id,
                    decision,
                })
                .await;
        }
    });
}

/// Removes a pending approval and tells every connection that got it. False when it was
/// already resolved.
pub fn resolve(thread: &LoadedThread, approval_id: &str) -> bool {
    let pending = {
        let mut state = thread.state();
        let Some(index) = state
            .approvals
            .iter()
            .position(|p| p.approval_id == approval_id)
        else {
            return false;
        };
        state.approvals.remove(index)
    };
    finish(thread, pending);
    thread.refresh_active_status();
    true
}

/// Resolves every approval of a turn that ended.
pub fn resolve_turn(thread: &LoadedThread, turn_id: &str) {
    let ended: Vec<PendingApproval> = {
        let mut state = thread.state();
        let (ended, kept) = std::mem::take(&mut state.approvals)
            .into_iter()
            .partition(|p| p.turn_id == turn_id);
        state.approvals = kept;
        ended
    };
    for pending in ended {
        finish(thread, pending);
    }
}

fn finish(thread: &LoadedThread, pending: PendingApproval) {
    pending.done.cancel();
    for (connection, request_id) in pending.sent_to {
        connection.forget_request(request_id);
        connection.notify(&ServerNotification::ServerRequestResolved(
            wire::ServerRequestResolvedNotification {
                thread_id: thread.id_text(),
                request_id: wire::RequestId::Integer(request_id),
            },
        ));
    }
}

fn decision_from(method: &str, answer: ClientAnswer) -> ReviewDecision {
    let result = match answer {
        Ok(result) => result,
        Err(error) => {
            tracing::warn!(
                "the client answered an approval request with an error ({}); declining",
                error.message
            );
            return ReviewDecision::Denied;
        }
    };
    let parsed = if method == method::ITEM_FILE_CHANGE_REQUEST_APPROVAL {
        serde_json::from_value::<wire::FileChangeRequestApprovalResponse>(result)
            .map(|r| convert::file_change_decision(r.decision))
    } else {
        serde_json::from_value::<wire::CommandExecutionRequestApprovalResponse>(result)
            .map(|r| convert::command_decision(r.decision))
    };
    parsed.unwrap_or_else(|e| {
        tracing::warn!("the client's approval answer is not a decision ({e}); declining");
        ReviewDecision::Denied
    })
}
