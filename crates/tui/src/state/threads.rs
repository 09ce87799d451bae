//! Sub-agent threads, one watched at a time (`/agent`).
//!
//! With multi-agent on, the model spawns sub-agents: child threads whose events stream on the
//! same app-server connection under their own `threadId`. Each thread — the main one and
//! every sub-agent — has its own [`ThreadView`]: finished cells, live cells, the running
//! turn and the messages queued for it. The *watched* thread's view lives in
//! [`AppState`]'s own fields (`history`, `flushed`, `active`, `turn`, `queued`), where the
//! renderer, the scrollback and the composer find it; every other view is parked here.
//!
//! A notification for a parked thread is applied by giving that thread the focus (its view
//! swapped in), running the one notification reducer every thread shares, and giving the
//! focus back. So a sub-agent's transcript is built by exactly the code and the cell
//! renderers that build the main one, and its cells, like the main thread's, are kept for
//! the whole session (the main transcript has no limit either).
//!
//! Watching another thread swaps its view in for good: the scrollback gets a header naming
//! the thread and how to get back, then the thread's transcript so far, then its live
//! events; the composer sends to it (`turn/start` on its `threadId`, as Codex does).
//!
//! Sub-agents are learnt from `thread/started` (with a `parentThreadId`; it carries the
//! nickname and role), from the receivers of the parent's `collabAgentToolCall` items, and
//! from turn and item events under an unknown thread id (Codex's server announces no child).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::Instant;

use osprey_app_server_protocol::{
    FileUpdateChange, ServerNotification, ThreadActiveFlag, ThreadItemDetails, ThreadStatus,
    TurnStatus,
};

use super::cells::Cell;
use super::picker::{Picker, PickerItem, PickerKind};
use super::{Action, AppState, RunningTurn, notification_thread};

/// What a thread is doing, as the `/agent` picker shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentStatus {
    /// Known, no turn yet.
    Starting,
    Running,
    WaitingForApproval,
    /// The main thread with no turn running.
    Idle,
    Done,
    Interrupted,
    Errored,
    Closed,
    /// The connection to the app server was lost while it was busy: how it ended is unknown.
    Unknown,
}

impl AgentStatus {
    pub fn label(self) -> &'static str {
        match self {
            AgentStatus::Starting => "starting",
            AgentStatus::Running => "running",
            AgentStatus::WaitingForApproval => "waiting for approval",
            AgentStatus::Idle => "idle",
            AgentStatus::Done => "done",
            AgentStatus::Interrupted => "interrupted",
            AgentStatus::Errored => "errored",
            AgentStatus::Closed => "closed",
            AgentStatus::Unknown => "unknown (connection lost)",
        }
    }

    /// A status of a `collabAgentToolCall`'s `agentsStates` (`pendingInit`, `completed`, …).
    fn from_collab(status: &str) -> Option<Self> {
        Some(match status {
            "pendingInit" => AgentStatus::Starting,
            "running" => AgentStatus::Running,
            "interrupted" => AgentStatus::Interrupted,
            "completed" => AgentStatus::Done,
            "errored" => AgentStatus::Errored,
            "shutdown" | "notFound" => AgentStatus::Closed,
            _ => return None,
        })
    }
}

/// The per-thread part of the state: one thread's transcript and turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadView {
    pub history: Vec<Cell>,
    /// How many of `history` were written to the scrollback while this thread was watched.
    pub flushed: usize,
    pub active: Vec<(String, Cell)>,
    pub turn: Option<RunningTurn>,
    pub queued: Vec<String>,
}

/// A sub-agent of this session.
#[derive(Debug, Clone, PartialEq)]
pub struct SubAgent {
    pub id: String,
    pub nickname: Option<String>,
    pub role: Option<String>,
    pub status: AgentStatus,
}

