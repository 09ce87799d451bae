//! Turn inspectors that help a weak model (the embedded local one) finish its work; a tool
//! profile asks for them by [`osprey_tools::TurnAid`]:
//!
//! - [`LoopGuard`] ends a turn when the model repeats a call it already made with nothing
//!   changed in between (`[local_model] loop_guard`; the repeat nudge in `repeat_nudge.rs`
//!   answers the first such repeat before the guard sees it);
//! - [`FinishNudge`] asks for a call when the model ends its turn early — describing a call
//!   instead of making it, or leaving a file change unchecked — and requires a call in the
//!   next answer;
//! - [`ProjectFiles`] shows the first levels of the working directory, and the commands on
//!   `PATH`, when a thread starts.
//!
//! Hosted models get none of these: they rerun commands on purpose and explore on their own.

use std::collections::HashSet;
use std::path::Path;

use osprey_model::{Prompt, ToolChoice};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use osprey_tools::names::SHELL_COMMAND;

use super::{CallVerdict, TurnInspector, TurnStart, WRITING_TOOLS};
use crate::tools::call::{ToolCall, ToolOutput};

/// Ends a turn of the local model when it repeats a call (same tool, same arguments) made
/// earlier in the turn since the last file write. Not only "twice in a row": the model was
/// seen alternating `python hello.py` and `sudo python hello.py` for minutes. A write in
/// between makes a rerun legitimate (run the test, fix the code, run the test again).
#[derive(Default)]
pub(crate) struct LoopGuard {
    seen: HashSet<(String, String)>,
}

impl TurnInspector for LoopGuard {
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        match self.repeated(calls) {
            None => CallVerdict::Run,
            Some(name) => CallVerdict::StopTurn {
                // A small model that repeats itself will not get further.
                output: ToolOutput::failure(
                    "not run: this exact call was already made in this turn",
                ),
                warning: format!(
                    "Stopped: the model repeated an earlier `{name}` call with the same arguments, so the task may be incomplete."
                ),
            },
        }
    }
}

impl LoopGuard {
    /// The name of a call in `calls` that repeats an earlier one; remembers the rest.
    pub(crate) fn repeated(&mut self, calls: &[ToolCall]) -> Option<String> {
        let keys: Vec<(String, String)> = calls.iter().map(call_key).collect();
        if let Some((name, _)) = keys.iter().find(|k| self.seen.contains(*k)) {
            return Some(name.clone());
        }
        if calls
            .iter()
            .any(|c| WRITING_TOOLS.contains(&c.tool_name.as_str()))
        {
            self.seen.clear();
        }
        self.seen.extend(keys);
        None
    }
}

/// What makes two calls the same call: the tool and its arguments, as the model sent them.
pub(crate) fn call_key(call: &ToolCall) -> (String, String) {
    (call.tool_name.clone(), format!("{:?}", call.payload))
}

/// Reminds the local model when it ends its turn too early, which a small model often
/// does with the task half done:
/// - its answer describes a call instead of making it ("To run the tests I would call
///   shell_command with …");
/// - a file the request names ("create add.py and test_add.py") does not exist;
/// - it changed files and ran nothing since, so the change is unchecked.
///
/// Each reminder is given at most once per turn, and the answer after it must be a call
/// (`tool_choice = "required"`, which the grammar enforces).
pub(crate) struct FinishNudge {
    tool_names: Vec<String>,
    /// Files the request names, as paths under the working directory.
    named_files: Vec<(String, std::path::PathBuf)>,
    narrated: bool,
    reminded_of_files: bool,
    /// The calls being run include a file write.
    batch_writes: bool,
    unchecked_write: bool,
    reminded_to_check: bool,
    /// The batch being run: its write calls (id, tool), and whether a file was unchecked
    /// before it and a command runs in it — to undo "unchecked" when every write failed.
    batch: BatchWrites,
    /// The last writes all failed (`edit_file`'s `old` not found, …) and nothing was written
    /// since: the tool that failed.
    failed_write: Option<String>,
    reminded_of_failure: bool,
    /// A reminder was just given: the next answer must be a call.
    require_call: bool,
}

/// What [`FinishNudge::observe`] saw of a batch's writes, for [`FinishNudge::annotate`].
#[derive(Default)]
struct BatchWrites {
    writes: Vec<(String, String)>,
    unchecked_before: bool,
    runs_command: bool,
}

