//! The repeat nudge: the first time the local model repeats a call it already made, with no
//! file written since, the call is not run; its result gives back the earlier result and says
//! what to do instead. Only a second repeat reaches the loop guard, which ends the turn.
//!
//! Seen on 2026-12-05 in five of seventeen tasks: the model read the file that held the
//! answer and then asked for the same read again, or retried an `edit_file` whose `old` the
//! result had just said was not in the file (it was quoted in the file). The loop guard ended
//! each of those turns one step in. Given its earlier result back with "do not repeat it", the
//! model has one more chance to use what it already has.
//!
//! One repeat is made instead of answered: an `edit_file` whose `old` is not in the file,
//! when its failure offered the one-line edit that makes the asked change on the closest
//! line ("call edit_file again with old: python-version: \"3.10\" …"). The model sending its
//! own call again means it wants that change and cannot copy the correction, so the repeat
//! is run with the offered `old` and `new` (worked out afresh from the file, which no write
//! has changed since, nor does an earlier call of the same batch) and its result says so.
//! Seen on 2026-12-07 (yaml): the model sent `old: python-version: 3.10` three times
//! against a file quoting `"3.10"`, and the loop guard ended the turn.
//! ([`super::quoted_arguments`] does the same for a one-line program it re-quoted.)

use std::collections::HashMap;
use std::path::PathBuf;

use osprey_protocol::ResponseItem;
use osprey_tools::names::EDIT_FILE;

use super::local_aids::call_key;
use super::write_aids::{read_small_text, resolve};
use super::{CallVerdict, TurnInspector, TurnStart, WRITING_TOOLS, append_note};
use crate::tools::call::{ToolCall, ToolOutput, ToolPayload};

/// Most characters of an earlier result repeated in the nudge.
const EARLIER_RESULT_CHARS: usize = 1500;

/// Answers the first repeated call of a turn with its earlier result instead of running it.
#[derive(Default)]
pub(crate) struct RepeatNudge {
    cwd: PathBuf,
    /// Calls made since the last write, by (tool, arguments), with their results once known.
    results: HashMap<(String, String), Option<String>>,
    /// Calls now running, by call id, waiting for their results.
    running: HashMap<String, (String, String)>,
    /// Repeated edits of the running batch made with the offered correction, by call id:
    /// the note for their results.
    corrected: HashMap<String, String>,
    nudged: bool,
}

impl RepeatNudge {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            ..Self::default()
        }
    }

    /// A repeated failed `edit_file`'s arguments with the one-line edit its failure offered
    /// (worked out again from the file), and the note saying so; `None` for any other call.
    fn correction(&self, call: &ToolCall) -> Option<(String, String)> {
        if call.tool_name != EDIT_FILE {
            return None;
        }
        let earlier = self.results.get(&call_key(call))?.as_deref()?;
        if !earlier.contains("call edit_file again with") {
            return None;
        }
        let ToolPayload::Function { arguments } = &call.payload else {
            return None;
        };
        let mut value: serde_json::Value = serde_json::from_str(arguments).ok()?;
        let fields = value.as_object_mut()?;
        let path = fields.get("path")?.as_str()?;
        let text = read_small_text(&resolve(&self.cwd, path))?;
        let old = fields.get("old")?.as_str()?;
        let new = fields.get("new")?.as_str()?;
        let Err(osprey_tools::SpanEditError::NotFound {
            suggestion: Some((old, new)),
            ..
        }) = osprey_tools::replace_span(&text, old, new)
        else {
            return None;
        };
        let note = format!(
            "Your call repeated an edit_file that had failed, so this time it used the `old` \
             and `new` that failure offered: old `{old}`, new `{new}`."
        );
        fields.insert("old".to_string(), serde_json::Value::String(old));
        fields.insert("new".to_string(), serde_json::Value::String(new));
        Some((value.to_string(), note))
    }
}

