//! Finish checks for the local model, each asked for by a [`osprey_tools::TurnAid`] and
//! switched by a `[local_model]` key. The answer after a reminder must be a call
//! (`tool_choice = "required"`):
//!
//! - [`VerifyNamedCheck`] (`verify_named_check`): the request names a command ("check with
//!   sh check.sh", "run python3 pages.py") or an expected output ("should print 4"), and
//!   the model ends its turn without having run it since its last write (a run that failed
//!   is [`super::failed_check`]'s to send back). Once, and once more when files changed
//!   again after the first reminder;
//! - [`AnswerFromEvidence`] (`answer_from_evidence`), once per turn: the request is a
//!   question, the project has files, and the model answers without having read any.

use osprey_model::{Prompt, ToolChoice};
use osprey_protocol::ResponseItem;
use osprey_tools::names::{READ_FILE, SHELL_COMMAND};

use super::write_aids::resolve;
use super::{CallVerdict, TurnInspector, TurnStart, WRITING_TOOLS};
use crate::tools::call::{ToolCall, ToolPayload};

/// Programs that start a check a person names in a request.
pub(super) const CHECK_PROGRAMS: [&str; 16] = [
    "python3", "python", "node", "npm", "npx", "bash", "sh", "make", "pytest", "cargo", "go",
    "deno", "ruby", "perl", "java", "gcc",
];

/// Programs whose first argument is a subcommand word (`make test`, `npm test`).
const SUBCOMMAND_PROGRAMS: [&str; 5] = ["make", "npm", "npx", "cargo", "go"];

/// Words after `make`, `go`, … that are prose, not a subcommand ("make sure the tests
/// pass", "go ahead").
const NOT_SUBCOMMANDS: [&str; 12] = [
    "sure", "ahead", "through", "over", "back", "away", "up", "out", "into", "about", "along",
    "further",
];

/// Words that end a command named in prose ("run node max.js to check", "so that python3 -m
/// unittest still passes").
const PROSE_WORDS: [&str; 30] = [
    "to", "and", "then", "so", "but", "again", "still", "should", "must", "prints", "print",
    "printed", "outputs", "is", "are", "was", "with", "for", "on", "in", "it", "the", "a", "that",
    "which", "when", "fails", "passes", "works", "now",
];

/// The command of a shell call.
pub(super) fn command_of(call: &ToolCall) -> Option<String> {
    if call.tool_name != SHELL_COMMAND {
        return None;
    }
    let ToolPayload::Function { arguments } = &call.payload else {
        return None;
    };
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    value.get("command")?.as_str().map(str::to_owned)
}

/// Commands a request names: spans in backticks that start with a word, and phrases that
/// start with a known program (`python3 -m unittest test_stats`, `node max.js`), up to the
/// end of the clause.
pub(crate) fn named_commands(request: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut push = |command: String| {
        if !command.is_empty() && !found.contains(&command) {
            found.push(command);
        }
    };
    for (i, span) in request.split('`').enumerate() {
        let span = span.trim();
        if i % 2 == 1
            && span.contains(' ')
            && span.starts_with(|c: char| c.is_ascii_alphabetic() || c == '.')
        {
            push(span.to_string());
        }
    }
    let words: Vec<&str> = request.split_whitespace().collect();
    let mut i = 0;
    while i < words.len() {
        let (program, ended) = clean(words[i]);
        if !CHECK_PROGRAMS.contains(&program) {
            i += 1;
            continue;
        }
        let mut command = vec![program];
        let mut end = ended;
        i += 1;
        while !end && i < words.len() {
            let (word, ended) = clean(words[i]);
            let looks_like_argument = word.starts_with('-')
                || word.contains(['.', '/', '_', '='])
                || word.chars().any(|c| c.is_ascii_digit());
            // A plain word is an argument only as a flag's value (`-m unittest`) or a
            // subcommand (`make test`); otherwise the prose goes on ("a bash script").
            let plain_argument = !PROSE_WORDS.contains(&word)
                && !NOT_SUBCOMMANDS.contains(&word)
                && (command.last().is_some_and(|w| w.starts_with('-'))
                    || (command.len() == 1 && SUBCOMMAND_PROGRAMS.contains(&program)));
            if word.is_empty() || !(looks_like_argument || plain_argument) {
                break;
            }
            command.push(word);
            end = ended;
            i += 1;
        }
        // A bare program counts only at the end of a clause ("run it with node.").
        if command.len() == 1 && !end {
            continue;
        }
        push(command.join(" "));
    }
    found
}

