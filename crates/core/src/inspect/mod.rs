//! Turn inspectors: hooks the turn loop consults at named points, in order.
//!
//! The loop itself has no provider- or profile-specific code. What a tool profile wants on
//! top of "prompt → stream → run tools → repeat" — a loop guard, a reminder when the model
//! stops early, a file listing up front — is a [`TurnInspector`], created per turn from the
//! profile's [`TurnAid`]s. The points, in the order a turn meets them:
//!
//! 1. [`TurnInspector::initial_context`] — once per thread, items for its first messages;
//! 2. [`TurnInspector::before_request`] — before every model request (may change the prompt);
//! 3. [`TurnInspector::adjust_calls`] — before a batch of calls runs (may change a call's
//!    arguments, the change told in its result), then [`TurnInspector::before_tool_calls`]
//!    (may answer calls instead of running them, or stop the turn);
//! 4. [`TurnInspector::after_tool_outputs`] — after the batch ran (may annotate its outputs);
//! 5. [`TurnInspector::before_finish`] — when the model answered without calls and the turn
//!    would end (may record a reminder and go on).
//!
//! With `RUST_LOG=osprey_core::inspect=debug` every point at which an aid changed something
//! logs one line naming the aid (`aid acted aid=KeepContent at="before_tool_calls"`): what
//! the benchmark uses to tell which aids acted in which task.

mod call_narration;
mod check_aids;
mod check_guard;
mod context_echo;
mod expected_output;
mod failed_check;
mod keep_content;
mod line_numbers;
mod local_aids;
mod missing_name;
mod question_focus;
mod question_guard;
mod quoted_arguments;
mod related_files;
mod repeat_nudge;
#[cfg(test)]
mod test_support;
mod write_aids;

use osprey_model::Prompt;
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use osprey_tools::{ToolProfile, TurnAid};
use std::path::Path;

use crate::tools::call::{ToolCall, ToolOutput};

/// Tools whose success changes the files a later call sees: what "since the last write"
/// counts from, for every aid.
pub(crate) const WRITING_TOOLS: [&str; 3] = [
    osprey_tools::names::WRITE_FILE,
    osprey_tools::names::EDIT_FILE,
    osprey_tools::names::APPLY_PATCH,
];

/// Adds `note` to the end of a call's result, after a blank line: how every aid speaks to the
/// model about a call that ran.
pub(crate) fn append_note(output: &mut FunctionCallOutputPayload, note: &str) {
    *output = FunctionCallOutputPayload::from(format!("{}\n\n{note}", output.text()));
}

/// What an inspector says about a batch of calls about to run.
pub(crate) enum CallVerdict {
    Run,
    /// Do not run the batch: answer every call with `output`, warn with `warning` and end the
    /// turn.
    StopTurn {
        output: ToolOutput,
        warning: String,
    },
    /// Do not run these calls (by call id): each gets its own output, and the rest of the
    /// batch runs (when nothing is left, the model gets another request). Inspectors after
    /// the one that says so see only the calls that run.
    Answer {
        outputs: Vec<(String, ToolOutput)>,
    },
}

impl CallVerdict {
    /// [`CallVerdict::Answer`] with these outputs, or [`CallVerdict::Run`] when there are none.
    pub(crate) fn answering(outputs: Vec<(String, ToolOutput)>) -> Self {
        if outputs.is_empty() {
            Self::Run
        } else {
            Self::Answer { outputs }
        }
    }
}

/// What inspectors may look at when a turn starts.
pub(crate) struct TurnStart<'a> {
    /// The user's request in this turn, as text.
    pub request: &'a str,
    pub cwd: &'a Path,
    /// The tools offered, by name.
    pub tool_names: &'a [String],
    /// The `PATH` commands get.
    pub command_path: Option<&'a str>,
}

/// One hook set; every method has a do-nothing default.
pub(crate) trait TurnInspector: Send {
    fn initial_context(&self, _start: &TurnStart<'_>) -> Vec<ResponseItem> {
        Vec::new()
    }

    fn before_request(&mut self, _prompt: &mut Prompt) {}

    /// Changes calls' arguments before they run (the history keeps the model's own); an
    /// inspector that does says so in the call's result.
    fn adjust_calls(&mut self, _calls: &mut [ToolCall]) {}

    fn before_tool_calls(&mut self, _calls: &[ToolCall]) -> CallVerdict {
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, _outputs: &mut [ResponseItem]) {}

    /// `answer` is the model's last message. A returned item is recorded and the turn goes on.
    fn before_finish(&mut self, _answer: Option<&str>) -> Option<ResponseItem> {
        None
    }
}

/// The inspectors of one turn, consulted in order, each with the aid it serves.
#[derive(Default)]
pub(crate) struct TurnInspectors {
    inspectors: Vec<(TurnAid, Box<dyn TurnInspector>)>,
}

/// Whether the "aid acted" lines are wanted: comparing before and after costs a copy of what
/// an inspector may change, paid only then.
fn logging_aids() -> bool {
    tracing::enabled!(tracing::Level::DEBUG)
}

fn log_acted(aid: TurnAid, at: &str) {
    tracing::debug!(aid = ?aid, at, "aid acted");
}