impl SubAgent {
    /// `Planck [explorer]`, `Planck`, `[explorer]`, or `Sub-agent` when nothing names it.
    pub fn name(&self) -> String {
        let nickname = self.nickname.as_deref().map(str::trim).unwrap_or("");
        let role = self.role.as_deref().map(str::trim).unwrap_or("");
        match (nickname.is_empty(), role.is_empty()) {
            (false, false) => format!("{nickname} [{role}]"),
            (false, true) => nickname.to_owned(),
            (true, false) => format!("[{role}]"),
            (true, true) => "Sub-agent".to_owned(),
        }
    }
}

/// The line the scrollback gets before a thread's transcript when it becomes watched.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadHeader {
    /// The sub-agent's name; `None` for the main thread.
    pub agent: Option<String>,
    /// The sub-agent's thread id.
    pub id: Option<String>,
}

/// One row of the `/agent` picker.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRow {
    pub id: String,
    pub name: String,
    pub main: bool,
    pub status: AgentStatus,
    pub watched: bool,
}

/// Where a notification goes.
#[derive(Debug, Clone, PartialEq)]
enum Route {
    /// The thread with the focus (or no thread): its view is in `AppState`'s fields.
    Focused,
    /// A parked thread: the main one (`None`) or a sub-agent.
    Parked(Option<String>),
    /// A thread this session does not show.
    Drop,
}

/// The sub-agents and the parked views.
#[derive(Debug, Default)]
pub struct Threads {
    /// Sub-agents in the order they became known.
    pub agents: Vec<SubAgent>,
    /// The sub-agent with the focus; `None`: the main thread. Between events it is the one
    /// the person watches; while a parked thread's event is applied, that thread.
    pub watched: Option<String>,
    /// The main thread's view while a sub-agent has the focus.
    main: Option<ThreadView>,
    /// Sub-agents' views while they do not have the focus.
    parked: HashMap<String, ThreadView>,
    /// Written to the scrollback before the watched transcript, once, after a switch.
    header: Option<Cell>,
    /// The header of the watched thread, kept for the full-screen mode's top.
    shown: Option<ThreadHeader>,
}

