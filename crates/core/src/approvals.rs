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
    /// Emits the request and waits for the decision. Cancellation answers `Abort`; after
    /// cancellation nothing is emitted.
    pub async fn request(
        &self,
        events: &EventEmitter,
        turn_id: &TurnId,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ReviewDecision {
        // An interrupted call winding down (its cancel path may reach an escalation) must not
        // put a question on the user's screen that nothing waits for.
        if cancel.is_cancelled() {
            return ReviewDecision::Abort;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::{ApprovalRequestKind, ThreadId};

    fn request(id: &str) -> ApprovalRequest {
        ApprovalRequest {
            id: id.to_string(),
            call_id: id.to_string(),
            kind: ApprovalRequestKind::Patch {
                changes: Vec::new(),
                paths: Vec::new(),
            },
            cwd: std::path::PathBuf::from("/"),
            reason: "test".to_string(),
            available_decisions: Vec::new(),
            justification: None,
            proposed_execpolicy_amendment: None,
            sandbox_denial: None,
        }
    }

    #[tokio::test]
    async fn a_cancelled_call_gets_abort_without_asking_and_a_live_one_asks() {
        let broker = ApprovalBroker::default();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let events = EventEmitter::new(ThreadId::new(), tx);
        let turn = TurnId("turn-1".into());
        let cancelled = CancellationToken::new();
        cancelled.cancel();
        let decision = broker
            .request(&events, &turn, request("a"), &cancelled)
            .await;
        assert_eq!(decision, ReviewDecision::Abort);
        assert!(rx.try_recv().is_err(), "no request was shown");
        assert!(
            !broker.resolve("a", ReviewDecision::Approved),
            "none pending"
        );

        let live = CancellationToken::new();
        let asked = broker.request(&events, &turn, request("b"), &live);
        let answer = async {
            let event = rx.recv().await.expect("the request is shown");
            assert!(matches!(event.msg, EventMsg::ApprovalRequested(_)));
            assert!(broker.resolve("b", ReviewDecision::Approved));
        };
        let (decision, ()) = tokio::join!(asked, answer);
        assert_eq!(decision, ReviewDecision::Approved);
    }
}