impl TurnInspectors {
    /// The inspectors `profile` asks for, in the order of its aids.
    pub(crate) fn for_turn(profile: &ToolProfile, start: &TurnStart<'_>) -> Self {
        let inspectors = profile
            .aids
            .iter()
            .map(|aid| -> (TurnAid, Box<dyn TurnInspector>) {
                let inspector: Box<dyn TurnInspector> = match aid {
                    TurnAid::LoopGuard => Box::<local_aids::LoopGuard>::default(),
                    TurnAid::RepeatNudge => Box::new(repeat_nudge::RepeatNudge::new(start)),
                    TurnAid::QuestionReadOnly => {
                        Box::new(question_guard::QuestionReadOnly::new(start))
                    }
                    TurnAid::FinishNudge => Box::new(local_aids::FinishNudge::new(start)),
                    TurnAid::ProjectFiles => Box::new(local_aids::ProjectFiles),
                    TurnAid::ReadBeforeWrite => Box::new(write_aids::ReadBeforeWrite::new(start)),
                    TurnAid::ContextEcho => Box::new(context_echo::ContextEcho::new(start)),
                    TurnAid::StripLineNumbers => {
                        Box::new(line_numbers::StripLineNumbers::new(start))
                    }
                    TurnAid::ProtectNamedCheck => {
                        Box::new(check_guard::ProtectNamedCheck::new(start))
                    }
                    TurnAid::VerifyNamedCheck => Box::new(check_aids::VerifyNamedCheck::new(start)),
                    TurnAid::FixFailedCheck => Box::new(failed_check::FixFailedCheck::new(start)),
                    TurnAid::CheckExpectedOutput => {
                        Box::new(expected_output::CheckExpectedOutput::new(start))
                    }
                    TurnAid::AnswerFromEvidence => {
                        Box::new(check_aids::AnswerFromEvidence::new(start))
                    }
                    TurnAid::RelatedFiles => Box::new(related_files::RelatedFiles::new(start)),
                    TurnAid::MissingName => Box::new(missing_name::MissingName::new(start)),
                    TurnAid::QuotedArguments => {
                        Box::new(quoted_arguments::QuotedArguments::default())
                    }
                    TurnAid::WriteDiff => Box::new(write_aids::WriteDiff::new(start)),
                    TurnAid::KeepContent => Box::new(keep_content::KeepContent::new(start)),
                    TurnAid::HideCallNarration => Box::new(call_narration::HideCallNarration::new(
                        start,
                        profile.aids.contains(&TurnAid::QuestionFocus),
                    )),
                    TurnAid::QuestionFocus => Box::new(question_focus::QuestionFocus::new(start)),
                };
                (*aid, inspector)
            })
            .collect();
        Self { inspectors }
    }

    pub(crate) fn initial_context(&self, start: &TurnStart<'_>) -> Vec<ResponseItem> {
        let mut items = Vec::new();
        for (aid, inspector) in &self.inspectors {
            let added = inspector.initial_context(start);
            if !added.is_empty() {
                log_acted(*aid, "initial_context");
            }
            items.extend(added);
        }
        items
    }

    pub(crate) fn before_request(&mut self, prompt: &mut Prompt) {
        let logging = logging_aids();
        for (aid, inspector) in &mut self.inspectors {
            let before = logging.then(|| prompt.clone());
            inspector.before_request(prompt);
            if before.is_some_and(|before| before != *prompt) {
                log_acted(*aid, "before_request");
            }
        }
    }

    /// Every inspector sees the calls still to run; the first that stops the turn decides.
    /// Calls an inspector answers instead of running are taken out of what the later ones
    /// see: they never see a call that did not run.
    pub(crate) fn adjust_calls(&mut self, calls: &mut [ToolCall]) {
        let logging = logging_aids();
        for (aid, inspector) in &mut self.inspectors {
            let before = logging.then(|| calls.to_vec());
            inspector.adjust_calls(calls);
            if before.is_some_and(|before| before != *calls) {
                log_acted(*aid, "adjust_calls");
            }
        }
    }

