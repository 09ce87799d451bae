//! [`CheckExpectedOutput`] (`[local_model] check_expected_output`): when the request says what
//! the program should print ("node max.js should print 9", "a script that prints `hello`"),
//! and the last run since the last write printed something else — often nothing, after a
//! rewrite that dropped the `print` call — the model is told once, at finish, what was
//! expected and what the run printed, and asked to fix the code and run it again.
//!
//! Seen on 2026-12-04 (pages, maxjs): the model ran the program, it printed nothing, and the
//! turn ended; the named-check reminder only asks whether the check ran. This aid compares.
//! It looks only at the request's words and the outputs of the model's own shell calls:
//!
//! - the expected value is read from the request after a phrase that states it ("should
//!   print", "output should be", "that prints", …): a quoted or backticked text, a number, or
//!   a single word that ends its clause ("prints hello, then …"). A program asked for that
//!   "prints the number of lines" (or "the count of", "how many", after "that", "to",
//!   "should", …) is expected to print one number and nothing else: `wc -l "$1"` prints
//!   `5 notes.txt`, which a caller cannot use as the number (seen in the shell task,
//!   2026-12-06). Not when the sentence asks for several counts ("for each file", "lines,
//!   words and characters"), gives a format (a quoted `Lines: N`), or the request names a
//!   command to run (a test run's report is not the count). Anything else gives no
//!   expectation, and the aid stays silent;
//! - the run compared is the last one since the last write of a command the request names
//!   (`python3 pages.py`), or, when it names none, of a command that runs a program
//!   (`python3 …`, `node …`, `./…`);
//! - a number matches a number of the output exactly (`4` is not in `14` or `4.0`), a word a
//!   whole word, a quoted text anywhere, all ignoring case; a run that exited non-zero does
//!   not match.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use osprey_model::{Prompt, ToolChoice};
use osprey_protocol::ResponseItem;

use super::check_aids::{CHECK_PROGRAMS, command_of, named_commands, runs};
use super::write_aids::{read_small_text, resolve};
use super::{CallVerdict, TurnInspector, TurnStart, WRITING_TOOLS};
use crate::tools::call::ToolCall;

/// Phrases after which a request states the output, strongest first; the first one found
/// (in this order) decides. "prints" alone is not one: "but it prints 3" is the wrong output.
const STATING_PHRASES: [&str; 15] = [
    "should print",
    "should output",
    "must print",
    "must output",
    "should show",
    "should display",
    "output should be",
    "output must be",
    "expected output is",
    "expected output:",
    "to print",
    "that prints",
    "which prints",
    "that outputs",
    "which outputs",
];

/// Words that ask for a program to print something ("a script that prints", "to print",
/// "should print"); a count phrase after anything else describes what a program does now
/// ("app.py prints the number of users; add a flag").
const ASKING_WORDS: [&str; 5] = ["that", "which", "to", "should", "must"];

/// Verbs a count phrase starts with, after an asking word.
const PRINTING_VERBS: [&str; 6] = ["prints", "print", "outputs", "output", "shows", "show"];

/// What follows the verb in a count phrase.
const COUNT_OBJECTS: [&str; 3] = ["the number of ", "the count of ", "how many "];

/// Words that make a count request a listing of several counts ("for each file").
const LISTING_WORDS: [&str; 4] = ["each", "every", "per", "all"];

/// Words that follow "prints" without being the output ("prints the count").
const NOT_OUTPUT: [&str; 24] = [
    "the",
    "a",
    "an",
    "its",
    "their",
    "his",
    "her",
    "each",
    "every",
    "all",
    "out",
    "it",
    "them",
    "this",
    "that",
    "these",
    "those",
    "one",
    "how",
    "what",
    "whether",
    "some",
    "any",
    "something",
];

/// Words that may follow a bare expected word in the same clause ("prints hello when run").
const CLAUSE_ENDERS: [&str; 10] = [
    "and", "then", "when", "if", "but", "to", "on", "once", "after", "so",
];

/// Most characters of a run's output quoted back.
const QUOTED_OUTPUT: usize = 300;

/// What the request says the output should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expected {
    /// A number, matched as a whole number token.
    Number(String),
    /// A single word, matched as a whole word ignoring case.
    Word(String),
    /// A quoted text, matched anywhere ignoring case.
    Text(String),
    /// A count ("prints the number of lines"): the output is one number and nothing else.
    Count,
}

