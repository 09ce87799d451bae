//! Question focus: while the local model answers a question about the project, every tool
//! result ends with the question again, and a figure the question asks for (how many, a sum,
//! an average) must come from a command that computes it.
//!
//! Seen on 2026-12-05: the model read deploy/service.toml, got `port = 8731` back, and wrote
//! "To answer this question, I need to read service.toml" again — the question was a long way
//! back and its own plan was the nearest text. With the question restated under the result
//! it answered 8731 at once. Asked how many rows of sales.csv have the region north, it read
//! the 21 rows and answered 3 (there are 7): a 1.5B model cannot count by eye, but it writes
//! `grep -c north sales.csv` readily when the shell tool is the only call it may make.
//! Asked in which file `parse_header` is defined, it read app.py, whose first line imports
//! it, and answered app.py: where a name is defined is found by searching for its definition.
//! Given the search, it ran it, saw `./net/http.py:1:def parse_header(line):` and still
//! answered app.py; the result now ends with the file the search names, and an answer that
//! names another file is sent back once.
//! Asked how many rows have the region north, it answered 3 without opening sales.csv, was
//! sent to the shell, ran `grep -c 'region == ' sales.csv` (exit 1, no match) and answered 3
//! again: a figure reminder now shows the first lines of the data file the question names,
//! and a command that fails after it earns one more reminder. Given a command that works,
//! it ran it, saw 7, and answered 3 again: the result now ends with the number the command
//! printed, and an answer without it is sent back once.

use osprey_model::{Prompt, ToolChoice};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use osprey_tools::names::SHELL_COMMAND;

use super::check_aids::is_question;
use super::expected_output::printed;
use super::local_aids::file_names_in;
use super::question_guard::asks_for_change;
use super::{CallVerdict, TurnInspector, TurnStart};
use crate::tools::call::ToolCall;

/// Most characters of the request restated under a result.
const QUESTION_CHARS: usize = 400;

/// Reminders a figure answered without a successful command gets: a second one only after
/// the command the first asked for failed.
const FIGURE_REMINDERS: usize = 2;

/// Lines of each data file a figure reminder shows, and most characters per line.
const HEAD_LINES: usize = 3;
const HEAD_LINE_CHARS: usize = 160;

/// Phrases that ask for a figure worked out from data.
const FIGURE_PHRASES: [&str; 8] = [
    "how many",
    "how much",
    "count",
    "sum",
    "total",
    "average",
    "mean",
    "number of",
];

/// Words that ask where a name is defined.
const DEFINITION_WORDS: [&str; 4] = ["defined", "declared", "implemented", "definition"];

/// Keywords that open a definition, in the languages a small project is likely to use.
const DEFINITION_KEYWORDS: [&str; 9] = [
    "def", "class", "function", "fn", "func", "struct", "const", "let", "var",
];

/// Words a code name follows in a request ("the function parse_header").
const KIND_WORDS: [&str; 8] = [
    "function", "class", "method", "struct", "type", "variable", "constant", "module",
];

/// What the answer to a question has to come from, besides reading.
#[derive(Debug, PartialEq)]
enum Need {
    /// Reading the right file is enough.
    Reading,
    /// A figure worked out from data: a command must compute it.
    Figure,
    /// Where the named identifier is defined: a search for its definition.
    Definition(String),
}

/// Keeps a question in view, and asks for a command when reading alone cannot answer it.
pub(crate) struct QuestionFocus {
    /// The request, when it is a question asking for no change.
    question: Option<String>,
    need: Need,
    /// Shell calls of the batch now running, by call id.
    shell_calls: Vec<String>,
    /// Whether a command exited 0 in this turn.
    computed: bool,
    /// Whether a command failed since the last reminder.
    failed_since_reminder: bool,
    /// The first lines of the files a figure question names, for its reminders.
    data_heads: String,
    /// Commands that count and add up by column, when a figure question names a CSV file.
    csv_recipes: String,
    /// Files a command's output shows defining the name a definition question asks about.
    defined_in: Vec<String>,
    /// Reminders given for a figure or definition answered without a successful command.
    reminders: usize,
    /// The number the last successful command of a figure question printed, when it printed
    /// one number alone.
    printed_figure: Option<String>,
    /// Whether an answer contradicting `defined_in` or `printed_figure` was sent back.
    corrected: bool,
    require_call: bool,
}