/// Whether a write's result says it changed files (the patch summary every write ends in).
fn write_took_effect(output: &str) -> bool {
    output.contains(osprey_apply_patch::SUCCESS_HEADER)
}

impl TurnInspector for FinishNudge {
    fn before_request(&mut self, prompt: &mut Prompt) {
        if std::mem::take(&mut self.require_call) {
            prompt.tool_choice = ToolChoice::Required;
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.observe(calls);
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        self.note_write_results(outputs);
        self.annotate(outputs);
    }

    fn before_finish(&mut self, answer: Option<&str>) -> Option<ResponseItem> {
        let reminder = self.check(answer)?;
        self.require_call = true;
        Some(reminder)
    }
}

impl FinishNudge {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        let cwd = start.cwd;
        Self {
            tool_names: start.tool_names.to_vec(),
            named_files: file_names_in(start.request)
                .into_iter()
                .map(|name| {
                    let path = cwd.join(&name);
                    (name, path)
                })
                .collect(),
            narrated: false,
            reminded_of_files: false,
            batch_writes: false,
            unchecked_write: false,
            reminded_to_check: false,
            batch: BatchWrites::default(),
            failed_write: None,
            reminded_of_failure: false,
            require_call: false,
        }
    }

    /// Notes the calls about to run: a write leaves the files unchecked until a command runs.
    pub(crate) fn observe(&mut self, calls: &[ToolCall]) {
        self.batch_writes = false;
        self.batch = BatchWrites {
            unchecked_before: self.unchecked_write,
            ..BatchWrites::default()
        };
        for call in calls {
            if WRITING_TOOLS.contains(&call.tool_name.as_str()) {
                self.unchecked_write = true;
                self.batch_writes = true;
                self.batch
                    .writes
                    .push((call.call_id.clone(), call.tool_name.clone()));
            } else if call.tool_name == SHELL_COMMAND {
                self.unchecked_write = false;
                self.batch.runs_command = true;
            }
        }
    }

    /// After the batch ran: when every write in it failed, nothing changed — the files are
    /// as checked (or unchecked) as before, and the failure is remembered for the finish.
    fn note_write_results(&mut self, outputs: &[ResponseItem]) {
        let batch = std::mem::take(&mut self.batch);
        let results: Vec<(&str, bool)> = batch
            .writes
            .iter()
            .filter_map(|(id, tool)| {
                outputs.iter().find_map(|item| match item {
                    ResponseItem::FunctionCallOutput { call_id, output } if call_id == id => {
                        Some((tool.as_str(), write_took_effect(&output.text())))
                    }
                    _ => None,
                })
            })
            .collect();
        if results.iter().any(|(_, written)| *written) {
            self.failed_write = None;
        } else if let Some((tool, _)) = results.last() {
            self.failed_write = Some((*tool).to_string());
            self.unchecked_write = batch.unchecked_before && !batch.runs_command;
        }
    }

    /// After a batch with a file write, notes in the last output which files the request
    /// names that still do not exist: the model reads its latest tool result far more
    /// reliably than the request several messages up.
    pub(crate) fn annotate(&self, outputs: &mut [ResponseItem]) {
        if !self.batch_writes {
            return;
        }
        let missing = self.missing_files();
        if missing.is_empty() {
            return;
        }
        if let Some(ResponseItem::FunctionCallOutput { output, .. }) = outputs
            .iter_mut()
            .rev()
            .find(|item| matches!(item, ResponseItem::FunctionCallOutput { .. }))
        {
            let text = format!(
                "{}\n\nStill missing (named in the task): {}",
                output.text(),
                missing.join(", ")
            );
            *output = FunctionCallOutputPayload::from(text);
        }
    }

