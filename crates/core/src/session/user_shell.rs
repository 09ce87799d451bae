//! `Op::RunUserShellCommand`: a command the person typed (`!cmd`), run as a task of its own.
//!
//! It runs like a turn (queued behind a running one, stopped by `Op::Interrupt`, ended by
//! exactly one of TurnCompleted / TurnAborted / TurnFailed) and shows one command item of
//! source `User`. The person asked for it, so it goes through neither the approval engine
//! nor the sandbox, as in Codex: `<shell> -lc <command>` in the thread's cwd, spawned by
//! `osprey-process` with the command environment the model's commands get.
//!
//! Shared with the model, the command and its output are recorded as one user message in
//! Codex's form (`<user_shell_command>` … `</user_shell_command>`), the output cut to the
//! tool output budget; not shared, nothing is recorded for the model and only the completed
//! item reaches the session file.

use super::Session;
use crate::turn_context::TurnContext;
use osprey_process::{ExecExpiration, ExecOutcome, ExecRequest, OutputSink};
use osprey_protocol::{
    AbortReason, CommandSource, EventMsg, ItemStatus, ResponseItem, ThreadItem, TokenUsage,
};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a user shell command may run when the op sets no timeout.
pub(crate) const DEFAULT_USER_SHELL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// What the task runs.
pub(crate) struct UserShellCommand {
    pub command: String,
    pub timeout_ms: Option<u64>,
    pub share_with_model: bool,
}

/// How the command ended, in the terms the item and the model record need.
struct Ended {
    output: String,
    exit_code: Option<i32>,
    duration: Duration,
    timed_out: bool,
    interrupted: bool,
}

pub(crate) async fn run_user_shell_command(
    session: Arc<Session>,
    turn: Arc<TurnContext>,
    shell: UserShellCommand,
    cancel: CancellationToken,
) {
    let events = session.events().clone();
    let turn_id = turn.turn_id.clone();
    events.emit(Some(&turn_id), EventMsg::TurnStarted);
    let item_id = events.next_item_id("cmd");
    let item =
        |output: &str, exit_code: Option<i32>, status: ItemStatus| ThreadItem::CommandExecution {
            id: item_id.clone(),
            command: shell.command.clone(),
            cwd: turn.cwd.clone(),
            aggregated_output: output.to_string(),
            exit_code,
            status,
            source: CommandSource::User,
            sandbox_denial: None,
        };
    events.emit(
        Some(&turn_id),
        EventMsg::ItemStarted {
            item: item("", None, ItemStatus::InProgress),
        },
    );
    let ended = run(&session, &turn, &shell, &item_id, cancel).await;
    let status = if ended.exit_code == Some(0) && !ended.interrupted && !ended.timed_out {
        ItemStatus::Completed
    } else {
        ItemStatus::Failed
    };
    events.emit(
        Some(&turn_id),
        EventMsg::ItemCompleted {
            item: item(&ended.output, ended.exit_code, status),
        },
    );
    if shell.share_with_model {
        if session.history_snapshot().is_empty() {
            // The thread's first model-visible item: the context every history starts with
            // comes before it, as a turn would have recorded it.
            session.record(super::initial_context(&session, &turn));
        }
        session.record([model_record(&shell.command, &ended)]);
    }
    let end = if ended.interrupted {
        EventMsg::TurnAborted {
            reason: AbortReason::Interrupted,
        }
    } else {
        EventMsg::TurnCompleted {
            last_agent_message: None,
            usage: TokenUsage::default(),
        }
    };
    events.emit(Some(&turn_id), end);
    session.sync().await;
}

