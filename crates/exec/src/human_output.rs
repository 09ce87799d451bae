//! The readable transcript written to stderr when `--json` is not given.

use osprey_protocol::{
    ApprovalRequestKind, Event, EventMsg, FileChangeKind, ItemStatus, PlanStepStatus, SandboxMode,
    ThreadItem,
};
use std::io::Write;

/// ANSI styling that switches off entirely when colours are disabled.
#[derive(Clone, Copy)]
pub struct Style {
    pub enabled: bool,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn bold(self, t: &str) -> String {
        self.paint("1", t)
    }
    fn dim(self, t: &str) -> String {
        self.paint("2", t)
    }
    fn green(self, t: &str) -> String {
        self.paint("32", t)
    }
    fn red(self, t: &str) -> String {
        self.paint("31", t)
    }
    fn magenta(self, t: &str) -> String {
        self.paint("35", t)
    }
    fn cyan(self, t: &str) -> String {
        self.paint("36", t)
    }
}

/// How many lines of a command's output the transcript shows.
const MAX_OUTPUT_LINES: usize = 20;

pub struct HumanEventWriter {
    style: Style,
    version: &'static str,
    /// The thread's sandbox, from `thread.started`: what the hint after a refusal says.
    sandbox: Option<SandboxMode>,
    /// The hint naming the flag that allows more is shown once per run.
    hinted: bool,
}

impl HumanEventWriter {
    pub fn new(style: Style, version: &'static str) -> Self {
        Self {
            style,
            version,
            sandbox: None,
            hinted: false,
        }
    }

    /// After something was refused (an approval exec declined, a write the sandbox
    /// blocked): once, which flag would have allowed it.
    fn write_hint(&mut self, err: &mut dyn Write) -> std::io::Result<()> {
        let hint = match self.sandbox {
            Some(SandboxMode::ReadOnly) => {
                "this run's sandbox is read-only and `osprey exec` cannot ask you to allow more, so nothing could be written; to let it change files in the workspace, run it again with `-s workspace-write` (or `--full-auto`)."
            }
            Some(SandboxMode::WorkspaceWrite) => {
                "this run can write only in the workspace and `osprey exec` cannot ask you to allow more; `--add-dir DIR` makes another directory writable."
            }
            Some(SandboxMode::DangerFullAccess) | None => return Ok(()),
        };
        if self.hinted {
            return Ok(());
        }
        self.hinted = true;
        writeln!(err, "{} {hint}", self.style.bold("hint:"))
    }

