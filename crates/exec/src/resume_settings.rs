//! What `exec resume` and `exec fork` take over from the thread they continue.
//!
//! A thread runs with settings its first command line chose: provider, model, reasoning
//! effort, sandbox, approval policy, working directory. Its rollout records them (the
//! provider in `session_meta`, the rest in every `turn_context`), and continuing the thread
//! restores them from the last turn, so `osprey exec --local -s workspace-write "…"` followed
//! by `osprey exec resume --last "…"` goes on with the same model and may still write.
//!
//! The command line wins setting by setting: a flag or a `-c key=value` for a setting keeps
//! that setting as given. Choosing another provider also drops the recorded model and effort
//! (they belong to the old provider), and choosing another model drops the recorded effort.
//! Config files and profiles do not override what the thread recorded.

use crate::ExecCli;
use osprey_config::{CliOverride, Config, ConfigOverrides};
use osprey_protocol::{AskForApproval, ReasoningEffort, SandboxPolicy};
use std::path::{Path, PathBuf};

/// The settings a thread last ran with, as far as its rollout recorded them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RecordedSettings {
    pub model_provider: Option<String>,
    pub model: Option<String>,
    pub effort: Option<ReasoningEffort>,
    pub sandbox_policy: Option<SandboxPolicy>,
    pub approval_policy: Option<AskForApproval>,
    pub cwd: Option<PathBuf>,
}

impl RecordedSettings {
    /// Reads them from a rollout: the header's provider and the last turn's context (a thread
    /// without turns has only its header's working directory).
    pub fn read(rollout: &Path) -> Result<Self, String> {
        let contents = osprey_rollout::read_rollout(rollout).map_err(|e| e.to_string())?;
        let mut settings = Self {
            model_provider: contents.meta.model_provider.clone(),
            cwd: Some(contents.meta.cwd.clone()),
            ..Self::default()
        };
        if let Some(turn) = contents.last_turn_context() {
            settings.model = Some(turn.model.clone()).filter(|m| !m.is_empty());
            settings.effort = turn.effort;
            settings.sandbox_policy = Some(turn.sandbox_policy.clone());
            settings.approval_policy = Some(turn.approval_policy);
            settings.cwd = Some(turn.cwd.clone());
        }
        Ok(settings)
    }
}

/// Which settings the command line chose itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CommandLineChoices {
    provider: bool,
    model: bool,
    effort: bool,
    sandbox: bool,
    approval: bool,
    cwd: bool,
}

impl CommandLineChoices {
    fn of(cli: &ExecCli) -> Self {
        let keys: Vec<String> = cli
            .config_overrides
            .iter()
            .filter_map(|arg| CliOverride::parse(arg).ok())
            .filter_map(|o| o.path.first().cloned())
            .collect();
        let set = |key: &str| keys.iter().any(|k| k == key);
        let permissions = cli.full_auto || cli.dangerously_bypass_approvals_and_sandbox;
        let provider = cli.local || cli.oss || set("model_provider");
        let model = provider || cli.model.is_some() || set("model");
        Self {
            provider,
            model,
            effort: model || set("model_reasoning_effort"),
            sandbox: permissions
                || cli.sandbox.is_some()
                || set("sandbox_mode")
                || set("sandbox_workspace_write"),
            approval: permissions || set("approval_policy"),
            cwd: cli.cwd.is_some(),
        }
    }
}

/// What to do with the recorded settings: typed overrides for the second configuration
/// build, the exact sandbox policy to put back afterwards, and warnings for settings that
/// cannot be restored.
#[derive(Debug, Default)]
pub(crate) struct Restore {
    pub sandbox_policy: Option<SandboxPolicy>,
    pub warnings: Vec<String>,
}

