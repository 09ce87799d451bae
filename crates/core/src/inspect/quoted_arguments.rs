//! [`QuotedArguments`] (`quoted_arguments`): a one-line program run with `python3 -c '…'`
//! (or `node -e '…'`) failed because of how it was quoted, and the result gives the command
//! quoted right:
//!
//! - words meant as the program's arguments were written inside its quotes
//!   (`python3 -c '… print(n) sales.csv north'`), so Python read them as code and reported a
//!   SyntaxError; they belong after the closing quote;
//! - the program's own single quotes (`r['region']`) ended the shell's single-quoted string,
//!   so Python saw `r[region]` and reported a NameError; inside single quotes the program
//!   needs double quotes.
//!
//! A command sent again after its note is run quoted right, and its result says so: the
//! model repeating its own call means it wants that run and cannot copy the correction.
//!
//! Seen on 2026-12-07 (task count): the model ran `python3 -c 'import csv, sys; print(sum(1
//! for r in csv.DictReader(open(sys.argv[1])) if r[sys.argv[2]] == sys.argv[3])) sales.csv
//! region north'`, read the SyntaxError, blamed `csv.DictReader`, and ended its turn with
//! the same mistake in its answer. With the note, it sent the same command again.

use osprey_protocol::ResponseItem;
use std::collections::{HashMap, HashSet};

use super::check_aids::command_of;
use super::{CallVerdict, TurnInspector, append_note};
use crate::tools::call::{ToolCall, ToolPayload};

/// The option that takes a one-line program, per interpreter.
const INLINE_PROGRAMS: [(&str, &str); 4] = [
    ("python3", "-c"),
    ("python", "-c"),
    ("node", "-e"),
    ("node", "-p"),
];

/// What a failure of the one-line program itself looks like, per language: the name its
/// traceback gives the program, and the errors a quoting mistake causes.
const CODE_FAILURES: [(&str, &[&str]); 2] = [
    ("File \"<string>\"", &["SyntaxError", "NameError"]),
    ("[eval]", &["SyntaxError", "ReferenceError"]),
];

/// Words that end code, never an argument written after it (`print(x) if y else z`).
const CODE_WORDS: [&str; 14] = [
    "if", "else", "for", "in", "and", "or", "not", "is", "None", "True", "False", "null", "true",
    "false",
];

/// Adds the correctly quoted command to the result of a one-line program that failed on
/// its quoting.
#[derive(Default)]
pub(crate) struct QuotedArguments {
    /// Shell calls of the batch being run, by call id: their commands.
    commands: HashMap<String, String>,
    /// Commands whose result gave them quoted right.
    noted: HashSet<String>,
    /// Calls of the running batch re-quoted because they repeated a noted command, by call
    /// id: the note for their results.
    requoted: HashMap<String, String>,
}

/// A shell call's arguments with `command` in place of its command.
fn with_command(call: &ToolCall, command: &str) -> Option<String> {
    let ToolPayload::Function { arguments } = &call.payload else {
        return None;
    };
    let mut value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    value
        .as_object_mut()?
        .insert("command".to_string(), command.into());
    Some(value.to_string())
}

