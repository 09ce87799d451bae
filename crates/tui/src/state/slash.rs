//! Slash commands: the table of what `/` offers, and the popup that filters it as the
//! person types. The popup is derived from the draft (a draft that is `/` plus a word and
//! nothing else), so it needs no state of its own beyond the selected row.

/// A command the composer understands when the draft starts with `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlashCommand {
    Model,
    Permissions,
    New,
    Resume,
    Fork,
    Compact,
    Diff,
    Status,
    Mcp,
    Init,
    Copy,
    Agent,
    Exit,
}

/// One row of the table: the command, its name, hidden aliases, and what it does.
pub struct SlashEntry {
    pub command: SlashCommand,
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub description: &'static str,
}

/// Every command, in the order the popup lists them.
pub const COMMANDS: &[SlashEntry] = &[
    SlashEntry {
        command: SlashCommand::Model,
        name: "model",
        aliases: &[],
        description: "choose what model and reasoning effort to use",
    },
    SlashEntry {
        command: SlashCommand::Permissions,
        name: "permissions",
        aliases: &["approvals"],
        description: "choose what Osprey is allowed to do",
    },
    SlashEntry {
        command: SlashCommand::New,
        name: "new",
        aliases: &[],
        description: "start a new session",
    },
    SlashEntry {
        command: SlashCommand::Resume,
        name: "resume",
        aliases: &[],
        description: "resume a past session of this directory",
    },
    SlashEntry {
        command: SlashCommand::Fork,
        name: "fork",
        aliases: &[],
        description: "continue this session in a new copy of it",
    },
    SlashEntry {
        command: SlashCommand::Compact,
        name: "compact",
        aliases: &[],
        description: "summarize the conversation to free context",
    },
    SlashEntry {
        command: SlashCommand::Diff,
        name: "diff",
        aliases: &[],
        description: "show git diff, untracked files included",
    },
    SlashEntry {
        command: SlashCommand::Status,
        name: "status",
        aliases: &[],
        description: "show the session's settings and token usage",
    },
    SlashEntry {
        command: SlashCommand::Mcp,
        name: "mcp",
        aliases: &[],
        description: "list MCP servers and their tools",
    },
    SlashEntry {
        command: SlashCommand::Init,
        name: "init",
        aliases: &[],
        description: "create an AGENTS.md file with instructions for Osprey",
    },
    SlashEntry {
        command: SlashCommand::Copy,
        name: "copy",
        aliases: &[],
        description: "copy the last answer's markdown to the clipboard",
    },
    SlashEntry {
        command: SlashCommand::Agent,
        name: "agent",
        aliases: &["subagents"],
        description: "switch between this session's main thread and its sub-agents",
    },
    SlashEntry {
        command: SlashCommand::Exit,
        name: "exit",
        aliases: &["quit"],
        description: "exit Osprey",
    },
];

/// How many rows the popup shows at once; it scrolls to keep the selection visible.
pub const POPUP_ROWS: usize = 8;

/// The word after `/` while the draft is a bare command being typed (`/mo`), else `None`.
pub fn typed_command(draft: &str) -> Option<&str> {
    let rest = draft.strip_prefix('/')?;
    (!rest.contains(char::is_whitespace)).then_some(rest)
}

/// The commands whose name starts with `prefix`; an alias typed in full also matches.
pub fn filtered(prefix: &str) -> Vec<&'static SlashEntry> {
    let prefix = prefix.to_ascii_lowercase();
    COMMANDS
        .iter()
        .filter(|e| e.name.starts_with(&prefix) || e.aliases.iter().any(|a| *a == prefix))
        .collect()
}

/// The command a submitted draft names (`/status`, `/quit`), with what follows it.
pub fn parse(draft: &str) -> Option<Result<(SlashCommand, &str), String>> {
    let rest = draft.trim().strip_prefix('/')?;
    let (name, args) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(n, a)| (n, a.trim()));
    // `/` alone or a path such as `/tmp/x is slow` is a message, not a command.
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    Some(
        COMMANDS
            .iter()
            .find(|e| e.name == lower || e.aliases.contains(&lower.as_str()))
            .map(|e| (e.command, args))
            .ok_or_else(|| name.to_owned()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_popup_filters_by_prefix_and_aliases_match_in_full() {
        let names = |p: &str| filtered(p).iter().map(|e| e.name).collect::<Vec<_>>();
        assert_eq!(names("").len(), COMMANDS.len());
        assert_eq!(names("m"), vec!["model", "mcp"]);
        assert_eq!(names("approvals"), vec!["permissions"]);
        assert_eq!(names("quit"), vec!["exit"]);
        assert_eq!(names("subagents"), vec!["agent"]);
        assert_eq!(names("zz"), Vec::<&str>::new());
    }

    #[test]
    fn submitted_drafts_name_commands_aliases_or_unknown_ones() {
        assert_eq!(parse("/status"), Some(Ok((SlashCommand::Status, ""))));
        assert_eq!(parse("/quit"), Some(Ok((SlashCommand::Exit, ""))));
        assert_eq!(parse("/subagents"), Some(Ok((SlashCommand::Agent, ""))));
        assert_eq!(
            parse("/approvals"),
            Some(Ok((SlashCommand::Permissions, "")))
        );
        assert_eq!(parse("/foo bar"), Some(Err("foo".to_owned())));
        assert_eq!(parse("/tmp/x is slow"), None);
        assert_eq!(parse("hello"), None);
        assert_eq!(typed_command("/mo"), Some("mo"));
        assert_eq!(typed_command("/model x"), None);
    }
}