impl Threads {
    pub fn agent(&self, id: &str) -> Option<&SubAgent> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// The names of those of `ids` that are sub-agents with a nickname or a role.
    pub fn nicknames<'a>(
        &self,
        ids: impl Iterator<Item = &'a String>,
    ) -> std::collections::BTreeMap<String, String> {
        ids.filter_map(|id| {
            let agent = self.agent(id)?;
            (agent.nickname.is_some() || agent.role.is_some()).then(|| (id.clone(), agent.name()))
        })
        .collect()
    }

    /// The app server is gone: no turn runs any more as far as this UI can know, and what
    /// became of the busy sub-agents is unknown.
    pub(super) fn connection_lost(&mut self) {
        for agent in &mut self.agents {
            if matches!(
                agent.status,
                AgentStatus::Starting | AgentStatus::Running | AgentStatus::WaitingForApproval
            ) {
                agent.status = AgentStatus::Unknown;
            }
        }
        for view in self.parked.values_mut().chain(self.main.as_mut()) {
            view.turn = None;
        }
    }

    /// The watched sub-agent, when one is watched.
    pub fn watched_agent(&self) -> Option<&SubAgent> {
        self.watched.as_deref().and_then(|id| self.agent(id))
    }

    fn agent_mut(&mut self, id: &str) -> Option<&mut SubAgent> {
        self.agents.iter_mut().find(|a| a.id == id)
    }

    /// Adds a sub-agent unless known (names fill in what was missing); true when new.
    fn register(&mut self, id: &str, nickname: Option<&str>, role: Option<&str>) -> bool {
        let named = |s: Option<&str>| s.filter(|s| !s.trim().is_empty()).map(str::to_owned);
        if let Some(agent) = self.agent_mut(id) {
            if let Some(nickname) = named(nickname) {
                agent.nickname = Some(nickname);
            }
            if let Some(role) = named(role) {
                agent.role = Some(role);
            }
            return false;
        }
        self.agents.push(SubAgent {
            id: id.to_owned(),
            nickname: named(nickname),
            role: named(role),
            status: AgentStatus::Starting,
        });
        true
    }

    fn set_status(&mut self, id: &str, status: AgentStatus) {
        if let Some(agent) = self.agent_mut(id) {
            agent.status = status;
        }
    }

    /// Learns sub-agents and their statuses from a notification; true when one was added.
    fn observe(&mut self, n: &ServerNotification, main: &str) -> bool {
        let thread = notification_thread(n).filter(|t| *t != main);
        let mut added = false;
        match n {
            ServerNotification::ThreadStarted(t)
                if t.thread.parent_thread_id.is_some() && t.thread.id != main =>
            {
                added = self.register(
                    &t.thread.id,
                    t.thread.agent_nickname.as_deref(),
                    t.thread.agent_role.as_deref(),
                );
                // Started again (reopened after a close): no turn yet.
                self.set_status(&t.thread.id, AgentStatus::Starting);
            }
            ServerNotification::ThreadStatusChanged(s) => {
                let status = match &s.status {
                    ThreadStatus::NotLoaded => Some(AgentStatus::Closed),
                    ThreadStatus::SystemError => Some(AgentStatus::Errored),
                    ThreadStatus::Active { active_flags }
                        if active_flags.contains(&ThreadActiveFlag::WaitingOnApproval) =>
                    {
                        Some(AgentStatus::WaitingForApproval)
                    }
                    ThreadStatus::Active { .. } => Some(AgentStatus::Running),
                    // Idle follows the turn's end, which said how it ended.
                    ThreadStatus::Idle => None,
                };
                if let Some(status) = status {
                    self.set_status(&s.thread_id, status);
                }
            }
            ServerNotification::TurnStarted(t) => {
                if let Some(id) = thread {
                    added = self.register(id, None, None);
                }
                self.set_status(&t.thread_id, AgentStatus::Running);
            }
            ServerNotification::TurnCompleted(t) => {
                let status = match t.turn.status {
                    TurnStatus::Completed => AgentStatus::Done,
                    TurnStatus::Interrupted => AgentStatus::Interrupted,
                    TurnStatus::Failed => AgentStatus::Errored,
                    TurnStatus::InProgress => AgentStatus::Running,
                };
                self.set_status(&t.thread_id, status);
            }
            ServerNotification::ItemStarted(_)
            | ServerNotification::ItemCompleted(_)
            | ServerNotification::AgentMessageDelta(_)
            | ServerNotification::CommandExecutionOutputDelta(_)
            | ServerNotification::ReasoningSummaryTextDelta(_)
            | ServerNotification::ReasoningSummaryPartAdded(_) => {
                if let Some(id) = thread {
                    added = self.register(id, None, None);
                }
            }
            _ => {}
        }
        let item = match n {
            ServerNotification::ItemStarted(s) => Some((&s.item.details, false)),
            ServerNotification::ItemCompleted(c) => Some((&c.item.details, true)),
            _ => None,
        };
        if let Some((
            ThreadItemDetails::CollabAgentToolCall {
                receiver_thread_ids,
                agents_states,
                ..
            },
            done,
        )) = item
        {
            for id in receiver_thread_ids.iter().filter(|id| *id != main) {
                added |= self.register(id, None, None);
            }
            if done {
                for (id, state) in agents_states.iter().filter(|(id, _)| *id != main) {
                    let status = state
                        .get("status")
                        .and_then(|s| s.as_str())
                        .and_then(AgentStatus::from_collab);
                    if let Some(status) = status {
                        added |= self.register(id, None, None);
                        self.set_status(id, status);
                    }
                }
            }
        }
        added
    }

    fn route(&self, thread: Option<&str>, main: &str) -> Route {
        let Some(thread) = thread else {
            return Route::Focused;
        };
        if thread == main {
            return match self.watched {
                None => Route::Focused,
                Some(_) => Route::Parked(None),
            };
        }
        if self.watched.as_deref() == Some(thread) {
            return Route::Focused;
        }
        if self.agent(thread).is_some() {
            return Route::Parked(Some(thread.to_owned()));
        }
        Route::Drop
    }

    /// A parked thread's running file change, for the diff of its patch approval.
    fn parked_file_change(&self, item_id: &str) -> Option<Vec<FileUpdateChange>> {
        self.parked
            .values()
            .chain(self.main.iter())
            .flat_map(|view| view.active.iter())
            .find_map(|(id, cell)| match cell {
                Cell::FileChange { changes, .. } if id == item_id => Some(changes.clone()),
                _ => None,
            })
    }

    /// The parked view of a thread (`None`: the main one).
    fn parked_view(&self, thread: Option<&str>) -> Option<&ThreadView> {
        match thread {
            None => self.main.as_ref(),
            Some(id) => self.parked.get(id),
        }
    }
}