impl Expected {
    /// How the reminder names what was expected.
    fn shown(&self) -> String {
        match self {
            Self::Number(s) | Self::Word(s) | Self::Text(s) => format!("the output `{s}`"),
            Self::Count => "a number and nothing else as the output".to_string(),
        }
    }

    /// Whether `output` shows the expected value.
    fn found_in(&self, output: &str) -> bool {
        let lower = output.to_lowercase();
        match self {
            Self::Number(n) => output
                .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                .map(|token| token.trim_matches('.'))
                .any(|token| token == n),
            Self::Word(w) => lower
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|token| token == w.to_lowercase()),
            Self::Text(t) => lower.contains(&t.to_lowercase()),
            Self::Count => {
                let shown = output.trim();
                let number = shown.strip_prefix('-').unwrap_or(shown);
                number.starts_with(|c: char| c.is_ascii_digit())
                    && number.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && number.matches('.').count() <= 1
                    && !number.ends_with('.')
            }
        }
    }
}

/// The output the request states, if it states one in a form this aid can read.
pub(crate) fn expected_output(request: &str) -> Option<Expected> {
    // ASCII lowering keeps byte offsets, so a phrase found in `lower` indexes `request`.
    let lower = request.to_ascii_lowercase();
    STATING_PHRASES
        .iter()
        .find_map(|phrase| {
            lower
                .match_indices(phrase)
                .find_map(|(at, _)| value_at(&request[at + phrase.len()..]))
        })
        .or_else(|| asks_for_one_count(&lower).then_some(Expected::Count))
}

/// Whether the (lowercased) request asks for a program that prints one count: an asking
/// word, a printing verb and a count ("a script that prints the number of lines"), in a
/// sentence that asks for no listing ("for each file"), no format (a quoted `Lines: N`),
/// and counts one thing ("lines, words and characters" are three).
fn asks_for_one_count(lower: &str) -> bool {
    let words: Vec<(usize, &str)> = lower
        .split_inclusive(char::is_whitespace)
        .scan(0, |at, word| {
            let start = *at;
            *at += word.len();
            Some((start, word.trim()))
        })
        .collect();
    words.windows(2).any(|pair| {
        let [(_, asking), (verb_at, verb)] = pair else {
            return false;
        };
        if !ASKING_WORDS.contains(asking) || !PRINTING_VERBS.contains(verb) {
            return false;
        }
        let after_verb = lower[*verb_at + verb.len()..].trim_start();
        let Some(counted) = COUNT_OBJECTS
            .iter()
            .find_map(|object| after_verb.strip_prefix(object))
        else {
            return false;
        };
        let sentence = sentence_around(lower, *verb_at);
        let listing = sentence
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| LISTING_WORDS.contains(&word));
        let formatted = sentence.contains(['`', '"']);
        // The counted thing runs to the first preposition or stop: "lines" in "lines in the
        // file, then run it"; "lines, words and characters" are several.
        let end = [
            " in ", " of ", " from ", " on ", " given", ".", ";", "(", " then",
        ]
        .iter()
        .filter_map(|cut| counted.find(cut))
        .min()
        .unwrap_or(counted.len());
        let thing = &counted[..end];
        let several = thing.contains(',') || thing.split_whitespace().any(|w| w == "and");
        !listing && !formatted && !several
    })
}

/// The sentence of `text` around byte `at`: between stops followed by a space (so
/// `notes.txt` does not end it) or a line break.
fn sentence_around(text: &str, at: usize) -> &str {
    const STOPS: [&str; 5] = [". ", "! ", "? ", "; ", "\n"];
    let before = &text[..at];
    let start = STOPS
        .iter()
        .filter_map(|stop| before.rfind(stop).map(|i| i + stop.len()))
        .max()
        .unwrap_or(0);
    let after = &text[at..];
    let end = STOPS
        .iter()
        .filter_map(|stop| after.find(stop))
        .min()
        .map_or(text.len(), |i| at + i);
    &text[start..end]
}

