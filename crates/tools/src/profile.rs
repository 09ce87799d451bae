//! Tool profiles: which tools a thread offers, in which variant, as data.
//!
//! A [`ToolProfile`] is a list of [`ProfileTool`]s (a name from [`crate::names`] and a
//! [`ToolVariant`]) plus the turn aids the profile wants. The agent's core turns each entry
//! into a handler through one table, so a profile never names a handler and adding a tool to
//! a profile is one line here. Profiles:
//!
//! * [`ToolProfile::standard`] — Codex's tool set, shaped by the `[tools]` settings;
//! * [`ToolProfile::local`] — the embedded local model's small set: `write_file`, `edit_file`,
//!   compact `read_file` / `list_dir` / `shell_command`, with every turn aid on.

use crate::spec::names;

/// Which form of a tool's spec is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolVariant {
    /// Codex's shape (for `apply_patch`: a freeform tool with the Lark grammar).
    Standard,
    /// `apply_patch` as a JSON function tool, for models that cannot call freeform tools.
    Function,
    /// Small argument sets and relative paths ([`crate::compact_spec`]).
    Compact,
}

/// One tool of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileTool {
    pub name: &'static str,
    pub variant: ToolVariant,
    /// Offered to the model; `false` only accepts calls by that name (the Responses API's
    /// built-in `local_shell`).
    pub offered: bool,
}

impl ProfileTool {
    const fn offered(name: &'static str, variant: ToolVariant) -> Self {
        Self {
            name,
            variant,
            offered: true,
        }
    }
}

/// Help the turn loop gives a weak model; each is a turn inspector in the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnAid {
    /// End the turn when the model repeats an earlier call with nothing written in between.
    LoopGuard,
    /// Answer the first such repeat with its earlier result instead of running it (before
    /// the loop guard, which then stops only a second repeat).
    RepeatNudge,
    /// Ask once for a call when the model ends its turn with the work half done.
    FinishNudge,
    /// Show the working directory's files and the available commands at thread start.
    ProjectFiles,
    /// Refuse a write to an existing file not read in the turn, showing the file instead.
    ReadBeforeWrite,
    /// Refuse the first write of a turn whose request is a question asking for no change.
    QuestionReadOnly,
    /// Refuse a write to the check script the request names, pointing to the code it checks.
    ProtectNamedCheck,
    /// Refuse a write whose text copies the context the harness sent (the environment
    /// block, the AGENTS.md block).
    ContextEcho,
    /// Make a write whose lines carry the line numbers the tools showed (`L3: `) without
    /// them.
    StripLineNumbers,
    /// Ask once to run the command (or check the output) the request names.
    VerifyNamedCheck,
    /// Send a named check that failed on its last run since the last write back once, with
    /// the end of its output, when the model ends its turn.
    FixFailedCheck,
    /// Say once when the last run since the last write did not print the output the request
    /// states.
    CheckExpectedOutput,
    /// Ask once to read the project's files when a question is answered without looking.
    AnswerFromEvidence,
    /// After a write, name the other files that still mention identifiers it removed.
    RelatedFiles,
    /// When a command reports a name as not defined (Python's NameError, JavaScript's
    /// ReferenceError) that another project file defines, say which file and how to import it.
    MissingName,
    /// When a one-line program (`python3 -c '…'`) failed on its quoting — arguments inside
    /// the quotes, single quotes inside single quotes — give the command quoted right.
    QuotedArguments,
    /// Show each write's diff in its result.
    WriteDiff,
    /// Refuse once a whole-file write that would drop most of an existing file, offering a
    /// write that keeps it (the file with the new keys set, or with the new code added).
    KeepContent,
    /// Leave the text the model wrote beside its earlier calls out of each request.
    HideCallNarration,
    /// In a question turn, restate the question under each result, and ask once for a
    /// command when a count or sum was answered without one.
    QuestionFocus,
}

