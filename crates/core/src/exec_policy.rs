//! Who decides whether a command runs: exec-policy rules, shell analysis and the approval
//! policy, combined into one [`CommandPolicy`] for the orchestrator.
//!
//! A command line is first analysed into the plain commands it would run (through `bash -c`
//! strings, wrappers, pipelines, substitutions…). If that is impossible — a command name
//! only known at run time, `eval` of a variable, a function — the script is *not analysable*
//! and needs approval like an unknown command (so under `never` it is refused). Otherwise each
//! plain command is checked against the rules and the strictest decision wins: one forbidden
//! part forbids the whole script. Commands no rule covers are judged by the approval policy:
//! under `untrusted` only known read-only commands run without asking; under the other
//! policies the sandbox confines them, except dangerous ones (`rm -rf`, `git reset --hard`,
//! …), which always ask unless a rule allows them. A rules file that failed to load makes
//! every command ask: a broken file never means "allow everything".

use crate::tools::orchestrator::{Assessment, CommandPolicy};
use crate::turn_context::TurnContext;
use osprey_execpolicy::{Decision, MatchOptions, Policy, RuleMatch};
use osprey_protocol::AskForApproval;
use osprey_shell::{ParsedCommand, PlainCommand, is_dangerous, is_known_safe, parse_command};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

pub struct ExecPolicy {
    rules: RwLock<Policy>,
    /// Load errors, already reported; while any exist every command asks.
    load_errors: Vec<String>,
    /// Where "approve and don't ask again" rules are appended.
    amend_file: Option<PathBuf>,
    /// The directories the rules came from, reloaded after an amendment.
    dirs: Vec<PathBuf>,
}

impl ExecPolicy {
    /// Loads `*.rules` from `dirs` in order. Returns the policy and the load errors in plain
    /// words (file:line:col: message) for the front end to show.
    pub fn load(dirs: &[PathBuf], amend_file: Option<PathBuf>) -> (Self, Vec<String>) {
        let (rules, errors) = Policy::load_dirs(dirs);
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        (
            Self {
                rules: RwLock::new(rules),
                load_errors: errors.clone(),
                amend_file,
                dirs: dirs.to_vec(),
            },
            errors,
        )
    }

    /// No rules at all (`--ignore-rules`).
    pub fn without_rules() -> Self {
        Self {
            rules: RwLock::new(Policy::empty()),
            load_errors: Vec::new(),
            amend_file: None,
            dirs: Vec::new(),
        }
    }

    /// The rules directories for a home and a trusted project.
    pub fn default_dirs(home: &Path, trusted_project: Option<&Path>) -> Vec<PathBuf> {
        let mut dirs = vec![home.join("rules")];
        if let Some(project) = trusted_project {
            dirs.push(project.join(".osprey").join("rules"));
        }
        dirs
    }

    fn check(&self, cmd: &PlainCommand) -> (Option<Decision>, Vec<RuleMatch>) {
        let Ok(rules) = self.rules.read() else {
            return (Some(Decision::Prompt), Vec::new());
        };
        let options = MatchOptions {
            resolve_host_executables: true,
        };
        let mut evaluation = rules.check_with_options(&cmd.argv, &options);
        // `/bin/rm` is judged by the rules for `rm` too.
        let base = osprey_shell::command_basename(&cmd.argv[0]).to_string();
        if base != cmd.argv[0] {
            let mut by_name = cmd.argv.clone();
            by_name[0] = base;
            let other = rules.check(&by_name);
            evaluation.decision = evaluation.decision.max(other.decision);
            evaluation.matched_rules.extend(other.matched_rules);
        }
        (evaluation.decision, evaluation.matched_rules)
    }
}

fn describe(cmd: &PlainCommand) -> String {
    crate::tools::command_item::display_command(&cmd.argv)
}

fn rule_reason(cmd: &PlainCommand, matches: &[RuleMatch], decision: Decision) -> String {
    let rule = matches.iter().find(|m| m.decision == decision);
    let prefix = rule.map(|m| m.matched_prefix.join(" ")).unwrap_or_default();
    let why = rule
        .and_then(|m| m.justification.clone())
        .map(|j| format!(" ({j})"))
        .unwrap_or_default();
    let verb = match decision {
        Decision::Forbidden => "forbids",
        Decision::Prompt => "requires approval for",
        Decision::Allow => "allows",
    };
    format!(
        "an exec-policy rule for `{prefix}` {verb} `{}`{why}",
        describe(cmd)
    )
}