/// The value at the start of `rest` (the text after a stating phrase).
fn value_at(rest: &str) -> Option<Expected> {
    let rest = rest.trim_start().trim_start_matches(':').trim_start();
    let first = rest.chars().next()?;
    if matches!(first, '`' | '"' | '\'') {
        let inner = &rest[1..];
        let end = inner.find(first)?;
        let text = inner[..end].trim();
        return (!text.is_empty() && !text.contains('\n')).then(|| Expected::Text(text.into()));
    }
    let mut words = rest.split_whitespace();
    let raw = words.next()?;
    let word = raw.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
    let number = word.strip_prefix('-').unwrap_or(word);
    if !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.starts_with(|c: char| c.is_ascii_digit())
        && !number.ends_with('.')
    {
        return Some(Expected::Number(word.to_string()));
    }
    let plain = !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_');
    let ends_clause = raw.len() != word.len()
        || words
            .next()
            .is_none_or(|next| CLAUSE_ENDERS.contains(&next.to_lowercase().as_str()));
    let prose = NOT_OUTPUT.contains(&word.to_lowercase().as_str());
    (plain && ends_clause && !prose).then(|| Expected::Word(word.to_string()))
}

/// What a shell call's result says the command printed, and whether it exited non-zero.
pub(super) fn printed(result: &str) -> (String, bool) {
    let failed = result.lines().any(|line| {
        line.strip_prefix("Process exited with code ")
            .or_else(|| line.strip_prefix("Exit code: "))
            .is_some_and(|code| code.trim() != "0")
    }) || result
        .lines()
        .any(|line| line.starts_with("Command timed out"));
    let output = match result.split_once("\nOutput:\n") {
        Some((_, output)) => output,
        None => result.strip_prefix("Output:\n").unwrap_or(result),
    };
    (output.to_string(), failed)
}

/// Whether `command` runs a program (for requests that name no command).
fn runs_a_program(command: &str) -> bool {
    command.split(['&', ';', '|']).any(|part| {
        part.split_whitespace()
            .next()
            .is_some_and(|first| first.starts_with("./") || CHECK_PROGRAMS.contains(&first))
    })
}

/// Whether `ran` runs the named command with its program (`node max.js`, or `./check.sh`
/// for `sh check.sh`): a `cat max.js` has the same arguments but prints the source.
fn runs_named(ran: &str, named: &str) -> bool {
    let mut words = named.split_whitespace();
    let program = words.next().unwrap_or_default();
    let direct = words
        .next()
        .map(|script| format!("./{}", script.trim_start_matches("./")));
    let started = ran
        .split_whitespace()
        .any(|word| word == program || direct.as_deref().is_some_and(|direct| word == direct));
    started && runs(ran, named)
}

/// Tells the model once when the last run since its last write did not print what the
/// request says it should.
pub(crate) struct CheckExpectedOutput {
    cwd: PathBuf,
    expected: Option<Expected>,
    named: Vec<String>,
    /// Calls of the running batch whose output is compared, by call id.
    pending: HashMap<String, String>,
    /// The last compared run since the last write: its command, what it printed, whether it
    /// failed.
    last_run: Option<(String, String, bool)>,
    asked: bool,
    require_call: bool,
}

impl CheckExpectedOutput {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        let named = named_commands(start.request);
        // A count says what a program prints; a named command (a test run) prints a report.
        let expected = expected_output(start.request)
            .filter(|expected| *expected != Expected::Count || named.is_empty());
        Self {
            cwd: start.cwd.to_path_buf(),
            expected,
            named,
            pending: HashMap::new(),
            last_run: None,
            asked: false,
            require_call: false,
        }
    }

    fn compared(&self, command: &str) -> bool {
        if self.named.is_empty() {
            runs_a_program(command)
        } else {
            self.named.iter().any(|named| runs_named(command, named))
        }
    }
}

