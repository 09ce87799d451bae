//! Command-line arguments of `osprey exec`.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Run one task non-interactively and print the result.
#[derive(Debug, Args, Clone)]
pub struct ExecCli {
    #[command(subcommand)]
    pub command: Option<ExecCommand>,

    /// The task. `-` or no argument reads it from standard input; with piped input and a
    /// prompt argument, the input is appended in a `<stdin>` block.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// Model to use (overrides `model` in config.toml).
    #[arg(short = 'm', long)]
    pub model: Option<String>,

    /// Override a config value: `-c key=value` (value parsed as TOML, else taken as a string).
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE")]
    pub config_overrides: Vec<String>,

    /// Configuration profile from config.toml.
    #[arg(short = 'p', long)]
    pub profile: Option<String>,

    /// Working directory for the agent.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// More directories the agent may write to (workspace-write sandbox).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,

    /// Sandbox for model-run commands.
    #[arg(short = 's', long = "sandbox", value_enum)]
    pub sandbox: Option<SandboxArg>,

    /// Run outside a Git repository.
    #[arg(long)]
    pub skip_git_repo_check: bool,

    /// Attach an image to the prompt (repeatable).
    #[arg(short = 'i', long = "image", value_name = "FILE")]
    pub images: Vec<PathBuf>,

    /// Use a local open-source model provider (`oss_provider`, default Ollama).
    #[arg(long)]
    pub oss: bool,

    /// Do not load exec-policy rules files (`$OSPREY_HOME/rules`, the project's `.osprey/rules`).
    #[arg(long)]
    pub ignore_rules: bool,

    /// Do not write a session file.
    #[arg(long)]
    pub ephemeral: bool,

    /// Print events as JSON Lines on stdout.
    #[arg(long, alias = "experimental-json")]
    pub json: bool,

    /// Write the agent's last message to this file.
    #[arg(short = 'o', long = "output-last-message", value_name = "FILE")]
    pub output_last_message: Option<PathBuf>,

    /// A JSON Schema file the final message must follow.
    #[arg(long = "output-schema", value_name = "FILE")]
    pub output_schema: Option<PathBuf>,

    /// When to use colours in the transcript.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
}

#[derive(Debug, Subcommand, Clone)]
pub enum ExecCommand {
    /// Continue an earlier session.
    Resume(ResumeArgs),
}

#[derive(Debug, Args, Clone)]
pub struct ResumeArgs {
    /// The thread id to continue.
    #[arg(value_name = "THREAD_ID")]
    pub thread_id: Option<String>,
    /// Continue the most recent session.
    #[arg(long)]
    pub last: bool,
    /// The next prompt.
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    Always,
    Never,
    Auto,
}
