//! The TUI's state and its pure reducers: [`AppState::apply`] folds what the app server
//! sends into transcript cells, and [`AppState::on_key`] turns key presses into edits of
//! the draft and [`Action`]s for the app loop to carry out. Nothing here draws or does I/O,
//! so every behaviour is testable with plain values.

pub mod approval;
pub mod cells;
pub mod clipboard;
mod commands;
pub mod composer;
pub mod mcp_status;
pub mod mention;
pub mod picker;
pub mod plan;
pub mod sessions;
pub mod slash;
pub mod threads;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use osprey_app_server_protocol::{
    AskForApproval, Model, RequestId, SandboxPolicy, ServerNotification, ServerRequest,
    ThreadItemDetails, Turn, TurnStatus,
};

use crate::app_client::ServerEvent;
pub use approval::{Answer, ApprovalChoice, ApprovalKind, ESC_KEY, PendingApproval};
pub use cells::{Cell, ExecCell};
pub use composer::Composer;
pub use picker::{Pager, PagerContent, Picker, PickerItem, PickerKind};

/// What the app loop feeds the state: the server's messages and the results of requests
/// the loop made.
#[derive(Debug, Clone, PartialEq)]
pub enum AppEvent {
    Server(ServerEvent),
    /// `thread/start` (or `thread/resume`) succeeded; a resumed thread brings its turns.
    ThreadReady {
        thread_id: String,
        model: String,
        cwd: String,
        turns: Vec<Turn>,
        settings: ThreadSettings,
    },
    /// A request failed; `message` says which and why.
    RequestFailed {
        message: String,
    },
    /// `model/list` answered, for `/model`.
    Models(Vec<Model>),
    /// `thread/list` answered for the session picker's `query`.
    Sessions {
        query: sessions::SessionQuery,
        threads: Vec<SessionRow>,
        /// Unix seconds now, for "5m ago".
        now: i64,
    },
    /// `git diff` (untracked files included) for `/diff`.
    Diff(String),
    /// The AGENTS.md files that apply to the working directory, for `/status`.
    StatusProbed {
        agents_files: Vec<String>,
    },
    /// Whether the working directory has an AGENTS.md already, for `/init`.
    InitProbed {
        exists: bool,
    },
    /// A one-line note to show (the clipboard was written, …).
    Notice(String),
    /// `osprey resume` / `osprey fork` without an id: open the session picker.
    PickSession {
        fork: bool,
    },
    /// The repository's files (relative paths), for `@` completion.
    Files(Vec<String>),
    /// `thread/archive` (or `thread/unarchive`) of a session in the picker succeeded.
    SessionArchived {
        thread_id: String,
        archived: bool,
    },
    /// The thread's MCP servers as `mcpServerStatus/list` reports them, for `/mcp`.
    McpServers(Vec<osprey_app_server_protocol::McpServerStatus>),
    /// What Ctrl+V found on the system clipboard.
    Clipboard(clipboard::ClipboardPaste),
}

/// The settings a thread runs with, as `thread/start` (resume, fork) reported them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadSettings {
    pub provider: String,
    pub approval: Option<AskForApproval>,
    pub sandbox: Option<SandboxPolicy>,
    pub effort: Option<String>,
}

/// The thread a notification is about, when it names one.
fn notification_thread(n: &ServerNotification) -> Option<&str> {
    let id = match n {
        ServerNotification::ThreadStarted(t) => &t.thread.id,
        ServerNotification::ThreadStatusChanged(t) => &t.thread_id,
        ServerNotification::ThreadArchived(t)
        | ServerNotification::ThreadUnarchived(t)
        | ServerNotification::ThreadGoalCleared(t) => &t.thread_id,
        ServerNotification::ThreadTokenUsageUpdated(t) => &t.thread_id,
        ServerNotification::TurnStarted(t) | ServerNotification::TurnCompleted(t) => &t.thread_id,
        ServerNotification::TurnDiffUpdated(t) => &t.thread_id,
        ServerNotification::TurnPlanUpdated(t) => &t.thread_id,
        ServerNotification::Error(e) => &e.thread_id,
        ServerNotification::ItemStarted(i) => &i.thread_id,
        ServerNotification::ItemCompleted(i) => &i.thread_id,
        ServerNotification::AgentMessageDelta(d)
        | ServerNotification::CommandExecutionOutputDelta(d) => &d.thread_id,
        ServerNotification::ReasoningSummaryTextDelta(d) => &d.thread_id,
        ServerNotification::ReasoningSummaryPartAdded(p) => &p.thread_id,
        ServerNotification::ServerRequestResolved(r) => &r.thread_id,
        ServerNotification::Warning(w) => return w.thread_id.as_deref(),
        ServerNotification::ConfigWarning(_) | ServerNotification::DeprecationNotice(_) => {
            return None;
        }
    };
    Some(id)
}

