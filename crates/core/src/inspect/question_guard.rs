//! Questions change no files: when the request asks a question and asks for no change, the
//! first write of the turn is not made, and its result says to read and answer instead.
//!
//! Seen on 2026-12-05: asked "In which file is the function parse_header defined?", the
//! local model edited app.py (breaking it) and answered about that; asked how many rows of
//! sales.csv have the region north, it rewrote sales.csv twice. One refusal is enough to
//! turn it back to reading; a second write goes through, so a request the check misreads
//! (a change phrased as a question in words it does not know) is delayed, never blocked.

use super::check_aids::is_question;
use super::{CallVerdict, TurnInspector, TurnStart, WRITING_TOOLS};
use crate::tools::call::{ToolCall, ToolOutput};

/// Words that ask for a change; a question holding one ("Can you add a test?") may write.
const CHANGE_WORDS: [&str; 28] = [
    "add",
    "append",
    "bump",
    "change",
    "convert",
    "create",
    "delete",
    "edit",
    "fix",
    "generate",
    "implement",
    "insert",
    "make",
    "modify",
    "move",
    "patch",
    "put",
    "refactor",
    "remove",
    "rename",
    "replace",
    "rewrite",
    "save",
    "set",
    "store",
    "update",
    "upgrade",
    "write",
];

/// Refuses the first write of a turn whose request is a question asking for no change.
pub(crate) struct QuestionReadOnly {
    applies: bool,
    refused: bool,
}

impl QuestionReadOnly {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            applies: is_question(start.request) && !asks_for_change(start.request),
            refused: false,
        }
    }
}

impl TurnInspector for QuestionReadOnly {
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        if !self.applies || self.refused {
            return CallVerdict::Run;
        }
        let writes: Vec<&ToolCall> = calls
            .iter()
            .filter(|c| WRITING_TOOLS.contains(&c.tool_name.as_str()))
            .collect();
        if writes.is_empty() {
            return CallVerdict::Run;
        }
        self.refused = true;
        let outputs = writes
            .into_iter()
            .map(|call| {
                (
                    call.call_id.clone(),
                    ToolOutput::failure(
                        "Not written: the user asked a question, and answering it changes no \
                         file. Find the answer in the project's files (read_file, or a command \
                         such as grep), then reply with it.",
                    ),
                )
            })
            .collect();
        CallVerdict::Answer { outputs }
    }
}

/// True when a word of `request` asks for a change to files.
pub(super) fn asks_for_change(request: &str) -> bool {
    request
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| CHANGE_WORDS.contains(&word.to_lowercase().as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support;

    fn start(request: &str) -> TurnStart<'_> {
        test_support::start(request, std::path::Path::new("/nonexistent"))
    }

    fn call(id: &str, tool: &str) -> ToolCall {
        test_support::call(id, tool, serde_json::json!({}))
    }

    #[test]
    fn the_first_write_of_a_question_is_refused_and_a_second_goes_through() {
        let mut guard = QuestionReadOnly::new(&start(
            "In which file is the function parse_header defined?",
        ));
        assert!(matches!(
            guard.before_tool_calls(&[call("r", "read_file")]),
            CallVerdict::Run
        ));
        let CallVerdict::Answer { outputs } =
            guard.before_tool_calls(&[call("l", "list_dir"), call("e", "edit_file")])
        else {
            panic!("the edit is refused");
        };
        assert_eq!(outputs.len(), 1, "only the write: {outputs:?}");
        assert_eq!(outputs[0].0, "e");
        assert!(outputs[0].1.text.contains("asked a question"));
        assert!(matches!(
            guard.before_tool_calls(&[call("w", "write_file")]),
            CallVerdict::Run
        ));
    }

    #[test]
    fn requests_that_ask_for_a_change_may_write() {
        for request in [
            "Can you add a test for parse_header?",
            "Create hello.py that prints hello.",
            "Why does this fail? Fix it.",
            "Rename calc_tax to compute_tax.",
        ] {
            let mut guard = QuestionReadOnly::new(&start(request));
            assert!(
                matches!(
                    guard.before_tool_calls(&[call("w", "write_file")]),
                    CallVerdict::Run
                ),
                "{request}"
            );
        }
    }
}
