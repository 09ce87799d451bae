//! Creating threads and handing out handles to them.

use crate::agents::AgentControl;
use crate::environment::ToolEnvironment;
use crate::environment::remote_sandbox::RemoteSandbox;
use crate::error::CoreError;
use crate::events::EventEmitter;
use crate::exec_policy::ExecPolicy;
use crate::prompt::DEFAULT_BASE_INSTRUCTIONS;
use crate::sandbox::PlatformSandbox;
use crate::session::{self, EventReceiver, Session, Submission, ThreadSettings};
use crate::tools;
use crate::tools::context::{CommandServices, HandlerDeps, SessionServices};
use crate::tools::orchestrator::Orchestrator;
use crate::tools::unified_exec::UnifiedExecSessions;
use osprey_config::Config;
use osprey_mcp::McpConnectionManager;
use osprey_model::{ModelClient, ModelProviderFactory, ProviderRegistry};
use osprey_protocol::{
    AgentStatus, Event, Op, ResponseItem, ThreadId, TokenUsage, TurnId, UserInput,
};
use osprey_rollout::{BaseInstructions, RolloutRecorder, SessionMeta, SessionSource};
use osprey_shell::Shell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// A running thread: submit ops, read events.
pub struct OspreyThread {
    id: ThreadId,
    ops: mpsc::Sender<Submission>,
    events: tokio::sync::Mutex<EventReceiver>,
    mcp: ThreadMcp,
}

/// A thread's MCP servers as they started, for status reports (`mcpServerStatus/list`).
pub struct ThreadMcp {
    /// The servers that started and their tools.
    pub manager: Arc<McpConnectionManager>,
    /// The servers that failed to start, with their reasons.
    pub failures: Vec<osprey_mcp::StartupFailure>,
}

impl OspreyThread {
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The thread's MCP servers: started ones with their tools, and startup failures.
    pub fn mcp(&self) -> &ThreadMcp {
        &self.mcp
    }

    /// Sends an op without waiting for what becomes of it; its events tell.
    pub async fn submit(&self, op: Op) -> Result<(), CoreError> {
        self.send(Submission { op, reply: None }).await
    }

    /// Submits `Op::UserTurn`, `Op::Compact` or `Op::RunUserShellCommand` and returns the id
    /// of the turn it became, before any of that turn's events are read. The id is the one
    /// its events carry, also when the turn waits behind a running one or was refused (a
    /// refused turn still starts and fails with that id). Any other op is an error
    /// ([`CoreError::NotATurn`]) and is not sent.
    pub async fn start_turn(&self, op: Op) -> Result<TurnId, CoreError> {
        if !matches!(
            op,
            Op::UserTurn { .. } | Op::Compact | Op::RunUserShellCommand { .. }
        ) {
            return Err(CoreError::NotATurn { op: op_name(&op) });
        }
        self.request(op).await
    }

    /// Adds input to the running regular turn and returns its id; the turn records the input
    /// as a user message before its next model request, and does not finish before it has
    /// answered it. With no regular turn running (none at all, or only a compaction or a user
    /// shell command), [`CoreError::NoActiveTurn`] and the input is not used.
    pub async fn steer(&self, items: Vec<UserInput>) -> Result<TurnId, CoreError> {
        self.request(Op::Steer { items }).await
    }

    async fn request(&self, op: Op) -> Result<TurnId, CoreError> {
        let (reply, answer) = oneshot::channel();
        self.send(Submission {
            op,
            reply: Some(reply),
        })
        .await?;
        answer.await.map_err(|_| CoreError::ThreadClosed)?
    }

    async fn send(&self, submission: Submission) -> Result<(), CoreError> {
        self.ops
            .send(submission)
            .await
            .map_err(|_| CoreError::ThreadClosed)
    }

    /// The next event, or `None` once the thread has shut down and every event was read.
    pub async fn next_event(&self) -> Option<Event> {
        self.events.lock().await.recv().await
    }
}

