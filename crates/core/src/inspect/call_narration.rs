//! Hide call narration: in each request, the text the model wrote beside its earlier calls
//! ("To answer this, I need to read service.toml. Here's how I can do it:") is left out of
//! the prompt; the calls, their results and every answer stay.
//!
//! Seen on 2026-12-05: a small model copies its own last message. In answer it read
//! deploy/service.toml, got `port = 8731` back, then wrote the same announcement word for
//! word and, as the announcement leads to, the same read again — three times, until the loop
//! guard ended the turn. The repeat nudge gave it the result back each time; the copied
//! announcement still won. With the announcement gone the model sees its call and the result,
//! and nothing to copy. The rollout keeps everything: only the prompt built from it changes.
//!
//! Measured on 2026-12-07 (each aid off alone, on the tasks where it acted), hiding the
//! narration made two questions slower: asked how many rows of sales.csv have the region
//! north, the model read the file and, with its "To answer this question, I need to:" gone,
//! answered 3 by eye, was sent to the shell, and needed two more rounds (33–36 s); with the
//! narration kept it went on to run the count command at once (19 s). The copying the aid
//! was made for is, on questions, what question focus answers: it restates the question
//! under each result (a failed command's excepted), and that alone ended the 2026-12-05
//! loop. So on a turn that question focus takes part in, the narration stays.

use osprey_model::Prompt;
use osprey_protocol::ResponseItem;

use super::question_focus;
use super::{TurnInspector, TurnStart};

/// Leaves the model's narration of its calls out of every request of the turn, except on a
/// question that question focus handles.
pub(crate) struct HideCallNarration {
    active: bool,
}

impl HideCallNarration {
    /// `question_focus_on`: whether the question-focus aid runs in this turn too.
    pub(crate) fn new(start: &TurnStart<'_>, question_focus_on: bool) -> Self {
        Self {
            active: !(question_focus_on && question_focus::applies_to(start.request)),
        }
    }
}

impl TurnInspector for HideCallNarration {
    fn before_request(&mut self, prompt: &mut Prompt) {
        if self.active {
            prompt.input = without_call_narration(std::mem::take(&mut prompt.input));
        }
    }
}

/// `items` without the assistant messages that come just before a call (reasoning items in
/// between do not count). A message that ends a turn has no call after it and stays.
fn without_call_narration(items: Vec<ResponseItem>) -> Vec<ResponseItem> {
    let narration: Vec<bool> = (0..items.len())
        .map(|i| is_assistant_message(&items[i]) && next_is_call(&items[i + 1..]))
        .collect();
    items
        .into_iter()
        .zip(narration)
        .filter(|(_, narration)| !narration)
        .map(|(item, _)| item)
        .collect()
}

fn is_assistant_message(item: &ResponseItem) -> bool {
    matches!(item, ResponseItem::Message { role, .. } if role == "assistant")
}

fn next_is_call(rest: &[ResponseItem]) -> bool {
    rest.iter()
        .find(|item| !matches!(item, ResponseItem::Reasoning { .. }))
        .is_some_and(|item| {
            matches!(
                item,
                ResponseItem::FunctionCall { .. }
                    | ResponseItem::CustomToolCall { .. }
                    | ResponseItem::LocalShellCall { .. }
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::start;
    use osprey_protocol::FunctionCallOutputPayload;
    use std::path::Path;

    fn call(id: &str) -> ResponseItem {
        ResponseItem::FunctionCall {
            id: None,
            name: "read_file".to_string(),
            arguments: r#"{"file_path":"deploy/service.toml"}"#.to_string(),
            call_id: id.to_string(),
            extra: Default::default(),
        }
    }

    fn output(id: &str) -> ResponseItem {
        ResponseItem::FunctionCallOutput {
            call_id: id.to_string(),
            output: FunctionCallOutputPayload::from("L3: port = 8731".to_string()),
        }
    }

    fn texts(items: &[ResponseItem]) -> Vec<String> {
        items
            .iter()
            .map(|item| match item {
                ResponseItem::Message { role, .. } => {
                    format!("{role}: {}", item.message_text().unwrap_or_default())
                }
                ResponseItem::FunctionCall { call_id, .. } => format!("call {call_id}"),
                ResponseItem::FunctionCallOutput { call_id, .. } => format!("output {call_id}"),
                _ => "other".to_string(),
            })
            .collect()
    }

    #[test]
    fn the_text_before_a_call_is_left_out_and_everything_else_stays() {
        let announce = "To answer this question, I need to read service.toml. Here's how:";
        let items = vec![
            ResponseItem::developer_text("rules"),
            ResponseItem::user_text("Which port does the ledger service listen on?"),
            ResponseItem::assistant_text(announce),
            call("a"),
            output("a"),
            ResponseItem::assistant_text("It listens on port 8731."),
            ResponseItem::user_text("And how many replicas?"),
            ResponseItem::assistant_text(announce),
            ResponseItem::Reasoning {
                id: None,
                summary: Vec::new(),
                content: None,
                encrypted_content: None,
                extra: Default::default(),
            },
            call("b"),
            output("b"),
        ];
        let request = "Fix the port the ledger service listens on.";
        assert_eq!(
            hidden(items, request, true),
            [
                "developer: rules",
                "user: Which port does the ledger service listen on?",
                "call a",
                "output a",
                "assistant: It listens on port 8731.",
                "user: And how many replicas?",
                "other",
                "call b",
                "output b",
            ]
        );
    }

    /// The prompt's items as [`texts`] shows them, after the aid ran for a turn on `request`
    /// (with question focus on or off).
    fn hidden(items: Vec<ResponseItem>, request: &str, question_focus_on: bool) -> Vec<String> {
        let mut prompt = Prompt {
            input: items,
            ..Prompt::default()
        };
        HideCallNarration::new(&start(request, Path::new("/tmp")), question_focus_on)
            .before_request(&mut prompt);
        texts(&prompt.input)
    }

    #[test]
    fn on_a_question_that_question_focus_handles_the_narration_stays() {
        let question = "How many rows of sales.csv have the region north?";
        let narrated_read = || {
            vec![
                ResponseItem::user_text(question),
                ResponseItem::assistant_text("To answer this question, I need to:"),
                call("a"),
                output("a"),
            ]
        };
        let without_narration = [
            format!("user: {question}"),
            "call a".into(),
            "output a".into(),
        ];
        assert_eq!(
            hidden(narrated_read(), question, true),
            [
                format!("user: {question}"),
                "assistant: To answer this question, I need to:".into(),
                "call a".into(),
                "output a".into(),
            ]
        );
        // Without question focus nothing restates the question, so the narration goes.
        assert_eq!(hidden(narrated_read(), question, false), without_narration);
        // A question that asks for a change is not question focus's, so the narration goes.
        let change = "Can you change the port in deploy/service.toml to 9000?";
        assert_eq!(hidden(narrated_read(), change, true), without_narration);
    }

    #[test]
    fn a_last_message_with_no_call_after_it_stays() {
        let items = vec![
            ResponseItem::user_text("hi"),
            ResponseItem::assistant_text("Hello."),
        ];
        assert_eq!(without_call_narration(items).len(), 2);
    }
}