/// One past session in the picker.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub preview: String,
    /// Unix seconds.
    pub updated_at: i64,
    /// Unix seconds.
    pub created_at: i64,
}

/// What `/model` and `/permissions` changed; sent with every later `turn/start`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnOverrides {
    pub model: Option<String>,
    pub effort: Option<String>,
    pub approval: Option<AskForApproval>,
    pub sandbox: Option<SandboxPolicy>,
}

/// What the state asks the app loop to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    StartTurn {
        thread_id: String,
        text: String,
        overrides: TurnOverrides,
        /// Attached images (paths), sent before the text.
        images: Vec<String>,
    },
    /// The person's `!cmd`, kept out of the model's history; `!!cmd` shares it.
    ShellCommand {
        thread_id: String,
        command: String,
        share_with_model: bool,
    },
    Interrupt {
        thread_id: String,
        turn_id: String,
    },
    Answer {
        id: RequestId,
        answer: Answer,
    },
    /// `/new`: a fresh thread with the command line's settings.
    NewThread,
    /// Resume (or fork) a recorded thread; its turns are replayed when `replay`.
    OpenThread {
        thread_id: String,
        fork: bool,
        replay: bool,
    },
    ListModels,
    ListSessions {
        query: sessions::SessionQuery,
    },
    /// Ctrl+A in the session picker: `thread/archive` (`archive`) or `thread/unarchive`.
    ArchiveSession {
        thread_id: String,
        archive: bool,
    },
    Compact {
        thread_id: String,
    },
    Diff,
    ProbeStatus,
    ProbeInit,
    /// List the repository's files for `@` completion (once).
    IndexFiles,
    /// `mcpServerStatus/list` of this thread (the newest loaded one before any), for `/mcp`.
    ListMcpServers {
        thread_id: Option<String>,
    },
    /// The person answered the trust question: save it, then start the session.
    Trust {
        trusted: bool,
    },
    /// Put `text` on the clipboard (OSC 52).
    Copy {
        text: String,
    },
    /// Ctrl+G: edit the draft in `$VISUAL`/`$EDITOR`; the loop hands the terminal over and
    /// calls [`AppState::finish_edit`] with the result.
    EditDraft {
        text: String,
    },
    /// Ctrl+V: read the system clipboard and report it as [`AppEvent::Clipboard`].
    PasteClipboard,
    Quit,
}

/// The status line's facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    pub model: String,
    pub cwd: String,
    /// Percent of the context window left, once the server reported usage.
    pub context_left_percent: Option<u8>,
    /// The thread's token usage so far, for the exit summary.
    pub usage: Option<osprey_app_server_protocol::TokenUsageBreakdown>,
    /// The last request's tokens and the model's context window, for `/status`.
    pub context: Option<(i64, i64)>,
    pub settings: ThreadSettings,
}

/// A turn in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct RunningTurn {
    /// Known once `turn/started` (or the `turn/start` reply) arrived.
    pub id: Option<String>,
    pub started: Instant,
}