impl CommandPolicy for ExecPolicy {
    fn assess(&self, argv: &[String], turn: &TurnContext) -> Assessment {
        let commands = match parse_command(argv) {
            ParsedCommand::Commands(commands) => commands,
            ParsedCommand::NotAnalysable { reason } => {
                return Assessment::Ask {
                    reason: format!("the command cannot be analysed safely ({reason})"),
                };
            }
        };
        if commands.is_empty() {
            return Assessment::Allow;
        }
        let mut ask: Option<String> = None;
        let mut all_covered = true;
        for cmd in &commands {
            let (decision, matches) = self.check(cmd);
            match decision {
                Some(Decision::Forbidden) => {
                    return Assessment::Forbid {
                        reason: rule_reason(cmd, &matches, Decision::Forbidden),
                    };
                }
                Some(Decision::Prompt) => {
                    ask.get_or_insert_with(|| rule_reason(cmd, &matches, Decision::Prompt));
                }
                Some(Decision::Allow) => {}
                None => {
                    all_covered = false;
                    if let Some(danger) = is_dangerous(cmd) {
                        ask.get_or_insert_with(|| {
                            format!("`{}` is potentially destructive: {danger}", describe(cmd))
                        });
                    } else if turn.approval_policy == AskForApproval::Untrusted
                        && (!is_known_safe(cmd) || cmd.redirects_to_file)
                    {
                        ask.get_or_insert_with(|| {
                            format!(
                                "`{}` is not a known read-only command, and the approval policy is `untrusted`",
                                describe(cmd)
                            )
                        });
                    }
                }
            }
        }
        if !self.load_errors.is_empty() && !all_covered {
            ask.get_or_insert_with(|| {
                "a rules file failed to load, so every command needs approval until it is fixed"
                    .to_string()
            });
        }
        match ask {
            Some(reason) => Assessment::Ask { reason },
            None => Assessment::Allow,
        }
    }

    fn amend(&self, prefix: &[String]) -> Result<(), String> {
        let Some(file) = &self.amend_file else {
            return Err("rules are switched off for this session (--ignore-rules)".to_string());
        };
        osprey_execpolicy::append_allow_prefix_rule(file, prefix).map_err(|e| e.to_string())?;
        let (reloaded, _errors) = Policy::load_dirs(&self.dirs);
        if let Ok(mut rules) = self.rules.write() {
            *rules = reloaded;
        }
        Ok(())
    }

    fn can_offer_amendment(
        &self,
        argv: &[String],
        suggested: Option<&[String]>,
    ) -> Option<Vec<String>> {
        self.amend_file.as_ref()?;
        let ParsedCommand::Commands(commands) = parse_command(argv) else {
            return None;
        };
        let [cmd] = commands.as_slice() else {
            return None;
        };
        if !cmd.dynamic_args.is_empty() || self.check(cmd).0.is_some() {
            return None;
        }
        match suggested {
            Some(prefix) if !prefix.is_empty() && cmd.argv.starts_with(prefix) => {
                Some(prefix.to_vec())
            }
            _ => Some(proposed_prefix(cmd)),
        }
    }
}

/// Programs whose first word is a subcommand worth keeping in a rule (`git status`, not
/// every `git`).
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "bun",
    "cargo",
    "deno",
    "docker",
    "dotnet",
    "gh",
    "git",
    "go",
    "gradle",
    "helm",
    "kubectl",
    "make",
    "mvn",
    "npm",
    "pip",
    "pip3",
    "pnpm",
    "poetry",
    "rustup",
    "systemctl",
    "terraform",
    "uv",
    "yarn",
];

/// Programs that run whatever their arguments say (a shell, an interpreter, a wrapper): a
/// rule for the program alone would allow anything, so only the exact command is proposed.
const OPEN_ENDED_PROGRAMS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "fish",
    "ksh",
    "python",
    "python3",
    "node",
    "perl",
    "ruby",
    "php",
    "lua",
    "env",
    "sudo",
    "doas",
    "su",
    "xargs",
    "exec",
    "nohup",
    "timeout",
    "nice",
    "watch",
    "ssh",
    "docker-compose",
    "npx",
    "bunx",
    "eval",
];

/// The prefix rule to offer for a command no rule matches: the program and its subcommand
/// (`cargo test`, `git commit`), the program alone for a plain tool (`touch`), and the whole
/// command for anything that runs other code or is destructive (`python x.py`, `rm -rf b`),
/// so "always allow" never covers more than the person can judge from what is shown.
fn proposed_prefix(cmd: &PlainCommand) -> Vec<String> {
    let program = cmd.basename();
    if OPEN_ENDED_PROGRAMS.contains(&program) || is_dangerous(cmd).is_some() {
        return cmd.argv.clone();
    }
    let subcommand = cmd.argv.get(1).filter(|word| {
        word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    });
    match subcommand {
        Some(sub) if SUBCOMMAND_PROGRAMS.contains(&program) => {
            vec![cmd.argv[0].clone(), sub.clone()]
        }
        _ if SUBCOMMAND_PROGRAMS.contains(&program) => cmd.argv.clone(),
        _ => vec![cmd.argv[0].clone()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offered_prefix_is_program_and_subcommand_and_never_more_than_shown() {
        let prefix = |argv: &[&str]| proposed_prefix(&PlainCommand::new(argv.iter().copied()));
        assert_eq!(prefix(&["touch", "notes.txt"]), ["touch"]);
        assert_eq!(
            prefix(&["cargo", "test", "-p", "osprey-core"]),
            ["cargo", "test"]
        );
        assert_eq!(prefix(&["git", "commit", "-m", "x"]), ["git", "commit"]);
        assert_eq!(
            prefix(&["git", "--no-pager", "log"]),
            ["git", "--no-pager", "log"]
        );
        assert_eq!(prefix(&["python3", "setup.py"]), ["python3", "setup.py"]);
        assert_eq!(prefix(&["rm", "-rf", "build"]), ["rm", "-rf", "build"]);
        assert_eq!(prefix(&["/usr/bin/mkdir", "-p", "out"]), ["/usr/bin/mkdir"]);
    }
}
