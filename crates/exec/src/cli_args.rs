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
    #[arg(short = 'm', long, global = true)]
    pub model: Option<String>,

    /// Override a config value: `-c key=value` (value parsed as TOML, else taken as a string).
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", global = true)]
    pub config_overrides: Vec<String>,

    /// Configuration profile from config.toml.
    #[arg(short = 'p', long, global = true)]
    pub profile: Option<String>,

    /// Working directory for the agent.
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    pub cwd: Option<PathBuf>,

    /// More directories the agent may write to (workspace-write sandbox).
    #[arg(long = "add-dir", value_name = "DIR", global = true)]
    pub add_dirs: Vec<PathBuf>,

    /// Sandbox for model-run commands.
    #[arg(short = 's', long = "sandbox", value_enum, global = true)]
    pub sandbox: Option<SandboxArg>,

    /// Low-friction automatic work: the workspace-write sandbox with approvals on request
    /// (`-s workspace-write -c approval_policy=on-request`).
    #[arg(long, global = true, conflicts_with = "sandbox")]
    pub full_auto: bool,

    /// Run every command without a sandbox and without approvals. EXTREMELY DANGEROUS: only
    /// for environments that are sandboxed from the outside (a throwaway container or VM).
    #[arg(
        long = "dangerously-bypass-approvals-and-sandbox",
        alias = "yolo",
        global = true,
        conflicts_with_all = ["sandbox", "full_auto"]
    )]
    pub dangerously_bypass_approvals_and_sandbox: bool,

    /// Run outside a Git repository.
    #[arg(long, global = true)]
    pub skip_git_repo_check: bool,

    /// Run the tools in this environment of `$OSPREY_HOME/environments.toml` (an exec
    /// server's machine; `local` is this one). Default: the file's `default`.
    #[arg(long = "environment", value_name = "ID", global = true)]
    pub environment: Option<String>,

    /// The working directory on the environment's side (default: the exec server's).
    #[arg(
        long = "environment-cwd",
        value_name = "DIR",
        global = true,
        requires = "environment"
    )]
    pub environment_cwd: Option<PathBuf>,

    /// Attach an image to the prompt (repeatable).
    #[arg(short = 'i', long = "image", value_name = "FILE", global = true)]
    pub images: Vec<PathBuf>,

    /// Use a local open-source model provider (`oss_provider`, default Ollama).
    #[arg(long, global = true)]
    pub oss: bool,

    /// Use the embedded local model (provider `local`).
    #[arg(long, global = true, conflicts_with = "oss")]
    pub local: bool,

    /// With the local model: fail instead of downloading it when it is missing.
    #[arg(long, global = true)]
    pub no_fetch: bool,

    /// Do not load exec-policy rules files (`$OSPREY_HOME/rules`, the project's `.osprey/rules`).
    #[arg(long, global = true)]
    pub ignore_rules: bool,

    /// Do not write a session file.
    #[arg(long, global = true)]
    pub ephemeral: bool,

    /// Print events as JSON Lines on stdout.
    #[arg(long, alias = "experimental-json", global = true)]
    pub json: bool,

    /// Write the agent's last message to this file.
    #[arg(
        short = 'o',
        long = "output-last-message",
        value_name = "FILE",
        global = true
    )]
    pub output_last_message: Option<PathBuf>,

    /// A JSON Schema file the final message must follow.
    #[arg(long = "output-schema", value_name = "FILE", global = true)]
    pub output_schema: Option<PathBuf>,

    /// When to use colours in the transcript.
    #[arg(long, value_enum, default_value_t = ColorArg::Auto, global = true)]
    pub color: ColorArg,
}

#[derive(Debug, Subcommand, Clone)]
pub enum ExecCommand {
    /// Continue an earlier session in the same session file.
    Resume(ResumeArgs),
    /// Start a new session from a copy of (the beginning of) an earlier one.
    Fork(ForkArgs),
}

#[derive(Debug, Args, Clone)]
pub struct ResumeArgs {
    /// The thread id to continue (see `osprey sessions list`).
    #[arg(value_name = "THREAD_ID", required_unless_present = "last")]
    pub thread_id: Option<String>,
    /// Continue the most recent session started in this directory (a single positional
    /// argument is then the prompt).
    #[arg(long)]
    pub last: bool,
    /// With --last: the most recent session from any directory.
    #[arg(long, requires = "last")]
    pub all: bool,
    /// The next prompt (or `-` / nothing to read it from standard input).
    #[arg(value_name = "PROMPT")]
    pub prompt: Option<String>,
}

impl ResumeArgs {
    /// The thread id and prompt, reading `resume --last PROMPT` as a prompt.
    pub fn target_and_prompt(&self) -> (Option<&str>, Option<&str>) {
        match (self.last, self.thread_id.as_deref(), self.prompt.as_deref()) {
            (true, Some(prompt), None) => (None, Some(prompt)),
            (true, _, prompt) => (None, prompt),
            (false, id, prompt) => (id, prompt),
        }
    }
}

#[derive(Debug, Args, Clone)]
pub struct ForkArgs {
    /// The thread to copy.
    #[arg(value_name = "THREAD_ID")]
    pub thread_id: String,
    /// Keep only the first N turns (default: all of them).
    #[arg(long, value_name = "N")]
    pub at: Option<usize>,
    /// The first prompt of the new thread.
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