#[derive(Debug, Default)]
pub struct AppState {
    pub thread_id: Option<String>,
    /// Sub-agents and the transcripts of the threads not watched (`/agent`).
    pub threads: threads::Threads,
    /// Finished cells, in order; the whole session's transcript.
    pub history: Vec<Cell>,
    /// How many of `history` are already written to the terminal's scrollback.
    pub flushed: usize,
    /// Cells still changing (streaming answer, running command), by item id, in start order.
    pub active: Vec<(String, Cell)>,
    pub composer: Composer,
    /// Approval requests, the first one shown.
    pub approvals: Vec<PendingApproval>,
    pub status: Status,
    pub turn: Option<RunningTurn>,
    /// Messages typed while a turn ran; sent when it ends.
    pub queued: Vec<String>,
    /// A prompt submitted before the thread was ready.
    pending_prompt: Option<String>,
    /// `thread/start` failed: there is nothing to send to.
    start_failed: bool,
    /// Ctrl+C was pressed once while idle; the next press quits.
    pub quit_armed: bool,
    pub should_quit: bool,
    /// The selected row of the slash popup.
    pub popup_selected: usize,
    /// A list opened by a slash command, shown instead of the composer.
    pub picker: Option<Picker>,
    /// A full-screen view (`/diff`, Ctrl+T).
    pub pager: Option<Pager>,
    /// What `/model` and `/permissions` chose for the next turns.
    pub next_turn: TurnOverrides,
    /// Each listed model's reasoning efforts, for the step after the model picker.
    efforts: std::collections::HashMap<String, Vec<PickerItem>>,
    /// The terminal's height at the last frame (a pager page).
    pub screen_rows: u16,
    /// `[tui] share_shell_output`: every `!cmd` reaches the model, as `!!cmd` does.
    pub share_shell_output: bool,
    /// `hide_agent_reasoning = true` in config.toml: reasoning summaries are not shown.
    pub hide_reasoning: bool,
    /// Full-screen mode: the transcript is drawn above the live area, not written to the
    /// terminal's scrollback.
    pub alt_screen: bool,
    /// Images attached to the message being sent (or queued); they go with the next turn.
    pending_images: Vec<String>,
    /// The `@` file popup while the word at the cursor starts with `@`.
    pub mention: Option<mention::MentionPopup>,
    /// The repository's files, once indexed.
    files: Option<Vec<String>>,
    files_requested: bool,
    /// Where a popup closed with Esc started; it stays closed for that word.
    mention_dismissed: Option<usize>,
    /// The project root asked about before the session starts (first launch in a project
    /// with an untrusted `.osprey/config.toml`), and the selected answer.
    pub trust: Option<(String, usize)>,
}

impl AppState {
    pub fn new() -> Self {
        Self::default()
    }

    /// How long the running turn has worked, for the status line.
    pub fn working_for(&self, now: Instant) -> Option<Duration> {
        self.turn
            .as_ref()
            .map(|t| now.saturating_duration_since(t.started))
    }

    /// Cells finished since the last call, for the terminal's scrollback (after a switch of
    /// the watched thread, its header and its whole transcript).
    pub fn take_unflushed(&mut self) -> Vec<Cell> {
        let start = self.flushed.min(self.history.len());
        self.flushed = self.history.len();
        self.take_thread_header()
            .into_iter()
            .chain(self.history[start..].iter().cloned())
            .collect()
    }

    /// Submits `text` as if typed and sent (the prompt given on the command line).
    pub fn submit_text(&mut self, text: String, now: Instant) -> Vec<Action> {
        self.submit(text, now)
    }

