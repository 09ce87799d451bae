//! [`StripLineNumbers`] (`[local_model] strip_line_numbers`): a write whose text still
//! carries the line numbers the tools showed the model is made without them.
//!
//! `read_file` shows each line as `L12: text`, and a refused write shows the file as
//! `  12<TAB>text`. Seen on 2026-12-06 (fix): after reading stats.py the small model wrote it
//! back with every line starting `L1: `, `L2: `, …, and the module no longer imported — a
//! syntax error on line 1 that it then tried to fix by writing the same thing again.
//!
//! Only text whose every non-blank line carries a number in one of those two forms, the
//! numbers rising from line to line, is changed: at least two numbered lines, or one
//! numbered 1. Code that happens to start one line with `L3:` is left as written. An
//! `edit_file` call is changed only when the file does not hold `old` as written (then
//! `old` and `new` lose their numbers): a file that does was quoted right, numbers and all.
//! The result says what was left out, so the model learns the numbers are not part of the
//! file.

use std::path::PathBuf;

use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use osprey_tools::names::{EDIT_FILE, WRITE_FILE};

use super::write_aids::{read_small_text, resolve};
use super::{TurnInspector, TurnStart};
use crate::tools::call::{ToolCall, ToolPayload};

/// The note added to the result of a write made without its line numbers.
const NOTE: &str = "The text you sent had the line numbers the tools show (`L1: `) at the start \
                    of its lines; they are not part of the file and were left out. Send file \
                    text without them.";

/// Makes writes without the line-number prefixes the model copied from tool results.
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

    /// The call's arguments with the numbers left out, when it has numbered text.
    fn stripped(&self, call: &ToolCall) -> Option<serde_json::Value> {
        let ToolPayload::Function { arguments } = &call.payload else {
            return None;
        };
        let mut value: serde_json::Value = serde_json::from_str(arguments).ok()?;
        let fields = value.as_object_mut()?;
        let mut changed = false;
        if call.tool_name == WRITE_FILE {
            changed |= strip_field(fields, "content");
        } else if call.tool_name == EDIT_FILE {
            let file = fields
                .get("path")
                .and_then(|p| p.as_str())
                .and_then(|path| read_small_text(&resolve(&self.cwd, path)));
            let old_in_file = fields
                .get("old")
                .and_then(|old| old.as_str())
                .zip(file.as_deref())
                .is_some_and(|(old, file)| file.contains(old));
            // A file that holds `old` as written was quoted right: its numbers are its own.
            if !old_in_file {
                changed |= strip_field(fields, "old");
                changed |= strip_field(fields, "new");
            }
        }
        changed.then_some(value)
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
                *output = FunctionCallOutputPayload::from(format!("{}\n\n{NOTE}", output.text()));
            }
        }
    }
}

/// Replaces the string field `key` by its text without line numbers, when it is numbered.
fn strip_field(fields: &mut serde_json::Map<String, serde_json::Value>, key: &str) -> bool {
    let Some(text) = fields.get(key).and_then(|v| v.as_str()) else {
        return false;
    };
    let Some(plain) = without_line_numbers(text) else {
        return false;
    };
    fields.insert(key.to_string(), serde_json::Value::String(plain));
    true
}

/// `text` without the line numbers at the start of its lines, when every non-blank line has
/// one (`L3: x` or `   3<TAB>x`, one form throughout) and they rise; `None` otherwise.
pub(crate) fn without_line_numbers(text: &str) -> Option<String> {
    let forms: [SplitNumber; 2] = [read_file_number, shown_file_number];
    forms.iter().find_map(|split| strip_with(text, *split))
}

/// Splits a line into its number and its text, when it starts with a number in one form.
type SplitNumber = fn(&str) -> Option<(u64, &str)>;

fn strip_with(text: &str, split: SplitNumber) -> Option<String> {
    let mut numbers: Vec<u64> = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        match split(line) {
            Some((number, rest)) => {
                numbers.push(number);
                lines.push(rest);
            }
            None if line.trim().is_empty() => lines.push(""),
            None => return None,
        }
    }
    let rising = numbers.windows(2).all(|pair| pair[0] < pair[1]);
    let enough = numbers.len() >= 2 || numbers == [1];
    (rising && enough).then(|| lines.join("\n"))
}

/// `L12: text` (or `L12:` on a blank line) → (12, `text`).
fn read_file_number(line: &str) -> Option<(u64, &str)> {
    let rest = line.strip_prefix('L')?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let number = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(':')?;
    Some((number, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// `   12<TAB>text` → (12, `text`): the form a refused write shows the file in.
fn shown_file_number(line: &str) -> Option<(u64, &str)> {
    let (number, rest) = line.split_once('\t')?;
    let number = number.trim_start_matches(' ');
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((number.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{call, output, project, start, write};
    use pretty_assertions::assert_eq;

    #[test]
    fn numbered_text_in_either_form_loses_its_numbers() {
        let read = "L1: def average(values):\nL2:     total = 0\nL3:\nL4:     return total\n";
        assert_eq!(
            without_line_numbers(read).as_deref(),
            Some("def average(values):\n    total = 0\n\n    return total\n")
        );
        let shown = "   9\tx = 1\n  10\ty = 2\n";
        assert_eq!(
            without_line_numbers(shown).as_deref(),
            Some("x = 1\ny = 2\n")
        );
        // The numbers may skip (lines dropped) and blank lines may have lost theirs.
        assert_eq!(
            without_line_numbers("L2: a\n\nL7: b").as_deref(),
            Some("a\n\nb")
        );
        assert_eq!(without_line_numbers("L1: only").as_deref(), Some("only"));
    }

    #[test]
    fn text_that_is_not_numbered_throughout_is_left_alone() {
        for text in [
            "x = 1\ny = 2\n",
            // One line that happens to look numbered.
            "L3: int = 4\n",
            // A line without a number among numbered ones.
            "L1: a\nb\nL3: c\n",
            // Numbers that do not rise.
            "L2: a\nL1: b\n",
            // Two forms mixed.
            "L1: a\n   2\tb\n",
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
        let texts: Vec<String> = outputs
            .iter()
            .map(|item| match item {
                ResponseItem::FunctionCallOutput { output, .. } => output.text(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            texts,
            [
                format!("Wrote stats.py\n\n{NOTE}"),
                "Wrote notes.txt".into()
            ]
        );
    }

    #[test]
    fn an_edit_loses_its_numbers_only_when_the_file_does_not_have_them() {
        let dir = project(&[
            ("a.py", "x = 1\ny = 2\n"),
            ("log.txt", "L1: start\nL2: stop\n"),
        ]);
        let mut aid = StripLineNumbers::new(&start("Change it.", dir.path()));
        let mut calls = [
            call(
                "e",
                EDIT_FILE,
                serde_json::json!({"path": "a.py", "old": "L1: x = 1\nL2: y = 2", "new": "L1: x = 3\nL2: y = 2"}),
            ),
            call(
                "f",
                EDIT_FILE,
                serde_json::json!({"path": "log.txt", "old": "L1: start\nL2: stop", "new": "go"}),
            ),
        ];
        aid.adjust_calls(&mut calls);
        assert_eq!(
            arguments(&calls[0]),
            serde_json::json!({"path": "a.py", "old": "x = 1\ny = 2", "new": "x = 3\ny = 2"})
        );
        assert_eq!(
            arguments(&calls[1]),
            serde_json::json!({"path": "log.txt", "old": "L1: start\nL2: stop", "new": "go"}),
            "the file really holds those lines"
        );
    }
}
