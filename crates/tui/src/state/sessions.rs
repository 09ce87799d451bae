//! The session picker (`/resume`, `osprey resume`, `osprey fork` without an id): the search,
//! Codex's `Filter: Cwd All · Status: Active Archived · Sort: Updated Created` options
//! (Tab moves the focus between them, ←/→ change the focused one), and Ctrl+A archiving
//! the selected session (or bringing an archived one back). Every change asks
//! `thread/list` again; an answer to an older query is dropped.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::commands::ago;
use super::{Action, AppState, Cell, Picker, PickerItem, PickerKind, SessionRow};

/// What the session picker lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionQuery {
    pub search: String,
    /// `Filter: All`: every directory's sessions (else only this directory's).
    pub all_dirs: bool,
    /// `Status: Archived`: the archived sessions (else the active ones).
    pub archived: bool,
    /// `Sort: Created`: newest started first (else the most recently changed first).
    pub by_created: bool,
}

/// Which part of the session picker ←/→ change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionFocus {
    /// The list and the search (←/→ do nothing).
    #[default]
    List,
    Filter,
    Status,
    Sort,
}

impl SessionFocus {
    fn next(self) -> Self {
        match self {
            SessionFocus::List => SessionFocus::Filter,
            SessionFocus::Filter => SessionFocus::Status,
            SessionFocus::Status => SessionFocus::Sort,
            SessionFocus::Sort => SessionFocus::List,
        }
    }

    fn previous(self) -> Self {
        match self {
            SessionFocus::List => SessionFocus::Sort,
            SessionFocus::Filter => SessionFocus::List,
            SessionFocus::Status => SessionFocus::Filter,
            SessionFocus::Sort => SessionFocus::Status,
        }
    }
}

impl AppState {
    /// The picker of past sessions, this directory's and active ones first, most recently
    /// changed first; the list comes from `thread/list`.
    pub(super) fn open_session_picker(&mut self, fork: bool) -> Vec<Action> {
        let title = if fork {
            "Fork a previous session"
        } else {
            "Resume a previous session"
        };
        let query = SessionQuery::default();
        self.picker = Some(Picker {
            loading: true,
            sessions: Some(query.clone()),
            ..Picker::new(title, PickerKind::Session { fork }, Vec::new())
        });
        vec![Action::ListSessions { query }]
    }

    /// `thread/list` answered for `query`; an answer to an older query is dropped.
    pub(super) fn fill_session_picker(
        &mut self,
        query: &SessionQuery,
        threads: Vec<SessionRow>,
        now: i64,
    ) {
        let Some(picker) = self.picker.as_mut() else {
            return;
        };
        if !matches!(picker.kind, PickerKind::Session { .. })
            || picker.sessions.as_ref() != Some(query)
        {
            return;
        }
        let own = self.thread_id.clone();
        picker.items = threads
            .into_iter()
            .filter(|t| Some(&t.id) != own.as_ref())
            .map(|t| PickerItem {
                label: ago(
                    if query.by_created {
                        t.created_at
                    } else {
                        t.updated_at
                    },
                    now,
                ),
                description: t.preview.lines().next().unwrap_or_default().to_owned(),
                value: t.id,
                current: false,
            })
            .collect();
        picker.selected = picker.selected.min(picker.items.len().saturating_sub(1));
        picker.loading = false;
    }

    /// The session picker's own keys; `None` for the keys every picker shares.
    pub(super) fn on_session_picker_key(&mut self, key: KeyEvent) -> Option<Vec<Action>> {
        let picker = self.picker.as_mut()?;
        let query = picker.sessions.as_mut()?;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Tab => picker.focus = picker.focus.next(),
            KeyCode::BackTab => picker.focus = picker.focus.previous(),
            KeyCode::Left | KeyCode::Right => {
                let second = key.code == KeyCode::Right;
                let option = match picker.focus {
                    SessionFocus::List => return Some(Vec::new()),
                    SessionFocus::Filter => &mut query.all_dirs,
                    SessionFocus::Status => &mut query.archived,
                    SessionFocus::Sort => &mut query.by_created,
                };
                if *option == second {
                    return Some(Vec::new());
                }
                *option = second;
                return Some(self.relist());
            }
            KeyCode::Char('a') if ctrl => {
                let archive = !query.archived;
                let Some(item) = picker.chosen() else {
                    return Some(Vec::new());
                };
                return Some(vec![Action::ArchiveSession {
                    thread_id: item.value.clone(),
                    archive,
                }]);
            }
            KeyCode::Backspace => {
                query.search.pop();
                return Some(self.relist());
            }
            KeyCode::Char(c) if !ctrl => {
                query.search.push(c);
                return Some(self.relist());
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// The query changed: list again from the top.
    fn relist(&mut self) -> Vec<Action> {
        let Some(picker) = self.picker.as_mut() else {
            return Vec::new();
        };
        let Some(query) = picker.sessions.clone() else {
            return Vec::new();
        };
        picker.loading = true;
        picker.selected = 0;
        vec![Action::ListSessions { query }]
    }

    /// `thread/archive` or `thread/unarchive` succeeded: the row leaves the list.
    pub(super) fn session_archived(&mut self, thread_id: &str, archived: bool) {
        if let Some(picker) = self.picker.as_mut()
            && picker.sessions.is_some()
        {
            picker.items.retain(|i| i.value != thread_id);
            picker.selected = picker.selected.min(picker.items.len().saturating_sub(1));
        }
        let text = if archived {
            format!(
                "Archived session {thread_id}; the picker's Status: Archived lists it (Ctrl+A there brings it back)"
            )
        } else {
            format!("Session {thread_id} is active again")
        };
        self.history.push(Cell::Notice { text });
    }
}