    pub fn apply(&mut self, event: AppEvent, now: Instant) -> Vec<Action> {
        match event {
            AppEvent::ThreadReady {
                thread_id,
                model,
                cwd,
                turns,
                settings,
            } => {
                self.reset_threads();
                self.replay(&turns);
                self.thread_id = Some(thread_id);
                self.status = Status {
                    model,
                    cwd,
                    settings,
                    ..Status::default()
                };
                self.next_turn = TurnOverrides::default();
                self.start_failed = false;
                match self.pending_prompt.take() {
                    Some(text) => self.submit(text, now),
                    None => Vec::new(),
                }
            }
            AppEvent::RequestFailed { message } => {
                if self.thread_id.is_none() {
                    self.start_failed = true;
                    self.pending_prompt = None;
                }
                // A turn the server never started is not running.
                if self.turn.as_ref().is_some_and(|t| t.id.is_none()) {
                    self.turn = None;
                }
                self.history.push(Cell::Error { message });
                Vec::new()
            }
            AppEvent::Models(models) => {
                self.open_model_picker(models);
                Vec::new()
            }
            AppEvent::Sessions {
                query,
                threads,
                now,
            } => {
                self.fill_session_picker(&query, threads, now);
                Vec::new()
            }
            AppEvent::SessionArchived {
                thread_id,
                archived,
            } => {
                self.session_archived(&thread_id, archived);
                Vec::new()
            }
            AppEvent::Diff(text) => {
                self.open_diff(text);
                Vec::new()
            }
            AppEvent::StatusProbed { agents_files } => {
                self.push_status(agents_files);
                Vec::new()
            }
            AppEvent::InitProbed { exists } => self.init(exists, now),
            AppEvent::PickSession { fork } => self.open_session_picker(fork),
            AppEvent::McpServers(servers) => {
                self.push_mcp(&servers);
                Vec::new()
            }
            AppEvent::Files(files) => {
                self.files = Some(files);
                self.refresh_mention()
            }
            AppEvent::Clipboard(paste) => {
                self.clipboard_read(paste);
                Vec::new()
            }
            AppEvent::Notice(text) => {
                self.history.push(Cell::Notice { text });
                Vec::new()
            }
            AppEvent::Server(ServerEvent::Notification(n)) => self.on_notification(*n, now),
            AppEvent::Server(ServerEvent::Request { id, request }) => {
                self.on_request(id, *request);
                Vec::new()
            }
            AppEvent::Server(ServerEvent::Unreadable(what)) => {
                self.history.push(Cell::Warning {
                    message: format!("ignored a message from the app server: {what}"),
                });
                Vec::new()
            }
            AppEvent::Server(ServerEvent::Closed { reason }) => {
                self.history.push(Cell::Error { message: reason });
                self.turn = None;
                // Nothing can answer them now: an overlay left asking would take keys for
                // nothing.
                self.approvals.clear();
                self.threads.connection_lost();
                Vec::new()
            }
        }
    }

    /// A resumed thread's turns become cells exactly as they were shown live.
    fn replay(&mut self, turns: &[Turn]) {
        for turn in turns {
            for item in &turn.items {
                if let Some(cell) = self.cell_for(&item.details, false) {
                    self.history.push(cell);
                }
            }
            if turn.status != TurnStatus::InProgress {
                let seconds = turn.duration_ms.map_or(0, |ms| ms.max(0) as u64 / 1000);
                self.history.push(Cell::TurnEnd {
                    seconds,
                    interrupted: turn.status == TurnStatus::Interrupted,
                });
            }
        }
    }

    /// The cell an item is shown as, if any (reasoning left out when hidden by config).
    fn cell_for(&self, item: &ThreadItemDetails, live: bool) -> Option<Cell> {
        if self.hide_reasoning && matches!(item, ThreadItemDetails::Reasoning { .. }) {
            return None;
        }
        let mut cell = Cell::from_item(item, live)?;
        if let Cell::Collab(call) = &mut cell {
            let ids = call
                .receivers
                .iter()
                .chain(call.states.iter().map(|s| &s.id));
            call.names = self.threads.nicknames(ids);
        }
        Some(cell)
    }

    fn active_mut(&mut self, item_id: &str) -> Option<&mut Cell> {
        self.active
            .iter_mut()
            .find(|(id, _)| id == item_id)
            .map(|(_, cell)| cell)
    }