/// A word without surrounding quotes and clause punctuation, and whether a clause ends
/// after it ("check.sh." → ("check.sh", true)).
pub(super) fn clean(word: &str) -> (&str, bool) {
    let trimmed = word.trim_matches(|c| "`'\"()".contains(c));
    let ended = trimmed.ends_with(['.', ',', ';', ':', '!', '?']);
    (
        trimmed.trim_end_matches(['.', ',', ';', ':', '!', '?']),
        ended || word.ends_with(['.', ',', ';', ':', '!', '?', ')']),
    )
}

/// True when `ran` runs `named`: every argument of the named command appears in it (a
/// leading `./` aside), or, for a bare program, the program starts it.
pub(super) fn runs(ran: &str, named: &str) -> bool {
    let named: Vec<&str> = named.split_whitespace().collect();
    let ran: Vec<&str> = ran
        .split_whitespace()
        .map(|w| w.trim_start_matches("./"))
        .collect();
    match named.as_slice() {
        [] => false,
        [program] => ran.contains(program),
        [_, arguments @ ..] => arguments
            .iter()
            .all(|a| ran.contains(&a.trim_start_matches("./"))),
    }
}

/// Programs that show a file rather than run something on it: `cat notes.txt` is not the
/// run the request asks for.
const VIEWING_PROGRAMS: [&str; 8] = ["cat", "head", "tail", "less", "more", "ls", "stat", "file"];

/// True when `command` runs something on the file `input`: a word of it names the file
/// (`notes.txt`, `./notes.txt`, `"notes.txt";`, `--file=notes.txt`, `<notes.txt`,
/// `$PWD/notes.txt`) and the command does not just show it (`cat notes.txt`).
fn runs_on_input(command: &str, input: &str) -> bool {
    let input = input.trim_start_matches("./");
    let mut words = command.split_whitespace();
    if words
        .next()
        .is_some_and(|first| VIEWING_PROGRAMS.contains(&first))
    {
        return false;
    }
    command.split_whitespace().any(|word| {
        let word = word.trim_matches(|c: char| "\"'<>;&|()".contains(c));
        word.trim_start_matches("./") == input
            || ["/", "=", "<"]
                .iter()
                .any(|before| word.ends_with(&format!("{before}{input}")))
    })
}

/// True when the request says what the output should be ("should print 4").
fn names_expected_output(request: &str) -> bool {
    let lower = request.to_lowercase();
    [
        "should print",
        "should output",
        "should show",
        "must print",
        "expected output",
    ]
    .iter()
    .any(|phrase| lower.contains(phrase))
}

/// What a request says a program is run on, before the input's name ("then run it on
/// notes.txt").
const RUN_ON_PHRASES: [&str; 8] = [
    "run it on ",
    "run it with ",
    "run the script on ",
    "run the script with ",
    "run the program on ",
    "run the program with ",
    "test it on ",
    "try it on ",
];

/// The inputs a request says to run the program on: the word after a phrase of
/// [`RUN_ON_PHRASES`] when it names a file (`notes.txt`, `data/in.csv`), not a program
/// (`run it with node` is a named command's business).
fn run_inputs(request: &str) -> Vec<String> {
    // ASCII lowering keeps every byte offset, so `at` indexes `request` too.
    let lower = request.to_ascii_lowercase();
    let mut inputs = Vec::new();
    for phrase in RUN_ON_PHRASES {
        for (at, _) in lower.match_indices(phrase) {
            let rest = &request[at + phrase.len()..];
            let Some(word) = rest.split_whitespace().next() else {
                continue;
            };
            let (word, _) = clean(word);
            let looks_like_file = word.contains(['.', '/'])
                && word.chars().any(|c| c.is_ascii_alphabetic())
                && !word.starts_with('-');
            if looks_like_file && !inputs.iter().any(|known| known == word) {
                inputs.push(word.to_string());
            }
        }
    }
    inputs
}

/// Most reminders [`VerifyNamedCheck`] gives in a turn.
const MOST_CHECK_REMINDERS: usize = 2;