/// Owns every thread of this process. Front ends hold one manager.
///
/// Its state sits behind an `Arc` so that the collaboration tools can start sub-agent threads
/// through it (they hold a weak reference: a manager that is dropped takes its threads down).
#[derive(Default)]
pub struct ThreadManager {
    shared: Arc<Shared>,
}

/// The manager's state, shared with the agent-control service of the threads it starts.
#[derive(Default)]
pub(crate) struct Shared {
    pub(crate) threads: Mutex<HashMap<ThreadId, Arc<OspreyThread>>>,
    env: HashMap<String, String>,
    /// Factories for providers that are not HTTP endpoints (the front end registers them).
    providers: ProviderRegistry,
    osprey_exe: Option<std::path::PathBuf>,
    ignore_rules: bool,
    pub(crate) ephemeral: bool,
    unattended: bool,
    pub(crate) originator: String,
    pub(crate) source: SessionSource,
    /// Sub-agents: who spawned whom, their statuses and the sessions notifications go to.
    pub(crate) agents: crate::agents::AgentRegistry,
}

/// What a session starts from: nothing (new) or a session file (resume, fork).
pub(crate) struct SessionInit {
    pub(crate) thread_id: ThreadId,
    pub(crate) base_instructions: String,
    pub(crate) history: Vec<ResponseItem>,
    pub(crate) turns_so_far: u64,
    pub(crate) recorder: Option<Arc<RolloutRecorder>>,
    pub(crate) resumed: bool,
    pub(crate) warnings: Vec<String>,
    /// Set for a sub-agent: where it sits in its tree (its status is watched).
    pub(crate) agent: Option<crate::agents::AgentPlace>,
}

impl ThreadManager {
    /// `env` is the environment snapshot used for API keys and headers.
    pub fn new(env: HashMap<String, String>) -> Self {
        Self {
            shared: Arc::new(Shared {
                env,
                originator: "osprey".to_string(),
                source: SessionSource::Unknown,
                ..Shared::default()
            }),
        }
    }