    fn on_notification(&mut self, n: ServerNotification, now: Instant) -> Vec<Action> {
        // A sub-agent's events stream on this connection under its own thread id; each
        // thread's go to its own transcript (state/threads.rs).
        let n = match self.route_notification(n, now) {
            std::ops::ControlFlow::Break(actions) => return actions,
            std::ops::ControlFlow::Continue(n) => n,
        };
        match n {
            ServerNotification::TurnStarted(t) => {
                match &mut self.turn {
                    Some(turn) => turn.id = Some(t.turn.id),
                    None => {
                        self.turn = Some(RunningTurn {
                            id: Some(t.turn.id),
                            started: now,
                        })
                    }
                }
                Vec::new()
            }
            ServerNotification::TurnCompleted(t) => self.on_turn_completed(t.turn.status, now),
            ServerNotification::ItemStarted(s) => {
                let id = s.item.details.id().to_owned();
                // A user message is shown once complete; everything else live from the start.
                if !matches!(s.item.details, ThreadItemDetails::UserMessage { .. })
                    && let Some(cell) = self.cell_for(&s.item.details, true)
                {
                    self.active.retain(|(i, _)| *i != id);
                    self.active.push((id, cell));
                }
                Vec::new()
            }
            ServerNotification::ItemCompleted(c) => {
                let id = c.item.details.id();
                self.active.retain(|(i, _)| i != id);
                if let Some(cell) = self.cell_for(&c.item.details, false) {
                    self.history.push(cell);
                }
                Vec::new()
            }
            ServerNotification::AgentMessageDelta(d) => {
                match self.active_mut(&d.item_id) {
                    Some(Cell::Agent { text, .. }) => text.push_str(&d.delta),
                    _ => self.active.push((
                        d.item_id,
                        Cell::Agent {
                            text: d.delta,
                            streaming: true,
                        },
                    )),
                }
                Vec::new()
            }
            ServerNotification::ReasoningSummaryTextDelta(_) if self.hide_reasoning => Vec::new(),
            ServerNotification::ReasoningSummaryTextDelta(d) => {
                match self.active_mut(&d.item_id) {
                    Some(Cell::Reasoning { text }) => text.push_str(&d.delta),
                    _ => self
                        .active
                        .push((d.item_id, Cell::Reasoning { text: d.delta })),
                }
                Vec::new()
            }
            ServerNotification::ReasoningSummaryPartAdded(p) => {
                if let Some(Cell::Reasoning { text }) = self.active_mut(&p.item_id)
                    && !text.is_empty()
                {
                    text.push_str("\n\n");
                }
                Vec::new()
            }
            ServerNotification::CommandExecutionOutputDelta(d) => {
                if let Some(Cell::Exec(exec)) = self.active_mut(&d.item_id) {
                    exec.output.push_str(&d.delta);
                }
                Vec::new()
            }
            // A sub-agent's usage is not the session's.
            ServerNotification::ThreadTokenUsageUpdated(_) if self.threads.watched.is_some() => {
                Vec::new()
            }
            ServerNotification::ThreadTokenUsageUpdated(u) => {
                self.status.usage = Some(u.token_usage.total);
                if let Some(window) = u.token_usage.model_context_window.filter(|w| *w > 0) {
                    let used = u.token_usage.last.total_tokens.clamp(0, window);
                    let left = (window - used) * 100 / window;
                    self.status.context_left_percent = u8::try_from(left).ok();
                    self.status.context = Some((used, window));
                }
                Vec::new()
            }
            ServerNotification::ServerRequestResolved(r) => {
                self.approvals.retain(|a| a.id != r.request_id);
                Vec::new()
            }
            ServerNotification::Error(e) => {
                let cell = if e.will_retry {
                    Cell::Warning {
                        message: e.error.message,
                    }
                } else {
                    Cell::Error {
                        message: e.error.message,
                    }
                };
                self.history.push(cell);
                Vec::new()
            }
            ServerNotification::Warning(w) => {
                self.history.push(Cell::Warning { message: w.message });
                Vec::new()
            }
            ServerNotification::ConfigWarning(w) | ServerNotification::DeprecationNotice(w) => {
                let message = match w.details {
                    Some(details) => format!("{}: {details}", w.summary),
                    None => w.summary,
                };
                self.history.push(Cell::Warning { message });
                Vec::new()
            }
            // Each `update_plan` call is a finished cell of its own, as in Codex.
            ServerNotification::TurnPlanUpdated(p) => {
                self.history
                    .push(Cell::Plan(plan::PlanCell::from_notification(&p)));
                Vec::new()
            }
            // Shown by later slices (thread list, diff pager); nothing to draw now.
            ServerNotification::ThreadStarted(_)
            | ServerNotification::ThreadStatusChanged(_)
            | ServerNotification::ThreadArchived(_)
            | ServerNotification::ThreadUnarchived(_)
            | ServerNotification::ThreadGoalCleared(_)
            | ServerNotification::TurnDiffUpdated(_) => Vec::new(),
        }
    }

