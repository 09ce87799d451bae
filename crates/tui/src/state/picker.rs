//! The lists a slash command opens in place of the composer (models, reasoning efforts,
//! permission presets, past sessions) and the full-screen pager (`/diff`, Ctrl+T).

use osprey_app_server_protocol::{AskForApproval, SandboxPolicy};

/// What choosing a row of a [`Picker`] does.
#[derive(Debug, Clone, PartialEq)]
pub enum PickerKind {
    Model,
    /// The efforts of the model picked in the step before.
    Effort {
        model: String,
    },
    Permissions,
    /// Past sessions of this directory: resume the chosen one, or fork it.
    Session {
        fork: bool,
    },
    /// `/agent`: the main thread and the sub-agents; the chosen one is watched.
    Agent,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PickerItem {
    pub label: String,
    pub description: String,
    /// What the choice carries back (a model id, an effort, a preset name, a thread id).
    pub value: String,
    pub current: bool,
}

/// A list to choose one row from: ↑/↓ move, Enter picks, Esc closes.
#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    pub title: String,
    pub kind: PickerKind,
    pub items: Vec<PickerItem>,
    pub selected: usize,
    /// The session picker's search and options (each change lists again).
    pub sessions: Option<super::sessions::SessionQuery>,
    /// Which of the session picker's options ←/→ change.
    pub focus: super::sessions::SessionFocus,
    /// Still waiting for the list.
    pub loading: bool,
}

impl Picker {
    pub fn new(title: &str, kind: PickerKind, items: Vec<PickerItem>) -> Self {
        let selected = items.iter().position(|i| i.current).unwrap_or(0);
        Self {
            title: title.to_owned(),
            kind,
            items,
            selected,
            sessions: None,
            focus: super::sessions::SessionFocus::List,
            loading: false,
        }
    }

    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    pub fn down(&mut self) {
        self.selected = (self.selected + 1).min(self.items.len().saturating_sub(1));
    }

    pub fn chosen(&self) -> Option<&PickerItem> {
        self.items.get(self.selected)
    }
}

/// A permission preset of `/permissions`: the approval policy and sandbox the next turns run
/// with.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    pub id: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    pub approval: AskForApproval,
    pub sandbox: PresetSandbox,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresetSandbox {
    ReadOnly,
    WorkspaceWrite,
    FullAccess,
}

impl PresetSandbox {
    pub fn policy(self) -> SandboxPolicy {
        match self {
            PresetSandbox::ReadOnly => SandboxPolicy::ReadOnly {
                network_access: false,
            },
            PresetSandbox::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
                writable_roots: Vec::new(),
                network_access: false,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: false,
            },
            PresetSandbox::FullAccess => SandboxPolicy::DangerFullAccess,
        }
    }

    pub fn of(policy: &SandboxPolicy) -> Option<Self> {
        match policy {
            SandboxPolicy::ReadOnly { .. } => Some(PresetSandbox::ReadOnly),
            SandboxPolicy::WorkspaceWrite { .. } => Some(PresetSandbox::WorkspaceWrite),
            SandboxPolicy::DangerFullAccess => Some(PresetSandbox::FullAccess),
            SandboxPolicy::ExternalSandbox { .. } => None,
        }
    }
}

pub const PRESETS: &[Preset] = &[
    Preset {
        id: "read-only",
        label: "Read Only",
        description: "Read workspace files; ask before edits, other commands or internet access",
        approval: AskForApproval::OnRequest,
        sandbox: PresetSandbox::ReadOnly,
    },
    Preset {
        id: "ask",
        label: "Ask for approval",
        description: "Ask before every command not known to be safe and before edits",
        approval: AskForApproval::UnlessTrusted,
        sandbox: PresetSandbox::WorkspaceWrite,
    },
    Preset {
        id: "workspace",
        label: "Approve in workspace",
        description: "Read, edit and run in the workspace; ask for internet access or edits outside it",
        approval: AskForApproval::OnRequest,
        sandbox: PresetSandbox::WorkspaceWrite,
    },
    Preset {
        id: "full-access",
        label: "Full Access",
        description: "Use with caution: edit anywhere and use the internet without asking",
        approval: AskForApproval::Never,
        sandbox: PresetSandbox::FullAccess,
    },
];

/// The preset matching a policy and sandbox, if one does.
pub fn preset_of(
    approval: &AskForApproval,
    sandbox: Option<PresetSandbox>,
) -> Option<&'static Preset> {
    PRESETS
        .iter()
        .find(|p| p.approval == *approval && Some(p.sandbox) == sandbox)
}

/// What a [`Pager`] shows.
#[derive(Debug, Clone, PartialEq)]
pub enum PagerContent {
    /// Plain text; lines starting with `+`/`-` are coloured as a diff.
    Diff(String),
    /// The whole transcript, drawn from the history at the pager's width.
    Transcript,
}

/// A full-screen, scrollable view: ↑/↓, PgUp/PgDn, Home/End, `q` or Esc to close.
#[derive(Debug, Clone, PartialEq)]
pub struct Pager {
    pub title: String,
    pub content: PagerContent,
    /// The first line shown; clamped by the drawing to what fits.
    pub scroll: usize,
}
