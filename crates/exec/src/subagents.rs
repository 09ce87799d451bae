//! Sub-agents under `osprey exec`: their events are read (so nothing piles up) but not
//! shown — like Codex, the parent's stream carries only the parent's items, and a child
//! shows up as the `collab_tool_call` items of the calls that address it. Nobody can answer
//! a child's approval request either, so each is declined, as the parent's are, and a line
//! on stderr says so.

use osprey_core::{SpawnedThread, ThreadManager};
use osprey_protocol::{EventMsg, Op, ReviewDecision};
use std::io::Write;

/// Follows every sub-agent the manager starts from now on, until the process ends.
pub(crate) fn follow(manager: &ThreadManager) {
    let mut spawned = manager.subscribe_spawned();
    tokio::spawn(async move {
        while let Some(child) = spawned.recv().await {
            tokio::spawn(drain(child));
        }
    });
}

async fn drain(child: SpawnedThread) {
    while let Some(event) = child.thread.next_event().await {
        if let EventMsg::ApprovalRequested(request) = &event.msg {
            let _ = writeln!(
                std::io::stderr().lock(),
                "declined an approval request of sub-agent {} ({}): {}; osprey exec cannot ask anyone",
                child.nickname,
                child.thread_id,
                request.reason
            );
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
