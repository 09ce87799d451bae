//! Sub-agents under a front end where nobody can answer an approval (`osprey exec`, the MCP
//! server): every child's events are read, so nothing piles up, and each approval request
//! is declined — as the parent's are — instead of leaving the child waiting for an answer
//! that cannot come.

use crate::thread_manager::{SpawnedThread, ThreadManager};
use osprey_protocol::{EventMsg, Op, ReviewDecision};
use std::sync::Arc;

/// Follows every sub-agent `manager` starts from now on, until the process ends; `report`
/// hears of each declined request (the child and the request's reason) to tell the user.
/// Must be called within a Tokio runtime.
pub fn decline_subagent_approvals(
    manager: &ThreadManager,
    report: impl Fn(&SpawnedThread, &str) + Send + Sync + 'static,
) {
    let report = Arc::new(report);
    let mut spawned = manager.subscribe_spawned();
    tokio::spawn(async move {
        while let Some(child) = spawned.recv().await {
            tokio::spawn(drain(child, Arc::clone(&report)));
        }
    });
}

async fn drain(child: SpawnedThread, report: Arc<impl Fn(&SpawnedThread, &str)>) {
    while let Some(event) = child.thread.next_event().await {
        if let EventMsg::ApprovalRequested(request) = &event.msg {
            report(&child, &request.reason);
            let _ = child
                .thread
                .submit(Op::ResolveApproval {
                    id: request.id.clone(),
                    decision: ReviewDecision::Denied,
                })
                .await;
        }
        if matches!(event.msg, EventMsg::ShutdownComplete) {
            break;
        }
    }
}
