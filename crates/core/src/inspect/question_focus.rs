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

use osprey_model::{Prompt, ToolChoice};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use osprey_tools::names::SHELL_COMMAND;

use super::check_aids::is_question;
use super::expected_output::printed;
use super::question_guard::asks_for_change;
use super::{CallVerdict, TurnInspector, TurnStart};
use crate::tools::call::ToolCall;

/// Most characters of the request restated under a result.
const QUESTION_CHARS: usize = 400;

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
    /// Files a command's output shows defining the name a definition question asks about.
    defined_in: Vec<String>,
    asked: bool,
    /// Whether an answer naming none of `defined_in` was sent back.
    corrected: bool,
    require_call: bool,
}

impl QuestionFocus {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        let applies = is_question(start.request) && !asks_for_change(start.request);
        Self {
            question: applies.then(|| start.request.chars().take(QUESTION_CHARS).collect()),
            need: if !applies {
                Need::Reading
            } else if wants_figure(start.request) {
                Need::Figure
            } else if let Some(name) = defined_name(start.request) {
                Need::Definition(name)
            } else {
                Need::Reading
            },
            shell_calls: Vec::new(),
            computed: false,
            defined_in: Vec::new(),
            asked: false,
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
        if let Some(note) = self.answer_contradicts_search(answer.unwrap_or_default()) {
            return Some(ResponseItem::user_text(note));
        }
        if self.need == Need::Reading || self.computed || self.asked {
            return None;
        }
        self.asked = true;
        self.require_call = true;
        Some(ResponseItem::user_text(match &self.need {
            Need::Definition(name) => format!(
                "You have not searched for the definition of `{name}`. Run {}, then answer \
                 with the file it names.",
                definition_search(name)
            ),
            _ => "That figure was not computed. Run a command that works it out from the file \
                  (grep -c, wc -l, or python3 -c), then answer with the number it prints."
                .to_string(),
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
            Need::Figure if !self.computed => "Do not count or add up by eye: run a command \
                that computes the figure (grep -c, wc -l, or python3 -c) and answer from its \
                output."
                .to_string(),
            Need::Definition(name) if !self.computed => format!(
                "A file that imports or uses `{name}` is not where it is defined. Find the \
                 line that defines it with {} and answer with the file it names.",
                definition_search(name)
            ),
            _ => "If the result above shows the answer, reply with it.".to_string(),
        }
    }

    /// Once: the answer to a definition question names none of the files the search showed.
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
    let lower = request.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    FIGURE_PHRASES.iter().any(|phrase| {
        let parts: Vec<&str> = phrase.split(' ').collect();
        words.windows(parts.len()).any(|window| window == parts)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::call::ToolPayload;

    fn start(request: &str) -> TurnStart<'_> {
        TurnStart {
            request,
            cwd: std::path::Path::new("/nonexistent"),
            tool_names: &[],
            command_path: None,
        }
    }

    fn call(tool: &str) -> ToolCall {
        ToolCall {
            call_id: "c".to_string(),
            tool_name: tool.to_string(),
            payload: ToolPayload::Function {
                arguments: "{}".to_string(),
            },
        }
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
        let mut outputs = shell_result(0, "420");
        focus.after_tool_outputs(&mut outputs);
        assert!(text(&outputs).ends_with("If the result above shows the answer, reply with it."));
        assert!(focus.before_finish(Some("420")).is_none());
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
