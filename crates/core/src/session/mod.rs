//! The session actor: owns a thread's history and settings and runs one turn at a time.
//!
//! Ops arrive on a channel, each with an optional reply channel; a `UserTurn`, `Compact` or
//! `RunUserShellCommand` starts a task (or waits behind the running one) and the reply gets
//! the turn id it was given at once, so a front end knows the id before any event; `Steer`
//! adds input to the running regular turn (`steer`); `Interrupt` cancels the running task;
//! `ResolveApproval` wakes the handler waiting for it; `Shutdown` stops everything and ends
//! the actor.

mod sampling;
mod steer;
mod turn;
mod user_shell;

pub(crate) use turn::initial_context;

use crate::error::CoreError;
use crate::events::EventEmitter;
use crate::tools::ToolRegistry;
use crate::tools::context::SessionServices;
use crate::turn_context::TurnContext;
use osprey_config::Config;
use osprey_model::ModelClient;
use osprey_protocol::{
    AbortReason, AskForApproval, Event, EventMsg, Op, ReasoningEffort, ResponseItem, SandboxPolicy,
    ThreadId, TokenUsage, TurnId, UserInput,
};
use osprey_rollout::{RolloutItem, RolloutRecorder};
use serde_json::Value;
use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use steer::SteerQueue;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use user_shell::UserShellCommand;

/// Settings that persist from turn to turn and can be changed by a `UserTurn`.
#[derive(Debug, Clone)]
pub(crate) struct ThreadSettings {
    pub cwd: PathBuf,
    pub model: String,
    pub effort: Option<ReasoningEffort>,
    pub approval_policy: AskForApproval,
    pub sandbox_policy: SandboxPolicy,
}

/// State shared between the actor and its turn tasks.
pub(crate) struct Session {
    pub thread_id: ThreadId,
    pub config: Arc<Config>,
    pub model: Arc<ModelClient>,
    pub registry: Arc<ToolRegistry>,
    /// The tool profile the registry was built from; its turn aids become inspectors.
    pub profile: Arc<osprey_tools::ToolProfile>,
    pub services: Arc<SessionServices>,
    /// Connections to the configured MCP servers (their handlers hold them too).
    pub mcp: Arc<osprey_mcp::McpConnectionManager>,
    pub base_instructions: String,
    /// The user's shell, as named in the environment context.
    pub shell_name: String,
    /// The project's AGENTS.md instructions read on the exec server's side when the thread
    /// started (a remote environment only; local threads read them at each initial context).
    pub remote_instructions: Option<String>,
    pub history: Mutex<Vec<ResponseItem>>,
    pub settings: Mutex<ThreadSettings>,
    pub total_usage: Mutex<TokenUsage>,
    pub turn_counter: Mutex<u64>,
    /// The last response reported a token count over the compaction limit: compact before
    /// the next request.
    pub compaction_due: std::sync::atomic::AtomicBool,
    /// The session file (none when ephemeral).
    pub recorder: Option<Arc<RolloutRecorder>>,
    /// This thread's view of its sub-agents (interrupted and closed with it).
    pub agents: crate::agents::AgentControl,
    /// `<subagent_notification>` messages of children that finished, for the next request.
    pub notifications: Mutex<Vec<ResponseItem>>,
}

impl Session {
    pub fn events(&self) -> &EventEmitter {
        &self.services.events
    }

    fn next_turn_id(&self) -> TurnId {
        let mut counter = self.turn_counter.lock().unwrap_or_else(|e| e.into_inner());
        *counter += 1;
        TurnId(format!("turn-{counter}"))
    }

