//! Pending approval requests: the channel between a handler waiting for a decision and the
//! front end that answers it. (What is approved for the session is remembered by the
//! orchestrator's [`crate::tools::approval::SessionApprovals`].)
//!
//! A handler that needs a decision calls [`ApprovalBroker::request`]; the request goes out as
//! an `ApprovalRequested` event and the handler waits until a front end answers with
//! `Op::ResolveApproval` (or the turn is cancelled, which counts as "abort").

use crate::events::EventEmitter;
use osprey_protocol::{ApprovalRequest, EventMsg, ReviewDecision, TurnId};
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct ApprovalBroker {
    pending: Mutex<HashMap<String, oneshot::Sender<ReviewDecision>>>,
}

impl ApprovalBroker {
    /// Emits the request and waits for the decision. Cancellation answers `Abort`.
    pub async fn request(
        &self,
        events: &EventEmitter,
        turn_id: &TurnId,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ReviewDecision {
        let (tx, rx) = oneshot::channel();
        let id = request.id.clone();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id.clone(), tx);
        }
        events.emit(Some(turn_id), EventMsg::ApprovalRequested(request));
        let decision = tokio::select! {
            decision = rx => decision.unwrap_or(ReviewDecision::Abort),
            _ = cancel.cancelled() => ReviewDecision::Abort,
        };
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(&id);
        }
        decision
    }

    /// Delivers a front end's decision. Returns false when no such request is pending.
    pub fn resolve(&self, id: &str, decision: ReviewDecision) -> bool {
        let sender = self.pending.lock().ok().and_then(|mut p| p.remove(id));
        match sender {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }
}