async fn run(
    session: &Session,
    turn: &TurnContext,
    shell: &UserShellCommand,
    item_id: &str,
    cancel: CancellationToken,
) -> Ended {
    let services = &session.services;
    let argv = services
        .commands
        .shell
        .derive_exec_args(&shell.command, true);
    // In a remote environment the user's command runs on the exec server's side too.
    let environment = &services.commands.environment;
    let policy = &turn.config.shell_environment_policy;
    let env = environment.command_env(&services.commands.env, policy, false);
    let timeout = shell
        .timeout_ms
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_USER_SHELL_TIMEOUT);
    let Some((program, args)) = argv.split_first() else {
        return Ended {
            output: "the shell command is empty".to_string(),
            exit_code: None,
            duration: Duration::ZERO,
            timed_out: false,
            interrupted: false,
        };
    };
    let request = ExecRequest::new(program.clone(), turn.cwd.clone())
        .args(args.iter().cloned())
        .envs(env);
    let events = services.events.clone();
    let turn_id = turn.turn_id.clone();
    let delta_item = item_id.to_string();
    let sink = OutputSink::callback(move |bytes: &[u8]| {
        events.emit(
            Some(&turn_id),
            EventMsg::CommandOutputDelta {
                item_id: delta_item.clone(),
                chunk: String::from_utf8_lossy(bytes).into_owned(),
            },
        );
    });
    let expiration = ExecExpiration::timeout(timeout).with_cancellation(cancel);
    let launch = crate::environment::Launch {
        policy,
        thread_id: services.events.thread_id().to_string(),
        call_id: item_id,
    };
    match environment
        .run_to_completion(request, expiration, Some(sink), &launch)
        .await
    {
        Ok((outcome, _)) => ended_from(outcome),
        Err(error) => Ended {
            output: format!("the shell command could not be started: {error}"),
            exit_code: None,
            duration: Duration::ZERO,
            timed_out: false,
            interrupted: false,
        },
    }
}

fn ended_from(outcome: ExecOutcome) -> Ended {
    let exit_code = outcome
        .exit_code
        .or(outcome.signal.map(|signal| 128 + signal))
        .or(outcome.timed_out.then_some(124));
    Ended {
        output: outcome.output_lossy(),
        exit_code: if outcome.cancelled { None } else { exit_code },
        duration: outcome.duration,
        timed_out: outcome.timed_out,
        interrupted: outcome.cancelled,
    }
}

/// The user message that tells the model about the command, in Codex's form.
fn model_record(command: &str, ended: &Ended) -> ResponseItem {
    let mut output = String::new();
    if ended.timed_out {
        output.push_str(&format!(
            "command timed out after {} milliseconds\n",
            ended.duration.as_millis()
        ));
    }
    output.push_str(&ended.output);
    if ended.interrupted {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str("command aborted by user");
    }
    let output =
        osprey_tools::truncate_middle(&output, osprey_tools::DEFAULT_MAX_OUTPUT_TOKENS).text;
    let exit_code = ended.exit_code.unwrap_or(-1);
    let seconds = ended.duration.as_secs_f64();
    ResponseItem::user_text(format!(
        "<user_shell_command>\n<command>\n{command}\n</command>\n<result>\nExit code: {exit_code}\nDuration: {seconds:.4} seconds\nOutput:\n{output}\n</result>\n</user_shell_command>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ended(output: &str, exit_code: Option<i32>) -> Ended {
        Ended {
            output: output.to_string(),
            exit_code,
            duration: Duration::from_millis(120),
            timed_out: false,
            interrupted: false,
        }
    }

    #[test]
    fn the_record_has_codex_form() {
        let item = model_record("false", &ended("combined output wins", Some(42)));
        assert_eq!(
            item.message_text().unwrap(),
            "<user_shell_command>\n<command>\nfalse\n</command>\n<result>\nExit code: 42\nDuration: 0.1200 seconds\nOutput:\ncombined output wins\n</result>\n</user_shell_command>"
        );
        assert_eq!(item.role(), Some("user"));
    }

    #[test]
    fn timeouts_and_interrupts_are_said_in_the_record() {
        let mut timed_out = ended("partial\n", Some(124));
        timed_out.timed_out = true;
        let text = model_record("sleep 9", &timed_out).message_text().unwrap();
        assert!(
            text.contains("Output:\ncommand timed out after 120 milliseconds\npartial\n"),
            "{text}"
        );
        let mut interrupted = ended("partial", None);
        interrupted.interrupted = true;
        let text = model_record("sleep 9", &interrupted)
            .message_text()
            .unwrap();
        assert!(text.contains("Exit code: -1\n"), "{text}");
        assert!(
            text.contains("Output:\npartial\ncommand aborted by user\n</result>"),
            "{text}"
        );
    }

    #[test]
    fn long_output_is_cut_to_the_tool_output_budget() {
        let long = "x".repeat(osprey_tools::DEFAULT_MAX_OUTPUT_TOKENS * 8);
        let text = model_record("yes", &ended(&long, Some(0)))
            .message_text()
            .unwrap();
        assert!(text.contains("tokens truncated"), "the middle is cut out");
        assert!(text.len() < long.len());
    }
}