impl AppState {
    /// Sends a notification of a parked thread to that thread's view and learns sub-agents.
    /// `Continue` gives back a notification for the thread with the focus.
    pub(super) fn route_notification(
        &mut self,
        n: ServerNotification,
        now: Instant,
    ) -> ControlFlow<Vec<Action>, ServerNotification> {
        let Some(main) = self.thread_id.clone() else {
            return ControlFlow::Continue(n);
        };
        if self.threads.observe(&n, &main) {
            self.refresh_agent_picker();
        }
        match self.threads.route(notification_thread(&n), &main) {
            Route::Focused => ControlFlow::Continue(n),
            Route::Drop => ControlFlow::Break(Vec::new()),
            Route::Parked(thread) => {
                let back = self.threads.watched.clone();
                self.focus(thread);
                // The thread has the focus now, so this is routed to it.
                let actions = self.on_notification(n, now);
                self.focus(back);
                ControlFlow::Break(actions)
            }
        }
    }

    /// Gives the focus to a thread (`None`: the main one): the view with the focus is parked
    /// and the thread's own is swapped into the state's fields.
    fn focus(&mut self, thread: Option<String>) {
        if thread == self.threads.watched {
            return;
        }
        let view = ThreadView {
            history: std::mem::take(&mut self.history),
            flushed: self.flushed,
            active: std::mem::take(&mut self.active),
            turn: self.turn.take(),
            queued: std::mem::take(&mut self.queued),
        };
        match self.threads.watched.take() {
            None => self.threads.main = Some(view),
            Some(id) => {
                self.threads.parked.insert(id, view);
            }
        }
        let next = match &thread {
            None => self.threads.main.take(),
            Some(id) => self.threads.parked.remove(id),
        }
        .unwrap_or_default();
        self.history = next.history;
        self.flushed = next.flushed;
        self.active = next.active;
        self.turn = next.turn;
        self.queued = next.queued;
        self.threads.watched = thread;
    }

    /// Watches a thread (`None`: the main one): its header and whole transcript go to the
    /// scrollback, its live cells to the live area, and the composer sends to it.
    pub(super) fn watch(&mut self, thread: Option<String>) {
        if thread == self.threads.watched {
            return;
        }
        self.focus(thread.clone());
        self.flushed = 0;
        let header = ThreadHeader {
            agent: self.threads.watched_agent().map(SubAgent::name),
            id: thread,
        };
        self.threads.header = Some(Cell::ThreadHeader(header.clone()));
        self.threads.shown = Some(header);
    }

    /// The thread messages go to: the watched sub-agent, else the main thread.
    pub fn send_target(&self) -> Option<String> {
        self.threads
            .watched
            .clone()
            .or_else(|| self.thread_id.clone())
    }

    /// The header to write before the rest of the scrollback, once after a switch.
    pub(super) fn take_thread_header(&mut self) -> Option<Cell> {
        self.threads.header.take()
    }

    /// The watched thread's header, shown above its transcript in full-screen mode once the
    /// person has switched threads.
    pub fn thread_header(&self) -> Option<Cell> {
        self.threads.shown.clone().map(Cell::ThreadHeader)
    }

    /// A new session (`/new`, `/resume`, `/fork`): the main thread watched, no sub-agents.
    pub(super) fn reset_threads(&mut self) {
        self.focus(None);
        self.threads = Threads::default();
    }

