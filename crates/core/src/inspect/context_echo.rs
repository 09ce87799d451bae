//! [`ContextEcho`] (`context_echo`): a `write_file` or `edit_file` whose new text copies
//! the context the harness sent the model — the `<environment_context>` block, the AGENTS.md
//! block — is not made; the result says what was copied and asks for the file's own content.
//! Nothing is refused when the request or the file itself already holds such text (a project
//! that works on these formats), so a write that needs these lines is never blocked; any
//! other write holding them is refused every time (on 2026-12-06 the model sent the same
//! copy again after the first refusal, and the copy was written).
//!
//! Seen on 2026-12-06 (task agents): asked to create greet.py in a repository whose AGENTS.md
//! requires an SPDX first line, the model wrote the SPDX line and then its whole prompt —
//! the AGENTS.md block, the environment block, the file list, the request — and no function;
//! `python3 greet.py` failed on `<current_date>2026-12-06</current_date>`.

use std::collections::HashSet;
use std::path::PathBuf;

use osprey_tools::names::{EDIT_FILE, WRITE_FILE};

use super::write_aids::{normal, read_small_text, resolve, string_argument};
use super::{CallVerdict, TurnInspector, TurnStart};
use crate::tools::call::{ToolCall, ToolOutput};

/// Line starts that only the harness's own context has.
const MARKERS: [&str; 7] = [
    "<environment_context>",
    "</environment_context>",
    "<INSTRUCTIONS>",
    "</INSTRUCTIONS>",
    "# AGENTS.md instructions for ",
    "<current_date>",
    "<sandbox_mode>",
];

/// Refuses a write that copies the harness's context.
pub(crate) struct ContextEcho {
    cwd: PathBuf,
    /// The request holds a marker itself: the user works on such text.
    request_has_marker: bool,
    /// Files refused in this turn: a second refusal says so.
    refused: HashSet<PathBuf>,
}

impl ContextEcho {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            request_has_marker: mentions_a_marker(start.request),
            refused: HashSet::new(),
        }
    }

    /// The refusal for `call`, when it writes copied context.
    fn check(&mut self, call: &ToolCall) -> Option<String> {
        let new_text = match call.tool_name.as_str() {
            WRITE_FILE => string_argument(call, "content")?,
            EDIT_FILE => string_argument(call, "new")?,
            _ => return None,
        };
        if self.request_has_marker {
            return None;
        }
        let marker = first_marker(&new_text)?;
        let path = string_argument(call, "path")?;
        let target = normal(&resolve(&self.cwd, &path));
        let file_has_it = read_small_text(&target).is_some_and(|now| mentions_a_marker(&now));
        if file_has_it {
            return None;
        }
        let again = if self.refused.insert(target) {
            ""
        } else {
            " again"
        };
        Some(format!(
            "Not written{again}: this text copies the context you were given (the line \
             starting `{marker}`), which is not part of {path}. Write {path} again with only \
             its own content: the code or text the task asks for, plus what the AGENTS.md \
             rules require of the file — not the rules themselves."
        ))
    }
}

/// Whether `text` holds a marker anywhere (a request or a file that works on such text).
fn mentions_a_marker(text: &str) -> bool {
    MARKERS
        .iter()
        .any(|marker| text.contains(marker.trim_end()))
}

/// The first marker a line of `text` starts with.
fn first_marker(text: &str) -> Option<&'static str> {
    text.lines().find_map(|line| {
        let line = line.trim_start();
        MARKERS
            .iter()
            .copied()
            .find(|marker| line.starts_with(marker))
    })
}

impl TurnInspector for ContextEcho {
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        let outputs: Vec<(String, ToolOutput)> = calls
            .iter()
            .filter_map(|c| Some((c.call_id.clone(), ToolOutput::failure(self.check(c)?))))
            .collect();
        CallVerdict::answering(outputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{call, start};
    use pretty_assertions::assert_eq;

    const ECHO: &str = "# SPDX-License-Identifier: MIT\n\n# AGENTS.md instructions for /tmp/x\n\n\
                        <INSTRUCTIONS>\nEvery Python file must start with this line.\n\
                        </INSTRUCTIONS>\n<environment_context>\n  <cwd>/tmp/x</cwd>\n  \
                        <current_date>2026-12-06</current_date>\n</environment_context>\n";

    fn refused(verdict: CallVerdict) -> Vec<(String, String)> {
        match verdict {
            CallVerdict::Run => Vec::new(),
            CallVerdict::Answer { outputs } => outputs
                .into_iter()
                .map(|(id, output)| (id, output.text()))
                .collect(),
            CallVerdict::StopTurn { .. } => panic!("a refusal never stops the turn"),
        }
    }

    #[test]
    fn a_write_that_copies_the_context_is_refused_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let mut aid = ContextEcho::new(&start("Create greet.py with greet(name).", dir.path()));
        let write = call(
            "w1",
            WRITE_FILE,
            serde_json::json!({"path": "greet.py", "content": ECHO}),
        );
        let ok = call(
            "w2",
            WRITE_FILE,
            serde_json::json!({"path": "other.py", "content": "def greet(name):\n    pass\n"}),
        );
        assert_eq!(
            refused(aid.before_tool_calls(&[write.clone(), ok])),
            [(
                "w1".to_string(),
                "Not written: this text copies the context you were given (the line starting \
                 `# AGENTS.md instructions for `), which is not part of greet.py. Write \
                 greet.py again with only its own content: the code or text the task asks \
                 for, plus what the AGENTS.md rules require of the file — not the rules \
                 themselves."
                    .to_string()
            )]
        );
        let again = refused(aid.before_tool_calls(&[write]));
        assert!(again[0].1.starts_with("Not written again: "), "{again:?}");
        // An edit's new text counts too.
        let edit = call(
            "e1",
            EDIT_FILE,
            serde_json::json!({"path": "util.py", "old": "x = 1", "new": "<current_date>x"}),
        );
        assert_eq!(refused(aid.before_tool_calls(&[edit])).len(), 1);
    }

    #[test]
    fn nothing_is_refused_where_the_request_or_the_file_has_such_text() {
        let dir = tempfile::tempdir().unwrap();
        let write = call(
            "w1",
            WRITE_FILE,
            serde_json::json!({"path": "prompt.txt", "content": ECHO}),
        );
        let request = "Add a <current_date> line to the template in prompt.txt.";
        let mut aid = ContextEcho::new(&start(request, dir.path()));
        assert_eq!(
            refused(aid.before_tool_calls(std::slice::from_ref(&write))),
            []
        );

        std::fs::write(dir.path().join("prompt.txt"), "<environment_context>\n").unwrap();
        let mut aid = ContextEcho::new(&start("Update prompt.txt.", dir.path()));
        assert_eq!(refused(aid.before_tool_calls(&[write])), []);

        // A tag that merely resembles one, inside a line, is not a copy.
        let html = call(
            "w2",
            WRITE_FILE,
            serde_json::json!({"path": "a.html", "content": "<p>see <INSTRUCTIONS></p>\n"}),
        );
        assert_eq!(refused(aid.before_tool_calls(&[html])), []);
    }
}
