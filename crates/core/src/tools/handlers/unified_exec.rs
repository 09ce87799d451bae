//! `exec_command` and `write_stdin`: commands that may outlive one call.

use crate::environment::session_process::SessionProcess;
use crate::environment::{Launch, ToolEnvironment};
use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::command_item::CommandItem;
use crate::tools::context::{CommandServices, ToolInvocation};
use crate::tools::handlers::apply_patch::intercept_shell_patch;
use crate::tools::handlers::one_shot::sandbox_note;
use crate::tools::orchestrator::{Attempt, CommandPlan};
use crate::tools::registry::ToolHandler;
use crate::tools::unified_exec::{ExecSession, UnifiedExecSessions};
use async_trait::async_trait;
use osprey_process::{CollectResult, ProcessExit};
use osprey_shell::Shell;
use osprey_tools::{
    ExecCommandArgs, ExecOutputView, ExitView, SandboxPermissions, ToolSpec, WriteStdinArgs,
    exec_command_spec, format_exec_output, new_chunk_id, write_stdin_spec,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn exit_code_of(exit: &ProcessExit) -> i32 {
    exit.code.unwrap_or_else(|| 128 + exit.signal.unwrap_or(0))
}

fn exit_view(exit: Option<&ProcessExit>, session_id: Option<u64>) -> ExitView {
    match (exit, session_id) {
        (Some(exit), _) if exit.code.is_some() => ExitView::Exited(exit_code_of(exit)),
        (Some(exit), _) => ExitView::Killed {
            signal: exit.signal,
        },
        (None, Some(session_id)) => ExitView::Running { session_id },
        (None, None) => ExitView::Killed { signal: None },
    }
}

/// The exec server's verdict on a remote session that already exited; `None` leaves the
/// judgement to the sandbox's reading of the output.
fn remote_denial(environment: &ToolEnvironment, process: &SessionProcess) -> Option<String> {
    let remote = environment.remote()?;
    crate::environment::remote_sandbox::server_denial(remote.id(), process.server_denied())
}

fn collected_text(result: &CollectResult) -> String {
    String::from_utf8_lossy(&result.output).into_owned()
}

/// `exec_command {cmd, …}`.
pub struct ExecCommandHandler {
    pub commands: Arc<CommandServices>,
    pub sessions: Arc<UnifiedExecSessions>,
}

#[async_trait]
impl ToolHandler for ExecCommandHandler {
    fn spec(&self) -> ToolSpec {
        exec_command_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: ExecCommandArgs = inv.call.arguments()?;
        if args.cmd.trim().is_empty() {
            return Err(ToolError::RespondToModel(
                "exec_command needs a non-empty `cmd`.".to_string(),
            ));
        }
        let services = &*self.commands;
        let shell = match args.shell.as_deref() {
            // The server finds the shell on its own PATH.
            Some(name) if services.environment.remote().is_some() => Shell::new(name),
            Some(name) => {
                let path_var = services.env.get("PATH").map(std::ffi::OsStr::new);
                Shell::from_name_or_path_in(name, path_var).map_err(|e| {
                    ToolError::RespondToModel(format!(
                        "shell `{name}` cannot be used: {e}; leave `shell` out to use the user's shell"
                    ))
                })?
            }
            None => services.shell.clone(),
        };
        let login = args.login.unwrap_or(inv.turn.config.tools.login_shell);
        let argv = shell.derive_exec_args(&args.cmd, login);
        let environment = &services.environment;
        let cwd = environment
            .resolve_workdir(&inv.turn.cwd, args.workdir.as_deref())
            .await?;
        if let Some(result) = intercept_shell_patch(&inv, &self.commands, &argv, &cwd).await {
            return result;
        }
        let tty = args.tty();
        let policy = &inv.turn.config.shell_environment_policy;
        let env = environment.command_env(&services.env, policy, tty);
        let plan = CommandPlan {
            argv: argv.clone(),
            cwd: cwd.clone(),
            env,
            escalation_requested: args.sandbox_permissions()
                == SandboxPermissions::RequireEscalated,
            justification: args.justification.clone(),
            prefix_rule: args.prefix_rule.clone(),
        };
        let yield_for = Duration::from_millis(args.yield_time_ms());
        let max_tokens = args.max_output_tokens();
        let max_bytes = max_tokens.saturating_mul(8);
        let item = CommandItem::new(inv.scope(), &argv, cwd);
        let started_at = Instant::now();
        let mut started = false;
        let result = services
            .orchestrator
            .run(inv.scope(), &plan, None, |request, _sandboxed| {
                if !started {
                    item.started(inv.scope());
                    started = true;
                }
                let cancel = inv.cancel.clone();
                let launch = Launch {
                    policy,
                    thread_id: inv.events.thread_id().to_string(),
                    call_id: &inv.call.call_id,
                };
                async move {
                    let process = environment
                        .spawn_session(request, tty, &launch)
                        .await
                        .map_err(ToolError::RespondToModel)?;
                    let collected = tokio::select! {
                        c = process.collect_output(yield_for, max_bytes) => c,
                        _ = cancel.cancelled() => {
                            process.kill();
                            process.collect_output(Duration::from_millis(100), max_bytes).await
                        }
                    };
                    let output = collected_text(&collected);
                    let denied = remote_denial(environment, &process);
                    Ok(Attempt {
                        denied,
                        exit_code: collected.exited.as_ref().map(exit_code_of),
                        output,
                        value: (process, collected),
                    })
                }
            })
            .await;
        let run = match result {
            Ok(run) => run,
            Err(error) => {
                let message = error.to_string();
                if started {
                    item.completed(inv.scope(), &message, None, None);
                } else {
                    item.declined(inv.scope(), &message);
                }
                return Err(error);
            }
        };
        let (process, collected) = run.value;
        let output = collected_text(&collected);
        let may_escalate = services.orchestrator.may_escalate(inv.turn.approval_policy);
        let note = run
            .sandbox_denial
            .as_deref()
            .map(|denial| sandbox_note(denial, may_escalate));
        if let Some(exit) = collected.exited.as_ref() {
            let code = exit_code_of(exit);
            item.completed(inv.scope(), &output, Some(code), run.sandbox_denial.clone());
            let text = format_exec_output(ExecOutputView {
                chunk_id: Some(new_chunk_id()),
                wall_time: started_at.elapsed(),
                exit: exit_view(Some(exit), None),
                output: &output,
                max_output_tokens: max_tokens,
                sandbox_note: note.as_deref(),
            });
            return Ok(ToolOutput {
                text,
                images: Vec::new(),
                success: code == 0,
            });
        }
        let mut session = ExecSession {
            process: Arc::new(process),
            item,
            last_used: Instant::now(),
            aggregated: String::new(),
            sandbox_denial: run.sandbox_denial.clone(),
        };
        session.append(&output);
        session.item.updated(inv.scope(), &session.aggregated);
        let (session_id, closed_note) = self.sessions.insert(session).await;
        let mut text = format_exec_output(ExecOutputView {
            chunk_id: Some(new_chunk_id()),
            wall_time: started_at.elapsed(),
            exit: exit_view(None, Some(session_id)),
            output: &output,
            max_output_tokens: max_tokens,
            sandbox_note: note.as_deref(),
        });
        if let Some(closed) = closed_note {
            text = format!("{closed}\n{text}");
        }
        Ok(ToolOutput::success(text))
    }
}

/// `write_stdin {session_id, chars?, …}`.
pub struct WriteStdinHandler {
    pub commands: Arc<CommandServices>,
    pub sessions: Arc<UnifiedExecSessions>,
}

#[async_trait]
impl ToolHandler for WriteStdinHandler {
    fn spec(&self) -> ToolSpec {
        write_stdin_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: WriteStdinArgs = inv.call.arguments()?;
        let sessions = &self.sessions;
        let Some(mut session) = sessions.take(args.session_id).await else {
            let live = sessions.ids().await;
            let live = if live.is_empty() {
                "there are no live sessions".to_string()
            } else {
                format!(
                    "live sessions: {}",
                    live.iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(ToolError::RespondToModel(format!(
                "No running session has id {} ({live}). Sessions end when their command exits; start the command again with exec_command.",
                args.session_id
            )));
        };
        let call_started = Instant::now();
        if !args.chars().is_empty()
            && let Err(e) = session.process.write_stdin(args.chars().as_bytes()).await
        {
            let id = args.session_id;
            sessions.put_back(id, session).await;
            return Err(ToolError::RespondToModel(format!(
                "Could not write to session {id}: {e}"
            )));
        }
        let max_tokens = args.max_output_tokens();
        let yield_for = Duration::from_millis(args.yield_time_ms());
        let collected = tokio::select! {
            c = session.process.collect_output(yield_for, max_tokens.saturating_mul(8)) => c,
            _ = inv.cancel.cancelled() => {
                session.process.kill();
                session.process.collect_output(Duration::from_millis(100), max_tokens.saturating_mul(8)).await
            }
        };
        let output = collected_text(&collected);
        session.append(&output);
        session.last_used = Instant::now();
        let may_escalate = self
            .commands
            .orchestrator
            .may_escalate(inv.turn.approval_policy);
        let note = session
            .sandbox_denial
            .as_deref()
            .map(|denial| sandbox_note(denial, may_escalate));
        let text;
        if let Some(exit) = collected.exited.as_ref() {
            let code = exit_code_of(exit);
            session.item.completed(
                inv.scope(),
                &session.aggregated,
                Some(code),
                session.sandbox_denial.clone(),
            );
            text = format_exec_output(ExecOutputView {
                chunk_id: Some(new_chunk_id()),
                wall_time: call_started.elapsed(),
                exit: exit_view(Some(exit), None),
                output: &output,
                max_output_tokens: max_tokens,
                sandbox_note: note.as_deref(),
            });
        } else {
            session.item.updated(inv.scope(), &session.aggregated);
            text = format_exec_output(ExecOutputView {
                chunk_id: Some(new_chunk_id()),
                wall_time: call_started.elapsed(),
                exit: exit_view(None, Some(args.session_id)),
                output: &output,
                max_output_tokens: max_tokens,
                sandbox_note: note.as_deref(),
            });
            sessions.put_back(args.session_id, session).await;
        }
        Ok(ToolOutput::success(text))
    }
}