    pub fn history_snapshot(&self) -> Vec<ResponseItem> {
        self.history.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// Appends items to the history and the session file.
    pub fn record(&self, items: impl IntoIterator<Item = ResponseItem>) {
        let items: Vec<ResponseItem> = items.into_iter().collect();
        if let Some(recorder) = &self.recorder {
            recorder.record(
                items
                    .iter()
                    .cloned()
                    .map(RolloutItem::ResponseItem)
                    .collect(),
            );
        }
        if let Ok(mut history) = self.history.lock() {
            history.extend(items);
        }
    }

    /// Queues a message for the history, recorded before the next model request (now, if a
    /// turn is running; else when the next turn starts).
    pub fn queue_notification(&self, item: ResponseItem) {
        self.notifications
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(item);
    }

    /// Records the queued notifications.
    pub fn record_notifications(&self) {
        let queued =
            std::mem::take(&mut *self.notifications.lock().unwrap_or_else(|e| e.into_inner()));
        if !queued.is_empty() {
            self.record(queued);
        }
    }

    /// Replaces the whole history (compaction).
    pub fn replace_history(&self, items: Vec<ResponseItem>) {
        if let Ok(mut history) = self.history.lock() {
            *history = items;
        }
    }

    /// Hands everything recorded so far to the OS; a failure is reported once as a warning.
    pub async fn flush(&self) {
        if let Some(recorder) = &self.recorder
            && let Err(e) = recorder.flush().await
        {
            self.events().emit(
                None,
                EventMsg::Warning {
                    message: format!("the session file could not be written: {e}"),
                },
            );
        }
    }

    /// Like [`Session::flush`], and forces the data to disk (end of a turn).
    pub async fn sync(&self) {
        if let Some(recorder) = &self.recorder
            && let Err(e) = recorder.sync().await
        {
            self.events().emit(
                None,
                EventMsg::Warning {
                    message: format!("the session file could not be written: {e}"),
                },
            );
        }
    }
}

/// One op as it reaches the actor, with the reply channel `OspreyThread::start_turn` and
/// `OspreyThread::steer` wait on (none for a plain `submit`).
pub(crate) struct Submission {
    pub op: Op,
    pub reply: Option<TurnReply>,
}

/// Where the actor answers with the turn id an op got (or why it got none).
pub(crate) type TurnReply = oneshot::Sender<Result<TurnId, CoreError>>;

struct RunningTurn {
    turn_id: TurnId,
    cancel: CancellationToken,
    handle: JoinHandle<()>,
    /// Where steered input goes; only a regular turn takes any.
    steer: Option<Arc<SteerQueue>>,
}

struct PendingTurn {
    task: Task,
    context: TurnContext,
}

/// What a queued task does.
enum Task {
    /// A regular turn with this user input.
    Turn(Vec<UserInput>),
    /// Summarise the history (`Op::Compact`).
    Compact,
    /// The person's own shell command (`Op::RunUserShellCommand`).
    Shell(UserShellCommand),
}

/// The actor's state between ops: the task that runs and the ones waiting behind it.
struct Actor {
    session: Arc<Session>,
    running: Option<RunningTurn>,
    queued: VecDeque<PendingTurn>,
}

/// Runs the actor until `Shutdown` or until every handle to the thread is dropped.
pub(crate) async fn run_session(session: Arc<Session>, mut ops: mpsc::Receiver<Submission>) {
    let mut actor = Actor {
        session,
        running: None,
        queued: VecDeque::new(),
    };
    loop {
        let finished = async {
            match actor.running.as_mut() {
                Some(turn) => Some((&mut turn.handle).await),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            submission = ops.recv() => {
                let Some(submission) = submission else {
                    if let Some(turn) = actor.running.take() {
                        turn.cancel.cancel();
                        let _ = turn.handle.await;
                    }
                    return;
                };
                if actor.handle(submission).await.is_break() {
                    return;
                }
            }
            joined = finished => {
                if let (Some(Err(error)), Some(turn)) = (joined, actor.running.as_ref()) {
                    // The turn task died without ending its turn (a panic the turn could not
                    // catch, or a cancelled task): end it for the front end.
                    let error = if error.is_panic() {
                        turn::panic_error(error.into_panic().as_ref())
                    } else {
                        osprey_protocol::WireError::new(osprey_protocol::ErrorKind::Other, "the turn's task was stopped before it finished")
                    };
                    actor.session.events().emit(Some(&turn.turn_id), EventMsg::TurnFailed { error, usage: TokenUsage::default() });
                }
                actor.running = actor.queued.pop_front().map(|pending| start_task(&actor.session, pending));
            }
        }
    }
}

impl Actor {
    /// Acts on one op; `Break` once the thread has shut down.
    async fn handle(&mut self, submission: Submission) -> ControlFlow<()> {
        let Submission { op, reply } = submission;
        let session = Arc::clone(&self.session);
        match op {
            Op::UserTurn {
                items,
                cwd,
                approval_policy,
                sandbox_policy,
                model,
                effort,
                output_schema,
            } => {
                if let Err(refusal) =
                    session.check_requirements(approval_policy, sandbox_policy.as_ref())
                {
                    let turn_id = session.refuse_turn(refusal);
                    answer(reply, Ok(turn_id));
                    return ControlFlow::Continue(());
                }
                let context = session.turn_context(
                    cwd,
                    approval_policy,
                    sandbox_policy,
                    model,
                    effort,
                    output_schema,
                );
                self.enqueue(Task::Turn(items), context, reply);
            }
            Op::Compact => {
                let context = session.turn_context(None, None, None, None, None, None);
                self.enqueue(Task::Compact, context, reply);
            }
            Op::RunUserShellCommand {
                command,
                timeout_ms,
                share_with_model,
            } => {
                let context = session.turn_context(None, None, None, None, None, None);
                let shell = UserShellCommand {
                    command,
                    timeout_ms,
                    share_with_model,
                };
                self.enqueue(Task::Shell(shell), context, reply);
            }
            Op::Steer { items } => {
                let steered = self.running.as_ref().and_then(|turn| {
                    let queue = turn.steer.as_ref()?;
                    queue.push(items).then(|| turn.turn_id.clone())
                });
                match (steered, reply) {
                    (Some(turn_id), reply) => answer(reply, Ok(turn_id)),
                    (None, Some(reply)) => {
                        let _ = reply.send(Err(CoreError::NoActiveTurn));
                    }
                    (None, None) => session.events().emit(
                        None,
                        EventMsg::Warning {
                            message: format!(
                                "{}; the input was not used: start a turn with it instead",
                                CoreError::NoActiveTurn
                            ),
                        },
                    ),
                }
            }
            Op::Interrupt => {
                if let Some(turn) = self.running.as_ref() {
                    turn.cancel.cancel();
                }
                // A parent that stops stops its sub-agents' work too.
                session.agents.interrupt_children().await;
            }
            Op::ResolveApproval { id, decision } => {
                if !session
                    .services
                    .commands
                    .orchestrator
                    .broker
                    .resolve(&id, decision)
                {
                    session.events().emit(
                        None,
                        EventMsg::Warning {
                            message: format!(
                                "no approval request with id `{id}` is pending; the decision was ignored"
                            ),
                        },
                    );
                }
            }
            Op::Shutdown => {
                if let Some(turn) = self.running.take() {
                    turn.cancel.cancel();
                    let _ = turn.handle.await;
                }
                session.agents.close_children().await;
                session.services.unified_exec.kill_all().await;
                session.mcp.shutdown().await;
                session.sync().await;
                for pending in self.queued.drain(..) {
                    session.events().emit(
                        Some(&pending.context.turn_id),
                        EventMsg::TurnAborted {
                            reason: AbortReason::Shutdown,
                        },
                    );
                }
                session.events().emit(None, EventMsg::ShutdownComplete);
                return ControlFlow::Break(());
            }
            _ => {
                session.events().emit(
                    None,
                    EventMsg::Warning {
                        message: "this operation is not supported by this version".to_string(),
                    },
                );
            }
        }
        ControlFlow::Continue(())
    }

    /// Starts the task now, or queues it behind the running one; answers with its turn id
    /// either way.
    fn enqueue(&mut self, task: Task, context: TurnContext, reply: Option<TurnReply>) {
        if matches!(task, Task::Turn(_)) {
            // Supervisors see the thread as working from the moment it took the input.
            self.session
                .events()
                .set_status(osprey_protocol::AgentStatus::Running);
        }
        answer(reply, Ok(context.turn_id.clone()));
        let pending = PendingTurn { task, context };
        if self.running.is_some() {
            self.queued.push_back(pending);
        } else {
            self.running = Some(start_task(&self.session, pending));
        }
    }
}

/// Sends the reply, if anyone waits for one (a caller that stopped waiting is no error).
fn answer(reply: Option<TurnReply>, result: Result<TurnId, CoreError>) {
    if let Some(reply) = reply {
        let _ = reply.send(result);
    }
}

fn start_task(session: &Arc<Session>, pending: PendingTurn) -> RunningTurn {
    let cancel = CancellationToken::new();
    let session = Arc::clone(session);
    let context = Arc::new(pending.context);
    let turn_id = context.turn_id.clone();
    let mut steer = None;
    let handle = match pending.task {
        Task::Turn(items) => {
            let queue = Arc::new(SteerQueue::default());
            steer = Some(Arc::clone(&queue));
            tokio::spawn(turn::run_turn(
                session,
                context,
                items,
                queue,
                cancel.clone(),
            ))
        }
        Task::Compact => tokio::spawn(turn::run_compact_task(session, context, cancel.clone())),
        Task::Shell(shell) => tokio::spawn(user_shell::run_user_shell_command(
            session,
            context,
            shell,
            cancel.clone(),
        )),
    };
    RunningTurn {
        turn_id,
        cancel,
        handle,
        steer,
    }
}

impl Session {
    /// Checks a turn's policy overrides against the managed requirements, like the
    /// configuration itself was: a front end cannot loosen what an administrator pinned.
    fn check_requirements(
        &self,
        approval_policy: Option<AskForApproval>,
        sandbox_policy: Option<&SandboxPolicy>,
    ) -> Result<(), osprey_config::ConfigError> {
        let requirements = self.config.requirements();
        let location = osprey_config::Location::new(osprey_config::ConfigSource::Runtime);
        if let Some(policy) = approval_policy {
            requirements.check_approval_policy(policy, &location)?;
        }
        if let Some(policy) = sandbox_policy {
            requirements.check_sandbox_mode(policy.mode(), &location)?;
        }
        Ok(())
    }

    /// Ends a turn that may not start: started and failed at once, with the reason. Returns
    /// the id the refused turn got.
    fn refuse_turn(&self, refusal: osprey_config::ConfigError) -> TurnId {
        let turn_id = self.next_turn_id();
        self.events().emit(Some(&turn_id), EventMsg::TurnStarted);
        self.events().emit(
            Some(&turn_id),
            EventMsg::TurnFailed {
                error: osprey_protocol::WireError::new(
                    osprey_protocol::ErrorKind::Config,
                    format!("the turn was not started: {refusal}"),
                ),
                usage: TokenUsage::default(),
            },
        );
        turn_id
    }

    fn turn_context(
        &self,
        cwd: Option<PathBuf>,
        approval_policy: Option<AskForApproval>,
        sandbox_policy: Option<SandboxPolicy>,
        model: Option<String>,
        effort: Option<ReasoningEffort>,
        output_schema: Option<Value>,
    ) -> TurnContext {
        let mut settings = self.settings.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cwd) = cwd {
            settings.cwd = cwd;
        }
        if let Some(policy) = approval_policy {
            settings.approval_policy = policy;
        }
        if let Some(policy) = sandbox_policy {
            settings.sandbox_policy = policy;
        }
        if let Some(model) = model {
            settings.model = model;
        }
        if effort.is_some() {
            settings.effort = effort;
        }
        TurnContext {
            turn_id: self.next_turn_id(),
            cwd: settings.cwd.clone(),
            model: settings.model.clone(),
            effort: settings.effort,
            approval_policy: settings.approval_policy,
            sandbox_policy: settings.sandbox_policy.clone(),
            output_schema,
            config: Arc::clone(&self.config),
        }
    }
}

/// Sends an event the thread's consumer should see before any turn (used at start-up).
pub(crate) fn emit_thread_started(session: &Session, resumed: bool) {
    let rollout_path = session.recorder.as_ref().map(|r| r.path().to_path_buf());
    let settings = session
        .settings
        .lock()
        .map(|s| s.clone())
        .unwrap_or_else(|e| e.into_inner().clone());
    session.events().emit(
        None,
        EventMsg::ThreadStarted {
            model: settings.model,
            model_provider: session.config.model_provider_id.clone(),
            cwd: settings.cwd,
            approval_policy: settings.approval_policy,
            sandbox_policy: settings.sandbox_policy,
            rollout_path,
            resumed,
        },
    );
}

pub(crate) type EventReceiver = mpsc::UnboundedReceiver<Event>;
