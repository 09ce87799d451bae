//! Sub-agents under `osprey exec`: their events are read (so nothing piles up) but not
//! shown — like Codex, the parent's stream carries only the parent's items, and a child
//! shows up as the `collab_tool_call` items of the calls that address it. Nobody can answer
//! a child's approval request either, so each is declined, as the parent's are, and a line
//! on stderr says so.

use osprey_core::ThreadManager;
use std::io::Write;

/// Follows every sub-agent the manager starts from now on, until the process ends.
pub(crate) fn follow(manager: &ThreadManager) {
    osprey_core::decline_subagent_approvals(manager, |child, reason| {
        let _ = writeln!(
            std::io::stderr().lock(),
            "declined an approval request of sub-agent {} ({}): {reason}; osprey exec cannot ask anyone",
            child.nickname,
            child.thread_id,
        );
    });
}