    fn missing_files(&self) -> Vec<&str> {
        self.named_files
            .iter()
            .filter(|(_, path)| !path.exists())
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// The reminder to record before asking again, when `answer` (a final answer with no
    /// call) ends the turn too early; `None` when the turn may end.
    pub(crate) fn check(&mut self, answer: Option<&str>) -> Option<ResponseItem> {
        if !self.narrated
            && let Some(tool) = answer.and_then(|answer| {
                self.tool_names
                    .iter()
                    .find(|name| mentions(answer, name))
                    .cloned()
            })
        {
            self.narrated = true;
            return Some(ResponseItem::user_text(format!(
                "You described a `{tool}` call but did not make it. Make the call now."
            )));
        }
        if !self.reminded_of_files {
            let missing = self.missing_files().join(", ");
            if !missing.is_empty() {
                self.reminded_of_files = true;
                return Some(ResponseItem::user_text(format!(
                    "The task names {missing}, which does not exist yet. Create it now."
                )));
            }
        }
        if let Some(tool) = self.failed_write.as_deref()
            && !self.reminded_of_failure
        {
            self.reminded_of_failure = true;
            return Some(ResponseItem::user_text(format!(
                "Your last `{tool}` call failed, so no file was changed. Its result says why \
                 and what to send instead. Make the change now."
            )));
        }
        if self.unchecked_write && !self.reminded_to_check {
            self.reminded_to_check = true;
            return Some(ResponseItem::user_text(
                "You changed files but ran nothing since. Run the program or its tests with \
                 shell_command now to check that the change works.",
            ));
        }
        None
    }
}

/// Relative file names in a request ("create add.py and test_add.py" → both): a word with a
/// name part holding a letter and a short alphanumeric extension. Absolute paths, URLs and
/// abbreviations ("e.g.") are not taken.
pub(super) fn file_names_in(request: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for word in request.split(|c: char| c.is_whitespace() || ",;:()[]{}<>`'\"!?".contains(c)) {
        let word = word.trim_end_matches('.');
        let Some((stem, extension)) = word.rsplit_once('.') else {
            continue;
        };
        let stem_ok = stem.len() >= 2
            && stem.chars().any(char::is_alphabetic)
            && stem
                .chars()
                .all(|c| c.is_alphanumeric() || "_-/.".contains(c))
            && !stem.starts_with('/')
            && !stem.contains("//");
        let extension_ok = (1..=5).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
            && extension.chars().any(|c| c.is_ascii_alphabetic());
        if stem_ok && extension_ok && !names.iter().any(|n| n == word) {
            names.push(word.to_string());
        }
    }
    names
}

/// True when `name` occurs in `text` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

/// Most entries of the file listing shown at the start of a local-model thread.
const OVERVIEW_ENTRIES: usize = 60;

/// Interpreters and build tools a task is likely to need; the ones on `PATH` are named at
/// the start of a thread (the model assumes `python` and `pip` exist where only `python3`
/// and `pip3` do).
const COMMON_COMMANDS: [&str; 14] = [
    "python3", "python", "pip3", "pip", "pytest", "node", "npm", "cargo", "go", "java", "gcc",
    "make", "git", "rg",
];

/// Adds the file listing to a new thread's first messages.
pub(crate) struct ProjectFiles;

impl TurnInspector for ProjectFiles {
    fn initial_context(&self, start: &TurnStart<'_>) -> Vec<ResponseItem> {
        vec![project_files_message(start.cwd, start.command_path)]
    }
}

/// A user-context message listing the first two levels of `cwd`, and which common commands
/// exist on `path` (the commands' `PATH`).
pub(crate) fn project_files_message(cwd: &Path, path: Option<&str>) -> ResponseItem {
    let (entries, cut) = osprey_tools::project_overview(cwd, 2, OVERVIEW_ENTRIES);
    let mut text = String::from("<files>\n");
    if entries.is_empty() {
        text.push_str("(the working directory is empty)\n");
    }
    for entry in &entries {
        text.push_str(entry);
        text.push('\n');
    }
    if cut {
        text.push_str("(more files not shown; use list_dir)\n");
    }
    text.push_str("</files>");
    let dirs: Vec<std::path::PathBuf> = path
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    let present: Vec<&str> = COMMON_COMMANDS
        .into_iter()
        .filter(|name| dirs.iter().any(|dir| dir.join(name).is_file()))
        .collect();
    if !present.is_empty() {
        text.push_str("\nCommands available: ");
        text.push_str(&present.join(", "));
        let missing_python = !present.contains(&"python") && present.contains(&"python3");
        if missing_python {
            text.push_str(" (use python3: there is no python)");
        }
        text.push('.');
    }
    ResponseItem::user_text(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call::ToolPayload;
    use pretty_assertions::assert_eq;

    fn call(id: &str, tool: &str, arguments: &str) -> ToolCall {
        ToolCall {
            call_id: id.to_string(),
            tool_name: tool.to_string(),
            payload: ToolPayload::Function {
                arguments: arguments.to_string(),
            },
        }
    }

    #[test]
    fn loop_guard_stops_a_repeat_with_nothing_changed_in_between() {
        let mut guard = LoopGuard::default();
        let run = r#"{"command":"python hello.py"}"#;
        assert_eq!(guard.repeated(&[call("a", "shell_command", run)]), None);
        assert_eq!(guard.repeated(&[call("b", "shell_command", "{}")]), None);
        // Not only twice in a row: anywhere since the last write.
        assert_eq!(
            guard.repeated(&[call("c", "shell_command", run)]),
            Some("shell_command".to_string())
        );
    }

    #[test]
    fn loop_guard_allows_a_rerun_after_a_write() {
        let mut guard = LoopGuard::default();
        let test = r#"{"command":"python3 -m unittest"}"#;
        let fix = r#"{"path":"a.py","content":"x = 1\n"}"#;
        assert_eq!(guard.repeated(&[call("a", "shell_command", test)]), None);
        assert_eq!(guard.repeated(&[call("b", "write_file", fix)]), None);
        assert_eq!(guard.repeated(&[call("c", "shell_command", test)]), None);
        // Writing the same content again changes nothing: that is a loop.
        assert_eq!(
            guard.repeated(&[call("d", "write_file", fix)]),
            Some("write_file".to_string())
        );
    }

    #[test]
    fn an_edit_is_a_write_for_the_loop_guard_and_the_finish_nudge() {
        let mut guard = LoopGuard::default();
        let test = r#"{"command":"node max.js"}"#;
        let edit = r#"{"path":"max.js","old":"a < b","new":"a > b"}"#;
        assert_eq!(guard.repeated(&[call("a", "shell_command", test)]), None);
        assert_eq!(guard.repeated(&[call("b", "edit_file", edit)]), None);
        assert_eq!(guard.repeated(&[call("c", "shell_command", test)]), None);
        assert_eq!(
            guard.repeated(&[call("d", "edit_file", edit)]),
            Some("edit_file".to_string())
        );

        let mut nudge = nudge();
        nudge.observe(&[call("e", "edit_file", edit)]);
        let reminder = nudge.check(Some("Done.")).unwrap();
        assert!(reminder.message_text().unwrap().contains("Run the program"));
    }

    #[test]
    fn loop_guard_stops_the_turn_with_a_failed_output_and_a_warning() {
        let mut guard = LoopGuard::default();
        let test = r#"{"command":"make test"}"#;
        assert!(matches!(
            guard.before_tool_calls(&[call("a", "shell_command", test)]),
            CallVerdict::Run
        ));
        let CallVerdict::StopTurn { output, warning } =
            guard.before_tool_calls(&[call("b", "shell_command", test)])
        else {
            panic!("a repeat stops the turn");
        };
        assert!(!output.success);
        assert!(warning.contains("`shell_command`"), "{warning}");
    }

    fn nudge() -> FinishNudge {
        FinishNudge {
            tool_names: vec!["shell_command".into(), "write_file".into()],
            named_files: Vec::new(),
            narrated: false,
            reminded_of_files: false,
            batch_writes: false,
            unchecked_write: false,
            reminded_to_check: false,
            batch: BatchWrites::default(),
            failed_write: None,
            reminded_of_failure: false,
            require_call: false,
        }
    }

    fn output(id: &str, text: &str) -> ResponseItem {
        ResponseItem::FunctionCallOutput {
            call_id: id.into(),
            output: FunctionCallOutputPayload::from(text.to_string()),
        }
    }

    #[test]
    fn a_failed_edit_is_not_a_change_and_ends_the_turn_only_after_one_reminder() {
        let mut nudge = nudge();
        nudge.before_tool_calls(&[call("e", "edit_file", "{}")]);
        nudge.after_tool_outputs(&mut [output(
            "e",
            "edit_file: ci.yml was not changed: `old` does not occur in the file.",
        )]);
        let reminder = nudge.before_finish(Some("Done.")).unwrap();
        assert_eq!(
            reminder.message_text().unwrap(),
            "Your last `edit_file` call failed, so no file was changed. Its result says why and \
             what to send instead. Make the change now."
        );
        assert_eq!(
            nudge.check(Some("Done.")),
            None,
            "no \"you changed files\": none changed"
        );
        // A write that took effect clears the failure and leaves the file unchecked.
        let mut nudge = self::nudge();
        nudge.before_tool_calls(&[call("e", "edit_file", "{}")]);
        nudge.after_tool_outputs(&mut [output("e", "edit_file: not changed")]);
        nudge.before_tool_calls(&[call("w", "write_file", "{}")]);
        nudge.after_tool_outputs(&mut [output(
            "w",
            "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM a.py\n",
        )]);
        let reminder = nudge.check(Some("Done.")).unwrap();
        assert!(reminder.message_text().unwrap().contains("Run the program"));
    }

    #[test]
    fn a_reminder_requires_a_call_in_the_next_request_only() {
        let mut nudge = nudge();
        nudge.before_tool_calls(&[call("a", "write_file", "{}")]);
        assert!(nudge.before_finish(Some("Done.")).is_some());
        let mut prompt = Prompt::default();
        nudge.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Required);
        let mut next = Prompt::default();
        nudge.before_request(&mut next);
        assert_eq!(next.tool_choice, ToolChoice::Auto);
    }

    #[test]
    fn nudge_asks_once_for_a_call_the_answer_only_described() {
        let mut nudge = nudge();
        assert_eq!(nudge.check(Some("Created add.py.")), None);
        assert_eq!(nudge.check(Some("I ran my_shell_command_x.")), None);
        let reminder = nudge
            .check(Some("To run the tests I would call shell_command."))
            .unwrap();
        assert!(reminder.message_text().unwrap().contains("`shell_command`"));
        assert_eq!(nudge.check(Some("Next I call write_file.")), None, "once");
    }

    #[test]
    fn nudge_asks_once_to_check_an_unchecked_write() {
        let mut nudge = nudge();
        nudge.observe(&[call("a", "write_file", "{}")]);
        nudge.observe(&[call("b", "shell_command", "{}")]);
        assert_eq!(nudge.check(Some("Done.")), None, "checked after the write");
        nudge.observe(&[call("c", "write_file", "{}")]);
        let reminder = nudge.check(Some("Done.")).unwrap();
        assert!(reminder.message_text().unwrap().contains("Run the program"));
        assert_eq!(nudge.check(Some("Done.")), None, "once");
    }

    #[test]
    fn file_names_are_read_from_the_request() {
        assert_eq!(
            file_names_in(
                "Create add.py with a function add(a, b), and test_add.py (see docs/notes.md). \
                 Then run python3 -m unittest, e.g. twice; version 3.11 at https://x.org/a.html."
            ),
            ["add.py", "test_add.py", "docs/notes.md"]
        );
    }

    #[test]
    fn nudge_asks_once_for_named_files_that_do_not_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("add.py"), "").unwrap();
        let mut nudge = FinishNudge {
            named_files: ["add.py", "test_add.py"]
                .map(|n| (n.to_string(), dir.path().join(n)))
                .to_vec(),
            ..nudge()
        };
        let reminder = nudge.check(Some("Done.")).unwrap();
        assert_eq!(
            reminder.message_text().unwrap(),
            "The task names test_add.py, which does not exist yet. Create it now."
        );
        assert_eq!(nudge.check(Some("Done.")), None, "once");