/// Asks to run the check the request names when nothing ran it since the last write: once,
/// and once more if the model changed files again after the first reminder (at most
/// [`MOST_CHECK_REMINDERS`]).
pub(crate) struct VerifyNamedCheck {
    cwd: std::path::PathBuf,
    named: Vec<String>,
    /// Files the request says to run the program on.
    inputs: Vec<String>,
    expects_output: bool,
    /// Commands run since the last write (all of them when nothing was written).
    ran_since_write: Vec<String>,
    reminders: usize,
    /// A file was written since the last reminder.
    written_since_reminder: bool,
    require_call: bool,
}

impl VerifyNamedCheck {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            named: named_commands(start.request),
            inputs: run_inputs(start.request),
            expects_output: names_expected_output(start.request),
            ran_since_write: Vec::new(),
            reminders: 0,
            written_since_reminder: false,
            require_call: false,
        }
    }

    /// The reminder to give when the turn would end now.
    fn check(&mut self) -> Option<ResponseItem> {
        let may_remind = self.reminders == 0
            || (self.reminders < MOST_CHECK_REMINDERS && self.written_since_reminder);
        if !may_remind {
            return None;
        }
        let unrun: Vec<&String> = self
            .named
            .iter()
            .filter(|named| !self.ran_since_write.iter().any(|ran| runs(ran, named)))
            .collect();
        let text = if let Some(first) = unrun.first() {
            format!(
                "The task names the check `{first}`, and it has not run since your last \
                 change. Run it now with shell_command and read its output."
            )
        } else if let Some(input) = self.inputs.iter().find(|input| {
            // Only a file that is there: "run it on Linux/macOS" names none.
            resolve(&self.cwd, input).is_file()
                && !self
                    .ran_since_write
                    .iter()
                    .any(|ran| runs_on_input(ran, input))
        }) {
            let last = match self.ran_since_write.last() {
                Some(ran) => format!("your last run, `{ran}`, did not name it"),
                None => "nothing has run since your last change".to_string(),
            };
            format!(
                "The task says to run it on `{input}`, and {last}. Run the program on \
                 {input} now with shell_command and read its output."
            )
        } else if self.named.is_empty() && self.expects_output && self.ran_since_write.is_empty() {
            "The task says what the output should be, and nothing has run since your last \
             change. Run the program now with shell_command and compare its output."
                .to_string()
        } else {
            return None;
        };
        self.reminders += 1;
        self.written_since_reminder = false;
        self.require_call = true;
        Some(ResponseItem::user_text(text))
    }
}

impl TurnInspector for VerifyNamedCheck {
    fn before_request(&mut self, prompt: &mut Prompt) {
        if std::mem::take(&mut self.require_call) {
            prompt.tool_choice = ToolChoice::Required;
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        for call in calls {
            if WRITING_TOOLS.contains(&call.tool_name.as_str()) {
                self.ran_since_write.clear();
                self.written_since_reminder = true;
            } else if let Some(command) = command_of(call) {
                self.ran_since_write.push(command);
            }
        }
        CallVerdict::Run
    }

    fn before_finish(&mut self, _answer: Option<&str>) -> Option<ResponseItem> {
        self.check()
    }
}

/// Question words that open a request asking about the project.
const QUESTION_WORDS: [&str; 12] = [
    "what", "which", "where", "how", "who", "when", "why", "is", "are", "does", "do", "can",
];

/// True when the request asks a question.
pub(super) fn is_question(request: &str) -> bool {
    let first = request
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_lowercase();
    request.contains('?') || QUESTION_WORDS.contains(&first.as_str())
}

/// True when `cwd` has an entry that is not hidden.
fn has_files(cwd: &std::path::Path) -> bool {
    std::fs::read_dir(cwd).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| !e.file_name().to_string_lossy().starts_with('.'))
    })
}

/// Asks once to look at the project's files when a question is answered without reading any.
pub(crate) struct AnswerFromEvidence {
    applies: bool,
    looked: bool,
    asked: bool,
    require_call: bool,
}

impl AnswerFromEvidence {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            applies: is_question(start.request) && has_files(start.cwd),
            looked: false,
            asked: false,
            require_call: false,
        }
    }
}