    pub(crate) fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        let mut remaining: Vec<ToolCall> = calls.to_vec();
        let mut answered: Vec<(String, ToolOutput)> = Vec::new();
        let mut stop = None;
        for (aid, inspector) in &mut self.inspectors {
            if remaining.is_empty() {
                break;
            }
            let verdict = inspector.before_tool_calls(&remaining);
            if !matches!(verdict, CallVerdict::Run) {
                log_acted(*aid, "before_tool_calls");
            }
            match verdict {
                CallVerdict::Run => {}
                CallVerdict::Answer { outputs } => {
                    remaining.retain(|call| !outputs.iter().any(|(id, _)| *id == call.call_id));
                    answered.extend(outputs);
                }
                said @ CallVerdict::StopTurn { .. } => {
                    stop.get_or_insert(said);
                }
            }
        }
        match stop {
            Some(stop) => stop,
            None if answered.is_empty() => CallVerdict::Run,
            None => CallVerdict::Answer { outputs: answered },
        }
    }

    pub(crate) fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        let logging = logging_aids();
        for (aid, inspector) in &mut self.inspectors {
            let before = logging.then(|| outputs.to_vec());
            inspector.after_tool_outputs(outputs);
            if before.is_some_and(|before| before != *outputs) {
                log_acted(*aid, "after_tool_outputs");
            }
        }
    }

    /// The first reminder any inspector has.
    pub(crate) fn before_finish(&mut self, answer: Option<&str>) -> Option<ResponseItem> {
        self.inspectors.iter_mut().find_map(|(aid, inspector)| {
            let reminder = inspector.before_finish(answer);
            if reminder.is_some() {
                log_acted(*aid, "before_finish");
            }
            reminder
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call::ToolPayload;

    fn start<'a>(cwd: &'a Path, names: &'a [String]) -> TurnStart<'a> {
        TurnStart {
            request: "create hello.py",
            cwd,
            tool_names: names,
            command_path: None,
        }
    }

    #[test]
    fn the_standard_profile_has_no_inspectors_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let profile = ToolProfile::standard(&osprey_tools::StandardTools {
            shell: None,
            apply_patch: None,
            update_plan: false,
            read_file: false,
            list_dir: false,
            grep_files: false,
            view_image: false,
            collab: false,
        });
        let mut set = TurnInspectors::for_turn(&profile, &start(dir.path(), &[]));
        assert!(set.initial_context(&start(dir.path(), &[])).is_empty());
        assert_eq!(set.before_finish(Some("I would call write_file")), None);
    }

    #[test]
    fn a_refused_write_is_not_seen_by_the_aids_after_the_refusal() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let names = vec!["write_file".to_string()];
        let mut set = TurnInspectors::for_turn(&ToolProfile::local(), &start(dir.path(), &names));
        let write = ToolCall {
            call_id: "w".to_string(),
            tool_name: "write_file".to_string(),
            payload: ToolPayload::Function {
                arguments: r#"{"path":"a.py","content":"x = 2\n"}"#.to_string(),
            },
        };
        let CallVerdict::Answer { outputs } = set.before_tool_calls(std::slice::from_ref(&write))
        else {
            panic!("an unread file is shown, not overwritten");
        };
        let [(id, output)] = outputs.as_slice() else {
            panic!("one answer for the one call: {outputs:?}");
        };
        assert_eq!(id, "w");
        assert!(output.text.contains("1\tx = 1"), "{}", output.text);
        // The same write again runs: the loop guard never saw the refused one.
        assert!(matches!(set.before_tool_calls(&[write]), CallVerdict::Run));
    }

    /// The lines `RUST_LOG=osprey_core::inspect=debug` prints while `act` runs.
    fn aid_log(act: impl FnOnce()) -> String {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("osprey_core::inspect=debug")
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, act);
        let bytes = buffer.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn each_aid_that_acts_is_logged_by_name_and_one_that_does_not_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let names = vec!["write_file".to_string()];
        let mut set = TurnInspectors::for_turn(&ToolProfile::local(), &start(dir.path(), &names));
        let write = ToolCall {
            call_id: "w".to_string(),
            tool_name: "write_file".to_string(),
            payload: ToolPayload::Function {
                arguments: r#"{"path":"a.py","content":"x = 2\n"}"#.to_string(),
            },
        };
        let log = aid_log(|| {
            set.before_tool_calls(std::slice::from_ref(&write));
        });
        assert!(
            log.contains("aid acted aid=ReadBeforeWrite at=\"before_tool_calls\""),
            "{log}"
        );
        assert_eq!(log.matches("aid acted").count(), 1, "{log}");
        // The output of a read changes nothing any aid looks at: no line.
        let mut outputs = vec![ResponseItem::FunctionCallOutput {
            call_id: "r".to_string(),
            output: "1\tx = 1".to_string().into(),
        }];
        let log = aid_log(|| set.after_tool_outputs(&mut outputs));
        assert_eq!(log, "");
    }

    #[test]
    fn the_local_profile_lists_files_and_reminds_before_finishing() {
        let dir = tempfile::tempdir().unwrap();
        let names = vec!["write_file".to_string()];
        let mut set = TurnInspectors::for_turn(&ToolProfile::local(), &start(dir.path(), &names));
        let context = set.initial_context(&start(dir.path(), &names));
        assert_eq!(context.len(), 1);
        assert!(context[0].message_text().unwrap().starts_with("<files>"));
        let call = ToolCall {
            call_id: "a".to_string(),
            tool_name: "shell_command".to_string(),
            payload: ToolPayload::Function {
                arguments: "{}".to_string(),
            },
        };
        assert!(matches!(
            set.before_tool_calls(std::slice::from_ref(&call)),
            CallVerdict::Run
        ));
        // The first repeat is answered with its earlier result, the second ends the turn.
        assert!(matches!(
            set.before_tool_calls(std::slice::from_ref(&call)),
            CallVerdict::Answer { .. }
        ));
        assert!(matches!(
            set.before_tool_calls(&[call]),
            CallVerdict::StopTurn { .. }
        ));
        // hello.py is named in the request and missing.
        assert!(set.before_finish(Some("Done.")).is_some());
    }
}