    /// Changes a setting; settings are made before the first thread starts, when nothing
    /// else holds the state yet.
    fn configure(mut self, change: impl FnOnce(&mut Shared)) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => change(shared),
            None => tracing::warn!(
                "a ThreadManager setting was changed after threads started; it was ignored"
            ),
        }
        self
    }

    /// Serves `model_provider = "<id>"` with this factory instead of HTTP (the embedded
    /// local model registers itself this way; core never links it).
    pub fn with_provider(self, factory: Arc<dyn ModelProviderFactory>) -> Self {
        self.configure(|s| s.providers.register(factory))
    }

    /// Write no session files (`--ephemeral`).
    pub fn ephemeral(self, ephemeral: bool) -> Self {
        self.configure(|s| s.ephemeral = ephemeral)
    }

    /// No person answers approval requests (`osprey exec` declines them all): the model is
    /// told so when one is declined, instead of being told that a user said no.
    pub fn unattended(self, unattended: bool) -> Self {
        self.configure(|s| s.unattended = unattended)
    }

    /// Who is driving the threads, as recorded in session files.
    pub fn with_origin(self, originator: &str, source: SessionSource) -> Self {
        let originator = originator.to_string();
        self.configure(|s| {
            s.originator = originator;
            s.source = source;
        })
    }

    /// Skip exec-policy rules files (`--ignore-rules`).
    pub fn ignore_rules(self, ignore: bool) -> Self {
        self.configure(|s| s.ignore_rules = ignore)
    }

    /// The `osprey` executable, which the agent re-enters for sandboxed helpers.
    pub fn with_osprey_exe(self, exe: std::path::PathBuf) -> Self {
        self.configure(|s| s.osprey_exe = Some(exe))
    }

    /// Starts a new thread with this configuration. Fails before anything is sent when the
    /// provider cannot be used (for example its API key is missing).
    pub async fn start_thread(&self, config: Config) -> Result<Arc<OspreyThread>, CoreError> {
        self.shared.start_thread(config, None).await
    }

    /// Continues the thread recorded in `rollout` in the same file, with the same id and the
    /// same base instructions (unless the config sets them explicitly). The history is
    /// rebuilt from the file, compactions included. Two processes cannot resume one thread at
    /// once: the second is refused.
    pub async fn resume_thread(
        &self,
        config: Config,
        rollout: &Path,
    ) -> Result<Arc<OspreyThread>, CoreError> {
        self.shared.resume_thread(config, rollout, None).await
    }

    /// Copies the first `keep_turns` turns of the thread in `source` (all of them for `None`)
    /// into a new thread with a new id and file, and starts it.
    pub async fn fork_thread(
        &self,
        config: Config,
        source: &Path,
        keep_turns: Option<usize>,
    ) -> Result<Arc<OspreyThread>, CoreError> {
        let new_id = ThreadId::new();
        let path = osprey_rollout::fork_rollout(&config.osprey_home, source, keep_turns, new_id)?;
        self.resume_thread(config, &path).await
    }

    pub fn get(&self, id: ThreadId) -> Option<Arc<OspreyThread>> {
        self.shared.threads.lock().ok()?.get(&id).cloned()
    }

    /// Forgets a thread: the manager drops its handle and returns it. The thread keeps
    /// running for whoever still holds a handle; it ends when the last one is dropped (or
    /// on `Op::Shutdown`).
    pub fn remove(&self, id: ThreadId) -> Option<Arc<OspreyThread>> {
        self.shared
            .threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
    }

    /// Forgets `thread` only if the manager still holds this very handle, and says whether it
    /// did. A thread reopened under the same id (`resume_agent`, `thread/resume`) is a new
    /// handle: the cleanup that follows the old handle's end must not drop it.
    pub fn remove_handle(&self, thread: &Arc<OspreyThread>) -> bool {
        self.shared.forget_handle(thread)
    }

    /// The ids of the threads this manager holds, in no particular order (sub-agents
    /// included, until they are closed).
    pub fn loaded_ids(&self) -> Vec<ThreadId> {
        self.shared
            .threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .copied()
            .collect()
    }

    /// Announces every sub-agent thread started from now on (by a thread's `spawn_agent`
    /// or `resume_agent`), so a front end can read its events and answer its approvals.
    /// Each subscriber gets every announcement; the handle is in [`ThreadManager::get`] by
    /// the time it is announced.
    pub fn subscribe_spawned(&self) -> mpsc::UnboundedReceiver<SpawnedThread> {
        self.shared.agents.subscribe()
    }

    /// Where a sub-agent thread sits: its parent, depth and nickname (`None` for a thread
    /// no agent spawned).
    pub fn agent_info(&self, id: ThreadId) -> Option<SpawnedThread> {
        self.shared.agents.info(id)
    }
}

pub use crate::agents::SpawnedThread;

impl Shared {
    /// See [`ThreadManager::remove_handle`].
    pub(crate) fn forget_handle(&self, thread: &Arc<OspreyThread>) -> bool {
        let mut threads = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        let held = threads
            .get(&thread.id)
            .is_some_and(|held| Arc::ptr_eq(held, thread));
        if held {
            threads.remove(&thread.id);
        }
        held
    }