impl TurnInspector for QuotedArguments {
    fn adjust_calls(&mut self, calls: &mut [ToolCall]) {
        self.requoted.clear();
        for call in calls.iter_mut() {
            let Some(command) = command_of(call).filter(|c| self.noted.contains(c)) else {
                continue;
            };
            let Some(fixed) = requoted_shell_command(&command) else {
                continue;
            };
            let Some(arguments) = with_command(call, &fixed) else {
                continue;
            };
            call.payload = ToolPayload::Function { arguments };
            self.requoted.insert(
                call.call_id.clone(),
                format!(
                    "Your call repeated a command whose result gave it quoted right, so this \
                     time it ran as `{fixed}`."
                ),
            );
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.commands = calls
            .iter()
            .filter_map(|call| Some((call.call_id.clone(), command_of(call)?)))
            .collect();
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        for item in outputs.iter_mut() {
            let ResponseItem::FunctionCallOutput { call_id, output } = item else {
                continue;
            };
            let Some(command) = self.commands.get(call_id.as_str()) else {
                continue;
            };
            let text = output.text();
            if let Some(note) = self.requoted.remove(call_id.as_str()) {
                append_note(output, &note);
            } else if let Some(note) = quoting_note(command, &text) {
                self.noted.insert(command.clone());
                append_note(output, &note);
            }
        }
    }
}

/// `command` quoted right, when it holds a one-line program with one of the quoting
/// mistakes this module corrects.
fn requoted_shell_command(command: &str) -> Option<String> {
    let fixed = InlineProgram::find(command)?.requoted();
    fixed.changed().then_some(fixed.command)
}

/// The note for `command`'s result `output`, when the command is a one-line program that
/// failed on a quoting mistake this module knows how to correct.
fn quoting_note(command: &str, output: &str) -> Option<String> {
    // The program's own traceback, not the exit status: a pipe after the program (`| tail
    // -1`) exits with its last command's status.
    let failed_on_code = CODE_FAILURES.iter().any(|(program, errors)| {
        output.contains(program) && errors.iter().any(|error| output.contains(error))
    });
    if !failed_on_code {
        return None;
    }
    let fixed = InlineProgram::find(command)?.requoted();
    if !fixed.changed() {
        return None;
    }
    let mut reasons = Vec::new();
    if !fixed.arguments.is_empty() {
        reasons.push(format!(
            "`{}` at the end of the program is inside its quotes, so it was read as code; \
             arguments go after the closing quote",
            fixed.arguments.join(" ")
        ));
    }
    if fixed.requoted_inner_quotes {
        reasons.push(
            "the program's own single quotes ended the shell's single-quoted string, so \
             its strings lost their quotes; inside single quotes, write the program's \
             strings with double quotes"
                .to_string(),
        );
    }
    Some(format!(
        "Note: {}. Run it quoted like this:\n{}",
        reasons.join("; and "),
        fixed.command
    ))
}

/// A command holding `PROGRAM OPTION 'code'`: the text before the code's opening quote, the
/// code as written between the quotes, the quote, and the text after the closing quote.
#[derive(Debug, PartialEq, Eq)]
struct InlineProgram<'a> {
    before: &'a str,
    quote: char,
    code: &'a str,
    after: &'a str,
}

/// A corrected command, with what was corrected.
#[derive(Debug, PartialEq, Eq)]
struct Requoted {
    command: String,
    /// Words moved from the end of the program to after its closing quote.
    arguments: Vec<String>,
    /// The program's single quotes were made double quotes.
    requoted_inner_quotes: bool,
}

impl Requoted {
    /// Whether anything was corrected: otherwise the command is the one that ran.
    fn changed(&self) -> bool {
        !self.arguments.is_empty() || self.requoted_inner_quotes
    }
}

impl<'a> InlineProgram<'a> {
    /// The first one-line program in `command`, or `None` when its quoting cannot be read
    /// with confidence. Splitting what follows the opening quote at each quote gives, as the
    /// shell reads it, quoted and unquoted parts in turn; the program goes on through
    /// unquoted parts that are a bare word (`r['region']` leaves `region` unquoted) and ends
    /// before the first one with a space or a shell operator in it (`' && …`, `' > out`), or
    /// at the last quote.
    fn find(command: &'a str) -> Option<Self> {
        let words: Vec<(usize, &str)> = word_starts(command);
        let index = words.windows(2).find_map(|pair| {
            let [(_, program), (at, option)] = pair else {
                return None;
            };
            let program = program.rsplit('/').next().unwrap_or(program);
            INLINE_PROGRAMS
                .iter()
                .any(|(p, o)| *p == program && *o == *option)
                .then_some(*at + option.len())
        })?;
        let rest = &command[index..];
        let open = index + rest.len() - rest.trim_start().len();
        let quote = command[open..]
            .chars()
            .next()
            .filter(|c| *c == '\'' || *c == '"')?;
        let quoted_on = &command[open + 1..];
        // An escaped quote inside double quotes (`\"`) is not a boundary.
        if quote == '"' && quoted_on.contains("\\\"") {
            return None;
        }
        let parts: Vec<&str> = quoted_on.split(quote).collect();
        // An odd count of parts: the last quote is never closed.
        if parts.len() % 2 == 1 {
            return None;
        }
        let mut close = open + 1 + parts[0].len();
        for pair in parts[1..].chunks(2) {
            let [unquoted, quoted] = pair else { break };
            if unquoted.contains(|c: char| c.is_whitespace() || "&|;<>()$`".contains(c)) {
                break;
            }
            // `'\''` is the shell's way to put a quote inside; this code does not rewrite it.
            // Double quotes inside a double-quoted program are not rewritten either.
            if unquoted.contains('\\') || quote == '"' {
                return None;
            }
            close += 1 + unquoted.len() + 1 + quoted.len();
        }
        Some(Self {
            before: &command[..open],
            quote,
            code: &command[open + 1..close],
            after: &command[close + 1..],
        })
    }

