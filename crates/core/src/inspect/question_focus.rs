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

/// Keeps a question in view, and asks for a command when it needs a computed figure.
pub(crate) struct QuestionFocus {
    /// The request, when it is a question asking for no change.
    question: Option<String>,
    /// Whether the question asks for a figure worked out from data.
    wants_figure: bool,
    /// Shell calls of the batch now running, by call id.
    shell_calls: Vec<String>,
    /// Whether a command exited 0 in this turn.
    computed: bool,
    asked: bool,
    require_call: bool,
}

impl QuestionFocus {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        let applies = is_question(start.request) && !asks_for_change(start.request);
        Self {
            question: applies.then(|| start.request.chars().take(QUESTION_CHARS).collect()),
            wants_figure: applies && wants_figure(start.request),
            shell_calls: Vec::new(),
            computed: false,
            asked: false,
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
                let (_, failed) = printed(&output.text());
                failed_command |= failed;
                self.computed |= !failed;
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
            text.push_str(if self.wants_figure && !self.computed {
                "Do not count or add up by eye: run a command that computes the figure \
                 (grep -c, wc -l, or python3 -c) and answer from its output."
            } else {
                "If the result above shows the answer, reply with it."
            });
            *output = FunctionCallOutputPayload::from(text);
        }
    }

    fn before_finish(&mut self, _answer: Option<&str>) -> Option<ResponseItem> {
        if !self.wants_figure || self.computed || self.asked {
            return None;
        }
        self.asked = true;
        self.require_call = true;
        Some(ResponseItem::user_text(
            "That figure was not computed. Run a command that works it out from the file \
             (grep -c, wc -l, or python3 -c), then answer with the number it prints.",
        ))
    }
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