    fn on_turn_completed(&mut self, status: TurnStatus, now: Instant) -> Vec<Action> {
        // Whatever is still live is finished now (an interrupted stream keeps what came).
        for (_, mut cell) in std::mem::take(&mut self.active) {
            if let Cell::Agent { streaming, .. } = &mut cell {
                *streaming = false;
            }
            self.history.push(cell);
        }
        // This thread's requests end with its turn; other threads' still ask.
        let watched = self.threads.watched.clone();
        self.approvals.retain(|a| a.from_agent != watched);
        let seconds = self.working_for(now).map_or(0, |d| d.as_secs());
        self.history.push(Cell::TurnEnd {
            seconds,
            interrupted: status == TurnStatus::Interrupted,
        });
        self.turn = None;
        if self.queued.is_empty() {
            return Vec::new();
        }
        let text = self.queued.remove(0);
        self.submit(text, now)
    }

    fn on_request(&mut self, id: RequestId, request: ServerRequest) {
        let from_agent = match &request {
            ServerRequest::CommandExecutionRequestApproval(p) => Some(&p.thread_id),
            ServerRequest::FileChangeRequestApproval(p) => Some(&p.thread_id),
        }
        .filter(|t| self.thread_id.as_ref().is_some_and(|own| own != *t))
        .cloned();
        let kind = match request {
            ServerRequest::CommandExecutionRequestApproval(p) => {
                let session_allowed = p.available_decisions.as_ref().is_none_or(|d| {
                    d.contains(&osprey_app_server_protocol::CommandExecutionApprovalDecision::AcceptForSession)
                });
                ApprovalKind::Command {
                    command: p.command.unwrap_or_default(),
                    cwd: p.cwd,
                    reason: p.reason,
                    proposed_prefix: p.proposed_execpolicy_amendment.filter(|p| !p.is_empty()),
                    session_allowed,
                    sandbox_denial: p.sandbox_denial,
                }
            }
            ServerRequest::FileChangeRequestApproval(p) => {
                let changes = match self.active_mut(&p.item_id) {
                    Some(Cell::FileChange { changes, .. }) => changes.clone(),
                    _ => self.agent_file_change(&p.item_id).unwrap_or_default(),
                };
                ApprovalKind::Patch {
                    reason: p.reason,
                    grant_root: p.grant_root,
                    changes,
                }
            }
        };
        self.approvals.push(PendingApproval {
            id,
            kind,
            selected: 0,
            from_agent,
        });
    }

