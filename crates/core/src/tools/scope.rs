//! [`CallScope`]: what the helpers of one tool call may use — its turn, its call id, the
//! thread's events and the turn's cancellation — without the handler's whole invocation.
//!
//! The orchestrator and command items take a scope, not a [`super::context::ToolInvocation`],
//! so the layers below a handler never reach back into the services a handler is given.

use crate::events::EventEmitter;
use crate::turn_context::TurnContext;
use osprey_protocol::EventMsg;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy)]
pub struct CallScope<'a> {
    pub turn: &'a TurnContext,
    pub call_id: &'a str,
    pub events: &'a EventEmitter,
    pub cancel: &'a CancellationToken,
}

impl CallScope<'_> {
    /// Emits an event of this call's turn.
    pub fn emit(&self, msg: EventMsg) {
        self.events.emit(Some(&self.turn.turn_id), msg);
    }
}