    /// The changes of a running file change of a thread not watched (its view is parked).
    pub(super) fn agent_file_change(&self, item_id: &str) -> Option<Vec<FileUpdateChange>> {
        self.threads.parked_file_change(item_id)
    }

    /// Slash commands that start, replace or compact the main thread wait until it is
    /// watched again; the reason, when one is refused.
    pub(super) fn main_thread_only(&self, name: &str) -> Option<String> {
        let agent = self.threads.watched_agent()?;
        Some(format!(
            "'/{name}' works on the main thread, and you are watching {}: /agent, then 1, to go back",
            agent.name()
        ))
    }

    /// The picker's rows: the main thread first, then each sub-agent as it became known.
    pub fn agent_rows(&self) -> Vec<AgentRow> {
        let main_waiting = self.approvals.iter().any(|a| a.from_agent.is_none());
        let main_running = match self.threads.watched {
            None => self.turn.is_some(),
            Some(_) => self
                .threads
                .parked_view(None)
                .is_some_and(|v| v.turn.is_some()),
        };
        let main_status = if main_waiting {
            AgentStatus::WaitingForApproval
        } else if main_running {
            AgentStatus::Running
        } else {
            AgentStatus::Idle
        };
        let mut rows = vec![AgentRow {
            id: self.thread_id.clone().unwrap_or_default(),
            name: "Main thread".to_owned(),
            main: true,
            status: main_status,
            watched: self.threads.watched.is_none(),
        }];
        for agent in &self.threads.agents {
            let asks = self
                .approvals
                .iter()
                .any(|a| a.from_agent.as_deref() == Some(agent.id.as_str()));
            rows.push(AgentRow {
                id: agent.id.clone(),
                name: agent.name(),
                main: false,
                status: if asks {
                    AgentStatus::WaitingForApproval
                } else {
                    agent.status
                },
                watched: self.threads.watched.as_deref() == Some(agent.id.as_str()),
            });
        }
        rows
    }

    fn agent_items(&self) -> Vec<PickerItem> {
        self.agent_rows()
            .into_iter()
            .map(|row| PickerItem {
                label: row.name,
                description: row.status.label().to_owned(),
                value: row.id,
                current: row.watched,
            })
            .collect()
    }

    /// `/agent`: the threads to watch, or one line saying there is none but the main one.
    pub(super) fn open_agent_picker(&mut self) {
        if self.threads.agents.is_empty() {
            self.history.push(Cell::Notice {
                text: "No sub-agents in this session yet: they are listed here once the model spawns one".to_owned(),
            });
            return;
        }
        self.picker = Some(Picker::new(
            "Sub-agents",
            PickerKind::Agent,
            self.agent_items(),
        ));
    }

    /// A sub-agent became known while the picker is open: list it too.
    fn refresh_agent_picker(&mut self) {
        if !matches!(
            self.picker.as_ref().map(|p| &p.kind),
            Some(PickerKind::Agent)
        ) {
            return;
        }
        let items = self.agent_items();
        if let Some(picker) = self.picker.as_mut() {
            picker.items = items;
        }
    }

    /// Alt+← / Alt+→: watches the thread before or after the watched one in the `/agent`
    /// list, wrapping around (with no sub-agent, the notice `/agent` gives).
    pub(super) fn cycle_agent(&mut self, forward: bool) {
        if self.threads.agents.is_empty() {
            self.open_agent_picker();
            return;
        }
        let rows = self.agent_rows();
        let at = rows.iter().position(|r| r.watched).unwrap_or(0);
        let next = if forward {
            (at + 1) % rows.len()
        } else {
            (at + rows.len() - 1) % rows.len()
        };
        let id = rows[next].id.clone();
        self.pick_agent(&id);
    }

    /// A row of the `/agent` picker was chosen: watch that thread.
    pub(super) fn pick_agent(&mut self, id: &str) {
        if self.thread_id.as_deref() == Some(id) {
            self.watch(None);
        } else if self.threads.agent(id).is_some() {
            self.watch(Some(id.to_owned()));
        }
    }
}

#[cfg(test)]
#[path = "threads_tests.rs"]
mod tests;