impl TurnInspector for CheckExpectedOutput {
    fn before_request(&mut self, prompt: &mut Prompt) {
        if std::mem::take(&mut self.require_call) {
            prompt.tool_choice = ToolChoice::Required;
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.pending.clear();
        if self.expected.is_none() {
            return CallVerdict::Run;
        }
        for call in calls {
            if WRITING_TOOLS.contains(&call.tool_name.as_str()) {
                self.last_run = None;
                self.pending.clear();
            } else if let Some(command) = command_of(call)
                && self.compared(&command)
            {
                self.pending.insert(call.call_id.clone(), command);
            }
        }
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        for item in outputs.iter() {
            let ResponseItem::FunctionCallOutput { call_id, output } = item else {
                continue;
            };
            if let Some(command) = self.pending.remove(call_id.as_str()) {
                let (printed, failed) = printed(&output.text());
                self.last_run = Some((command, printed, failed));
            }
        }
    }

    fn before_finish(&mut self, _answer: Option<&str>) -> Option<ResponseItem> {
        if self.asked {
            return None;
        }
        let expected = self.expected.as_ref()?;
        let (command, printed, failed) = self.last_run.as_ref()?;
        if !failed && expected.found_in(printed) {
            return None;
        }
        self.asked = true;
        self.require_call = true;
        let shown = printed.trim();
        let what = if shown.is_empty() {
            "printed nothing. ".to_string()
        } else {
            let mut cut: String = shown.chars().take(QUOTED_OUTPUT).collect();
            if cut.len() < shown.len() {
                cut.push('…');
            }
            format!("printed:\n{cut}\n")
        };
        let hint = if *expected == Expected::Count {
            count_with_name_hint(&self.cwd, command, shown)
        } else {
            String::new()
        };
        Some(ResponseItem::user_text(format!(
            "The task expects {}, but the last run of `{command}` {what}Fix the code so that \
             it prints that, then run `{command}` again.{hint}",
            expected.shown()
        )))
    }
}

/// When a count came out as `5 notes.txt` — the number, then a file the command was given —
/// how `wc` prints the number alone: the usual way a script gets there, and, when the script
/// run has that `wc -l FILE` line, the `edit_file` call that changes it. The small model,
/// told only that the output should be the number, edited the file name in the script; told
/// `wc -l < FILE` too, it still could not turn that into an edit of its line.
fn count_with_name_hint(cwd: &Path, command: &str, shown: &str) -> String {
    let mut words = shown.split_whitespace();
    let (Some(number), Some(name), None) = (words.next(), words.next(), words.next()) else {
        return String::new();
    };
    let counted = number.chars().all(|c| c.is_ascii_digit());
    let given = command
        .split_whitespace()
        .skip(1)
        .any(|word| word.trim_matches(|c| c == '"' || c == '\'') == name);
    if !(counted && given) {
        return String::new();
    }
    let mut hint = format!(
        " The name `{name}` after the count is what `wc -l FILE` prints; `wc -l < FILE` (the \
         file as input) prints the count alone."
    );
    if let Some((script, old, new)) = wc_line_edit(cwd, command) {
        hint.push_str(&format!(
            " In {script} that is: edit_file with path `{script}`, old `{old}` and new \
             `{new}`."
        ));
    }
    hint
}

/// The script the command runs (its first word naming a project file: `bash
/// count_lines.sh notes.txt`, `./count_lines.sh notes.txt`), its line that counts with `wc
/// -l FILE`, and that line with `wc -l < FILE`: (script, old, new). Only a line that is not
/// a comment, holds no backtick (the hint quotes it in backticks) and occurs once in the
/// script, so the edit is exact.
fn wc_line_edit(cwd: &Path, command: &str) -> Option<(String, String, String)> {
    let (script, text) = command.split_whitespace().find_map(|word| {
        let script = word.trim_matches(|c| c == '"' || c == '\'');
        Some((script, read_small_text(&resolve(cwd, script))?))
    })?;
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.starts_with('#') && line.contains("wc -l "))?;
    let new = wc_from_input(line)?;
    let exact = !line.contains('`') && text.matches(line).count() == 1;
    exact.then(|| (script.to_string(), line.to_string(), new))
}

