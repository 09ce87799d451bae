//! The narrow context a tool handler gets for one call.

use super::call::ToolCall;
use super::orchestrator::Orchestrator;
use super::scope::CallScope;
use super::unified_exec::UnifiedExecSessions;
use crate::events::EventEmitter;
use crate::turn_context::TurnContext;
use osprey_protocol::EventMsg;
use osprey_shell::Shell;
use std::collections::HashMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Services that live as long as the session and are shared by all its turns.
pub struct SessionServices {
    pub events: EventEmitter,
    /// Approval → sandbox → attempt → escalate, for everything that runs.
    pub orchestrator: Orchestrator,
    /// Live `exec_command` sessions.
    pub unified_exec: UnifiedExecSessions,
    /// The environment snapshot commands inherit from (filtered by policy).
    pub env: HashMap<String, String>,
    /// The user's shell.
    pub shell: Shell,
    /// The `osprey` executable, for helpers that re-enter it (the sandboxed `apply_patch`).
    pub osprey_exe: Option<std::path::PathBuf>,
}

/// Everything one handler invocation may use.
#[derive(Clone)]
pub struct ToolInvocation {
    pub call: ToolCall,
    pub turn: Arc<TurnContext>,
    pub services: Arc<SessionServices>,
    /// Cancelled when the turn is interrupted; handlers stop what they run.
    pub cancel: CancellationToken,
}

impl ToolInvocation {
    /// The narrow view of this call that the orchestrator and command items take.
    pub fn scope(&self) -> CallScope<'_> {
        CallScope {
            turn: &self.turn,
            call_id: &self.call.call_id,
            events: &self.services.events,
            cancel: &self.cancel,
        }
    }

    pub fn emit(&self, msg: EventMsg) {
        self.services.events.emit(Some(&self.turn.turn_id), msg);
    }
}