    pub fn write_event(&mut self, err: &mut dyn Write, event: &Event) -> std::io::Result<()> {
        let s = self.style;
        match &event.msg {
            EventMsg::ThreadStarted {
                model,
                model_provider,
                cwd,
                approval_policy,
                sandbox_policy,
                ..
            } => {
                writeln!(err, "osprey {}", self.version)?;
                writeln!(err, "{}", s.dim("--------"))?;
                writeln!(err, "{} {}", s.bold("workdir:"), cwd.display())?;
                writeln!(err, "{} {model}", s.bold("model:"))?;
                writeln!(err, "{} {model_provider}", s.bold("provider:"))?;
                writeln!(err, "{} {approval_policy}", s.bold("approval:"))?;
                writeln!(err, "{} {}", s.bold("sandbox:"), sandbox_policy.mode())?;
                self.sandbox = Some(sandbox_policy.mode());
                writeln!(err, "{} {}", s.bold("session id:"), event.thread_id)?;
                writeln!(err, "{}", s.dim("--------"))?;
            }
            EventMsg::ItemCompleted { item } => self.write_item_completed(err, item)?,
            EventMsg::ItemStarted {
                item: ThreadItem::CommandExecution { command, cwd, .. },
            } => {
                writeln!(err, "{}", s.magenta(&s.bold("exec")))?;
                writeln!(err, "{} in {}", s.bold(command), cwd.display())?;
            }
            // The plan is written from `plan_update`, which follows each of these and also
            // carries why the model changed it.
            EventMsg::PlanUpdate { explanation, plan } => {
                let items: Vec<osprey_protocol::TodoEntry> = plan
                    .iter()
                    .map(|step| osprey_protocol::TodoEntry {
                        text: step.step.clone(),
                        completed: step.status == PlanStepStatus::Completed,
                        in_progress: step.status == PlanStepStatus::InProgress,
                    })
                    .collect();
                let why = explanation
                    .as_deref()
                    .map(str::trim)
                    .filter(|e| !e.is_empty());
                write_plan_with(err, s, why, &items)?;
            }
            EventMsg::ApprovalRequested(request) => {
                let what = match &request.kind {
                    ApprovalRequestKind::Exec { command, .. } => command.join(" "),
                    ApprovalRequestKind::Patch { changes, .. } => changes
                        .iter()
                        .map(|c| c.path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                    ApprovalRequestKind::McpTool { server, tool, .. } => format!("{server}/{tool}"),
                };
                writeln!(
                    err,
                    "{} {what}: {} (exec mode never waits for a person; declined)",
                    s.red("approval needed:"),
                    request.reason
                )?;
                self.write_hint(err)?;
            }
            EventMsg::TurnCompleted { usage, .. } => {
                writeln!(err, "{}", s.magenta(&s.bold("tokens used")))?;
                writeln!(
                    err,
                    "{}",
                    usage
                        .total_tokens
                        .max(usage.input_tokens + usage.output_tokens)
                )?;
            }
            EventMsg::TurnFailed { error, .. } => {
                writeln!(err, "{} {}", s.red(&s.bold("ERROR:")), error.message)?;
            }
            EventMsg::TurnAborted { reason } => {
                writeln!(
                    err,
                    "{} {}",
                    s.red(&s.bold("ERROR:")),
                    crate::json_output::abort_message(*reason)
                )?;
            }
            EventMsg::Error { error } => {
                writeln!(err, "{} {}", s.red("error:"), error.message)?;
            }
            EventMsg::Warning { message } => {
                writeln!(err, "{} {message}", s.red("warning:"))?;
            }
            _ => {}
        }
        Ok(())
    }

    fn write_item_completed(
        &mut self,
        err: &mut dyn Write,
        item: &ThreadItem,
    ) -> std::io::Result<()> {
        let s = self.style;
        match item {
            ThreadItem::UserMessage { text, images, .. } => {
                writeln!(err, "{}", s.cyan(&s.bold("user")))?;
                for (n, path) in images.iter().enumerate() {
                    let label = format!("[Image #{}]", n + 1);
                    writeln!(err, "{} {}", s.dim(&label), path.display())?;
                }
                writeln!(err, "{text}")?;
            }
            ThreadItem::AgentMessage { text, .. } => {
                writeln!(err, "{}", s.magenta(&s.bold("osprey")))?;
                writeln!(err, "{text}")?;
            }
            ThreadItem::Reasoning { text, .. } => {
                writeln!(err, "{}", s.magenta(&s.bold("thinking")))?;
                writeln!(err, "{}", s.dim(text))?;
            }
            ThreadItem::CommandExecution {
                aggregated_output,
                exit_code,
                status,
                sandbox_denial,
                ..
            } => {
                let header = match (status, exit_code) {
                    (ItemStatus::Completed, _) => s.green("succeeded:"),
                    (ItemStatus::Declined, _) => s.red("declined:"),
                    (_, Some(code)) => s.red(&format!("exited {code}:")),
                    (_, None) => s.red("failed:"),
                };
                writeln!(err, "{header}")?;
                let lines: Vec<&str> = aggregated_output.lines().collect();
                for line in lines.iter().take(MAX_OUTPUT_LINES) {
                    writeln!(err, "{}", s.dim(line))?;
                }
                if lines.len() > MAX_OUTPUT_LINES {
                    writeln!(
                        err,
                        "{}",
                        s.dim(&format!("… {} more lines", lines.len() - MAX_OUTPUT_LINES))
                    )?;
                }
                if let Some(denial) = sandbox_denial {
                    writeln!(err, "{} {denial}", s.red("sandbox:"))?;
                    self.write_hint(err)?;
                }
            }
            ThreadItem::FileChange {
                changes,
                status,
                error,
                ..
            } => {
                let title = if *status == ItemStatus::Completed {
                    s.magenta(&s.bold("file update"))
                } else {
                    s.red(&s.bold("file update failed"))
                };
                writeln!(err, "{title}")?;
                for change in changes {
                    let mark = match change.kind {
                        FileChangeKind::Add => s.green("A"),
                        FileChangeKind::Update => s.cyan("M"),
                        FileChangeKind::Delete => s.red("D"),
                    };
                    writeln!(err, "{mark} {}", change.path.display())?;
                }
                if let Some(error) = error {
                    writeln!(err, "{}", s.red(error))?;
                }
            }
            ThreadItem::McpToolCall {
                server,
                tool,
                status,
                error,
                ..
            } => {
                writeln!(
                    err,
                    "{} {server}/{tool} ({})",
                    s.magenta(&s.bold("tool")),
                    crate::json_output::status_str(*status)
                )?;
                if let Some(error) = error {
                    writeln!(err, "{}", s.red(error))?;
                }
            }
            ThreadItem::TodoList { items, .. } => write_plan(err, s, items)?,
            ThreadItem::Error { message, .. } => {
                writeln!(err, "{} {message}", s.red(&s.bold("ERROR:")))?;
            }
            ThreadItem::CollabAgentToolCall {
                tool,
                status,
                receiver_thread_ids,
                agents_states,
                ..
            } => {
                let tool = serde_json::to_value(tool)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let states: Vec<String> = receiver_thread_ids
                    .iter()
                    .map(|id| match agents_states.get(id) {
                        Some(state) => format!("{id} ({})", state.name()),
                        None => id.clone(),
                    })
                    .collect();
                writeln!(
                    err,
                    "{} {tool} {} {}",
                    s.magenta(&s.bold("agents")),
                    states.join(", "),
                    crate::json_output::status_str(*status)
                )?;
            }
        }
        Ok(())
    }
}

fn write_plan(
    err: &mut dyn Write,
    s: Style,
    items: &[osprey_protocol::TodoEntry],
) -> std::io::Result<()> {
    write_plan_with(err, s, None, items)
}

/// `plan`, the model's reason for the change when it gave one, then a line per step.
fn write_plan_with(
    err: &mut dyn Write,
    s: Style,
    explanation: Option<&str>,
    items: &[osprey_protocol::TodoEntry],
) -> std::io::Result<()> {
    writeln!(err, "{}", s.magenta(&s.bold("plan")))?;
    for line in explanation.into_iter().flat_map(str::lines) {
        writeln!(err, "  {}", s.dim(line))?;
    }
    for entry in items {
        let mark = if entry.completed {
            "[x]"
        } else if entry.in_progress {
            "[>]"
        } else {
            "[ ]"
        };
        writeln!(err, "  {mark} {}", entry.text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::{PlanStep, ThreadId, TodoEntry};

    fn written(writer: &mut HumanEventWriter, msg: EventMsg) -> String {
        let mut out = Vec::new();
        let event = Event {
            thread_id: ThreadId::new(),
            turn_id: None,
            msg,
        };
        writer.write_event(&mut out, &event).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_plan_update_is_written_once_with_its_explanation() {
        let mut writer = HumanEventWriter::new(Style { enabled: false }, "0.0.0");
        let items = vec![TodoEntry {
            text: "Reproduce".into(),
            completed: false,
            in_progress: true,
        }];
        let item = ThreadItem::TodoList {
            id: "plan_1".into(),
            items,
        };
        // The item the call starts says nothing: the plan_update after it does.
        assert_eq!(written(&mut writer, EventMsg::ItemStarted { item }), "");
        let step = |text: &str, status| PlanStep {
            step: text.into(),
            status,
        };
        let update = EventMsg::PlanUpdate {
            explanation: Some("The bug is in the parser.".into()),
            plan: vec![
                step("Reproduce", PlanStepStatus::Completed),
                step("Fix the parser", PlanStepStatus::InProgress),
                step("Add a test", PlanStepStatus::Pending),
            ],
        };
        assert_eq!(
            written(&mut writer, update),
            "plan\n  The bug is in the parser.\n  [x] Reproduce\n  [>] Fix the parser\n  [ ] Add a test\n"
        );
        let bare = EventMsg::PlanUpdate {
            explanation: Some("  ".into()),
            plan: vec![step("Reproduce", PlanStepStatus::Pending)],
        };
        assert_eq!(written(&mut writer, bare), "plan\n  [ ] Reproduce\n");
    }
}
