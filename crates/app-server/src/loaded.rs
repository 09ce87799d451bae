//! A thread this server has loaded: the core handle, what the wire's `Thread` object says
//! about it, the connections subscribed to it, and the live state the event pump keeps
//! (status, the running turn, approvals waiting for an answer, user input not yet shown).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use osprey_app_server_protocol as wire;
use osprey_app_server_protocol::{ServerNotification, ThreadStatus};
use osprey_core::OspreyThread;
use osprey_protocol::ThreadId;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::connection::Connection;
use crate::turn_diff::TurnDiff;

/// What the `Thread` object reports, fixed when the thread is loaded.
#[derive(Debug, Clone)]
pub struct ThreadInfo {
    pub id: ThreadId,
    pub forked_from_id: Option<String>,
    pub preview: String,
    pub ephemeral: bool,
    pub model_provider: String,
    pub model: String,
    pub reasoning_effort: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    pub path: Option<PathBuf>,
    pub cwd: PathBuf,
    pub cli_version: String,
    pub originator: Option<String>,
    pub source: Value,
    pub git_info: Option<Value>,
    /// Set for a sub-agent thread: who spawned it, and the name it is shown by.
    pub parent_thread_id: Option<String>,
    pub agent_nickname: Option<String>,
}

impl ThreadInfo {
    /// The wire's `Thread` with this status and these turns.
    pub fn to_wire(&self, status: ThreadStatus, turns: Vec<wire::Turn>) -> wire::Thread {
        let now = chrono::Utc::now().timestamp();
        wire::Thread {
            id: self.id.to_string(),
            session_id: self.id.to_string(),
            forked_from_id: self.forked_from_id.clone(),
            parent_thread_id: self.parent_thread_id.clone(),
            preview: self.preview.clone(),
            ephemeral: self.ephemeral,
            history_mode: "paginated".to_owned(),
            model_provider: self.model_provider.clone(),
            model: Some(self.model.clone()),
            reasoning_effort: self.reasoning_effort.clone(),
            created_at: self.created_at,
            updated_at: self.path.as_deref().and_then(modified_secs).unwrap_or(now),
            recency_at: None,
            status,
            path: self.path.as_ref().map(|p| p.display().to_string()),
            cwd: self.cwd.display().to_string(),
            cli_version: self.cli_version.clone(),
            originator: self.originator.clone(),
            source: self.source.clone(),
            thread_source: self
                .parent_thread_id
                .as_ref()
                .map(|_| Value::String("subagent".to_owned())),
            agent_nickname: self.agent_nickname.clone(),
            agent_role: None,
            git_info: self.git_info.clone(),
            name: None,
            turns,
        }
    }
}

fn modified_secs(path: &std::path::Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let secs = modified
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    i64::try_from(secs).ok()
}

/// The turn in progress, as far as the wire is concerned.
#[derive(Debug)]
pub struct ActiveTurn {
    pub id: String,
    /// The root thread's turn this turn belongs to (`rootTurnId`): its own id on a root
    /// thread; on a sub-agent, the turn of the root that was running when it started.
    pub root_turn_id: String,
    /// Unix seconds / milliseconds.
    pub started_at: i64,
    pub started_at_ms: i64,
    /// When each item of this turn started, by item id.
    pub item_started: HashMap<String, i64>,
    /// Reasoning items that already got their `summaryPartAdded`.
    pub reasoning_started: Vec<String>,
    pub last_agent_message: Option<wire::ThreadItem>,
    pub diff: TurnDiff,
    /// Core item id → the id the wire uses for it (a command that was announced when its
    /// approval was asked, before core started its item).
    pub aliases: HashMap<String, String>,
    /// Commands announced for an approval whose core item has not started yet:
    /// (command text, wire id).
    pub announced: Vec<(String, String)>,
    /// Items started on the wire and not completed yet, by wire id.
    pub open: HashMap<String, wire::ThreadItem>,
    /// Announced items whose approval was answered `cancel`: they end `declined` with the
    /// turn (core never starts them).
    pub cancelled: Vec<String>,
}

impl ThreadState {
    /// The `rootTurnId` of this thread's running turn, if it runs one.
    pub fn root_turn_id(&self) -> Option<String> {
        self.turn.as_ref().map(|turn| turn.root_turn_id.clone())
    }
}

impl ActiveTurn {
    pub fn new(id: &str, now_ms: i64) -> Self {
        Self {
            id: id.to_owned(),
            root_turn_id: id.to_owned(),
            started_at: now_ms / 1000,
            started_at_ms: now_ms,
            item_started: HashMap::new(),
            reasoning_started: Vec::new(),
            last_agent_message: None,
            diff: TurnDiff::default(),
            aliases: HashMap::new(),
            announced: Vec::new(),
            open: HashMap::new(),
            cancelled: Vec::new(),
        }
    }

    /// The wire id of a core item id.
    pub fn wire_id(&self, core_id: &str) -> String {
        self.aliases
            .get(core_id)
            .cloned()
            .unwrap_or_else(|| core_id.to_owned())
    }
}

/// One approval request sent to the subscribed clients, waiting for the first answer.
pub struct PendingApproval {
    /// Core's approval id.
    pub approval_id: String,
    pub turn_id: String,
    pub method: &'static str,
    pub params: Value,
    /// Which connection got it under which request id.
    pub sent_to: Vec<(Arc<Connection>, i64)>,
    /// Where answers go; cancelled once resolved.
    pub answers: tokio::sync::mpsc::UnboundedSender<(u64, crate::connection::ClientAnswer)>,
    pub done: CancellationToken,
}

