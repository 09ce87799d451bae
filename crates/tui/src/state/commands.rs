//! Slash commands, the pickers they open and the pager: the key handling and the events
//! that fill them. Part of [`AppState`]'s reducers, pure like the rest.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use osprey_app_server_protocol::{AskForApproval, Model, SandboxPolicy};

use super::picker::{PRESETS, PresetSandbox, preset_of};
use super::slash::{self, SlashCommand, SlashEntry};
use super::{Action, AppState, Cell, Pager, PagerContent, Picker, PickerItem, PickerKind};

/// What `/init` asks the model to do (our wording; Codex sends a prompt to the same end).
pub const INIT_PROMPT: &str = "Generate a file named AGENTS.md in the current directory that serves as a contributor guide for this repository. Look at the repository first (its layout, build and test commands, code style, commit conventions) and write concise, specific instructions under headings such as Project Structure, Build and Test Commands, Coding Style, Testing Guidelines and Commit Guidelines. Keep it short (200 to 400 words) and only state what the repository shows.";

/// Commands that change the thread, refused while a turn runs.
fn needs_idle(command: SlashCommand) -> bool {
    matches!(
        command,
        SlashCommand::New
            | SlashCommand::Resume
            | SlashCommand::Fork
            | SlashCommand::Compact
            | SlashCommand::Init
    )
}

fn approval_label(approval: &AskForApproval) -> &'static str {
    match approval {
        AskForApproval::UnlessTrusted => "untrusted",
        AskForApproval::OnFailure => "on-failure",
        AskForApproval::OnRequest => "on-request",
        AskForApproval::Never => "never",
        AskForApproval::Granular(_) => "granular",
    }
}

fn sandbox_label(sandbox: &SandboxPolicy) -> &'static str {
    match sandbox {
        SandboxPolicy::DangerFullAccess => "full access",
        SandboxPolicy::ReadOnly { .. } => "read-only",
        SandboxPolicy::ExternalSandbox { .. } => "external sandbox",
        SandboxPolicy::WorkspaceWrite { .. } => "workspace-write",
    }
}

/// `12s ago`, `5m ago`, `3h ago`, `2d ago`.
pub(super) fn ago(then: i64, now: i64) -> String {
    let s = (now - then).max(0);
    match s {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
}

/// `258K`, `1.2M`, `950`.
fn tokens(n: i64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 1000 => format!("{}K", n / 1000),
        n => n.to_string(),
    }
}