impl TurnInspector for AnswerFromEvidence {
    fn before_request(&mut self, prompt: &mut Prompt) {
        if std::mem::take(&mut self.require_call) {
            prompt.tool_choice = ToolChoice::Required;
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        if calls
            .iter()
            .any(|c| c.tool_name == READ_FILE || c.tool_name == SHELL_COMMAND)
        {
            self.looked = true;
        }
        CallVerdict::Run
    }

    fn before_finish(&mut self, _answer: Option<&str>) -> Option<ResponseItem> {
        if !self.applies || self.looked || self.asked {
            return None;
        }
        self.asked = true;
        self.require_call = true;
        Some(ResponseItem::user_text(
            "You answered without opening any file. The answer must come from this \
             project's files: read the file that holds it (see the file list) with read_file, \
             then answer from what it says.",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{self, call, start};
    use osprey_tools::names::EDIT_FILE;
    use pretty_assertions::assert_eq;

    fn shell(command: &str) -> ToolCall {
        test_support::shell("c", command)
    }

    fn write() -> ToolCall {
        test_support::write("c", "a.py", "")
    }

    #[test]
    fn commands_are_read_from_the_request() {
        let cases: [(&str, &[&str]); 11] = [
            ("Fix it and make sure the tests pass.", &[]),
            ("Go ahead and add the function.", &[]),
            (
                "Go through the list, then run go test when done.",
                &["go test"],
            ),
            ("Check your work with sh check.sh.", &["sh check.sh"]),
            (
                "node max.js should print 9. Fix it and run node max.js to check.",
                &["node max.js"],
            ),
            (
                "The test fails when I run python3 -m unittest test_stats. Fix it.",
                &["python3 -m unittest test_stats"],
            ),
            (
                "Rename it so that python3 -m unittest still passes.",
                &["python3 -m unittest"],
            ),
            ("Run `make test` when done.", &["make test"]),
            (
                "Write a bash script count_lines.sh that prints the count.",
                &[],
            ),
            ("Create fizz.js. Run it with node.", &["node"]),
            ("Which port does the service listen on?", &[]),
        ];
        for (request, want) in cases {
            assert_eq!(named_commands(request), want, "{request}");
        }
    }

    #[test]
    fn asks_once_for_the_named_check_when_it_did_not_run_after_the_last_write() {
        let dir = tempfile::tempdir().unwrap();
        let mut aid =
            VerifyNamedCheck::new(&start("Check your work with sh check.sh.", dir.path()));
        aid.before_tool_calls(&[shell("sh check.sh")]);
        aid.before_tool_calls(&[write()]);
        aid.before_tool_calls(&[shell("python3 -c 'import a'")]);
        let reminder = aid.before_finish(Some("Done.")).unwrap();
        assert!(
            reminder.message_text().unwrap().contains("`sh check.sh`"),
            "{reminder:?}"
        );
        let mut prompt = Prompt::default();
        aid.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Required);
        assert_eq!(aid.before_finish(Some("Done.")), None, "once per write");
        // Files changed again after the reminder (its run failed, the model edited): one
        // more reminder, and no third.
        aid.before_tool_calls(&[shell("sh check.sh")]);
        aid.before_tool_calls(&[write()]);
        assert!(
            aid.before_finish(Some("Done.")).is_some(),
            "after a new write"
        );
        assert_eq!(aid.before_finish(Some("Done.")), None);
        aid.before_tool_calls(&[write()]);
        assert_eq!(aid.before_finish(Some("Done.")), None, "at most two");
    }

    #[test]
    fn a_run_of_the_named_check_after_the_write_ends_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let mut aid =
            VerifyNamedCheck::new(&start("Check your work with sh check.sh.", dir.path()));
        aid.before_tool_calls(&[write()]);
        aid.before_tool_calls(&[shell("sh ./check.sh")]);
        assert_eq!(aid.before_finish(Some("Done.")), None);
        let mut none = VerifyNamedCheck::new(&start("Create hello.py.", dir.path()));
        assert_eq!(none.before_finish(Some("Done.")), None, "no check named");
    }

    #[test]
    fn a_run_before_an_edit_does_not_count_as_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let mut aid =
            VerifyNamedCheck::new(&start("Check your work with sh check.sh.", dir.path()));
        aid.before_tool_calls(&[shell("sh check.sh")]);
        aid.before_tool_calls(&[call(
            "c",
            EDIT_FILE,
            serde_json::json!({"path": "a.py", "old": "x", "new": "y"}),
        )]);
        assert!(aid.before_finish(Some("Done.")).is_some());
    }

    #[test]
    fn an_expected_output_asks_for_a_run_after_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let mut aid = VerifyNamedCheck::new(&start("pages.py should print 4; fix it.", dir.path()));
        aid.before_tool_calls(&[write()]);
        let reminder = aid.before_finish(Some("Fixed.")).unwrap();
        assert!(
            reminder
                .message_text()
                .unwrap()
                .contains("what the output should be")
        );
    }

