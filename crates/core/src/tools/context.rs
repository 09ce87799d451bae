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

/// What the handlers that run commands or write files are built with: the orchestrator
/// (approval → sandbox → attempt → escalate), the environment commands inherit (filtered by
/// policy), the user's shell, and the `osprey` executable helpers re-enter (the sandboxed
/// `apply_patch`). Each such handler holds an `Arc` of it from `handler_for`; no handler
/// reaches anything else of the session.
pub struct CommandServices {
    pub orchestrator: Orchestrator,
    pub env: HashMap<String, String>,
    pub shell: Shell,
    pub osprey_exe: Option<std::path::PathBuf>,
    /// Where commands run and files are read and written: here, or an exec server.
    pub environment: crate::environment::ToolEnvironment,
}

/// What `handler_for` hands to the handlers it builds, each taking only its part.
#[derive(Clone)]
pub struct HandlerDeps {
    pub commands: Arc<CommandServices>,
    /// Live `exec_command` sessions (for `exec_command` and `write_stdin`).
    pub unified_exec: Arc<UnifiedExecSessions>,
    /// The thread's view of the sub-agent service (for the collaboration tools).
    pub agents: crate::agents::AgentControl,
}

#[cfg(test)]
impl HandlerDeps {
    /// Deps that allow everything and confine nothing (unit tests of the tool table).
    pub fn for_tests() -> Self {
        use super::orchestrator::{AllowAll, NoSandbox};
        Self {
            commands: Arc::new(CommandServices {
                orchestrator: Orchestrator::new(Arc::new(AllowAll), Arc::new(NoSandbox)),
                env: HashMap::new(),
                shell: Shell::new("/bin/sh"),
                osprey_exe: None,
                environment: Default::default(),
            }),
            unified_exec: Arc::new(UnifiedExecSessions::new(4)),
            agents: crate::agents::AgentControl::detached(),
        }
    }
}

/// What the session itself keeps beside its handlers: the event emitter, the command
/// services (the approval broker, the user's shell for `!cmd`), the exec sessions to kill on
/// shutdown.
pub struct SessionServices {
    pub events: EventEmitter,
    pub commands: Arc<CommandServices>,
    pub unified_exec: Arc<UnifiedExecSessions>,
}

/// Everything one handler invocation carries: the call, its turn, where its events go, and
/// its cancellation. Services come from the handler's own fields.
#[derive(Clone)]
pub struct ToolInvocation {
    pub call: ToolCall,
    pub turn: Arc<TurnContext>,
    pub events: EventEmitter,
    /// Cancelled when the turn is interrupted; handlers stop what they run.
    pub cancel: CancellationToken,
}

impl ToolInvocation {
    /// The narrow view of this call that the orchestrator and command items take.
    pub fn scope(&self) -> CallScope<'_> {
        CallScope {
            turn: &self.turn,
            call_id: &self.call.call_id,
            events: &self.events,
            cancel: &self.cancel,
        }
    }

    pub fn emit(&self, msg: EventMsg) {
        self.events.emit(Some(&self.turn.turn_id), msg);
    }
}