impl AppState {
    /// The slash popup's rows while the draft is a bare `/word`; empty when it is closed.
    pub fn popup_entries(&self) -> Vec<&'static SlashEntry> {
        if self.approvals.is_empty()
            && self.picker.is_none()
            && let Some(prefix) = slash::typed_command(self.composer.text())
        {
            return slash::filtered(prefix);
        }
        Vec::new()
    }

    /// Keys while the slash popup is open; `None` lets the composer have the key.
    pub(super) fn on_popup_key(&mut self, key: KeyEvent, now: Instant) -> Option<Vec<Action>> {
        let entries = self.popup_entries();
        if entries.is_empty() {
            self.popup_selected = 0;
            return None;
        }
        self.popup_selected = self.popup_selected.min(entries.len() - 1);
        let plain = key.modifiers.is_empty() || key.modifiers == KeyModifiers::SHIFT;
        match key.code {
            KeyCode::Up => {
                self.popup_selected = self.popup_selected.saturating_sub(1);
                Some(Vec::new())
            }
            KeyCode::Down => {
                self.popup_selected = (self.popup_selected + 1).min(entries.len() - 1);
                Some(Vec::new())
            }
            KeyCode::Tab => {
                let name = entries[self.popup_selected].name;
                self.composer.set_text(&format!("/{name} "));
                Some(Vec::new())
            }
            KeyCode::Enter if plain => {
                let entry = entries[self.popup_selected];
                self.composer.take();
                self.popup_selected = 0;
                Some(self.run_slash(Ok((entry.command, "")), now))
            }
            KeyCode::Esc if self.turn.is_none() => {
                self.composer.clear();
                self.popup_selected = 0;
                Some(Vec::new())
            }
            _ => {
                // Typing changes the filter: start at the top again.
                self.popup_selected = 0;
                None
            }
        }
    }

    /// Runs a submitted `/command` (or says the name is unknown).
    pub(super) fn run_slash(
        &mut self,
        parsed: Result<(SlashCommand, &str), String>,
        now: Instant,
    ) -> Vec<Action> {
        let command = match parsed {
            Ok((command, _args)) => command,
            Err(name) => {
                self.history.push(Cell::Error {
                    message: format!(
                        "Unrecognized command '/{name}'. Type \"/\" for a list of supported commands."
                    ),
                });
                return Vec::new();
            }
        };
        let name = slash::COMMANDS
            .iter()
            .find(|e| e.command == command)
            .map_or("", |e| e.name);
        if needs_idle(command)
            && let Some(text) = self.main_thread_only(name)
        {
            self.history.push(Cell::Notice { text });
            return Vec::new();
        }
        if needs_idle(command) && self.turn.is_some() {
            self.history.push(Cell::Notice {
                text: format!(
                    "'/{name}' is disabled while a turn is in progress; wait for it or press esc to interrupt"
                ),
            });
            return Vec::new();
        }
        let thread_id = self.thread_id.clone();
        let no_session = |state: &mut AppState| {
            state.history.push(Cell::Notice {
                text: "No session yet: wait until it has started".to_owned(),
            });
            Vec::new()
        };
        match command {
            SlashCommand::Exit => {
                self.should_quit = true;
                vec![Action::Quit]
            }
            SlashCommand::New => vec![Action::NewThread],
            SlashCommand::Model => {
                self.picker = Some(Picker {
                    loading: true,
                    ..Picker::new("Select Model and Effort", PickerKind::Model, Vec::new())
                });
                vec![Action::ListModels]
            }
            SlashCommand::Permissions => {
                self.open_permissions();
                Vec::new()
            }
            SlashCommand::Resume => self.open_session_picker(false),
            SlashCommand::Fork => match thread_id {
                Some(thread_id) => vec![Action::OpenThread {
                    thread_id,
                    fork: true,
                    replay: false,
                }],
                None => no_session(self),
            },
            SlashCommand::Compact => match thread_id {
                Some(thread_id) => {
                    self.turn = Some(super::RunningTurn {
                        id: None,
                        started: now,
                    });
                    vec![Action::Compact { thread_id }]
                }
                None => no_session(self),
            },
            SlashCommand::Diff => vec![Action::Diff],
            SlashCommand::Status => vec![Action::ProbeStatus],
            SlashCommand::Init => match thread_id {
                Some(_) => vec![Action::ProbeInit],
                None => no_session(self),
            },
            SlashCommand::Copy => {
                let last = self.history.iter().rev().find_map(|c| match c {
                    Cell::Agent { text, .. } if !text.trim().is_empty() => Some(text.clone()),
                    _ => None,
                });
                match last {
                    Some(text) => vec![Action::Copy { text }],
                    None => {
                        self.history.push(Cell::Notice {
                            text: "Nothing to copy yet: the model has not answered in this session"
                                .to_owned(),
                        });
                        Vec::new()
                    }
                }
            }
            SlashCommand::Agent => {
                self.open_agent_picker();
                Vec::new()
            }
            SlashCommand::Mcp => vec![Action::ListMcpServers {
                thread_id: self.thread_id.clone(),
            }],
        }
    }

    fn open_permissions(&mut self) {
        let approval = self
            .next_turn
            .approval
            .clone()
            .or_else(|| self.status.settings.approval.clone());
        let sandbox = self
            .next_turn
            .sandbox
            .as_ref()
            .or(self.status.settings.sandbox.as_ref())
            .and_then(PresetSandbox::of);
        let current = approval.as_ref().and_then(|a| preset_of(a, sandbox));
        let items = PRESETS
            .iter()
            .map(|p| PickerItem {
                label: p.label.to_owned(),
                description: p.description.to_owned(),
                value: p.id.to_owned(),
                current: current.is_some_and(|c| c.id == p.id),
            })
            .collect();
        self.picker = Some(Picker::new(
            "Update Model Permissions",
            PickerKind::Permissions,
            items,
        ));
    }

    /// `model/list` answered: the model picker's rows (hidden models left out).
    pub(super) fn open_model_picker(&mut self, models: Vec<Model>) {
        if !matches!(
            self.picker.as_ref().map(|p| &p.kind),
            Some(PickerKind::Model)
        ) {
            return;
        }
        let current = self
            .next_turn
            .model
            .clone()
            .unwrap_or_else(|| self.status.model.clone());
        let current_effort = self.next_turn.effort.clone();
        self.efforts.clear();
        let mut items = Vec::new();
        for m in models.into_iter().filter(|m| !m.hidden) {
            let efforts = m
                .supported_reasoning_efforts
                .iter()
                .map(|e| PickerItem {
                    label: e.reasoning_effort.clone(),
                    description: e.description.clone(),
                    value: e.reasoning_effort.clone(),
                    current: current_effort.as_ref().map_or(
                        m.default_reasoning_effort.as_ref() == Some(&e.reasoning_effort),
                        |c| *c == e.reasoning_effort,
                    ),
                })
                .collect();
            self.efforts.insert(m.model.clone(), efforts);
            let label = if m.model == current {
                format!("{} (current)", m.display_name)
            } else {
                m.display_name.clone()
            };
            items.push(PickerItem {
                current: m.model == current,
                label,
                description: m.description.clone(),
                value: m.model,
            });
        }
        self.picker = Some(Picker::new(
            "Select Model and Effort",
            PickerKind::Model,
            items,
        ));
    }

    pub(super) fn on_picker_key(&mut self, key: KeyEvent) -> Vec<Action> {
        if self.picker.is_none() {
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let closing =
            matches!(key.code, KeyCode::Esc) || (ctrl && matches!(key.code, KeyCode::Char('c')));
        if closing {
            self.picker = None;
            // Closing the session picker of `osprey resume` starts a fresh session.
            if self.thread_id.is_none() && !self.start_failed {
                return vec![Action::NewThread];
            }
            return Vec::new();
        }
        if let Some(actions) = self.on_session_picker_key(key) {
            return actions;
        }
        let Some(picker) = self.picker.as_mut() else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up => picker.up(),
            KeyCode::Down => picker.down(),
            KeyCode::Enter => {
                let Some(item) = picker.chosen().cloned() else {
                    return Vec::new();
                };
                let kind = picker.kind.clone();
                return self.pick(kind, item);
            }
            KeyCode::Char(c) if !ctrl => {
                // A row's number picks it, as in Codex's lists.
                if let Some(n) = c.to_digit(10).and_then(|n| usize::try_from(n).ok())
                    && n >= 1
                    && let Some(item) = picker.items.get(n - 1).cloned()
                {
                    let kind = picker.kind.clone();
                    return self.pick(kind, item);
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn pick(&mut self, kind: PickerKind, item: PickerItem) -> Vec<Action> {
        self.picker = None;
        match kind {
            PickerKind::Model => {
                let efforts = self.efforts.get(&item.value).cloned().unwrap_or_default();
                if efforts.is_empty() {
                    self.choose_model(item.value, None);
                } else {
                    let items = efforts;
                    self.picker = Some(Picker::new(
                        &format!("Select Reasoning Level for {}", item.value),
                        PickerKind::Effort { model: item.value },
                        items,
                    ));
                }
                Vec::new()
            }
            PickerKind::Effort { model } => {
                self.choose_model(model, Some(item.value));
                Vec::new()
            }
            PickerKind::Permissions => {
                if let Some(preset) = PRESETS.iter().find(|p| p.id == item.value) {
                    self.next_turn.approval = Some(preset.approval.clone());
                    self.next_turn.sandbox = Some(preset.sandbox.policy());
                    self.history.push(Cell::Notice {
                        text: format!(
                            "Permissions set to {} (approval {}, sandbox {}) from the next message on",
                            preset.label,
                            approval_label(&preset.approval),
                            sandbox_label(&preset.sandbox.policy()),
                        ),
                    });
                }
                Vec::new()
            }
            PickerKind::Agent => {
                self.pick_agent(&item.value);
                Vec::new()
            }
            PickerKind::Session { fork } => vec![Action::OpenThread {
                thread_id: item.value,
                fork,
                replay: true,
            }],
        }
    }

    fn choose_model(&mut self, model: String, effort: Option<String>) {
        let text = match &effort {
            Some(e) => format!("Model changed to {model} {e} from the next message on"),
            None => format!("Model changed to {model} from the next message on"),
        };
        self.status.model = model.clone();
        self.next_turn.model = Some(model);
        self.next_turn.effort = effort;
        self.history.push(Cell::Notice { text });
    }

    pub(super) fn open_diff(&mut self, text: String) {
        if text.trim().is_empty() {
            self.history.push(Cell::Notice {
                text: "No changes: git diff shows nothing, and there are no untracked files"
                    .to_owned(),
            });
            return;
        }
        self.pager = Some(Pager {
            title: "/diff".to_owned(),
            content: PagerContent::Diff(text),
            scroll: 0,
        });
    }

    pub(super) fn open_transcript(&mut self) {
        self.pager = Some(Pager {
            title: "Transcript".to_owned(),
            content: PagerContent::Transcript,
            // Opens at the end, where the conversation is.
            scroll: usize::MAX,
        });
    }

    pub(super) fn on_pager_key(&mut self, key: KeyEvent) {
        let Some(pager) = self.pager.as_mut() else {
            return;
        };
        let page = usize::from(self.screen_rows.saturating_sub(4).max(1));
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => self.pager = None,
            KeyCode::Char('c' | 't') if ctrl => self.pager = None,
            KeyCode::Up | KeyCode::Char('k') => pager.scroll = pager.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => pager.scroll = pager.scroll.saturating_add(1),
            KeyCode::PageUp => pager.scroll = pager.scroll.saturating_sub(page),
            KeyCode::PageDown | KeyCode::Char(' ') => {
                pager.scroll = pager.scroll.saturating_add(page);
            }
            KeyCode::Home => pager.scroll = 0,
            KeyCode::End => pager.scroll = usize::MAX,
            _ => {}
        }
    }

    /// `/status`: the session's facts as one cell.
    pub(super) fn push_status(&mut self, agents_files: Vec<String>) {
        let s = &self.status;
        let model = match self
            .next_turn
            .effort
            .as_ref()
            .or(s.settings.effort.as_ref())
        {
            Some(effort) => format!("{} (reasoning {effort})", s.model),
            None => s.model.clone(),
        };
        let approval = self
            .next_turn
            .approval
            .clone()
            .or_else(|| s.settings.approval.clone());
        let sandbox = self
            .next_turn
            .sandbox
            .clone()
            .or_else(|| s.settings.sandbox.clone());
        let preset = approval
            .as_ref()
            .and_then(|a| preset_of(a, sandbox.as_ref().and_then(PresetSandbox::of)));
        let permissions = match (preset, &approval, &sandbox) {
            (Some(p), _, _) => p.label.to_owned(),
            (None, Some(a), Some(sb)) => {
                format!(
                    "approval {}, sandbox {}",
                    approval_label(a),
                    sandbox_label(sb)
                )
            }
            _ => "unknown".to_owned(),
        };
        let usage = match s.usage {
            Some(u) => format!(
                "{} total ({} input + {} output)",
                u.total_tokens, u.input_tokens, u.output_tokens
            ),
            None => "none yet".to_owned(),
        };
        let context = match (s.context_left_percent, s.context) {
            (Some(left), Some((used, window))) => {
                format!("{left}% left ({} used / {})", tokens(used), tokens(window))
            }
            _ => "not known until the first answer".to_owned(),
        };
        let agents = if agents_files.is_empty() {
            "<none>".to_owned()
        } else {
            agents_files.join("\n")
        };
        let provider = if s.settings.provider.is_empty() {
            "unknown".to_owned()
        } else {
            s.settings.provider.clone()
        };
        let rows = vec![
            ("Model".to_owned(), model),
            ("Model provider".to_owned(), provider),
            ("Directory".to_owned(), s.cwd.clone()),
            ("Permissions".to_owned(), permissions),
            ("AGENTS.md".to_owned(), agents),
            (
                "Session".to_owned(),
                self.thread_id
                    .clone()
                    .unwrap_or_else(|| "not started".to_owned()),
            ),
            ("Token usage".to_owned(), usage),
            ("Context window".to_owned(), context),
        ];
        self.history.push(Cell::Facts {
            title: "Osprey status".to_owned(),
            rows,
        });
    }

    /// `/mcp`: each configured server, its state and its tools.
    pub(super) fn push_mcp(&mut self, servers: &[osprey_app_server_protocol::McpServerStatus]) {
        self.history.push(Cell::Facts {
            title: "MCP servers".to_owned(),
            rows: super::mcp_status::server_rows(servers),
        });
    }

    /// `/init`: ask the model to write AGENTS.md unless one is there.
    pub(super) fn init(&mut self, exists: bool, now: Instant) -> Vec<Action> {
        if exists {
            self.history.push(Cell::Notice {
                text: "AGENTS.md already exists here; /init leaves it alone (delete it or edit it yourself)".to_owned(),
            });
            return Vec::new();
        }
        self.submit(INIT_PROMPT.to_owned(), now)
    }
}