/// Whether question focus takes part in a turn with this request: a question about the
/// project that asks for no change.
pub(crate) fn applies_to(request: &str) -> bool {
    is_question(request) && !asks_for_change(request)
}

impl QuestionFocus {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        let applies = applies_to(start.request);
        let figure = applies && wants_figure(start.request);
        let (data_heads, csv_recipes) = if figure {
            data_notes(start)
        } else {
            Default::default()
        };
        Self {
            question: applies.then(|| start.request.chars().take(QUESTION_CHARS).collect()),
            need: if !applies {
                Need::Reading
            } else if figure {
                Need::Figure
            } else if let Some(name) = defined_name(start.request) {
                Need::Definition(name)
            } else {
                Need::Reading
            },
            shell_calls: Vec::new(),
            computed: false,
            failed_since_reminder: false,
            data_heads,
            csv_recipes,
            defined_in: Vec::new(),
            reminders: 0,
            printed_figure: None,
            corrected: false,
            require_call: false,
        }
    }
}

impl TurnInspector for QuestionFocus {
    fn before_request(&mut self, prompt: &mut Prompt) {
        if std::mem::take(&mut self.require_call) {
            // The shell tool alone: asked to compute, the model re-read the file instead.
            prompt.tool_choice = ToolChoice::Function(SHELL_COMMAND);
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.shell_calls = calls
            .iter()
            .filter(|c| c.tool_name == SHELL_COMMAND)
            .map(|c| c.call_id.clone())
            .collect();
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        let mut failed_command = false;
        for item in outputs.iter() {
            if let ResponseItem::FunctionCallOutput { call_id, output } = item
                && self.shell_calls.contains(call_id)
            {
                let (text, failed) = printed(&output.text());
                failed_command |= failed;
                self.computed |= !failed;
                self.failed_since_reminder |= failed;
                if let (Need::Figure, false) = (&self.need, failed) {
                    self.printed_figure = lone_number(&text).or(self.printed_figure.take());
                }
                if let (Need::Definition(name), false) = (&self.need, failed) {
                    for file in definition_files(&text, name) {
                        if !self.defined_in.contains(&file) {
                            self.defined_in.push(file);
                        }
                    }
                }
            }
        }
        let Some(question) = &self.question else {
            return;
        };
        if failed_command {
            // Left as it is: told that a failed command is no answer, the model answered with
            // that sentence; with nothing added it reads the error and fixes the command.
            return;
        }
        let last = outputs
            .iter_mut()
            .rev()
            .find(|item| matches!(item, ResponseItem::FunctionCallOutput { .. }));
        if let Some(ResponseItem::FunctionCallOutput { output, .. }) = last {
            let mut text = format!("{}\n\nThe question to answer: {question}\n", output.text());
            text.push_str(&self.hint());
            *output = FunctionCallOutputPayload::from(text);
        }
    }

    fn before_finish(&mut self, answer: Option<&str>) -> Option<ResponseItem> {
        let answer = answer.unwrap_or_default();
        let note = self
            .answer_contradicts_search(answer)
            .or_else(|| self.answer_contradicts_figure(answer));
        if let Some(note) = note {
            return Some(ResponseItem::user_text(note));
        }
        let allowed = match self.need {
            Need::Reading => 0,
            // A second reminder only when the command the first one asked for failed.
            Need::Figure if self.reminders == 0 || self.failed_since_reminder => FIGURE_REMINDERS,
            Need::Figure => 1,
            Need::Definition(_) => 1,
        };
        if self.computed || self.reminders >= allowed {
            return None;
        }
        self.reminders += 1;
        self.failed_since_reminder = false;
        self.require_call = true;
        Some(ResponseItem::user_text(match &self.need {
            Need::Definition(name) => format!(
                "You have not searched for the definition of `{name}`. Run {}, then answer \
                 with the file it names.",
                definition_search(name)
            ),
            _ if self.reminders > 1 => format!(
                "That command failed, so it computed nothing.{}{}\nRun a corrected command \
                 that works the figure out from the file, then answer with the number it \
                 prints.",
                self.data_heads, self.csv_recipes
            ),
            _ => format!(
                "That figure was not computed.{}{}\nRun a command that works it out from the \
                 file (grep -c, wc -l, or python3 -c), then answer with the number it prints.",
                self.data_heads, self.csv_recipes
            ),
        }))
    }
}

impl QuestionFocus {
    /// The line that follows the restated question.
    fn hint(&self) -> String {
        match &self.need {
            Need::Definition(name) if !self.defined_in.is_empty() => format!(
                "The search output above shows `{name}` defined in {}. Reply with that path.",
                self.defined_files()
            ),
            Need::Figure if self.printed_figure.is_some() => format!(
                "The command printed {}. Reply with that number.",
                self.printed_figure.as_deref().unwrap_or_default()
            ),
            Need::Figure if !self.computed => format!(
                "Do not count or add up by eye: run a command that computes the figure (grep \
                 -c, wc -l, or python3 -c) and answer from its output.{}",
                self.csv_recipes
            ),
            Need::Definition(name) if !self.computed => format!(
                "A file that imports or uses `{name}` is not where it is defined. Find the \
                 line that defines it with {} and answer with the file it names.",
                definition_search(name)
            ),
            _ => "If the result above shows the answer, reply with it.".to_string(),
        }
    }