/// `line` with its `wc -l FILE` made `wc -l < FILE`, when it has one.
fn wc_from_input(line: &str) -> Option<String> {
    let at = line.find("wc -l ")? + "wc -l ".len();
    let rest = &line[at..];
    let file = rest.split([' ', ')', ';', '|', '`']).next()?;
    let plain = !file.is_empty() && !file.starts_with(['<', '-', '&', '>']);
    plain.then(|| format!("{}< {rest}", &line[..at]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{self, call, output, shell, start};
    use pretty_assertions::assert_eq;

    #[test]
    fn the_expected_output_is_read_from_the_request_or_not_at_all() {
        let number = |n: &str| Some(Expected::Number(n.into()));
        let cases = [
            (
                "python3 pages.py should print 4 (10 items, 3 per page need 4 pages) but it \
                 prints 3. Fix it.",
                number("4"),
            ),
            (
                "node max.js should print 9, the largest number.",
                number("9"),
            ),
            ("The output should be -2.5.", number("-2.5")),
            (
                "Expected output: `hello world`",
                Some(Expected::Text("hello world".into())),
            ),
            (
                "Create hello.py that prints hello, then run it.",
                Some(Expected::Word("hello".into())),
            ),
            (
                "Write a script that prints \"Done!\".",
                Some(Expected::Text("Done!".into())),
            ),
            // A program printing one count prints a number alone.
            (
                "Write a bash script count_lines.sh that prints the number of lines in the \
                 file given as its first argument, then run it on notes.txt.",
                Some(Expected::Count),
            ),
            (
                "Write words.py to print how many words input.txt has.",
                Some(Expected::Count),
            ),
            // Several counts are a listing, with labels of their own.
            (
                "Write a script that prints the number of lines of each file in docs.txt.",
                None,
            ),
            (
                "For each file in docs/, write a script to print the number of lines.",
                None,
            ),
            (
                "Write wc.py that prints the number of lines, words and characters in a file.",
                None,
            ),
            // A format of its own, or a program's present behaviour: no count check.
            (
                "Write count.py that prints the number of lines as `Lines: N`.",
                None,
            ),
            (
                "app.py prints the number of users; add a flag that also shows their names.",
                None,
            ),
            (
                "Make report.py print the number of sales per region. Run it.",
                None,
            ),
            // No value this aid can read: it stays silent.
            ("Write a bash script that counts the lines.", None),
            (
                "Create fizz.js that prints the numbers 1 to 15, one per line.",
                None,
            ),
            ("Make it print something nicer.", None),
            ("It prints 3; fix the rounding.", None),
            ("Which port does the service listen on?", None),
        ];
        for (request, want) in cases {
            assert_eq!(expected_output(request), want, "{request}");
        }
    }

    #[test]
    fn numbers_words_and_texts_match_as_wholes() {
        let four = Expected::Number("4".into());
        assert!(four.found_in("4\n"));
        assert!(four.found_in("pages: 4."));
        assert!(!four.found_in("14\n"));
        assert!(!four.found_in("4.0\n"));
        assert!(!four.found_in(""));
        let hello = Expected::Word("hello".into());
        assert!(hello.found_in("Hello!\n"));
        assert!(!hello.found_in("hello_world\n"));
        let text = Expected::Text("Hello, Ada".into());
        assert!(text.found_in("hello, ada!\n"));
        for bare in ["5\n", "  42 ", "-3\n", "2.5\n"] {
            assert!(Expected::Count.found_in(bare), "{bare:?}");
        }
        for not_bare in ["5 notes.txt\n", "lines: 5\n", "", "1\n2\n", "1.2.3", "5."] {
            assert!(!Expected::Count.found_in(not_bare), "{not_bare:?}");
        }
    }

    #[test]
    fn a_count_printed_with_more_than_the_number_is_sent_back_once() {
        let mut aid = new_aid(
            "Write a bash script count_lines.sh that prints the number of lines in the file \
             given as its first argument, then run it on notes.txt.",
        );
        aid.before_tool_calls(&[test_support::write("w", "count_lines.sh", "wc -l \"$1\"\n")]);
        // `cat` runs no program: not compared.
        run(&mut aid, "c", "cat count_lines.sh", 0, "wc -l \"$1\"\n");
        run(
            &mut aid,
            "r",
            "bash count_lines.sh notes.txt",
            0,
            "5 notes.txt\n",
        );
        let reminder = aid.before_finish(Some("Done.")).unwrap();
        assert_eq!(
            reminder.message_text().unwrap(),
            "The task expects a number and nothing else as the output, but the last run of \
             `bash count_lines.sh notes.txt` printed:\n5 notes.txt\nFix the code so that it \
             prints that, then run `bash count_lines.sh notes.txt` again. The name \
             `notes.txt` after the count is what `wc -l FILE` prints; `wc -l < FILE` (the file \
             as input) prints the count alone."
        );
        run(
            &mut aid,
            "s",
            "bash count_lines.sh notes.txt",
            0,
            "5 notes.txt\n",
        );
        assert_eq!(aid.before_finish(Some("Done.")), None, "once");

        // Other extra text gets no wc hint.
        let mut labelled = new_aid("Write count.sh that prints the number of lines in a.txt.");
        run(&mut labelled, "r", "sh count.sh a.txt", 0, "lines: 5\n");
        let reminder = labelled.before_finish(Some("Done.")).unwrap();
        assert!(
            !reminder.message_text().unwrap().contains("wc -l"),
            "{reminder:?}"
        );

        // A named command is a check whose report is not the count.
        let mut tested = new_aid(
            "Write count.py that prints the number of lines in a file. Check it with \
             python3 -m unittest test_count.",
        );
        run(
            &mut tested,
            "t",
            "python3 -m unittest test_count",
            0,
            "Ran 1 test\n\nOK\n",
        );
        assert_eq!(tested.before_finish(Some("Done.")), None);

        let mut fixed = new_aid("Write count.sh that prints the number of lines in a.txt.");
        run(&mut fixed, "r", "sh count.sh", 0, "5\n");
        assert_eq!(fixed.before_finish(Some("Done.")), None);
    }

    fn result(id: &str, code: i32, printed: &str) -> ResponseItem {
        output(
            id,
            &format!(
                "Wall time: 0.1 seconds\nProcess exited with code {code}\nOriginal token \
                 count: 1\nOutput:\n{printed}"
            ),
        )
    }

    fn new_aid(request: &str) -> CheckExpectedOutput {
        let dir = std::path::Path::new("/nonexistent");
        CheckExpectedOutput::new(&start(request, dir))
    }

    fn run(aid: &mut CheckExpectedOutput, id: &str, command: &str, code: i32, output: &str) {
        aid.before_tool_calls(&[shell(id, command)]);
        aid.after_tool_outputs(&mut [result(id, code, output)]);
    }

    #[test]
    fn a_count_with_the_file_name_gets_the_edit_of_the_scripts_wc_line() {
        let dir = test_support::project(&[
            (
                "count_lines.sh",
                "#!/bin/bash\nlines=$(wc -l \"$1\")\necho \"$lines\"\n",
            ),
            ("notes.txt", "a\nb\n"),
        ]);
        let mut aid = CheckExpectedOutput::new(&start(
            "Write a bash script count_lines.sh that prints the number of lines in the file \
             given as its first argument, then run it on notes.txt.",
            dir.path(),
        ));
        run(
            &mut aid,
            "r",
            "bash count_lines.sh notes.txt",
            0,
            "2 notes.txt\n",
        );
        let reminder = aid.before_finish(Some("Done.")).unwrap();
        assert!(
            reminder.message_text().unwrap().ends_with(
                "prints the count alone. In count_lines.sh that is: edit_file with path \
                 `count_lines.sh`, old `lines=$(wc -l \"$1\")` and new `lines=$(wc -l < \
                 \"$1\")`."
            ),
            "{reminder:?}"
        );
    }

    #[test]
    fn the_wc_edit_comes_from_the_script_run_and_only_when_it_is_exact() {
        let dir = test_support::project(&[
            ("direct.sh", "# count with wc -l FILE\nwc -l $1\n"),
            ("twice.sh", "wc -l $1\nwc -l $1\n"),
            ("ticks.sh", "n=`wc -l $1`\necho $n\n"),
            ("plain.sh", "cat $1 | wc -l\n"),
            ("notes.txt", "wc -l notes\n"),
        ]);
        let edit = |command: &str| wc_line_edit(dir.path(), command);
        assert_eq!(
            edit("./direct.sh notes.txt"),
            Some(("./direct.sh".into(), "wc -l $1".into(), "wc -l < $1".into())),
            "run directly, its comment skipped"
        );
        assert_eq!(
            edit("bash twice.sh notes.txt"),
            None,
            "the line is not unique"
        );
        assert_eq!(edit("bash ticks.sh notes.txt"), None, "backticks");
        assert_eq!(
            edit("bash plain.sh notes.txt"),
            None,
            "the script has no such line, and the data file is not looked in"
        );
    }

    #[test]
    fn only_a_wc_given_a_file_is_turned_into_wc_reading_its_input() {
        assert_eq!(wc_from_input("wc -l $1").as_deref(), Some("wc -l < $1"));
        assert_eq!(
            wc_from_input("echo $(wc -l \"$file\") # count").as_deref(),
            Some("echo $(wc -l < \"$file\") # count")
        );
        assert_eq!(wc_from_input("wc -l < \"$1\""), None, "already input");
        assert_eq!(wc_from_input("cat \"$1\" | wc -l"), None, "no file");
        assert_eq!(wc_from_input("wc -l -- \"$1\""), None, "options");
        assert_eq!(wc_from_input("echo done"), None);
    }

    const MAXJS: &str = "node max.js should print 9, the largest number, but it prints 1. \
                         Fix the largest function in max.js and run node max.js to check.";

    #[test]
    fn a_run_that_printed_nothing_is_compared_with_the_expected_output_once() {
        let mut aid = new_aid(MAXJS);
        aid.before_tool_calls(&[call(
            "w",
            "edit_file",
            serde_json::json!({"path": "max.js", "old": "<", "new": ">"}),
        )]);
        run(&mut aid, "r", "node max.js", 0, "");
        let reminder = aid.before_finish(Some("Fixed.")).unwrap();
        assert_eq!(
            reminder.message_text().unwrap(),
            "The task expects the output `9`, but the last run of `node max.js` printed \
             nothing. Fix the code so that it prints that, then run `node max.js` again."
        );
        let mut prompt = Prompt::default();
        aid.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Required);
        run(&mut aid, "s", "node max.js", 0, "1\n");
        assert_eq!(aid.before_finish(Some("Fixed.")), None, "once");
    }

    #[test]
    fn a_run_that_printed_the_expected_output_ends_the_turn() {
        let mut aid = new_aid(MAXJS);
        run(&mut aid, "r", "node max.js", 0, "9\n");
        assert_eq!(aid.before_finish(Some("Done.")), None);
        // Other commands are not the named check: a cat of the file is not compared, a
        // direct run of a named script is.
        run(&mut aid, "c", "cat max.js", 0, "function largest() {}\n");
        assert_eq!(aid.before_finish(Some("Done.")), None);
        let mut aid = new_aid("check.sh should print OK. Run sh check.sh.");
        run(&mut aid, "d", "./check.sh", 0, "FAIL\n");
        assert!(aid.before_finish(Some("Done.")).is_some());
    }

    #[test]
    fn a_failed_run_or_one_before_the_last_write_is_not_a_match() {
        let mut aid = new_aid(MAXJS);
        run(&mut aid, "r", "node max.js", 1, "TypeError at line 9\n");
        let reminder = aid.before_finish(Some("Done.")).unwrap();
        let text = reminder.message_text().unwrap();
        assert!(
            text.contains("printed:\nTypeError at line 9\nFix the code"),
            "{text}"
        );

        // A wrong run followed by a write: the old run says nothing about the new code.
        let mut aid = new_aid(MAXJS);
        run(&mut aid, "r", "node max.js", 0, "1\n");
        aid.before_tool_calls(&[call(
            "w",
            "write_file",
            serde_json::json!({"path": "max.js", "content": "x"}),
        )]);
        assert_eq!(aid.before_finish(Some("Done.")), None);
    }

    #[test]
    fn without_a_named_command_the_last_program_run_is_compared() {
        let mut aid = new_aid("Create hello.py that prints hello, then run it.");
        run(&mut aid, "l", "ls", 0, "hello.py\n");
        assert_eq!(aid.before_finish(Some("Done.")), None, "ls runs no program");
        run(&mut aid, "r", "python3 hello.py", 0, "Hi there\n");
        let reminder = aid.before_finish(Some("Done.")).unwrap();
        let text = reminder.message_text().unwrap();
        assert!(text.contains("`hello`"), "{text}");
        assert!(
            text.contains("`python3 hello.py` printed:\nHi there"),
            "{text}"
        );

        // No expectation this aid can read: silent, whatever ran.
        let mut aid = new_aid("Create fizz.js that prints the numbers 1 to 15.");
        run(&mut aid, "r", "node fizz.js", 0, "");
        assert_eq!(aid.before_finish(Some("Done.")), None);
    }
}
