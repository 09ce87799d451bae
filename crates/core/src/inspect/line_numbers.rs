//! [`StripLineNumbers`] (`[local_model] strip_line_numbers`): a whole-file write whose text
//! still carries the line numbers `read_file` showed the model is made without them.
//!
//! `read_file` shows each line as `L12: text`. Seen on 2026-12-06 (fix): after reading
//! stats.py the small model wrote it back with every line starting `L1: `, `L2: `, …, and
//! the module no longer imported — a syntax error on line 1 that it then tried to fix by
//! writing the same thing again.
//!
//! Only text whose every non-blank line carries such a number, at least two of them, rising
//! from line to line, is changed — and not when the file being replaced is numbered that way
//! itself. `edit_file` needs nothing here: its span match already ignores these prefixes in
//! `old` and `new` alike. (The refused-write view numbers lines as `12<TAB>text`; that form
//! is not undone, since it is also how ordinary tab-separated data looks.) The result says
//! what was left out, so the model learns the numbers are not part of the file.

use std::path::PathBuf;

use osprey_protocol::ResponseItem;
use osprey_tools::names::WRITE_FILE;

use super::write_aids::{read_small_text, resolve};
use super::{TurnInspector, TurnStart, append_note};
use crate::tools::call::{ToolCall, ToolPayload};

/// The note added to the result of a write made without its line numbers.
const NOTE: &str = "The text you sent had the line numbers read_file shows (`L1: `) at the \
                    start of its lines; they are not part of the file and were left out. Send \
                    file text without them.";

/// Makes whole-file writes without the line-number prefixes the model copied from
/// `read_file`.
pub(crate) struct StripLineNumbers {
    cwd: PathBuf,
    /// Calls of the running batch that were changed.
    changed: Vec<String>,
}

impl StripLineNumbers {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            changed: Vec::new(),
        }
    }

    /// The call's arguments with the numbers left out, when it writes numbered text over a
    /// file (or to a new file) that is not numbered itself.
    fn stripped(&self, call: &ToolCall) -> Option<serde_json::Value> {
        if call.tool_name != WRITE_FILE {
            return None;
        }
        let ToolPayload::Function { arguments } = &call.payload else {
            return None;
        };
        let mut value: serde_json::Value = serde_json::from_str(arguments).ok()?;
        let fields = value.as_object_mut()?;
        let plain = without_line_numbers(fields.get("content")?.as_str()?)?;
        let path = fields.get("path")?.as_str()?;
        let current = read_small_text(&resolve(&self.cwd, path));
        if current.is_some_and(|text| without_line_numbers(&text).is_some()) {
            return None;
        }
        fields.insert("content".to_string(), serde_json::Value::String(plain));
        Some(value)
    }
}

impl TurnInspector for StripLineNumbers {
    fn adjust_calls(&mut self, calls: &mut [ToolCall]) {
        self.changed.clear();
        for call in calls.iter_mut() {
            if let Some(arguments) = self.stripped(call) {
                call.payload = ToolPayload::Function {
                    arguments: arguments.to_string(),
                };
                self.changed.push(call.call_id.clone());
            }
        }
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        for item in outputs {
            if let ResponseItem::FunctionCallOutput { call_id, output } = item
                && self.changed.contains(call_id)
            {
                append_note(output, NOTE);
            }
        }
    }
}

/// `text` without the `L3: ` numbers at the start of its lines, when every non-blank line
/// has one, at least two do, and they rise; `None` otherwise.
pub(crate) fn without_line_numbers(text: &str) -> Option<String> {
    let mut numbers: Vec<u64> = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        match read_file_number(line) {
            Some((number, rest)) => {
                numbers.push(number);
                lines.push(rest);
            }
            None if line.trim().is_empty() => lines.push(""),
            None => return None,
        }
    }
    let rising = numbers.windows(2).all(|pair| pair[0] < pair[1]);
    (rising && numbers.len() >= 2).then(|| lines.join("\n"))
}

