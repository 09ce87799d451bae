//! osprey-shell: the user's shell, and what a shell command line really runs.
//!
//! The agent runs everything the model asks for through a shell, usually as
//! `bash -lc "<script>"`. Two questions follow, and this crate answers both without depending
//! on any other Osprey crate, so the core, the exec tools and the policy checker can all use it.
//!
//! **Which shell, and how?** [`default_user_shell`] finds the user's shell (from `$SHELL`, then
//! the password database, then `/bin/sh`); [`Shell::derive_exec_args`] builds the argv that
//! runs a script with it (`-lc`/`-c` for POSIX shells, `-NoProfile -Command` for PowerShell);
//! [`Shell::from_name_or_path`] resolves a shell the model named.
//!
//! **What would this run?** [`parse_command`] and [`parse_script`] read a command line with
//! the tree-sitter bash grammar and reduce it to a list of [`PlainCommand`]s: every program the
//! line would start, with its words unquoted, found through `&&`, pipes, loops, conditionals,
//! subshells, `$( … )`, backquotes and process substitution, and through wrappers that only
//! run another command (`env`, `timeout`, `nice`, `xargs`, `bash -c`, `eval '…'`…). Anything
//! that keeps a command's identity hidden until run time — a name in a variable, a function or
//! alias, `source`, a shell fed on standard input, PowerShell — yields
//! [`ParsedCommand::NotAnalysable`] with the reason, so a caller can fall back to asking.
//! The analysis is designed to fail closed: an unfamiliar syntax node is a refusal, never a
//! guess.
//!
//! **Is it safe, or dangerous?** [`is_known_safe`] accepts a short list of read-only commands
//! with option checks (`find` without `-exec`, `sed -n` that only prints, read-only `git`
//! subcommands); [`is_dangerous`] names destructive ones (`rm -rf`, `git reset --hard`,
//! `git push --force`, `sudo`, `mkfs`, `dd of=/dev/…`). Both work on single plain commands;
//! [`script_is_known_safe`] and [`script_dangerous_reason`] apply them to a whole parse.
//!
//! The crate README states the rules in full.

mod danger;
mod parse;
mod safety;
mod shell;

pub use danger::{is_dangerous, script_dangerous_reason};
pub use parse::{ParsedCommand, PlainCommand, parse_command, parse_script};
pub use safety::{is_known_safe, script_is_known_safe};
pub use shell::{Shell, ShellError, ShellKind, default_user_shell};

/// The file name of a command: `/usr/bin/rm` → `rm`, `rm` → `rm`.
///
/// [`PlainCommand::argv`] keeps the command as written (`/bin/rm` stays `/bin/rm`), so policy
/// can match either the exact path or, through this helper, the name.
pub fn command_basename(command: &str) -> &str {
    command.rsplit('/').next().unwrap_or(command)
}