#[derive(Default)]
pub struct ThreadState {
    pub status: Option<ThreadStatus>,
    pub turn: Option<ActiveTurn>,
    /// The input each turn was given (by turn id), in order, until its user-message items
    /// show it: the wire shows the input as sent, images included.
    pub inputs: HashMap<String, VecDeque<Vec<wire::UserInput>>>,
    pub approvals: Vec<PendingApproval>,
    /// Set once the thread shut down.
    pub closed: bool,
    /// The first thing the user said, once said (the `Thread`'s `preview`).
    pub preview: Option<String>,
    /// Set for a sub-agent: the thread that spawned it (for its turns' `rootTurnId`).
    pub parent: Option<std::sync::Weak<LoadedThread>>,
    /// A sub-agent's last known root turn (the one it was spawned in, at first), used when
    /// its parent runs no turn as one of its turns starts.
    pub root_turn: Option<String>,
}

pub struct LoadedThread {
    pub thread: Arc<OspreyThread>,
    pub info: ThreadInfo,
    /// The configuration the thread was loaded with (what `thread/resume` of a loaded
    /// thread reports: a resume does not reset a running thread's settings).
    pub config: osprey_config::Config,
    pub context_window: Option<u64>,
    subscribers: Mutex<Vec<Arc<Connection>>>,
    state: Mutex<ThreadState>,
    /// Held by `turn/start` and `turn/steer` while they submit and answer, and by the pump
    /// before it shows a turn's start or a user message: the client gets the response first
    /// and the server knows the input before the item appears.
    pub turn_gate: tokio::sync::Mutex<()>,
}

impl LoadedThread {
    pub fn new(thread: Arc<OspreyThread>, info: ThreadInfo, config: osprey_config::Config) -> Self {
        Self {
            thread,
            info,
            context_window: config.context_window(),
            config,
            subscribers: Mutex::new(Vec::new()),
            state: Mutex::new(ThreadState {
                status: Some(ThreadStatus::Idle),
                ..ThreadState::default()
            }),
            turn_gate: tokio::sync::Mutex::new(()),
        }
    }

    /// The wire's `Thread` as it stands: live status and preview.
    pub fn to_wire(&self, turns: Vec<wire::Turn>) -> wire::Thread {
        let (status, preview) = {
            let state = self.state();
            (
                state.status.clone().unwrap_or(ThreadStatus::NotLoaded),
                state.preview.clone(),
            )
        };
        let mut thread = self.info.to_wire(status, turns);
        if let Some(preview) = preview
            && thread.preview.is_empty()
        {
            thread.preview = preview;
        }
        thread
    }

    pub fn id_text(&self) -> String {
        self.info.id.to_string()
    }

    pub fn state(&self) -> MutexGuard<'_, ThreadState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn status(&self) -> ThreadStatus {
        self.state()
            .status
            .clone()
            .unwrap_or(ThreadStatus::NotLoaded)
    }

    pub fn active_turn_id(&self) -> Option<String> {
        self.state().turn.as_ref().map(|t| t.id.clone())
    }

    /// Adds a subscriber (once). Approvals waiting for an answer are sent to it too, so a
    /// client that resumes a thread someone left mid-approval can answer.
    pub fn subscribe(&self, connection: &Arc<Connection>) -> bool {
        let added = {
            let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
            if subs.iter().any(|c| c.id == connection.id) {
                false
            } else {
                subs.push(Arc::clone(connection));
                true
            }
        };
        if added {
            let mut state = self.state();
            for pending in &mut state.approvals {
                crate::approval::send_to(pending, connection);
            }
        }
        added
    }

    /// Removes a subscriber; true when it was one.
    pub fn unsubscribe(&self, connection_id: u64) -> bool {
        let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        let before = subs.len();
        subs.retain(|c| c.id != connection_id && c.is_open());
        subs.len() != before
    }

    pub fn subscribers(&self) -> Vec<Arc<Connection>> {
        let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.retain(|c| c.is_open());
        subs.clone()
    }

    pub fn broadcast(&self, notification: &ServerNotification) {
        for connection in self.subscribers() {
            connection.notify(notification);
        }
    }

    pub fn broadcast_delta(
        &self,
        method: &'static str,
        params: &serde_json::Map<String, Value>,
        delta: &str,
    ) {
        for connection in self.subscribers() {
            connection.notify_delta(method, params.clone(), delta.to_owned());
        }
    }

    /// Sets the status and tells the subscribers, unless it did not change.
    pub fn set_status(&self, status: ThreadStatus) {
        {
            let mut state = self.state();
            if state.status.as_ref() == Some(&status) {
                return;
            }
            state.status = Some(status.clone());
        }
        self.broadcast(&ServerNotification::ThreadStatusChanged(
            wire::ThreadStatusChangedNotification {
                thread_id: self.id_text(),
                status,
            },
        ));
    }

    /// `active` with `waitingOnApproval` while any approval is pending.
    pub fn refresh_active_status(&self) {
        let (running, waiting) = {
            let state = self.state();
            (state.turn.is_some(), !state.approvals.is_empty())
        };
        if !running {
            return;
        }
        let flags = if waiting {
            vec![wire::ThreadActiveFlag::WaitingOnApproval]
        } else {
            Vec::new()
        };
        self.set_status(ThreadStatus::Active {
            active_flags: flags,
        });
    }
}