    /// The command with trailing argument words moved after the closing quote, and (in
    /// single quotes) the program's own single quotes made double quotes.
    fn requoted(&self) -> Requoted {
        let mut code = self.code.to_string();
        let requoted_inner_quotes =
            self.quote == '\'' && code.contains('\'') && !code.contains('"');
        if requoted_inner_quotes {
            code = code.replace('\'', "\"");
        }
        let arguments = trailing_arguments(&code);
        if !arguments.is_empty() {
            let words = arguments.iter().map(|a| a.len() + 1).sum::<usize>();
            code.truncate(code.len() - words);
        }
        let moved: String = arguments.iter().map(|a| format!(" {a}")).collect();
        let quote = self.quote;
        Requoted {
            command: format!("{}{quote}{code}{quote}{moved}{}", self.before, self.after),
            arguments,
            requoted_inner_quotes,
        }
    }
}

/// Each whitespace-separated word of `text` with the byte offset it starts at.
fn word_starts(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(from)) => {
                words.push((from, &text[from..at]));
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push((from, &text[from..]));
    }
    words
}

/// Plain words at the end of `code` after a closing bracket (`print(n) sales.csv north`):
/// code never puts a bare word right after a call or an index, so these are arguments. Each
/// is separated from the one before by exactly one space, as [`InlineProgram::requoted`]
/// removes them.
fn trailing_arguments(code: &str) -> Vec<String> {
    let mut arguments = Vec::new();
    let mut rest = code;
    while let Some((head, word)) = rest.rsplit_once(' ') {
        let plain = !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
            && !CODE_WORDS.contains(&word);
        if !plain {
            break;
        }
        arguments.insert(0, word.to_string());
        rest = head;
    }
    if rest.ends_with([')', ']']) {
        arguments
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{output, output_text, shell};
    use pretty_assertions::assert_eq;

    const SYNTAX_ERROR: &str = "Exit code: 1\nProcess exited with code 1\nOutput:\n  File \
        \"<string>\", line 1\n    print(n) sales.csv\n             ^^^^^\nSyntaxError: \
        invalid syntax\n";

    /// The note `command` gets when its result is `text`.
    fn note(command: &str, text: &str) -> Option<String> {
        let mut aid = QuotedArguments::default();
        aid.before_tool_calls(&[shell("c1", command)]);
        let mut outputs = [output("c1", text)];
        aid.after_tool_outputs(&mut outputs);
        let result = output_text(&outputs[0]);
        result
            .strip_prefix(text)
            .map(|note| note.trim_start().to_string())
            .filter(|note| !note.is_empty())
    }

    #[test]
    fn arguments_written_inside_the_quotes_are_moved_after_them() {
        let command = "python3 -c 'import csv, sys; print(sum(1 for r in \
                       csv.DictReader(open(sys.argv[1])) if r[sys.argv[2]].strip() == \
                       sys.argv[3])) sales.csv region north'";
        assert_eq!(
            note(command, SYNTAX_ERROR).unwrap(),
            "Note: `sales.csv region north` at the end of the program is inside its quotes, \
             so it was read as code; arguments go after the closing quote. Run it quoted \
             like this:\npython3 -c 'import csv, sys; print(sum(1 for r in \
             csv.DictReader(open(sys.argv[1])) if r[sys.argv[2]].strip() == sys.argv[3]))' \
             sales.csv region north"
        );
    }

    #[test]
    fn inner_single_quotes_become_double_quotes_and_a_pipe_after_the_program_stays() {
        let command = "python3 -c 'import csv; print(sum(1 for r in \
                       csv.DictReader(open(\"s.csv\")) if r['region'] == 'north'))' | tail -1";
        assert_eq!(
            note(command, SYNTAX_ERROR),
            None,
            "double quotes inside already"
        );
        let command = "python3 -c 'import csv, sys; print(sum(1 for r in \
                       csv.DictReader(open(sys.argv[1])) if r['region'].strip() == \
                       'north')) sales.csv' | tail -1";
        // The pipe's last command exited 0; the traceback is the program's.
        let name_error = "Process exited with code 0\nOutput:\nTraceback (most recent call \
                          last):\n  File \"<string>\", line 1, in <module>\nNameError: name \
                          'region' is not defined\n";
        assert_eq!(
            note(command, name_error).unwrap(),
            "Note: `sales.csv` at the end of the program is inside its quotes, so it was read \
             as code; arguments go after the closing quote; and the program's own single \
             quotes ended the shell's single-quoted string, so its strings lost their \
             quotes; inside single quotes, write the program's strings with double quotes. \
             Run it quoted like this:\npython3 -c 'import csv, sys; print(sum(1 for r in \
             csv.DictReader(open(sys.argv[1])) if r[\"region\"].strip() == \"north\"))' \
             sales.csv | tail -1"
        );
    }

    #[test]
    fn node_programs_and_double_quoted_code_are_corrected_too() {
        let command = "cd src && node -e \"const fs = require('fs'); \
                       console.log(fs.readFileSync(process.argv[1], 'utf8').length) notes.txt\"";
        let error = "Process exited with code 1\nOutput:\n[eval]:1\nconst fs = \
                     require('fs');\n\nSyntaxError: missing ) after argument list\n";
        assert_eq!(
            note(command, error).unwrap(),
            "Note: `notes.txt` at the end of the program is inside its quotes, so it was read \
             as code; arguments go after the closing quote. Run it quoted like this:\ncd src \
             && node -e \"const fs = require('fs'); \
             console.log(fs.readFileSync(process.argv[1], 'utf8').length)\" notes.txt"
        );
    }

    #[test]
    fn working_programs_other_errors_and_code_words_get_no_note() {
        let command = "python3 -c 'import sys; print(sys.argv[1]) north'";
        let ok = "Process exited with code 0\nOutput:\nSyntaxError is a word here\n";
        assert_eq!(note(command, ok), None, "no traceback of the program");
        let other = "Process exited with code 1\nOutput:\n  File \"<string>\", line 1\n\
                     FileNotFoundError: x\n";
        assert_eq!(note(command, other), None, "not a code error");
        assert_eq!(
            note("python3 -c 'print(1) if x else y'", SYNTAX_ERROR),
            None,
            "code words"
        );
        assert_eq!(
            note("python3 -c 'print(1); x = y'", SYNTAX_ERROR),
            None,
            "no bracket before the words"
        );
        assert_eq!(
            note("python3 script.py north", SYNTAX_ERROR),
            None,
            "a file"
        );
        assert_eq!(note("python3 -c print(1)", SYNTAX_ERROR), None, "unquoted");
    }

    #[test]
    fn the_program_ends_where_the_shell_ends_it_and_unclear_quoting_gets_no_note() {
        let name_error = "Process exited with code 1\nOutput:\nTraceback (most recent call \
                          last):\n  File \"<string>\", line 1, in <module>\nNameError: name \
                          'x' is not defined\n";
        for command in [
            "python3 -c 'print(tot)' && python3 -c 'print(2)'",
            "python3 -c 'import sys; print(sys.argv[1], x)' 'north region'",
            "python3 -c 'print('\\''hi'\\'', x)'",
            "python3 -c 'print(x)' && echo \"it's\"",
            "node -e \"console.log(\\\"a\\\", x) a.txt\"",
        ] {
            assert_eq!(note(command, name_error), None, "{command}");
        }
        assert_eq!(
            note("python3 -c 'print(x) a.csv' > 'out.txt'", SYNTAX_ERROR).unwrap(),
            "Note: `a.csv` at the end of the program is inside its quotes, so it was read as \
             code; arguments go after the closing quote. Run it quoted like this:\n\
             python3 -c 'print(x)' a.csv > 'out.txt'"
        );
    }

    #[test]
    fn a_noted_command_sent_again_runs_quoted_right_and_says_so() {
        let mut aid = QuotedArguments::default();
        let wrong = "python3 -c 'import sys; print(sys.argv[1]) north'";
        let arguments = serde_json::json!({ "command": wrong, "timeout_ms": 5000 });
        let first = crate::inspect::test_support::call("a", "shell_command", arguments.clone());
        let mut calls = [first];
        aid.adjust_calls(&mut calls);
        assert_eq!(command_of(&calls[0]).unwrap(), wrong, "not noted yet");
        aid.before_tool_calls(&calls);
        aid.after_tool_outputs(&mut [output("a", SYNTAX_ERROR)]);

        let mut calls = [crate::inspect::test_support::call(
            "b",
            "shell_command",
            arguments,
        )];
        aid.adjust_calls(&mut calls);
        let right = "python3 -c 'import sys; print(sys.argv[1])' north";
        let ToolPayload::Function { arguments } = &calls[0].payload else {
            panic!("a function call");
        };
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(arguments).unwrap(),
            serde_json::json!({ "command": right, "timeout_ms": 5000 })
        );
        aid.before_tool_calls(&calls);
        let mut outputs = [output("b", "Process exited with code 0\nOutput:\nnorth\n")];
        aid.after_tool_outputs(&mut outputs);
        assert_eq!(
            output_text(&outputs[0]),
            format!(
                "Process exited with code 0\nOutput:\nnorth\n\n\nYour call repeated a command \
                 whose result gave it quoted right, so this time it ran as `{right}`."
            )
        );
    }
}