    /// Once: the answer to a definition question names none of the files the search showed.
    /// Once: the answer to a figure question lacks the number the command printed.
    fn answer_contradicts_figure(&mut self, answer: &str) -> Option<String> {
        let figure = self.printed_figure.as_ref()?;
        if self.corrected || has_number(answer, figure) {
            return None;
        }
        self.corrected = true;
        Some(format!(
            "Your answer does not give the number the command printed: {figure}. Reply with \
             that number."
        ))
    }

    fn answer_contradicts_search(&mut self, answer: &str) -> Option<String> {
        let Need::Definition(name) = &self.need else {
            return None;
        };
        if self.corrected
            || self.defined_in.is_empty()
            || self
                .defined_in
                .iter()
                .any(|file| answer.contains(file.as_str()))
        {
            return None;
        }
        self.corrected = true;
        Some(format!(
            "Your answer does not name the file the search showed `{name}` defined in: {}. \
             Reply with that path.",
            self.defined_files()
        ))
    }

    fn defined_files(&self) -> String {
        let quoted: Vec<String> = self.defined_in.iter().map(|f| format!("`{f}`")).collect();
        quoted.join(", ")
    }
}

/// The files `grep -n`-style output (`path:line:text`) shows defining `name`: lines where
/// the name follows a definition keyword.
fn definition_files(output: &str, name: &str) -> Vec<String> {
    let mut files = Vec::new();
    for line in output.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(path), Some(number), Some(code)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let numbered = !number.is_empty() && number.chars().all(|c| c.is_ascii_digit());
        let words: Vec<&str> = code
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let defines = words
            .windows(2)
            .any(|pair| DEFINITION_KEYWORDS.contains(&pair[0]) && pair[1] == name);
        let file = path.strip_prefix("./").unwrap_or(path).to_string();
        if numbered && defines && !file.is_empty() && !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

/// What a figure question's reminders show of the data files the request names (the first
/// two that exist under the working directory): their first lines ("`sales.csv` begins:"
/// and a fenced block), so a command can match how values are written, and for a CSV file
/// commands to count and add up by column with its header's names. Both empty when the
/// request names no such file.
fn data_notes(start: &TurnStart<'_>) -> (String, String) {
    let mut heads = String::new();
    let mut recipes = String::new();
    for name in file_names_in(start.request).iter().take(2) {
        let lines = first_lines(&start.cwd.join(name));
        let Some(header) = lines.first() else {
            continue;
        };
        heads.push_str(&format!(
            "\n`{name}` begins:\n```\n{}\n```",
            lines.join("\n")
        ));
        if name.to_lowercase().ends_with(".csv") && recipes.is_empty() {
            recipes = csv_recipe(name, header, start.request);
        }
    }
    (heads, recipes)
}

/// Up to [`HEAD_LINES`] lines of a file, each cut to [`HEAD_LINE_CHARS`]; reads no further.
fn first_lines(path: &std::path::Path) -> Vec<String> {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .take(HEAD_LINES)
        .map_while(Result::ok)
        .map(|line| line.chars().take(HEAD_LINE_CHARS).collect())
        .collect()
}

/// A command that works out the figure the request asks for from the CSV file `name` —
/// a sum, an average, or else a count of rows by a column's value — with COLUMN (and VALUE)
/// for the model to fill in. A 1.5B model given only "python3 -c" wrote a `with` block after
/// `;` (a syntax error) or `grep -c 'region == '` (no match); given a program with quoted
/// names inside, it swapped the outer quotes for single ones, which ended the program at the
/// first inner quote; given a count and a sum command, it used the count for a sum. So it
/// gets the one command its question needs, holding no quotes at all: the file, column and
/// value come in as arguments. Sums and averages print a whole number without `.0`.
fn csv_recipe(name: &str, header: &str, request: &str) -> String {
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    let rows = "csv.DictReader(open(sys.argv[1]))";
    let whole = "print(int(s) if s == int(s) else s)";
    let (what, program, arguments) = if has_word(request, &["average", "mean"]) {
        (
            "To average a column",
            format!(
                "import csv, statistics, sys; s = statistics.mean(float(r[sys.argv[2]]) for r in {rows}); {whole}"
            ),
            "COLUMN",
        )
    } else if has_word(request, &["sum", "total", "much"]) {
        (
            "To add up a column",
            format!("import csv, sys; s = sum(float(r[sys.argv[2]]) for r in {rows}); {whole}"),
            "COLUMN",
        )
    } else {
        (
            "To count the rows where a column holds a value",
            format!(
                "import csv, sys; print(sum(1 for r in {rows} if r[sys.argv[2]].strip() == sys.argv[3]))"
            ),
            "COLUMN VALUE",
        )
    };
    format!(
        "\nThe columns of `{name}` are: {}. {what}, run `python3 -c \"{program}\" {name} \
         {arguments}` with the column's name for COLUMN{}.",
        columns.join(", "),
        if arguments.ends_with("VALUE") {
            " and the value for VALUE"
        } else {
            ""
        }
    )
}

/// Whether the words of `text` include one of `words` (lower case).
fn has_word(text: &str, words: &[&str]) -> bool {
    lower_words(text)
        .iter()
        .any(|w| words.contains(&w.as_str()))
}

/// The words of `text`, lower-cased, split at anything but letters and digits.
fn lower_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The number `output` holds when it holds one number and nothing else (`7`, `-3`, `420.5`).
fn lone_number(output: &str) -> Option<String> {
    let text = output.trim();
    let digits = text.strip_prefix('-').unwrap_or(text);
    let numeric = !digits.is_empty()
        && digits.chars().next().is_some_and(|c| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.matches('.').count() <= 1;
    numeric.then(|| text.to_string())
}

/// Whether `number` appears in `answer` as a whole number: not part of a longer one.
fn has_number(answer: &str, number: &str) -> bool {
    answer.match_indices(number).any(|(at, _)| {
        let before = answer[..at].chars().next_back();
        let rest = &answer[at + number.len()..];
        let digit_before = before.is_some_and(|c| c.is_ascii_digit() || c == '.' || c == '-');
        let mut after = rest.chars();
        let digit_after = match after.next() {
            Some(c) if c.is_ascii_digit() => true,
            Some('.') => after.next().is_some_and(|c| c.is_ascii_digit()),
            _ => false,
        };
        !digit_before && !digit_after
    })
}

/// A command that prints the lines defining `name`, in most languages.
///
/// Whole-word matching (`-w`) rather than `\b`: the model writes the command into a
/// JSON string, where `\b` decodes to a backspace and the search finds nothing
/// (2026-12-05, where: grep exited 1 on a file that defines the function).
fn definition_search(name: &str) -> String {
    format!(
        "`grep -rnwE '({}) {name}' .`",
        DEFINITION_KEYWORDS.join("|")
    )
}

/// The code name a question asks the definition of, if it asks for one.
fn defined_name(request: &str) -> Option<String> {
    let words: Vec<&str> = request
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
    if !lower.iter().any(|w| DEFINITION_WORDS.contains(&w.as_str())) {
        return None;
    }
    let quoted = request
        .split('`')
        .nth(1)
        .filter(|_| request.matches('`').count() >= 2);
    if let Some(span) = quoted.filter(|span| is_identifier(span)) {
        return Some(span.to_string());
    }
    let after_kind = lower
        .iter()
        .position(|w| KIND_WORDS.contains(&w.as_str()))
        .and_then(|i| words.get(i + 1))
        .filter(|w| is_identifier(w) && !DEFINITION_WORDS.contains(&w.to_lowercase().as_str()));
    after_kind
        .or_else(|| words.iter().find(|w| looks_like_code(w)))
        .map(|w| w.to_string())
}

/// Letters, digits and `_`, not starting with a digit.
fn is_identifier(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// A word no prose has: `snake_case` or `camelCase`.
fn looks_like_code(word: &str) -> bool {
    let camel = word
        .chars()
        .zip(word.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    is_identifier(word) && word.len() >= 3 && (word.contains('_') || camel)
}

/// True when `request` asks for a count, sum or average.
fn wants_figure(request: &str) -> bool {
    let words = lower_words(request);
    FIGURE_PHRASES.iter().any(|phrase| {
        let parts: Vec<&str> = phrase.split(' ').collect();
        words.windows(parts.len()).any(|window| window == parts)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support;

    fn start(request: &str) -> TurnStart<'_> {
        test_support::start(request, std::path::Path::new("/nonexistent"))
    }

    fn call(tool: &str) -> ToolCall {
        test_support::call("c", tool, serde_json::json!({}))
    }

    fn result(text: &str) -> Vec<ResponseItem> {
        vec![ResponseItem::FunctionCallOutput {
            call_id: "c".to_string(),
            output: FunctionCallOutputPayload::from(text.to_string()),
        }]
    }

    fn text(items: &[ResponseItem]) -> String {
        match &items[0] {
            ResponseItem::FunctionCallOutput { output, .. } => output.text(),
            other => panic!("not an output: {other:?}"),
        }
    }

    #[test]
    fn a_result_in_a_question_turn_ends_with_the_question() {
        let mut focus = QuestionFocus::new(&start("Which port does the service listen on?"));
        let mut outputs = result("L3: port = 8731");
        focus.after_tool_outputs(&mut outputs);
        assert_eq!(
            text(&outputs),
            "L3: port = 8731\n\nThe question to answer: Which port does the service listen \
             on?\nIf the result above shows the answer, reply with it."
        );
        assert!(
            focus.before_finish(Some("8731")).is_none(),
            "nothing to compute"
        );
    }

    #[test]
    fn requests_for_a_change_are_left_alone() {
        for request in ["Create hello.py that prints hello.", "Can you add a test?"] {
            let mut focus = QuestionFocus::new(&start(request));
            let mut outputs = result("ok");
            focus.after_tool_outputs(&mut outputs);
            assert_eq!(text(&outputs), "ok", "{request}");
            assert!(focus.before_finish(Some("done")).is_none());
        }
    }

    #[test]
    fn a_figure_answered_without_a_command_is_asked_for_once_with_a_shell_call() {
        let mut focus =
            QuestionFocus::new(&start("How many rows of sales.csv have the region north?"));
        focus.before_tool_calls(&[call("read_file")]);
        let mut outputs = result("L2: north,120");
        focus.after_tool_outputs(&mut outputs);
        assert!(text(&outputs).contains("Do not count or add up by eye"));
        let reminder = focus.before_finish(Some("3")).expect("asked to compute");
        assert!(reminder.message_text().unwrap().contains("not computed"));
        let mut prompt = Prompt::default();
        focus.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Function(SHELL_COMMAND));
        assert!(focus.before_finish(Some("3")).is_none(), "once only");
        let mut next = Prompt::default();
        focus.before_request(&mut next);
        assert_eq!(next.tool_choice, ToolChoice::Auto);
    }

    fn shell_result(code: i32, printed: &str) -> Vec<ResponseItem> {
        result(&format!(
            "Wall time: 0.1 seconds\nProcess exited with code {code}\nOutput:\n{printed}"
        ))
    }

    #[test]
    fn a_figure_computed_by_a_command_ends_the_turn_normally() {
        let mut focus = QuestionFocus::new(&start(
            "What is the sum of the amount column in expenses.csv?",
        ));
        focus.before_tool_calls(&[call(SHELL_COMMAND)]);
        let mut outputs = shell_result(0, "date,item,amount\n420 in total");
        focus.after_tool_outputs(&mut outputs);
        assert!(
            text(&outputs).ends_with("If the result above shows the answer, reply with it."),
            "no lone number to name"
        );
        assert!(focus.before_finish(Some("420")).is_none());
    }

    #[test]
    fn a_figure_reminder_shows_the_data_file_and_a_failed_command_earns_one_more() {
        let dir = tempfile::tempdir().unwrap();
        let rows = "region,amount\nnorth,120\nsouth,80\nnorth,45\nwest,10\n";
        std::fs::write(dir.path().join("sales.csv"), rows).unwrap();
        let request = "How many rows of sales.csv have the region north?";
        let mut focus = QuestionFocus::new(&TurnStart {
            cwd: dir.path(),
            ..start(request)
        });
        let first = focus.before_finish(Some("3")).expect("not computed");
        let first = first.message_text().unwrap();
        assert!(
            first.contains("`sales.csv` begins:\n```\nregion,amount\nnorth,120\nsouth,80\n```"),
            "{first}"
        );
        assert!(!first.contains("west"), "three lines only: {first}");
        assert!(
            first.contains("The columns of `sales.csv` are: region, amount.")
                && first.contains("To count the rows where a column holds a value")
                && first.contains("\" sales.csv COLUMN VALUE` with the column's name")
                && !first.contains("To add up"),
            "{first}"
        );
        focus.before_request(&mut Prompt::default());
        focus.before_tool_calls(&[call(SHELL_COMMAND)]);
        let mut outputs = shell_result(1, "0");
        focus.after_tool_outputs(&mut outputs);
        assert_eq!(
            text(&outputs),
            text(&shell_result(1, "0")),
            "a failure stays bare"
        );
        let second = focus.before_finish(Some("3")).expect("the command failed");
        let second = second.message_text().unwrap();
        assert!(second.starts_with("That command failed"), "{second}");
        assert!(second.contains("region,amount"));
        let mut prompt = Prompt::default();
        focus.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Function(SHELL_COMMAND));
        focus.before_tool_calls(&[call(SHELL_COMMAND)]);
        focus.after_tool_outputs(&mut shell_result(1, "0"));
        assert!(
            focus.before_finish(Some("3")).is_none(),
            "two reminders at most"
        );
    }

    #[test]
    fn a_figure_reminder_without_a_named_file_is_plain() {
        let dir = tempfile::tempdir().unwrap();
        let mut focus = QuestionFocus::new(&TurnStart {
            cwd: dir.path(),
            ..start("How many rows of missing.csv are there?")
        });
        let text = focus.before_finish(Some("3")).unwrap();
        assert_eq!(
            text.message_text().unwrap(),
            "That figure was not computed.\nRun a command that works it out from the file \
             (grep -c, wc -l, or python3 -c), then answer with the number it prints."
        );
    }

    #[test]
    fn the_number_a_command_printed_is_named_and_an_answer_without_it_sent_back_once() {
        let mut focus =
            QuestionFocus::new(&start("How many rows of sales.csv have the region north?"));
        focus.before_tool_calls(&[call(SHELL_COMMAND)]);
        let mut outputs = shell_result(0, "7\n");
        focus.after_tool_outputs(&mut outputs);
        assert!(
            text(&outputs).ends_with("The command printed 7. Reply with that number."),
            "{}",
            text(&outputs)
        );
        let sent_back = focus
            .before_finish(Some("3"))
            .expect("3 is not what it printed");
        assert!(sent_back.message_text().unwrap().contains("printed: 7."));
        assert!(focus.before_finish(Some("3")).is_none(), "once only");
        let mut agreeing =
            QuestionFocus::new(&start("How many rows of sales.csv have the region north?"));
        agreeing.before_tool_calls(&[call(SHELL_COMMAND)]);
        agreeing.after_tool_outputs(&mut shell_result(0, "7"));
        assert!(agreeing.before_finish(Some("There are 7 rows.")).is_none());
    }

    #[test]
    fn the_csv_command_fits_the_figure_asked_for() {
        let sum = csv_recipe("e.csv", "date,item,amount", "What is the total of amount?");
        assert!(sum.contains("To add up a column") && sum.contains("\" e.csv COLUMN`"));
        assert!(sum.contains("s = sum(float(r[sys.argv[2]])"));
        let mean = csv_recipe("e.csv", "date,item,amount", "What is the average amount?");
        assert!(mean.contains("statistics.mean"), "{mean}");
        let count = csv_recipe("e.csv", "date,item,amount", "How many rows are paper?");
        assert!(count.contains("== sys.argv[3]") && count.contains("COLUMN VALUE"));
        for recipe in [sum, mean, count] {
            let program = recipe.split('"').nth(1).unwrap();
            assert!(!program.contains('\''), "no quotes inside: {program}");
        }
    }

    #[test]
    fn a_lone_number_is_a_whole_number_in_the_answer() {
        assert_eq!(lone_number(" 420\n").as_deref(), Some("420"));
        assert_eq!(lone_number("-3.5").as_deref(), Some("-3.5"));
        assert_eq!(lone_number("7 rows"), None);
        assert_eq!(lone_number("1.2.3"), None);
        assert_eq!(lone_number(""), None);
        assert!(has_number("The total is 420.", "420"));
        assert!(!has_number("The total is 4200.", "420"));
        assert!(!has_number("The total is 420.5", "420"));
        assert!(!has_number("1420", "420"));
    }

    #[test]
    fn a_failed_command_is_no_answer_and_computes_nothing() {
        let mut focus = QuestionFocus::new(&start(
            "What is the sum of the amount column in expenses.csv?",
        ));
        focus.before_tool_calls(&[call(SHELL_COMMAND)]);
        let failure = "Wall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nSyntaxError";
        let mut outputs = result(failure);
        focus.after_tool_outputs(&mut outputs);
        assert_eq!(
            text(&outputs),
            failure,
            "the error is left to speak for itself"
        );
        assert!(
            focus.before_finish(Some("1234")).is_some(),
            "a failed command computed nothing"
        );
    }

    #[test]
    fn a_definition_question_is_pointed_to_a_search_until_one_succeeds() {
        let mut focus = QuestionFocus::new(&start(
            "In which file is the function parse_header defined? Reply with the file's path.",
        ));
        focus.before_tool_calls(&[call("read_file")]);
        let mut outputs = result("L1: from net.http import parse_header");
        focus.after_tool_outputs(&mut outputs);
        let shown = text(&outputs);
        assert!(shown.contains("is not where it is defined"), "{shown}");
        assert!(shown.contains(
            "grep -rnwE '(def|class|function|fn|func|struct|const|let|var) parse_header' ."
        ));
        let reminder = focus
            .before_finish(Some("app.py"))
            .expect("asked to search");
        assert!(
            reminder
                .message_text()
                .unwrap()
                .contains("definition of `parse_header`")
        );
        let mut prompt = Prompt::default();
        focus.before_request(&mut prompt);
        assert_eq!(prompt.tool_choice, ToolChoice::Function(SHELL_COMMAND));
        focus.before_tool_calls(&[call(SHELL_COMMAND)]);
        let mut outputs = shell_result(0, "./net/http.py:1:def parse_header(line):");
        focus.after_tool_outputs(&mut outputs);
        assert!(
            text(&outputs).ends_with(
                "The search output above shows `parse_header` defined in `net/http.py`. \
                 Reply with that path."
            ),
            "{}",
            text(&outputs)
        );
        let sent_back = focus
            .before_finish(Some("app.py"))
            .expect("an answer naming another file is sent back");
        assert!(sent_back.message_text().unwrap().contains("`net/http.py`"));
        assert!(focus.before_finish(Some("app.py")).is_none(), "once only");
    }

    #[test]
    fn an_answer_naming_the_searched_file_ends_the_turn() {
        let mut focus = QuestionFocus::new(&start("Where is the class Config defined?"));
        focus.before_tool_calls(&[call(SHELL_COMMAND)]);
        let mut outputs = shell_result(
            0,
            "./app.py:3:from settings import Config\n./settings.py:10:class Config:",
        );
        focus.after_tool_outputs(&mut outputs);
        assert_eq!(focus.defined_in, vec!["settings.py".to_string()]);
        assert!(focus.before_finish(Some("It is in settings.py.")).is_none());
    }

    #[test]
    fn only_numbered_lines_with_a_definition_keyword_name_a_file() {
        let output = "src/a.js:4:const parseHeader = (l) => l;\n\
                      src/b.js:9:  parseHeader(x);\n\
                      notes: def parseHeader is elsewhere\n\
                      src/c.rs:2:pub fn parseHeaderX() {}";
        assert_eq!(definition_files(output, "parseHeader"), vec!["src/a.js"]);
    }

    #[test]
    fn the_defined_name_is_found_in_the_words_of_the_question() {
        assert_eq!(
            defined_name("Where is the class Config defined?").as_deref(),
            Some("Config")
        );
        assert_eq!(
            defined_name("Which file has the definition of `load`?").as_deref(),
            Some("load")
        );
        assert_eq!(
            defined_name("Where is parseHeader implemented?").as_deref(),
            Some("parseHeader")
        );
        assert_eq!(
            defined_name("Where is parse_header used?"),
            None,
            "not a definition"
        );
        assert_eq!(
            defined_name("Where is the logging defined?"),
            None,
            "no code name"
        );
        let plain = QuestionFocus::new(&start("Where is the logging defined?"));
        assert_eq!(plain.need, Need::Reading);
    }

    #[test]
    fn figure_words_are_whole_words() {
        assert!(wants_figure("How many lines?"));
        assert!(wants_figure("What is the total?"));
        assert!(wants_figure("the number of users"));
        assert!(!wants_figure("Which summary file?"), "summary is not sum");
        assert!(
            !wants_figure("Where is the account module?"),
            "account is not count"
        );
    }
}
