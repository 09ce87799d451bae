//! Running one command to completion: shared by `shell`, `shell_command` and `local_shell`.

use crate::environment::Launch;
use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::command_item::CommandItem;
use crate::tools::context::{CommandServices, ToolInvocation};
use crate::tools::handlers::apply_patch::intercept_shell_patch;
use crate::tools::orchestrator::{Attempt, CommandPlan};
use osprey_process::{ExecExpiration, OutputSink};
use osprey_protocol::EventMsg;
use osprey_tools::{ExecOutputView, ExitView, format_exec_output, new_chunk_id};
use std::time::Duration;

/// Default timeout of one-shot commands when the model gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Longest timeout honoured (one hour).
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;

/// What a one-shot tool asks to run.
pub struct OneShot {
    pub argv: Vec<String>,
    pub workdir: Option<String>,
    pub timeout_ms: Option<u64>,
    pub escalation_requested: bool,
    pub justification: Option<String>,
    pub prefix_rule: Option<Vec<String>>,
    pub max_output_tokens: usize,
}

pub async fn run_one_shot(
    inv: &ToolInvocation,
    commands: &CommandServices,
    shot: OneShot,
) -> Result<ToolOutput, ToolError> {
    if shot.argv.is_empty() || shot.argv[0].trim().is_empty() {
        return Err(ToolError::RespondToModel(
            "The command is empty; pass the program and its arguments.".to_string(),
        ));
    }
    let environment = &commands.environment;
    let cwd = environment
        .resolve_workdir(&inv.turn.cwd, shot.workdir.as_deref())
        .await?;
    if let Some(result) = intercept_shell_patch(inv, commands, &shot.argv, &cwd).await {
        return result;
    }
    let services = commands;
    let policy = &inv.turn.config.shell_environment_policy;
    let env = environment.command_env(&services.env, policy, false);
    let plan = CommandPlan {
        argv: shot.argv.clone(),
        cwd: cwd.clone(),
        env,
        escalation_requested: shot.escalation_requested,
        justification: shot.justification.clone(),
        prefix_rule: shot.prefix_rule.clone(),
    };
    let timeout = Duration::from_millis(
        shot.timeout_ms
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .clamp(1, MAX_TIMEOUT_MS),
    );
    let item = CommandItem::new(inv.scope(), &shot.argv, cwd);
    let mut started = false;
    let result = services
        .orchestrator
        .run(inv.scope(), &plan, None, |request, _sandboxed| {
            if !started {
                item.started(inv.scope());
                started = true;
            }
            let events = inv.events.clone();
            let turn_id = inv.turn.turn_id.clone();
            let sink_item = item.clone();
            let mut progress = OutputProgress::default();
            let sink = OutputSink::callback(move |bytes: &[u8]| {
                let chunk = String::from_utf8_lossy(bytes).into_owned();
                if let Some(so_far) = progress.push(&chunk) {
                    sink_item.updated_via(&events, &turn_id, so_far);
                }
                events.emit(
                    Some(&turn_id),
                    EventMsg::CommandOutputDelta {
                        item_id: sink_item.id.clone(),
                        chunk,
                    },
                );
            });
            let expiration = ExecExpiration::timeout(timeout).with_cancellation(inv.cancel.clone());
            let launch = Launch {
                policy,
                thread_id: inv.events.thread_id().to_string(),
                call_id: &inv.call.call_id,
            };
            async move {
                let (outcome, denied) = environment
                    .run_to_completion(request, expiration, Some(sink), &launch)
                    .await
                    .map_err(ToolError::RespondToModel)?;
                let output = outcome.output_lossy();
                Ok(Attempt {
                    denied,
                    exit_code: outcome.exit_code,
                    output,
                    value: outcome,
                })
            }
        })
        .await;
    let run = match result {
        Ok(run) => run,
        Err(ToolError::RespondToModel(message)) => {
            if started {
                item.completed(inv.scope(), &message, None, None);
            } else {
                item.declined(inv.scope(), &message);
            }
            return Err(ToolError::RespondToModel(message));
        }
        Err(fatal) => {
            if started {
                item.completed(inv.scope(), "", None, None);
            } else {
                item.declined(inv.scope(), &fatal.to_string());
            }
            return Err(fatal);
        }
    };
    let outcome = run.value;
    let output = outcome.output_lossy();
    let exit = if outcome.timed_out {
        ExitView::TimedOut {
            after_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            exit_code: outcome.exit_code,
        }
    } else if let Some(code) = outcome.exit_code {
        ExitView::Exited(code)
    } else {
        ExitView::Killed {
            signal: outcome.signal,
        }
    };
    let exit_code = outcome
        .exit_code
        .or(outcome.signal.map(|s| 128 + s))
        .or(if outcome.timed_out { Some(124) } else { None });
    let may_escalate = commands.orchestrator.may_escalate(inv.turn.approval_policy);
    let note = run
        .sandbox_denial
        .as_deref()
        .map(|denial| sandbox_note(denial, may_escalate));
    item.completed(inv.scope(), &output, exit_code, run.sandbox_denial);
    let text = format_exec_output(ExecOutputView {
        chunk_id: Some(new_chunk_id()),
        wall_time: outcome.duration,
        exit,
        output: &output,
        max_output_tokens: shot.max_output_tokens,
        sandbox_note: note.as_deref(),
    });
    Ok(ToolOutput {
        text,
        images: Vec::new(),
        success: outcome.success(),
    })
}

/// Output gathered while a command runs, for `item.updated` events on long runs: at most one
/// update a second, carrying the last [`PROGRESS_TAIL_BYTES`] of output.
#[derive(Default)]
struct OutputProgress {
    tail: String,
    last_update: Option<std::time::Instant>,
    started: Option<std::time::Instant>,
}

const PROGRESS_TAIL_BYTES: usize = 64 * 1024;
const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

impl OutputProgress {
    /// Adds a chunk; returns the output so far when an update is due.
    fn push(&mut self, chunk: &str) -> Option<&str> {
        let now = std::time::Instant::now();
        let started = *self.started.get_or_insert(now);
        self.tail.push_str(chunk);
        if self.tail.len() > PROGRESS_TAIL_BYTES {
            let mut cut = self.tail.len() - PROGRESS_TAIL_BYTES;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.tail.replace_range(..cut, "");
        }
        let since = self.last_update.unwrap_or(started);
        if now.duration_since(since) >= PROGRESS_INTERVAL {
            self.last_update = Some(now);
            return Some(&self.tail);
        }
        None
    }
}

/// The line that tells the model the sandbox, not the command, caused a failure, and
/// whether asking to run it outside the sandbox can help (`may_escalate`, see
/// [`crate::tools::orchestrator::Orchestrator::may_escalate`]).
pub fn sandbox_note(denial: &str, may_escalate: bool) -> String {
    if may_escalate {
        format!(
            "Sandbox: the sandbox blocked this command ({denial}). If the task needs it, run it again with sandbox_permissions \"require_escalated\" and a justification."
        )
    } else {
        format!(
            "Sandbox: the sandbox blocked this command ({denial}). Nobody can approve running it outside the sandbox in this session, so do not try it again in another form: finish what you can, then tell the user what was blocked."
        )
    }
}