    #[test]
    fn a_question_answered_without_reading_asks_once_to_look() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("service.toml"), "port = 8731\n").unwrap();
        let question = "Which port does the service listen on?";
        let mut aid = AnswerFromEvidence::new(&start(question, dir.path()));
        let reminder = aid.before_finish(Some("8080")).unwrap();
        assert!(reminder.message_text().unwrap().contains("read_file"));
        let mut prompt = Prompt::default();
        aid.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Required);
        assert_eq!(aid.before_finish(Some("8080")), None, "once");

        // Read first: no reminder.
        let mut aid = AnswerFromEvidence::new(&start(question, dir.path()));
        aid.before_tool_calls(&[call(
            "c",
            READ_FILE,
            serde_json::json!({"file_path": "service.toml"}),
        )]);
        assert_eq!(aid.before_finish(Some("8731")), None);

        // Not a question, or nothing to read: no reminder.
        let mut aid = AnswerFromEvidence::new(&start("Create hello.py.", dir.path()));
        assert_eq!(aid.before_finish(Some("Done.")), None);
        let empty = tempfile::tempdir().unwrap();
        let mut aid = AnswerFromEvidence::new(&start(question, empty.path()));
        assert_eq!(aid.before_finish(Some("8080")), None);
    }

    #[test]
    fn the_file_a_request_says_to_run_on_is_read_and_a_run_without_it_is_sent_back() {
        assert_eq!(
            run_inputs(
                "Write a bash script count_lines.sh that prints the number of lines in the \
                 file given as its first argument, then run it on notes.txt."
            ),
            ["notes.txt"]
        );
        assert_eq!(
            run_inputs("Create fizz.js. Run it with node."),
            [] as [&str; 0]
        );
        assert_eq!(run_inputs("Run it with -v to see more."), [] as [&str; 0]);
        assert_eq!(run_inputs("Try it on data/in.csv"), ["data/in.csv"]);

        let dir = test_support::project(&[("notes.txt", "a\nb\n")]);
        let request = "Write count_lines.sh that prints the number of lines of its first \
                       argument, then run it on notes.txt.";
        let mut aid = VerifyNamedCheck::new(&start(request, dir.path()));
        aid.before_tool_calls(&[write()]);
        aid.before_tool_calls(&[shell("bash count_lines.sh")]);
        let reminder = aid.before_finish(Some("It prints 0.")).unwrap();
        assert_eq!(
            reminder.message_text().unwrap(),
            "The task says to run it on `notes.txt`, and your last run, `bash \
             count_lines.sh`, did not name it. Run the program on notes.txt now with \
             shell_command and read its output."
        );

        let mut aid = VerifyNamedCheck::new(&start(request, dir.path()));
        aid.before_tool_calls(&[write()]);
        aid.before_tool_calls(&[shell("bash count_lines.sh ./notes.txt")]);
        assert_eq!(aid.before_finish(Some("5")), None, "run on it");
        let mut aid = VerifyNamedCheck::new(&start(request, dir.path()));
        aid.before_tool_calls(&[write()]);
        aid.before_tool_calls(&[shell("sh count_lines.sh < notes.txt")]);
        assert_eq!(aid.before_finish(Some("5")), None, "given as input");
        for command in [
            "python3 count.py --file=notes.txt",
            "bash c.sh<notes.txt",
            "bash c.sh \"$PWD/notes.txt\";",
        ] {
            assert!(runs_on_input(command, "notes.txt"), "{command}");
        }
        assert!(!runs_on_input("cat notes.txt", "notes.txt"), "only shown");
        assert!(
            !runs_on_input("bash c.sh my-notes.txt", "notes.txt"),
            "another file"
        );

        // A file that is not there is no input to ask for ("run it on Linux/macOS").
        let mut aid =
            VerifyNamedCheck::new(&start("Write x.sh; run it on Linux/macOS.", dir.path()));
        aid.before_tool_calls(&[write()]);
        aid.before_tool_calls(&[shell("bash x.sh")]);
        assert_eq!(aid.before_finish(Some("Done.")), None);
        assert_eq!(
            run_inputs("İ run it on é.txt"),
            ["é.txt"],
            "no panic on non-ASCII"
        );
    }
}
