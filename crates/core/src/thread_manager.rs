//! Creating threads and handing out handles to them.

use crate::approvals::ApprovalBroker;
use crate::error::CoreError;
use crate::events::EventEmitter;
use crate::exec_policy::ExecPolicy;
use crate::prompt::DEFAULT_BASE_INSTRUCTIONS;
use crate::sandbox::PlatformSandbox;
use crate::session::{self, EventReceiver, Session, ThreadSettings};
use crate::tools::orchestrator::Orchestrator;
use crate::tools::unified_exec::UnifiedExecSessions;
use crate::tools::{self, context::SessionServices};
use osprey_config::Config;
use osprey_model::ModelClient;
use osprey_protocol::{Event, Op, ThreadId, TokenUsage};
use osprey_shell::Shell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// A running thread: submit ops, read events.
pub struct OspreyThread {
    id: ThreadId,
    ops: mpsc::Sender<Op>,
    events: tokio::sync::Mutex<EventReceiver>,
}

impl OspreyThread {
    pub fn id(&self) -> ThreadId {
        self.id
    }

    pub async fn submit(&self, op: Op) -> Result<(), CoreError> {
        self.ops.send(op).await.map_err(|_| CoreError::ThreadClosed)
    }

    /// The next event, or `None` once the thread has shut down and every event was read.
    pub async fn next_event(&self) -> Option<Event> {
        self.events.lock().await.recv().await
    }
}

/// Owns every thread of this process. Front ends hold one manager.
#[derive(Default)]
pub struct ThreadManager {
    threads: Mutex<HashMap<ThreadId, Arc<OspreyThread>>>,
    env: HashMap<String, String>,
    osprey_exe: Option<std::path::PathBuf>,
    ignore_rules: bool,
}

impl ThreadManager {
    /// `env` is the environment snapshot used for API keys and headers.
    pub fn new(env: HashMap<String, String>) -> Self {
        Self {
            threads: Mutex::new(HashMap::new()),
            env,
            osprey_exe: None,
            ignore_rules: false,
        }
    }

    /// Skip exec-policy rules files (`--ignore-rules`).
    pub fn ignore_rules(mut self, ignore: bool) -> Self {
        self.ignore_rules = ignore;
        self
    }

    /// The `osprey` executable, which the agent re-enters for sandboxed helpers.
    pub fn with_osprey_exe(mut self, exe: std::path::PathBuf) -> Self {
        self.osprey_exe = Some(exe);
        self
    }

    /// Starts a new thread with this configuration. Fails before anything is sent when the
    /// provider cannot be used (for example its API key is missing).
    pub async fn start_thread(&self, config: Config) -> Result<Arc<OspreyThread>, CoreError> {
        let env = self.env.clone();
        let model = ModelClient::new(config.model_provider.clone(), &move |name: &str| {
            env.get(name).cloned()
        })?;
        let thread_id = ThreadId::new();
        let (event_tx, event_rx) = mpsc::unbounded_channel();
        let (op_tx, op_rx) = mpsc::channel(64);
        let events = EventEmitter::new(thread_id, event_tx);
        let registry = tools::build_registry(&config);
        let base_instructions = config
            .base_instructions
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_INSTRUCTIONS.to_string());
        let settings = ThreadSettings {
            cwd: config.cwd.clone(),
            model: config.model.clone(),
            effort: config.model_reasoning_effort,
            approval_policy: config.approval_policy(),
            sandbox_policy: config.sandbox_policy().clone(),
        };
        let shell = match self.env.get("SHELL").filter(|s| s.starts_with('/')) {
            Some(path) => Shell::new(path),
            None => osprey_shell::default_user_shell(),
        };
        let shell_name = shell
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sh".to_string());
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
        let session = Arc::new(Session {
            thread_id,
            config: Arc::new(config),
            model: Arc::new(model),
            registry: Arc::new(registry),
            services: Arc::new(SessionServices {
                events,
                approvals: ApprovalBroker::default(),
                orchestrator: Orchestrator::new(
                    Arc::new(policy),
                    Arc::new(PlatformSandbox::new(self.osprey_exe.clone())),
                ),
                unified_exec: UnifiedExecSessions::new(max_sessions),
                env: self.env.clone(),
                shell,
                osprey_exe: self.osprey_exe.clone(),
            }),
            base_instructions,
            shell_name,
            history: Mutex::new(Vec::new()),
            settings: Mutex::new(settings),
            total_usage: Mutex::new(TokenUsage::default()),
            turn_counter: Mutex::new(0),
        });
        session::emit_thread_started(&session, None);
        for error in rule_errors {
            session.events().emit(
                None,
                osprey_protocol::EventMsg::Warning {
                    message: format!(
                        "rules file not loaded: {error}. Until it is fixed, commands no rule allows need approval."
                    ),
                },
            );
        }
        tokio::spawn(session::run_session(session, op_rx));
        let thread = Arc::new(OspreyThread {
            id: thread_id,
            ops: op_tx,
            events: tokio::sync::Mutex::new(event_rx),
        });
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(thread_id, Arc::clone(&thread));
        }
        Ok(thread)
    }

    pub fn get(&self, id: ThreadId) -> Option<Arc<OspreyThread>> {
        self.threads.lock().ok()?.get(&id).cloned()
    }
}