    /// Starts a new thread; `agent` places a sub-agent in its tree (its session file then
    /// names its parent, depth and nickname).
    pub(crate) async fn start_thread(
        self: &Arc<Self>,
        config: Config,
        mut agent: Option<crate::agents::AgentPlace>,
    ) -> Result<Arc<OspreyThread>, CoreError> {
        let thread_id = agent.as_ref().map_or_else(ThreadId::new, |place| place.id);
        let base_instructions = config
            .base_instructions
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_INSTRUCTIONS.to_string());
        // Fail on the provider before a session file exists.
        let model = self.model_client(&config).await?;
        let recorder = if self.ephemeral {
            None
        } else {
            let mut meta = SessionMeta::new(
                thread_id,
                config.cwd.clone(),
                self.originator.clone(),
                env!("CARGO_PKG_VERSION"),
                self.source.clone(),
            );
            meta.model_provider = Some(config.model_provider_id.clone());
            meta.base_instructions = Some(BaseInstructions {
                text: base_instructions.clone(),
            });
            meta.git = osprey_rollout::git_info(&config.cwd);
            if let Some(place) = &agent {
                place.describe(&mut meta);
            }
            Some(Arc::new(RolloutRecorder::create(
                &config.osprey_home,
                meta,
            )?))
        };
        self.spawn(
            config,
            model,
            SessionInit {
                thread_id,
                base_instructions,
                history: agent
                    .as_mut()
                    .map(|place| std::mem::take(&mut place.history))
                    .unwrap_or_default(),
                turns_so_far: 0,
                recorder,
                resumed: false,
                warnings: Vec::new(),
                agent,
            },
        )
        .await
    }

    /// Resumes the thread recorded in `rollout` (see [`ThreadManager::resume_thread`]).
    pub(crate) async fn resume_thread(
        self: &Arc<Self>,
        config: Config,
        rollout: &Path,
        agent: Option<crate::agents::AgentPlace>,
    ) -> Result<Arc<OspreyThread>, CoreError> {
        let model = self.model_client(&config).await?;
        let (recorder, contents) = if self.ephemeral {
            (None, osprey_rollout::read_rollout(rollout)?)
        } else {
            let (recorder, contents) = RolloutRecorder::resume(rollout)?;
            (Some(Arc::new(recorder)), contents)
        };
        let base_instructions = config
            .base_instructions
            .clone()
            .or_else(|| {
                contents
                    .meta
                    .base_instructions
                    .as_ref()
                    .map(|b| b.text.clone())
            })
            .unwrap_or_else(|| DEFAULT_BASE_INSTRUCTIONS.to_string());
        let mut warnings: Vec<String> = contents
            .warnings
            .iter()
            .map(|w| format!("session file {}: {w}", rollout.display()))
            .collect();
        if contents.unrecognized_records > 0 {
            warnings.push(format!(
                "session file {}: {} records of kinds this version does not know were skipped",
                rollout.display(),
                contents.unrecognized_records
            ));
        }
        let mut history = contents.reconstruct_history();
        let repaired = crate::history::close_dangling_calls(&mut history);
        if repaired > 0 {
            warnings.push(format!(
                "{repaired} tool call(s) in {} had no result (the session ended mid-call); they are marked as aborted",
                rollout.display()
            ));
            if let Some(recorder) = &recorder {
                let start = history.len() - repaired;
                recorder.record(
                    history[start..]
                        .iter()
                        .cloned()
                        .map(osprey_rollout::RolloutItem::ResponseItem)
                        .collect(),
                );
            }
        }
        self.spawn(
            config,
            model,
            SessionInit {
                thread_id: contents.meta.id,
                base_instructions,
                history,
                turns_so_far: contents.turn_contexts().len() as u64,
                recorder,
                resumed: true,
                warnings,
                agent,
            },
        )
        .await
    }

    async fn model_client(&self, config: &Config) -> Result<ModelClient, CoreError> {
        let env = &self.env;
        Ok(self
            .providers
            .client(config, &|name: &str| env.get(name).cloned())
            .await?)
    }

    /// Starts the configured MCP servers (concurrently, each within its startup timeout).
    async fn start_mcp(&self, config: &Config) -> (ThreadMcp, Vec<String>) {
        if config.mcp_servers.is_empty() {
            let mcp = ThreadMcp {
                manager: Arc::new(McpConnectionManager::empty()),
                failures: Vec::new(),
            };
            return (mcp, Vec::new());
        }
        let manager = McpConnectionManager::start(&config.mcp_servers, &self.env).await;
        let failures = manager.failures();
        let mut warnings: Vec<String> = failures
            .iter()
            .map(|failure| format!("MCP server unavailable: {failure}"))
            .collect();
        warnings.extend(manager.warnings().iter().cloned());
        let mcp = ThreadMcp {
            manager: Arc::new(manager),
            failures,
        };
        (mcp, warnings)
    }

    async fn spawn(
        self: &Arc<Self>,
        mut config: Config,
        model: ModelClient,
        mut init: SessionInit,
    ) -> Result<Arc<OspreyThread>, CoreError> {
        let environment = ToolEnvironment::for_thread(&config, &self.env)
            .await
            .map_err(CoreError::Invalid)?;
        if let Some(remote) = environment.remote() {
            // Resolved, so that sub-agents start in the same environment (whatever chose it).
            config.environment = Some(osprey_config::EnvironmentSelection {
                id: remote.id().to_owned(),
                cwd: Some(remote.cwd().clone()),
            });
        }
        let remote_instructions = remote_project_instructions(&environment, &config).await;
        let (thread_mcp, mcp_warnings) = self.start_mcp(&config).await;
        let mcp = Arc::clone(&thread_mcp.manager);
        init.warnings.extend(mcp_warnings);
        let thread_id = init.thread_id;
        let (event_tx, event_rx) = mpsc::unbounded_channel();
        let (op_tx, op_rx) = mpsc::channel(64);
        let agent = init.agent.take();
        let (status_tx, status_rx) = tokio::sync::watch::channel(
            agent
                .as_ref()
                .map_or(AgentStatus::PendingInit, |p| p.initial_status.clone()),
        );
        let events = EventEmitter::new(thread_id, event_tx)
            .with_recorder(init.recorder.clone())
            .with_status(status_tx);
        let control = AgentControl::new(Arc::downgrade(self), thread_id);
        let mut profile = tools::profile_for(&config);
        if environment.remote().is_some() {
            // These aids read and list this machine's files; a remote thread's are elsewhere.
            use osprey_tools::TurnAid;
            for aid in [
                TurnAid::ProjectFiles,
                TurnAid::ReadBeforeWrite,
                TurnAid::VerifyNamedCheck,
                TurnAid::AnswerFromEvidence,
                TurnAid::RelatedFiles,
                TurnAid::MissingName,
                TurnAid::WriteDiff,
                TurnAid::KeepContent,
            ] {
                profile = profile.without_aid(aid);
            }
        }
        let settings = ThreadSettings {
            cwd: environment.initial_cwd(&config.cwd),
            model: config.model.clone(),
            effort: config.model_reasoning_effort,
            approval_policy: config.approval_policy(),
            sandbox_policy: config.sandbox_policy().clone(),
        };
        let remote_shell = environment
            .remote()
            .and_then(|remote| remote.shell().map(|(_, path)| Shell::new(path)));
        let shell = match (
            remote_shell,
            self.env.get("SHELL").filter(|s| s.starts_with('/')),
        ) {
            (Some(remote), _) => remote,
            (None, Some(path)) => Shell::new(path),
            (None, None) => osprey_shell::default_user_shell(),
        };
        // A server names its shell itself (its path may be `C:\…`, not a path here).
        let remote_shell_name = environment
            .remote()
            .and_then(|remote| remote.shell().map(|(name, _)| name.to_owned()));
        let shell_name = remote_shell_name.unwrap_or_else(|| {
            shell
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sh".to_string())
        });
        let max_sessions = config.tools.unified_exec_max_sessions;
        let (policy, rule_errors) = if self.ignore_rules {
            (ExecPolicy::without_rules(), Vec::new())
        } else {
            let trusted = config
                .active_project_trusted
                .then_some(config.project_root.as_path());
            let dirs = ExecPolicy::default_dirs(&config.osprey_home, trusted);
            let amend = config.osprey_home.join("rules").join("default.rules");
            ExecPolicy::load(&dirs, Some(amend))
        };
        let sandbox: Arc<dyn crate::tools::orchestrator::Sandbox> = match &environment {
            ToolEnvironment::Local => {
                Arc::new(PlatformSandbox::new(self.osprey_exe.clone(), &config))
            }
            ToolEnvironment::Remote(_) => Arc::new(RemoteSandbox {
                rules: PlatformSandbox::new(self.osprey_exe.clone(), &config),
            }),
        };
        let commands = Arc::new(CommandServices {
            orchestrator: Orchestrator::new(Arc::new(policy), sandbox).unattended(self.unattended),
            env: self.env.clone(),
            shell,
            osprey_exe: self.osprey_exe.clone(),
            environment,
        });
        let deps = HandlerDeps {
            commands: Arc::clone(&commands),
            unified_exec: Arc::new(UnifiedExecSessions::new(max_sessions)),
            agents: control.clone(),
        };
        let registry = tools::build_registry_with_mcp(&config, &profile, &mcp, &deps);
        let session = Arc::new(Session {
            thread_id,
            config: Arc::new(config),
            model: Arc::new(model),
            registry: Arc::new(registry),
            profile: Arc::new(profile),
            services: Arc::new(SessionServices {
                events,
                commands,
                unified_exec: deps.unified_exec,
            }),
            mcp,
            base_instructions: init.base_instructions,
            shell_name,
            remote_instructions,
            history: Mutex::new(init.history),
            settings: Mutex::new(settings),
            total_usage: Mutex::new(TokenUsage::default()),
            turn_counter: Mutex::new(init.turns_so_far),
            compaction_due: Default::default(),
            recorder: init.recorder,
            agents: control,
            notifications: Mutex::new(Vec::new()),
        });
        self.agents
            .register_session(thread_id, Arc::downgrade(&session));
        session::emit_thread_started(&session, init.resumed);
        let sandbox_warnings = if matches!(
            session.config.sandbox_policy(),
            osprey_protocol::SandboxPolicy::DangerFullAccess
        ) {
            Vec::new()
        } else {
            // The problems of the backend this thread will really use (a machine without
            // bubblewrap is only a problem when the configuration asks for it).
            osprey_sandboxing::platform_problems_for(crate::sandbox::linux_backend(
                &session.config.sandbox,
            ))
        };
        let rule_warnings = rule_errors.into_iter().map(|error| {
            format!(
                "rules file not loaded: {error}. Until it is fixed, commands no rule allows need approval."
            )
        });
        for message in init
            .warnings
            .into_iter()
            .chain(rule_warnings)
            .chain(sandbox_warnings)
        {
            session
                .events()
                .emit(None, osprey_protocol::EventMsg::Warning { message });
        }
        let config = Arc::clone(&session.config);
        let rollout = session.recorder.as_ref().map(|r| r.path().to_path_buf());
        tokio::spawn(session::run_session(session, op_rx));
        let thread = Arc::new(OspreyThread {
            id: thread_id,
            ops: op_tx,
            events: tokio::sync::Mutex::new(event_rx),
            mcp: thread_mcp,
        });
        self.threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(thread_id, Arc::clone(&thread));
        if let Some(place) = agent {
            if let Some(parent) = self.agents.session_weak(place.parent) {
                crate::agents::watch_for_parent(thread_id, status_rx.clone(), parent);
            }
            self.agents.insert_child(
                thread_id,
                place,
                Arc::clone(&thread),
                status_rx,
                config,
                rollout,
            );
        }
        Ok(thread)
    }
}

/// An op's wire name (`user_turn`, `interrupt`, …), for error messages.
fn op_name(op: &Op) -> String {
    serde_json::to_value(op)
        .ok()
        .and_then(|value| value.get("type")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "this operation".to_string())
}

/// AGENTS.md on the exec server's side of a remote thread (off the runtime: one fs call per
/// probe). `None` for a local thread or when there are none.
async fn remote_project_instructions(
    environment: &ToolEnvironment,
    config: &Config,
) -> Option<String> {
    let remote = environment.remote()?;
    let files = crate::environment::remote_files::RemoteFiles::new(Arc::clone(remote));
    let cwd = remote.cwd().clone();
    let home = config.osprey_home.clone();
    let fallback = config.project_doc_fallback_filenames.clone();
    let max_bytes = config.project_doc_max_bytes;
    tokio::task::spawn_blocking(move || {
        crate::project_doc::load_project_instructions_in(&files, &home, &cwd, &fallback, max_bytes)
    })
    .await
    .ok()
    .flatten()
}