        // After a write, the last tool result says what is still missing.
        nudge.observe(&[call("w", "write_file", "{}")]);
        let mut outputs = vec![ResponseItem::FunctionCallOutput {
            call_id: "w".into(),
            output: FunctionCallOutputPayload::from("Wrote add.py".to_string()),
        }];
        nudge.annotate(&mut outputs);
        let ResponseItem::FunctionCallOutput { output, .. } = &outputs[0] else {
            panic!("an output")
        };
        assert_eq!(
            output.text(),
            "Wrote add.py\n\nStill missing (named in the task): test_add.py"
        );
        nudge.observe(&[call("r", "shell_command", "{}")]);
        let before = outputs.clone();
        nudge.annotate(&mut outputs);
        assert_eq!(outputs, before, "only after writes");
    }

    #[test]
    fn files_message_lists_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("deploy")).unwrap();
        std::fs::write(dir.path().join("deploy/service.toml"), "port = 1\n").unwrap();
        let text = project_files_message(dir.path(), None)
            .message_text()
            .unwrap();
        assert_eq!(text, "<files>\ndeploy/\ndeploy/service.toml\n</files>");
        let empty = tempfile::tempdir().unwrap();
        let text = project_files_message(empty.path(), None)
            .message_text()
            .unwrap();
        assert!(text.contains("empty"), "{text}");

        let bin = tempfile::tempdir().unwrap();
        for name in ["python3", "git"] {
            std::fs::write(bin.path().join(name), "").unwrap();
        }
        let path = bin.path().display().to_string();
        let text = project_files_message(empty.path(), Some(&path))
            .message_text()
            .unwrap();
        assert!(
            text.ends_with("Commands available: python3, git (use python3: there is no python)."),
            "{text}"
        );
    }
}