/// Fills `overrides` with the recorded settings the command line did not choose. `config`
/// is the configuration built without them (it knows which providers exist).
pub(crate) fn apply(
    recorded: &RecordedSettings,
    cli: &ExecCli,
    config: &Config,
    overrides: &mut ConfigOverrides,
) -> Restore {
    let chosen = CommandLineChoices::of(cli);
    let mut restore = Restore::default();
    let mut provider_kept = true;
    if !chosen.provider
        && let Some(provider) = &recorded.model_provider
    {
        if config.model_providers.contains_key(provider) {
            overrides.model_provider = Some(provider.clone());
        } else {
            provider_kept = false;
            restore.warnings.push(format!(
                "the session ran with model provider `{provider}`, which is not configured now; continuing with `{}` and its model",
                config.model_provider_id
            ));
        }
    }
    if provider_kept && !chosen.model {
        if let Some(model) = &recorded.model {
            overrides.model = Some(model.clone());
        }
        if !chosen.effort && recorded.effort.is_some() {
            overrides.model_reasoning_effort = recorded.effort;
        }
    }
    if !chosen.approval && recorded.approval_policy.is_some() {
        overrides.approval_policy = recorded.approval_policy;
    }
    if !chosen.sandbox
        && let Some(policy) = &recorded.sandbox_policy
    {
        overrides.sandbox_mode = Some(policy.mode());
        restore.sandbox_policy = Some(with_added_dirs(policy.clone(), &cli.add_dirs, &config.cwd));
    }
    if !chosen.cwd
        && let Some(cwd) = &recorded.cwd
    {
        if cwd.is_dir() {
            overrides.cwd = Some(cwd.clone());
        } else {
            restore.warnings.push(format!(
                "the session ran in {}, which no longer exists; continuing in {}",
                cwd.display(),
                config.cwd.display()
            ));
        }
    }
    restore
}

/// The recorded policy plus the `--add-dir` directories of this command line.
fn with_added_dirs(policy: SandboxPolicy, add_dirs: &[PathBuf], base: &Path) -> SandboxPolicy {
    match policy {
        SandboxPolicy::WorkspaceWrite {
            mut writable_roots,
            network_access,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
        } => {
            for dir in add_dirs {
                let dir = if dir.is_absolute() {
                    dir.clone()
                } else {
                    base.join(dir)
                };
                if !writable_roots.contains(&dir) {
                    writable_roots.push(dir);
                }
            }
            SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use pretty_assertions::assert_eq;

    #[derive(Parser)]
    struct Top {
        #[command(subcommand)]
        command: Sub,
    }

    #[derive(clap::Subcommand)]
    enum Sub {
        Exec(ExecCli),
    }

    fn cli(args: &[&str]) -> ExecCli {
        let mut argv = vec!["osprey", "exec"];
        argv.extend_from_slice(args);
        let Sub::Exec(cli) = Top::parse_from(argv).command;
        cli
    }

    #[test]
    fn flags_and_dash_c_keys_count_as_choices() {
        assert_eq!(
            CommandLineChoices::of(&cli(&["hi"])),
            CommandLineChoices::default()
        );
        let c = CommandLineChoices::of(&cli(&["-m", "x", "hi"]));
        assert!(c.model && c.effort && !c.provider && !c.sandbox);
        let c = CommandLineChoices::of(&cli(&["--local", "hi"]));
        assert!(c.provider && c.model && c.effort);
        let c = CommandLineChoices::of(&cli(&["--full-auto", "hi"]));
        assert!(c.sandbox && c.approval && !c.model);
        let c = CommandLineChoices::of(&cli(&[
            "-c",
            "sandbox_workspace_write.network_access=true",
            "-c",
            "model_reasoning_effort=high",
            "hi",
        ]));
        assert!(c.sandbox && c.effort && !c.model && !c.approval);
        let c = CommandLineChoices::of(&cli(&["-C", "/tmp", "hi"]));
        assert!(c.cwd);
    }

    #[test]
    fn added_dirs_join_the_recorded_writable_roots() {
        let policy = SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![PathBuf::from("/a")],
            network_access: true,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        };
        let merged = with_added_dirs(
            policy,
            &[PathBuf::from("/a"), PathBuf::from("b")],
            Path::new("/w"),
        );
        assert_eq!(
            merged,
            SandboxPolicy::WorkspaceWrite {
                writable_roots: vec![PathBuf::from("/a"), PathBuf::from("/w/b")],
                network_access: true,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: false,
            }
        );
    }
}