    fn submit(&mut self, text: String, now: Instant) -> Vec<Action> {
        let Some(thread_id) = self.thread_id.clone() else {
            if self.start_failed {
                self.history.push(Cell::Error {
                    message: "not sent: the session did not start (the error is above); fix it, then quit with Ctrl+C twice and run osprey again".to_owned(),
                });
            } else {
                self.pending_prompt = Some(text);
            }
            return Vec::new();
        };
        // While a sub-agent is watched, messages go to it.
        let thread_id = self.threads.watched.clone().unwrap_or(thread_id);
        if text.trim().is_empty() {
            return Vec::new();
        }
        if let Some(command) = text.trim_start().strip_prefix('!') {
            let (share_with_model, command) = match command.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (self.share_shell_output, command),
            };
            let command = command.trim().to_owned();
            if command.is_empty() {
                self.history.push(Cell::Notice {
                    text: "Prefix a command with ! to run it locally, for example: !ls".to_owned(),
                });
                return Vec::new();
            }
            if self.turn.is_some() {
                self.queued.push(text);
                return Vec::new();
            }
            self.turn = Some(RunningTurn {
                id: None,
                started: now,
            });
            return vec![Action::ShellCommand {
                thread_id,
                command,
                share_with_model,
            }];
        }
        if self.turn.is_some() {
            self.queued.push(text);
            return Vec::new();
        }
        self.turn = Some(RunningTurn {
            id: None,
            started: now,
        });
        vec![Action::StartTurn {
            thread_id,
            text,
            overrides: self.next_turn.clone(),
            images: std::mem::take(&mut self.pending_images),
        }]
    }

    fn interrupt(&self) -> Vec<Action> {
        match (
            self.send_target(),
            self.turn.as_ref().and_then(|t| t.id.clone()),
        ) {
            (Some(thread_id), Some(turn_id)) => vec![Action::Interrupt { thread_id, turn_id }],
            _ => Vec::new(),
        }
    }

    /// Pasted text goes into the draft, newlines included; a large paste as a placeholder.
    pub fn on_paste(&mut self, text: &str) {
        self.quit_armed = false;
        if self.composer.search().is_some() {
            self.composer.search_accept();
        }
        self.composer.paste(text);
        self.mention = None;
    }

    /// A pasted (or dropped) image file: `[Image #N]` in the draft.
    pub fn attach_image(&mut self, path: &str) {
        self.quit_armed = false;
        self.composer.attach_image(path);
    }

    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let ctrl_c = ctrl && matches!(key.code, KeyCode::Char('c'));
        if !ctrl_c {
            self.quit_armed = false;
        }
        if self.trust.is_some() {
            return self.on_trust_key(key);
        }
        if !self.approvals.is_empty() {
            return self.on_approval_key(key);
        }
        if self.pager.is_some() {
            self.on_pager_key(key);
            return Vec::new();
        }
        if self.picker.is_some() {
            return self.on_picker_key(key);
        }
        if self.composer.search().is_some() && !ctrl_c {
            self.on_search_key(key);
            return Vec::new();
        }
        if let Some(actions) = self.on_mention_key(key) {
            return actions;
        }
        if let Some(actions) = self.on_popup_key(key, now) {
            return actions;
        }
        if ctrl_c {
            if self.turn.is_some() {
                return self.interrupt();
            }
            if !self.composer.is_empty() {
                self.composer.clear();
                return Vec::new();
            }
            if self.quit_armed {
                self.should_quit = true;
                return vec![Action::Quit];
            }
            self.quit_armed = true;
            return Vec::new();
        }
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt || ctrl => self.composer.newline(),
            KeyCode::Char('j') if ctrl => self.composer.newline(),
            KeyCode::Enter => {
                let images = self.composer.take_images();
                let text = self.composer.take();
                if let Some(parsed) = slash::parse(&text) {
                    return self.run_slash(parsed, now);
                }
                self.pending_images.extend(images);
                return self.submit(text, now);
            }
            KeyCode::Char('r') if ctrl => self.composer.search_older(),
            KeyCode::Char('t') if ctrl => self.open_transcript(),
            KeyCode::Char('g') if ctrl => {
                return vec![Action::EditDraft {
                    text: self.composer.expanded(),
                }];
            }
            KeyCode::Esc if self.turn.is_some() => return self.interrupt(),
            KeyCode::Char('d') if ctrl => {
                if self.composer.is_empty() {
                    self.should_quit = true;
                    return vec![Action::Quit];
                }
                self.composer.delete();
            }
            KeyCode::Char('a') if ctrl => self.composer.home(),
            KeyCode::Char('e') if ctrl => self.composer.end(),
            KeyCode::Char('u') if ctrl => self.composer.kill_to_line_start(),
            KeyCode::Char('v' | 'V') if ctrl => return self.paste_clipboard(),
            KeyCode::Char(c) if !ctrl => self.composer.insert_char(c),
            KeyCode::Backspace => self.composer.backspace(),
            KeyCode::Delete => self.composer.delete(),
            KeyCode::Left if alt => self.cycle_agent(false),
            KeyCode::Right if alt => self.cycle_agent(true),
            KeyCode::Left => self.composer.left(),
            KeyCode::Right => self.composer.right(),
            KeyCode::Home => self.composer.home(),
            KeyCode::End => self.composer.end(),
            KeyCode::Up => self.composer.up(),
            KeyCode::Down => self.composer.down(),
            _ => {}
        }
        self.refresh_mention()
    }

    /// The draft back from the external editor, or why it could not be edited (the draft
    /// is then left as it was).
    pub fn finish_edit(&mut self, result: Result<String, String>) {
        match result {
            Ok(text) => self.composer.replace_edited(text.trim_end_matches('\n')),
            Err(message) => self.history.push(Cell::Warning { message }),
        }
    }

    /// Opens, updates or closes the `@` popup after an edit; asks for the file index once.
    fn refresh_mention(&mut self) -> Vec<Action> {
        let Some((start, query)) =
            mention::mention_at(self.composer.text(), self.composer.cursor())
        else {
            self.mention = None;
            self.mention_dismissed = None;
            return Vec::new();
        };
        if self.mention_dismissed == Some(start) {
            return Vec::new();
        }
        let query = query.to_owned();
        let matches = self
            .files
            .as_deref()
            .map(|files| mention::best_matches(files, &query, mention::MENTION_ROWS))
            .unwrap_or_default();
        let selected = self
            .mention
            .as_ref()
            .map_or(0, |m| if m.query == query { m.selected } else { 0 });
        self.mention = Some(mention::MentionPopup {
            selected: selected.min(matches.len().saturating_sub(1)),
            query,
            matches,
        });
        if self.files.is_none() && !self.files_requested {
            self.files_requested = true;
            return vec![Action::IndexFiles];
        }
        Vec::new()
    }

    /// Keys while the `@` popup has matches; `None` lets the composer have the key.
    fn on_mention_key(&mut self, key: KeyEvent) -> Option<Vec<Action>> {
        let popup = self.mention.as_mut().filter(|m| !m.matches.is_empty())?;
        match key.code {
            KeyCode::Up => popup.selected = popup.selected.saturating_sub(1),
            KeyCode::Down => {
                popup.selected = (popup.selected + 1).min(popup.matches.len() - 1);
            }
            KeyCode::Tab | KeyCode::Enter => {
                let path = popup.matches[popup.selected].clone();
                let (start, _) = mention::mention_at(self.composer.text(), self.composer.cursor())?;
                let quoted = if path.contains(char::is_whitespace) {
                    format!("\"{path}\" ")
                } else {
                    format!("{path} ")
                };
                self.composer.replace_before_cursor(start, &quoted);
                self.mention = None;
            }
            KeyCode::Esc => {
                self.mention_dismissed =
                    mention::mention_at(self.composer.text(), self.composer.cursor())
                        .map(|(start, _)| start);
                self.mention = None;
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Keys of the trust question: 1/y (or Enter on it) trusts, 2/n/Esc does not.
    fn on_trust_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some((_, selected)) = self.trust.as_mut() else {
            return Vec::new();
        };
        let trusted = match key.code {
            KeyCode::Up => {
                *selected = 0;
                return Vec::new();
            }
            KeyCode::Down => {
                *selected = 1;
                return Vec::new();
            }
            KeyCode::Enter => *selected == 0,
            KeyCode::Char('1' | 'y') => true,
            KeyCode::Char('2' | 'n') | KeyCode::Esc => false,
            _ => return Vec::new(),
        };
        self.trust = None;
        vec![Action::Trust { trusted }]
    }

    /// Keys while Ctrl+R searches the history.
    fn on_search_key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('r') if ctrl => self.composer.search_older(),
            KeyCode::Char('g') if ctrl => self.composer.search_cancel(),
            KeyCode::Esc => self.composer.search_cancel(),
            KeyCode::Char(c) if !ctrl => self.composer.search_push(c),
            KeyCode::Backspace => self.composer.search_pop(),
            _ => self.composer.search_accept(),
        }
    }

    fn on_approval_key(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(pending) = self.approvals.first_mut() else {
            return Vec::new();
        };
        let choices = pending.kind.choices();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let picked = match key.code {
            KeyCode::Up => {
                pending.selected = pending.selected.saturating_sub(1);
                None
            }
            KeyCode::Down => {
                pending.selected = (pending.selected + 1).min(choices.len().saturating_sub(1));
                None
            }
            KeyCode::Enter => choices.get(pending.selected).cloned(),
            KeyCode::Esc => choices.iter().find(|c| c.key == ESC_KEY).cloned(),
            KeyCode::Char('c') if ctrl => choices.iter().find(|c| c.key == ESC_KEY).cloned(),
            KeyCode::Char(ch) if !ctrl => {
                let ch = ch.to_ascii_lowercase();
                // `a` is Codex's key for "don't ask again for these files".
                let ch = if ch == 'a' && matches!(pending.kind, ApprovalKind::Patch { .. }) {
                    's'
                } else {
                    ch
                };
                choices.iter().find(|c| c.key == ch).cloned()
            }
            _ => None,
        };
        let Some(choice) = picked else {
            return Vec::new();
        };
        let pending = self.approvals.remove(0);
        self.history.push(Cell::Notice {
            text: pending.kind.decision_notice(&choice.answer),
        });
        vec![Action::Answer {
            id: pending.id,
            answer: choice.answer,
        }]
    }
}

#[cfg(test)]
mod tests;