/// The shell tool a standard profile offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellTool {
    /// `exec_command` + `write_stdin`.
    ExecCommand,
    /// `shell_command`.
    ShellCommand,
    /// `shell`.
    Shell,
}

/// What a standard profile offers (from the `[tools]` settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardTools {
    pub shell: Option<ShellTool>,
    /// `None`: no `apply_patch`; otherwise [`ToolVariant::Standard`] or
    /// [`ToolVariant::Function`].
    pub apply_patch: Option<ToolVariant>,
    pub update_plan: bool,
    pub read_file: bool,
    pub list_dir: bool,
    pub grep_files: bool,
    pub view_image: bool,
    /// The collaboration tools (`spawn_agent`, `send_input`, `wait_agent`, `close_agent`,
    /// `resume_agent`), offered last.
    pub collab: bool,
}

/// The tools of a thread and the turn aids that come with them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolProfile {
    /// For logs and docs: `standard`, `local`.
    pub name: &'static str,
    pub tools: Vec<ProfileTool>,
    pub aids: Vec<TurnAid>,
}

impl ToolProfile {
    /// Codex's tools as the settings choose them, in the order they are offered.
    pub fn standard(settings: &StandardTools) -> Self {
        use ToolVariant::Standard;
        let mut tools = Vec::new();
        match settings.shell {
            Some(ShellTool::ExecCommand) => {
                tools.push(ProfileTool::offered(names::EXEC_COMMAND, Standard));
                tools.push(ProfileTool::offered(names::WRITE_STDIN, Standard));
            }
            Some(ShellTool::ShellCommand) => {
                tools.push(ProfileTool::offered(names::SHELL_COMMAND, Standard));
            }
            Some(ShellTool::Shell) => tools.push(ProfileTool::offered(names::SHELL, Standard)),
            None => {}
        }
        if settings.shell.is_some() {
            // The Responses API's built-in local_shell calls run like `shell`.
            tools.push(ProfileTool {
                name: names::LOCAL_SHELL,
                variant: Standard,
                offered: false,
            });
        }
        if let Some(variant) = settings.apply_patch {
            tools.push(ProfileTool::offered(names::APPLY_PATCH, variant));
        }
        let optional = [
            (settings.update_plan, names::UPDATE_PLAN),
            (settings.read_file, names::READ_FILE),
            (settings.list_dir, names::LIST_DIR),
            (settings.grep_files, names::GREP_FILES),
            (settings.view_image, names::VIEW_IMAGE),
        ];
        for (enabled, name) in optional {
            if enabled {
                tools.push(ProfileTool::offered(name, Standard));
            }
        }
        if settings.collab {
            for name in [
                names::SPAWN_AGENT,
                names::SEND_INPUT,
                names::WAIT_AGENT,
                names::CLOSE_AGENT,
                names::RESUME_AGENT,
            ] {
                tools.push(ProfileTool::offered(name, Standard));
            }
        }
        Self {
            name: "standard",
            tools,
            aids: Vec::new(),
        }
    }

    /// The small set the embedded local model handles well: whole-file writes and exact-span
    /// edits instead of patches, reading, listing and one-shot commands, all in their compact
    /// form.
    pub fn local() -> Self {
        use ToolVariant::Compact;
        Self {
            name: "local",
            tools: vec![
                ProfileTool::offered(names::WRITE_FILE, Compact),
                ProfileTool::offered(names::EDIT_FILE, Compact),
                ProfileTool::offered(names::READ_FILE, Compact),
                ProfileTool::offered(names::LIST_DIR, Compact),
                ProfileTool::offered(names::SHELL_COMMAND, Compact),
            ],
            // The refusals go first: a refused write is not a call the other aids should
            // count (the loop guard would see its retry as a repeat), and a write to the
            // named check is refused as such, not shown as an unread file.
            aids: vec![
                TurnAid::QuestionReadOnly,
                TurnAid::ProtectNamedCheck,
                TurnAid::ContextEcho,
                TurnAid::StripLineNumbers,
                TurnAid::ReadBeforeWrite,
                TurnAid::KeepContent,
                TurnAid::RepeatNudge,
                TurnAid::LoopGuard,
                TurnAid::FixFailedCheck,
                TurnAid::VerifyNamedCheck,
                TurnAid::CheckExpectedOutput,
                TurnAid::FinishNudge,
                TurnAid::AnswerFromEvidence,
                TurnAid::QuestionFocus,
                TurnAid::RelatedFiles,
                TurnAid::MissingName,
                TurnAid::QuotedArguments,
                TurnAid::WriteDiff,
                TurnAid::HideCallNarration,
                TurnAid::ProjectFiles,
            ],
        }
    }