impl TurnInspector for RepeatNudge {
    fn adjust_calls(&mut self, calls: &mut [ToolCall]) {
        self.corrected.clear();
        for index in 0..calls.len() {
            // A write earlier in the batch may change the file the correction was read from.
            let written_before = calls[..index]
                .iter()
                .any(|c| WRITING_TOOLS.contains(&c.tool_name.as_str()));
            let call = &mut calls[index];
            if written_before {
                break;
            }
            if let Some((arguments, note)) = self.correction(call) {
                call.payload = ToolPayload::Function { arguments };
                self.corrected.insert(call.call_id.clone(), note);
            }
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        if self.nudged {
            // Once per turn: a second repeat is the loop guard's to stop. The calls are still
            // tracked, so a write clears what earlier results offered.
            self.track(&calls.iter().collect::<Vec<_>>());
            return CallVerdict::Run;
        }
        let (repeats, fresh): (Vec<&ToolCall>, Vec<&ToolCall>) = calls
            .iter()
            .partition(|call| self.results.contains_key(&call_key(call)));
        if repeats.is_empty() {
            self.track(&fresh);
            return CallVerdict::Run;
        }
        self.nudged = true;
        self.track(&fresh);
        let outputs = repeats
            .into_iter()
            .map(|call| {
                let earlier = self.results.get(&call_key(call)).cloned().flatten();
                (call.call_id.clone(), ToolOutput::failure(nudge(earlier)))
            })
            .collect();
        CallVerdict::Answer { outputs }
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        for item in outputs.iter_mut() {
            let ResponseItem::FunctionCallOutput { call_id, output } = item else {
                continue;
            };
            if let Some(key) = self.running.remove(call_id.as_str()) {
                self.results.insert(key, Some(output.text().to_string()));
            }
            if let Some(note) = self.corrected.remove(call_id.as_str()) {
                append_note(output, &note);
            }
        }
    }
}

impl RepeatNudge {
    /// Remembers the calls about to run; a write among them starts the count afresh, as it
    /// does for the loop guard (rerunning a test after a fix is no repeat).
    fn track(&mut self, calls: &[&ToolCall]) {
        if calls
            .iter()
            .any(|c| WRITING_TOOLS.contains(&c.tool_name.as_str()))
        {
            self.results.clear();
        }
        for call in calls {
            let key = call_key(call);
            self.running.insert(call.call_id.clone(), key.clone());
            self.results.insert(key, None);
        }
    }
}

/// The result of a repeated call: what it gave before, and what to do instead.
fn nudge(earlier: Option<String>) -> String {
    let mut text = String::from(
        "Not run: you already made this exact call in this task and no file has changed \
         since, so it would give the same result again.",
    );
    match earlier {
        Some(result) => {
            text.push_str(" Its result was:\n");
            let cut: String = result.chars().take(EARLIER_RESULT_CHARS).collect();
            text.push_str(&cut);
            if cut.len() < result.len() {
                text.push_str("\n(… the rest is in the earlier result)");
            }
            text.push_str(
                "\n\nDo not repeat the call. If that result is an error, change the \
                 arguments as it says. If it holds what you need, take the next step, or \
                 answer the user from it.",
            );
        }
        None => text.push_str(" Do not repeat the call: take the next step instead."),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call::ToolPayload;
    use osprey_protocol::FunctionCallOutputPayload;

    fn call(id: &str, tool: &str, arguments: &str) -> ToolCall {
        ToolCall {
            call_id: id.to_string(),
            tool_name: tool.to_string(),
            payload: ToolPayload::Function {
                arguments: arguments.to_string(),
            },
        }
    }

    fn output(id: &str, text: &str) -> ResponseItem {
        ResponseItem::FunctionCallOutput {
            call_id: id.to_string(),
            output: FunctionCallOutputPayload::from(text.to_string()),
        }
    }

    fn answered(verdict: CallVerdict) -> Vec<(String, ToolOutput)> {
        match verdict {
            CallVerdict::Answer { outputs } => outputs,
            CallVerdict::Run => panic!("the repeat ran"),
            CallVerdict::StopTurn { .. } => panic!("the nudge never stops a turn"),
        }
    }

    #[test]
    fn the_first_repeat_gets_the_earlier_result_back_and_the_second_runs() {
        let mut nudge = RepeatNudge::default();
        let read = r#"{"path":"deploy/service.toml"}"#;
        assert!(matches!(
            nudge.before_tool_calls(&[call("a", "read_file", read)]),
            CallVerdict::Run
        ));
        nudge.after_tool_outputs(&mut [output("a", "L1: port = 8731")]);

        let outputs = answered(nudge.before_tool_calls(&[call("b", "read_file", read)]));
        let [(id, out)] = outputs.as_slice() else {
            panic!("one answer: {outputs:?}");
        };
        assert_eq!(id, "b");
        assert!(!out.success);
        assert!(out.text.contains("L1: port = 8731"), "{}", out.text);
        assert!(out.text.contains("Do not repeat the call"), "{}", out.text);

        // Once per turn: the next repeat is left to the loop guard.
        assert!(matches!(
            nudge.before_tool_calls(&[call("c", "read_file", read)]),
            CallVerdict::Run
        ));
    }

    #[test]
    fn a_failed_edit_repeated_is_answered_with_its_error_and_the_rest_of_the_batch_runs() {
        let mut nudge = RepeatNudge::default();
        let edit = r#"{"path":"ci.yml","old":"python-version: 3.10","new":"x"}"#;
        nudge.before_tool_calls(&[call("a", "edit_file", edit)]);
        nudge.after_tool_outputs(&mut [output(
            "a",
            "`old` does not occur in the file. The lines most like it:\nL10: python-version: \"3.10\"",
        )]);
        let list = r#"{"dir_path":"."}"#;
        let outputs = answered(
            nudge.before_tool_calls(&[call("b", "list_dir", list), call("c", "edit_file", edit)]),
        );
        assert_eq!(outputs.len(), 1, "only the repeat is answered: {outputs:?}");
        assert_eq!(outputs[0].0, "c");
        assert!(outputs[0].1.text.contains("L10: python-version"));
    }

    #[test]
    fn a_write_in_between_makes_a_rerun_no_repeat() {
        let mut nudge = RepeatNudge::default();
        let test = r#"{"command":"python3 -m unittest"}"#;
        nudge.before_tool_calls(&[call("a", "shell_command", test)]);
        nudge.after_tool_outputs(&mut [output("a", "FAILED")]);
        let fix = r#"{"path":"a.py","old":"x","new":"y"}"#;
        assert!(matches!(
            nudge.before_tool_calls(&[call("b", "edit_file", fix)]),
            CallVerdict::Run
        ));
        assert!(matches!(
            nudge.before_tool_calls(&[call("c", "shell_command", test)]),
            CallVerdict::Run
        ));
    }

    #[test]
    fn a_long_earlier_result_is_cut_and_says_so() {
        let mut nudge = RepeatNudge::default();
        let read = r#"{"path":"big.txt"}"#;
        nudge.before_tool_calls(&[call("a", "read_file", read)]);
        nudge.after_tool_outputs(&mut [output("a", &"é".repeat(5000))]);
        let outputs = answered(nudge.before_tool_calls(&[call("b", "read_file", read)]));
        let text = &outputs[0].1.text;
        assert!(text.contains("the rest is in the earlier result"), "{text}");
        assert!(text.chars().count() < EARLIER_RESULT_CHARS + 600);
    }

    #[test]
    fn a_repeated_failed_edit_with_an_offered_correction_is_made_with_it() {
        let dir = crate::inspect::test_support::project(&[(
            "ci.yml",
            "jobs:\n  test:\n    steps:\n      - with:\n          python-version: \"3.10\"\n",
        )]);
        let start = crate::inspect::test_support::start("Change 3.10 to 3.12.", dir.path());
        let mut nudge = RepeatNudge::new(&start);
        let edit = r#"{"path":"ci.yml","old":"python-version: 3.10","new":"python-version: 3.12"}"#;
        let mut first = [call("a", "edit_file", edit)];
        nudge.adjust_calls(&mut first);
        assert_eq!(
            first[0].payload,
            call("a", "edit_file", edit).payload,
            "not a repeat yet"
        );
        nudge.before_tool_calls(&first);
        let text = std::fs::read_to_string(dir.path().join("ci.yml")).unwrap();
        let failure =
            osprey_tools::replace_span(&text, "python-version: 3.10", "python-version: 3.12")
                .unwrap_err()
                .to_string();
        assert!(failure.contains("call edit_file again with"), "{failure}");
        nudge.after_tool_outputs(&mut [output(
            "a",
            &format!("edit_file: ci.yml was not changed: {failure}"),
        )]);

        let mut again = [call("b", "edit_file", edit)];
        nudge.adjust_calls(&mut again);
        let ToolPayload::Function { arguments } = &again[0].payload else {
            panic!("a function call");
        };
        let arguments: serde_json::Value = serde_json::from_str(arguments).unwrap();
        assert_eq!(arguments["old"], "python-version: \"3.10\"");
        assert_eq!(arguments["new"], "python-version: \"3.12\"");
        assert!(
            matches!(nudge.before_tool_calls(&again), CallVerdict::Run),
            "it runs"
        );
        let mut outputs = [output("b", "Success.")];
        nudge.after_tool_outputs(&mut outputs);
        let ResponseItem::FunctionCallOutput { output, .. } = &outputs[0] else {
            panic!("an output");
        };
        assert_eq!(
            output.text(),
            "Success.\n\nYour call repeated an edit_file that had failed, so this time it used \
             the `old` and `new` that failure offered: old `python-version: \"3.10\"`, new \
             `python-version: \"3.12\"`."
        );
    }

    #[test]
    fn no_correction_after_a_write_in_the_same_batch_or_for_an_edit_that_did_not_offer_one() {
        let dir =
            crate::inspect::test_support::project(&[("ci.yml", "python-version: \"3.10\"\n")]);
        let start = crate::inspect::test_support::start("Change 3.10 to 3.12.", dir.path());
        let edit = r#"{"path":"ci.yml","old":"python-version: 3.10","new":"python-version: 3.12"}"#;
        let offered =
            "edit_file: ci.yml was not changed: … call edit_file again with\nold: x\nnew: y";
        let mut nudge = RepeatNudge::new(&start);
        nudge.before_tool_calls(&[call("a", "edit_file", edit)]);
        nudge.after_tool_outputs(&mut [output("a", offered)]);
        let write = r#"{"path":"other.txt","content":"x"}"#;
        let mut batch = [call("b", "write_file", write), call("c", "edit_file", edit)];
        nudge.adjust_calls(&mut batch);
        assert_eq!(
            batch[1].payload,
            call("c", "edit_file", edit).payload,
            "a write came first"
        );

        let mut nudge = RepeatNudge::new(&start);
        nudge.before_tool_calls(&[call("a", "edit_file", edit)]);
        nudge.after_tool_outputs(&mut [output("a", "`old` does not occur in the file.")]);
        let mut again = [call("b", "edit_file", edit)];
        nudge.adjust_calls(&mut again);
        assert_eq!(
            again[0].payload,
            call("b", "edit_file", edit).payload,
            "nothing offered"
        );
    }
}
