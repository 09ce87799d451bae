//! What is written to a rollout file, decided in one place.
//!
//! Every match here is exhaustive with no wildcard: when `osprey-protocol` grows an event or
//! item variant, this file stops compiling until someone decides whether the new thing must
//! survive a resume. The rule of thumb: keep what a front end needs to redraw a finished
//! thread (lifecycle, completed items, usage, errors and warnings, compaction); drop what only
//! matters while it streams (deltas, started/updated items) or needs a live answer (approval
//! requests).

use crate::RolloutItem;
use osprey_protocol::{EventMsg, ThreadItem};

/// Whether `item` belongs in the rollout file. The recorder applies this to everything it is
/// given, so callers may pass every event.
pub fn should_persist_item(item: &RolloutItem) -> bool {
    match item {
        RolloutItem::SessionMeta(_)
        | RolloutItem::ResponseItem(_)
        | RolloutItem::TurnContext(_)
        | RolloutItem::Compacted(_) => true,
        RolloutItem::EventMsg(msg) => should_persist_event(msg),
    }
}

/// Whether an event is needed to replay the thread later.
pub fn should_persist_event(msg: &EventMsg) -> bool {
    match msg {
        // Thread and turn lifecycle.
        EventMsg::ThreadStarted { .. }
        | EventMsg::TurnStarted
        | EventMsg::TurnCompleted { .. }
        | EventMsg::TurnFailed { .. }
        | EventMsg::TurnAborted { .. } => true,
        // Finished work, usage and problems the user was told about.
        EventMsg::ItemCompleted { item } => should_persist_completed_item(item),
        EventMsg::TokenCount { .. }
        | EventMsg::Warning { .. }
        | EventMsg::Error { .. }
        | EventMsg::Compacted { .. } => true,
        // Each plan the model set, with its explanation: the `TodoList` item never completes
        // (it is updated in place), so this is what a resumed thread shows the plan from.
        EventMsg::PlanUpdate { .. } => true,
        // Streaming progress: the completed item carries the final state.
        EventMsg::ItemStarted { .. }
        | EventMsg::ItemUpdated { .. }
        | EventMsg::AgentMessageDelta { .. }
        | EventMsg::ReasoningDelta { .. }
        | EventMsg::CommandOutputDelta { .. } => false,
        // Needs a live answer; a replayed request could not be answered.
        EventMsg::ApprovalRequested(_) => false,
        // About the process, not the conversation: replaying it would end a front end.
        EventMsg::ShutdownComplete => false,
        // Collaboration calls are kept as their completed `CollabAgentToolCall` item (as
        // Codex stores them); the begin/end pairs would only repeat it.
        EventMsg::CollabAgentSpawnBegin { .. }
        | EventMsg::CollabAgentSpawnEnd { .. }
        | EventMsg::CollabAgentInteractionBegin { .. }
        | EventMsg::CollabAgentInteractionEnd { .. }
        | EventMsg::CollabWaitingBegin { .. }
        | EventMsg::CollabWaitingEnd { .. }
        | EventMsg::CollabCloseBegin { .. }
        | EventMsg::CollabCloseEnd { .. } => false,
    }
}

/// Whether a completed item is kept. Every kind is today: a front end redraws each of them
/// from its completion alone.
fn should_persist_completed_item(item: &ThreadItem) -> bool {
    match item {
        ThreadItem::UserMessage { .. }
        | ThreadItem::AgentMessage { .. }
        | ThreadItem::Reasoning { .. }
        | ThreadItem::CommandExecution { .. }
        | ThreadItem::FileChange { .. }
        | ThreadItem::McpToolCall { .. }
        | ThreadItem::TodoList { .. }
        | ThreadItem::CollabAgentToolCall { .. }
        | ThreadItem::Error { .. } => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::TokenUsage;

    #[test]
    fn keeps_lifecycle_and_completions_drops_streaming() {
        let done = EventMsg::ItemCompleted {
            item: ThreadItem::AgentMessage {
                id: "i".into(),
                text: "t".into(),
            },
        };
        assert!(should_persist_event(&done));
        assert!(should_persist_event(&EventMsg::TurnStarted));
        assert!(should_persist_event(&EventMsg::TokenCount {
            last: TokenUsage::default(),
            total: TokenUsage::default(),
        }));
        assert!(!should_persist_event(&EventMsg::AgentMessageDelta {
            item_id: "i".into(),
            delta: "d".into(),
        }));
        assert!(!should_persist_event(&EventMsg::ItemStarted {
            item: ThreadItem::Reasoning {
                id: "r".into(),
                text: String::new(),
            },
        }));
        assert!(!should_persist_event(&EventMsg::ShutdownComplete));
    }

    #[test]
    fn keeps_each_plan_update_for_resume() {
        assert!(should_persist_event(&EventMsg::PlanUpdate {
            explanation: Some("why".into()),
            plan: vec![osprey_protocol::PlanStep {
                step: "s".into(),
                status: osprey_protocol::PlanStepStatus::InProgress,
            }],
        }));
    }
}