    /// Adds a turn aid (once).
    #[must_use]
    pub fn with_aid(mut self, aid: TurnAid) -> Self {
        if !self.aids.contains(&aid) {
            self.aids.push(aid);
        }
        self
    }

    /// Removes a turn aid the settings switched off.
    #[must_use]
    pub fn without_aid(mut self, aid: TurnAid) -> Self {
        self.aids.retain(|a| *a != aid);
        self
    }

    /// Removes a tool the settings switched off.
    #[must_use]
    pub fn without_tool(mut self, name: &str) -> Self {
        self.tools.retain(|t| t.name != name);
        self
    }

    pub fn has_aid(&self, aid: TurnAid) -> bool {
        self.aids.contains(&aid)
    }

    /// The names offered to the model, in order.
    pub fn offered_names(&self) -> Vec<&'static str> {
        self.tools
            .iter()
            .filter(|t| t.offered)
            .map(|t| t.name)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn everything(shell: ShellTool) -> StandardTools {
        StandardTools {
            shell: Some(shell),
            apply_patch: Some(ToolVariant::Standard),
            update_plan: true,
            read_file: true,
            list_dir: true,
            grep_files: true,
            view_image: true,
            collab: false,
        }
    }

    #[test]
    fn the_standard_profile_follows_the_settings_in_codex_order() {
        let profile = ToolProfile::standard(&everything(ShellTool::ExecCommand));
        assert_eq!(
            profile.offered_names(),
            [
                "exec_command",
                "write_stdin",
                "apply_patch",
                "update_plan",
                "read_file",
                "list_dir",
                "grep_files",
                "view_image"
            ]
        );
        assert!(profile.aids.is_empty());
        let hidden: Vec<_> = profile.tools.iter().filter(|t| !t.offered).collect();
        assert_eq!(hidden.len(), 1);
        assert_eq!(hidden[0].name, "local_shell");
    }

    #[test]
    fn no_shell_means_no_local_shell_either() {
        let mut settings = everything(ShellTool::Shell);
        settings.shell = None;
        settings.apply_patch = None;
        let profile = ToolProfile::standard(&settings);
        assert!(!profile.tools.iter().any(|t| t.name == "local_shell"));
        assert!(!profile.tools.iter().any(|t| t.name == "apply_patch"));
    }

    #[test]
    fn the_local_profile_is_small_compact_and_aided() {
        let profile = ToolProfile::local();
        assert_eq!(
            profile.offered_names(),
            [
                "write_file",
                "edit_file",
                "read_file",
                "list_dir",
                "shell_command"
            ]
        );
        assert!(
            profile
                .tools
                .iter()
                .all(|t| t.variant == ToolVariant::Compact)
        );
        assert!(profile.has_aid(TurnAid::FinishNudge));
        let without = profile.without_aid(TurnAid::LoopGuard);
        assert!(!without.has_aid(TurnAid::LoopGuard));
        let without = without.without_tool(names::EDIT_FILE);
        assert_eq!(
            without.offered_names(),
            ["write_file", "read_file", "list_dir", "shell_command"]
        );
    }
}
