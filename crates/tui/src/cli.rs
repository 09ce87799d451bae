//! The command line of the interactive UI: `osprey [OPTIONS] [PROMPT]`.
//!
//! The arguments have ids of their own (`tui_*`): they are flattened into the top-level
//! command, and `osprey exec`'s global arguments of the same names (`--sandbox`, `--model`…)
//! would otherwise share an id with a different type and make clap fail at run time.

use clap::{Args, ValueEnum};
use osprey_app_server_protocol::{AskForApproval, SandboxMode, ThreadOverrides};

#[derive(Debug, Clone, Default, Args)]
pub struct TuiCli {
    /// A first message to send as soon as the session is ready.
    #[arg(id = "tui_prompt", value_name = "PROMPT")]
    pub prompt: Option<String>,
    /// Model to use (overrides `model` in config.toml).
    #[arg(id = "tui_model", short = 'm', long = "model", value_name = "MODEL")]
    pub model: Option<String>,
    /// When to ask before running a command or editing a file.
    #[arg(
        id = "tui_approval",
        short = 'a',
        long = "ask-for-approval",
        value_enum,
        value_name = "POLICY"
    )]
    pub approval: Option<ApprovalArg>,
    /// Sandbox for model-run commands.
    #[arg(
        id = "tui_sandbox",
        short = 's',
        long = "sandbox",
        value_enum,
        value_name = "MODE"
    )]
    pub sandbox: Option<SandboxArg>,
    /// Work in this directory instead of the current one.
    #[arg(id = "tui_cd", short = 'C', long = "cd", value_name = "DIR")]
    pub cd: Option<std::path::PathBuf>,
    /// Full-screen view on the alternate screen (the transcript is in the Ctrl+T pager, not
    /// in the terminal's scrollback); also `[tui] alternate_screen = true`.
    #[arg(id = "tui_alt_screen", long = "alt-screen")]
    pub alt_screen: bool,
    /// Connect to an app server started elsewhere with `osprey app-server --listen
    /// ws://HOST:PORT` instead of running one in this process.
    #[arg(id = "tui_remote", long = "remote", value_name = "ws://HOST:PORT")]
    pub remote: Option<String>,
    /// With --remote: the environment variable holding the server's token (the contents of
    /// its --ws-token-file), sent as `Authorization: Bearer <token>`.
    #[arg(
        id = "tui_remote_auth_token_env",
        long = "remote-auth-token-env",
        value_name = "VAR",
        requires = "tui_remote"
    )]
    pub remote_auth_token_env: Option<String>,
    /// Set by `osprey resume` and `osprey fork`: continue a recorded thread (or a copy of
    /// it) instead of starting one.
    #[arg(skip)]
    pub resume: Option<ResumeTarget>,
    /// Set by `osprey fork`: the recorded thread is copied into a new one.
    #[arg(skip)]
    pub fork: bool,
}

/// Which recorded thread `osprey resume` continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResumeTarget {
    Id(String),
    /// The newest thread recorded in the working directory.
    Last,
    /// Let the person choose from the threads of the working directory.
    Picker,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovalArg {
    /// Ask for every command that is not known to be safe.
    Untrusted,
    /// Ask only when a command failed in the sandbox.
    OnFailure,
    /// The model decides when to ask.
    OnRequest,
    /// Never ask.
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

impl TuiCli {
    /// The `thread/start` overrides these flags ask for; `cwd` is the resolved directory.
    /// A resumed thread keeps its own directory unless `-C` was given.
    pub fn overrides(&self, cwd: &std::path::Path) -> ThreadOverrides {
        ThreadOverrides {
            model: self.model.clone(),
            cwd: (self.resume.is_none() || self.cd.is_some()).then(|| cwd.display().to_string()),
            approval_policy: self.approval.map(|a| match a {
                ApprovalArg::Untrusted => AskForApproval::UnlessTrusted,
                ApprovalArg::OnFailure => AskForApproval::OnFailure,
                ApprovalArg::OnRequest => AskForApproval::OnRequest,
                ApprovalArg::Never => AskForApproval::Never,
            }),
            sandbox: self.sandbox.map(|s| match s {
                SandboxArg::ReadOnly => SandboxMode::ReadOnly,
                SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
                SandboxArg::DangerFullAccess => SandboxMode::DangerFullAccess,
            }),
            ..ThreadOverrides::default()
        }
    }
}