/// `L12: text` (or `L12:` on a blank line) → (12, `text`).
fn read_file_number(line: &str) -> Option<(u64, &str)> {
    let rest = line.strip_prefix('L')?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let number = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(':')?;
    Some((number, rest.strip_prefix(' ').unwrap_or(rest)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{call, output, output_text, project, start, write};
    use osprey_tools::names::EDIT_FILE;
    use pretty_assertions::assert_eq;

    #[test]
    fn numbered_text_loses_its_numbers() {
        let read = "L1: def average(values):\nL2:     total = 0\nL3:\nL4:     return total\n";
        assert_eq!(
            without_line_numbers(read).as_deref(),
            Some("def average(values):\n    total = 0\n\n    return total\n")
        );
        // The numbers may skip (lines dropped) and blank lines may have lost theirs.
        assert_eq!(
            without_line_numbers("L2: a\n\nL7: b").as_deref(),
            Some("a\n\nb")
        );
    }

    #[test]
    fn text_that_is_not_numbered_throughout_is_left_alone() {
        for text in [
            "x = 1\ny = 2\n",
            // One line that happens to look numbered.
            "L1: int = 4\n",
            "L3: int = 4\n",
            // A line without a number among numbered ones.
            "L1: a\nb\nL3: c\n",
            // Numbers that do not rise.
            "L2: a\nL1: b\n",
            "L1: a\nL1: b\n",
            // Tab-separated data: the refused-write view's form is not undone.
            "1\t2.5\n2\t3.1\n3\t4.0\n",
            "Lx: a\nL2: b\n",
            "",
        ] {
            assert_eq!(without_line_numbers(text), None, "{text:?}");
        }
    }

    fn arguments(call: &ToolCall) -> serde_json::Value {
        let ToolPayload::Function { arguments } = &call.payload else {
            unreachable!()
        };
        serde_json::from_str(arguments).unwrap()
    }

    #[test]
    fn a_numbered_write_is_made_without_the_numbers_and_its_result_says_so() {
        let dir = project(&[("stats.py", "def average(values):\n    return 0\n")]);
        let mut aid = StripLineNumbers::new(&start("Fix the bug.", dir.path()));
        let mut calls = [
            write(
                "w",
                "stats.py",
                "L1: def average(values):\nL2:     return 1\n",
            ),
            write("v", "notes.txt", "plain text\n"),
        ];
        aid.adjust_calls(&mut calls);
        assert_eq!(
            arguments(&calls[0]),
            serde_json::json!({"path": "stats.py", "content": "def average(values):\n    return 1\n"})
        );
        assert_eq!(
            arguments(&calls[1]),
            serde_json::json!({"path": "notes.txt", "content": "plain text\n"})
        );
        let mut outputs = [
            output("w", "Wrote stats.py"),
            output("v", "Wrote notes.txt"),
        ];
        aid.after_tool_outputs(&mut outputs);
        let texts: Vec<String> = outputs.iter().map(output_text).collect();
        assert_eq!(
            texts,
            [
                format!("Wrote stats.py\n\n{NOTE}"),
                "Wrote notes.txt".into()
            ]
        );
    }

    #[test]
    fn a_numbered_file_and_edits_are_written_as_given() {
        let numbered = "L1: start\nL2: stop\n";
        let dir = project(&[("log.txt", numbered), ("a.py", "x = 1\n")]);
        let mut aid = StripLineNumbers::new(&start("Change it.", dir.path()));
        let edit = serde_json::json!({"path": "a.py", "old": "L1: x = 1", "new": "L1: x = 2"});
        let mut calls = [
            write("w", "log.txt", "L1: start\nL2: go\n"),
            call("e", EDIT_FILE, edit.clone()),
        ];
        aid.adjust_calls(&mut calls);
        assert_eq!(
            arguments(&calls[0]),
            serde_json::json!({"path": "log.txt", "content": "L1: start\nL2: go\n"}),
            "the file really holds numbered lines"
        );
        assert_eq!(
            arguments(&calls[1]),
            edit,
            "edit_file's span match handles them"
        );
    }
}
