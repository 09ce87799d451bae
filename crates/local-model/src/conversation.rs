//! Turning a [`Prompt`] into the chat messages the local model sees.
//!
//! The hosted-model instructions Osprey normally sends run to thousands of tokens; at
//! ~35 prompt tokens per second on two cores that alone would cost minutes, and a 1.5B
//! model follows short, concrete rules better anyway. So the system message is our own
//! compact text plus a one-line summary per tool, and the developer messages from the
//! core (base instructions) are left out. The history is mapped onto Qwen2.5's native
//! tool format: assistant calls inside `<tool_call>` tags, results as `<tool_response>`
//! blocks in a user turn. The system message depends only on the tools, so its KV state
//! is the reusable prefix (see `prefix_cache`).
//!
//! [`PromptStyle::Client`] keeps the client's own instructions instead (the server's mode,
//! where the model must serve any harness, and the "no local profile" step of the quality
//! benchmark): the first system message holds the client's instructions and the tool list,
//! and later developer messages stay in place as system messages.

use osprey_model::Prompt;
use osprey_protocol::ResponseItem;
use serde_json::Value;

use crate::grammar::{CALL_CLOSE, CALL_OPEN, ToolDef, render_arguments, render_call};

/// The local profile's span-edit tool, which the rules point to when it is offered.
const EDIT_FILE: &str = "edit_file";

/// One chat message before templating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    fn new(role: &str, content: impl Into<String>) -> Self {
        Self {
            role: role.to_string(),
            content: content.into(),
        }
    }
}

/// Whose instructions the model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptStyle {
    /// Our compact rules for a small model; the client's instructions are dropped.
    #[default]
    Compact,
    /// The client's instructions (`Prompt::instructions`, else a leading developer message)
    /// with the tool list and the call format; other developer messages kept in place.
    Client,
}

/// Longest tool result kept in the conversation, in characters; longer ones keep their
/// head and tail.
const MAX_TOOL_OUTPUT_CHARS: usize = 4_000;

/// The system message: rules written for a small model, and the tools as JSON signatures
/// inside `<tools>` tags — the layout Qwen2.5 was trained on. No example payloads: small
/// models copy them verbatim.
pub fn system_message(tools: &[ToolDef]) -> ChatMessage {
    let mut text = String::from(
        "You are a careful coding assistant working in the user's project directory. \
         Work step by step. Each reply is either exactly one tool call, or, once the task is \
         complete, a short plain-text answer saying what you did.\n",
    );
    if tools.is_empty() {
        text.push_str("No tools are available: answer in plain text.\n");
        return ChatMessage::new("system", text);
    }
    push_tool_list(&mut text, tools);
    text.push_str(
        "Rules:\n\
         - Do the work yourself with the tools; never tell the user how to do it.\n\
         - The project's files are listed between <files> tags. Read a file before you \
         change it or answer a question about it.\n\
         - Create every file the task names, one write_file call per file with its complete \
         content, before running anything.\n",
    );
    if tools.iter().any(|tool| tool.name == EDIT_FILE) {
        text.push_str(
            "- To change an existing file, call edit_file: `old` is the exact text to \
             replace, copied from the file without the line numbers, and `new` is what \
             replaces it. Use write_file only for new files or to rewrite a whole file.\n",
        );
    }
    text.push_str(
        "- To run a program or command, use the shell tool and read its output. If it fails, \
         fix the cause with another tool call.\n\
         - Never repeat a call that already succeeded. When everything asked is done, \
         reply with one short sentence and no tool call.\n",
    );
    ChatMessage::new("system", text)
}

/// The system message in [`PromptStyle::Client`]: the client's instructions, then the tool
/// list and how to call a tool (nothing of our own rules).
pub fn client_system_message(instructions: &str, tools: &[ToolDef]) -> ChatMessage {
    let mut text = instructions.trim_end().to_string();
    if !tools.is_empty() {
        text.push('\n');
        push_tool_list(&mut text, tools);
    }
    ChatMessage::new("system", text)
}

/// The tools as JSON signatures inside `<tools>` tags, and the call format in words.
fn push_tool_list(text: &mut String, tools: &[ToolDef]) {
    text.push_str(
        "\n# Tools\n\nThese functions are available, described by their JSON signatures \
         inside <tools></tools> tags:\n<tools>\n",
    );
    for tool in tools {
        let signature = serde_json::json!({
            "type": "function",
            "function": {
                "name": tool.name,
                "description": first_sentence(&tool.description),
                "parameters": compact_schema(&tool.parameters),
            }
        });
        text.push_str(&signature.to_string());
        text.push('\n');
    }
    text.push_str(
        "</tools>\n\nTo call a function, reply with a JSON object holding the keys \"name\" \
         (the function name) and \"arguments\" (an object of the arguments), placed \
         between <tool_call> and </tool_call> tags, and nothing else.\n",
    );
}

/// The schema without long descriptions (first sentences only), to keep the prompt short.
fn compact_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("description", Value::String(d)) => Value::String(first_sentence(d)),
                        ("properties", Value::Object(props)) => Value::Object(
                            props
                                .iter()
                                .map(|(name, p)| (name.clone(), compact_schema(p)))
                                .collect(),
                        ),
                        _ => compact_schema(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(compact_schema).collect()),
        other => other.clone(),
    }
}

fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let end = line
        .find(". ")
        .map_or(line.len(), |i| i + 1)
        .min(line.char_indices().nth(200).map_or(line.len(), |(i, _)| i));
    line.get(..end).unwrap_or(line).to_string()
}

/// The chat messages for `prompt`: the system message, then the history.
pub fn messages(prompt: &Prompt, tools: &[ToolDef], style: PromptStyle) -> Vec<ChatMessage> {
    let mut input = prompt.input.as_slice();
    let system = match style {
        PromptStyle::Compact => system_message(tools),
        PromptStyle::Client => {
            let instructions = match (&prompt.instructions, input.first()) {
                (Some(text), _) => text.clone(),
                (None, Some(first @ ResponseItem::Message { role, .. }))
                    if role == "developer" || role == "system" =>
                {
                    input = input.get(1..).unwrap_or_default();
                    first.message_text().unwrap_or_default()
                }
                _ => String::new(),
            };
            client_system_message(&instructions, tools)
        }
    };
    let mut out = vec![system];
    for item in input {
        match item {
            ResponseItem::Message { role, .. } => {
                let text = item.message_text().unwrap_or_default();
                match role.as_str() {
                    "user" => push(&mut out, "user", text),
                    "assistant" => push(&mut out, "assistant", text),
                    // Developer/system text: the client's, kept in client style; replaced
                    // by our rules in compact style.
                    _ if style == PromptStyle::Client => push(&mut out, "system", text),
                    _ => {}
                }
            }
            ResponseItem::FunctionCall {
                name, arguments, ..
            } => {
                let args = match (
                    serde_json::from_str::<Value>(arguments),
                    tools.iter().find(|t| &t.name == name),
                ) {
                    (Ok(value), Some(tool)) => render_arguments(&value, &tool.parameters),
                    (Ok(value), None) => render_arguments(&value, &Value::Null),
                    (Err(_), _) => Value::String(arguments.clone()).to_string(),
                };
                push(
                    &mut out,
                    "assistant",
                    format!("{CALL_OPEN}{}{CALL_CLOSE}", render_call(name, &args)),
                );
            }
            ResponseItem::FunctionCallOutput { output, .. } => {
                let text = output.text();
                push(
                    &mut out,
                    "user",
                    format!("<tool_response>\n{}\n</tool_response>", clip(&text)),
                );
            }
            ResponseItem::CustomToolCallOutput { output, .. } => push(
                &mut out,
                "user",
                format!("<tool_response>\n{}\n</tool_response>", clip(output)),
            ),
            _ => {}
        }
    }
    out
}

/// Appends, merging with the previous message of the same role (the template wants
/// alternating turns, and Qwen puts several results in one user turn).
fn push(out: &mut Vec<ChatMessage>, role: &str, text: String) {
    if text.trim().is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.role == role && role != "system" => {
            last.content.push('\n');
            last.content.push_str(&text);
        }
        _ => out.push(ChatMessage::new(role, text)),
    }
}

fn clip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= MAX_TOOL_OUTPUT_CHARS {
        return text.to_string();
    }
    let half = MAX_TOOL_OUTPUT_CHARS / 2;
    let head: String = chars.iter().take(half).collect();
    let tail: String = chars.iter().skip(chars.len() - half).collect();
    format!(
        "{head}\n[… {} characters omitted …]\n{tail}",
        chars.len() - 2 * half
    )
}

/// What a tool output left out to fit the context window says instead.
pub const OMITTED_OUTPUT: &str = "[output omitted to fit the context window]";

/// The positions in `prompt.input` of the tool outputs that may be left out to fit the
/// context window, oldest first.
///
/// The outputs answering the model's latest calls (the last run of consecutive calls, and
/// every output after its start) are never left out while no message has followed them:
/// the model is about to act on them, and without them it would only make the same calls
/// again. Outputs no longer than [`OMITTED_OUTPUT`] are not worth replacing.
pub fn omittable_outputs(prompt: &Prompt) -> Vec<usize> {
    let input = &prompt.input;
    let is_call = |item: &ResponseItem| {
        matches!(
            item,
            ResponseItem::FunctionCall { .. } | ResponseItem::CustomToolCall { .. }
        )
    };
    let answered = |after: usize| {
        input
            .get(after..)
            .unwrap_or_default()
            .iter()
            .any(|item| matches!(item, ResponseItem::Message { .. }))
    };
    let protected_from = match input.iter().rposition(is_call) {
        Some(last) if !answered(last + 1) => {
            let run = input
                .get(..=last)
                .unwrap_or_default()
                .iter()
                .rev()
                .take_while(|item| is_call(item))
                .count();
            last + 1 - run
        }
        _ => input.len(),
    };
    input
        .iter()
        .enumerate()
        .take(protected_from)
        .filter(|(_, item)| {
            output_text(item).is_some_and(|text| text.chars().count() > OMITTED_OUTPUT.len())
        })
        .map(|(index, _)| index)
        .collect()
}

fn output_text(item: &ResponseItem) -> Option<String> {
    match item {
        ResponseItem::FunctionCallOutput { output, .. } => Some(output.text()),
        ResponseItem::CustomToolCallOutput { output, .. } => Some(output.clone()),
        _ => None,
    }
}

/// `prompt` with the tool outputs at `positions` of its input replaced by
/// [`OMITTED_OUTPUT`] (the calls stay, so every call still has its output).
pub fn omit_outputs(prompt: &Prompt, positions: &[usize]) -> Prompt {
    let mut trimmed = prompt.clone();
    for &position in positions {
        match trimmed.input.get_mut(position) {
            Some(ResponseItem::FunctionCallOutput { output, .. }) => {
                *output = OMITTED_OUTPUT.to_string().into();
            }
            Some(ResponseItem::CustomToolCallOutput { output, .. }) => {
                *output = OMITTED_OUTPUT.to_string();
            }
            _ => {}
        }
    }
    trimmed
}

/// The safety net under the agent's compaction: when `prompt` does not fit (`fits` says
/// whether a candidate does), leave out the fewest of its oldest tool outputs (see
/// [`omittable_outputs`]) that make it fit. Returns the prompt to send and how many outputs
/// were left out, or `None` when even leaving out all of them is not enough (then the
/// conversation must be compacted). The prompt returned is always the last one `fits`
/// accepted, so a caller can keep what it measured. The search assumes that leaving out
/// more never makes a prompt longer, which holds because only outputs longer than the
/// placeholder are replaced; what it returns fits either way.
pub fn fit_by_omitting_outputs<E>(
    prompt: &Prompt,
    mut fits: impl FnMut(&Prompt) -> Result<bool, E>,
) -> Result<Option<(Prompt, usize)>, E> {
    if fits(prompt)? {
        return Ok(Some((prompt.clone(), 0)));
    }
    let omittable = omittable_outputs(prompt);
    let with_oldest = |n: usize| omit_outputs(prompt, omittable.get(..n).unwrap_or_default());
    let mut best = with_oldest(omittable.len());
    if omittable.is_empty() || !fits(&best)? {
        return Ok(None);
    }
    // Binary search for the fewest: `too_few` outputs left out do not fit, `enough` do.
    let (mut too_few, mut enough) = (0, omittable.len());
    while enough - too_few > 1 {
        let middle = too_few + (enough - too_few) / 2;
        let candidate = with_oldest(middle);
        if fits(&candidate)? {
            enough = middle;
            best = candidate;
        } else {
            too_few = middle;
        }
    }
    Ok(Some((best, enough)))
}

/// The call with the same name and arguments (compared as JSON) made just before this
/// response, if the history ends with one — the loop guard's evidence.
pub fn previous_call(prompt: &Prompt) -> Option<(String, Value)> {
    prompt.input.iter().rev().find_map(|item| match item {
        ResponseItem::FunctionCall {
            name, arguments, ..
        } => Some((
            name.clone(),
            serde_json::from_str(arguments).unwrap_or(Value::String(arguments.clone())),
        )),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::FunctionCallOutputPayload;
    use pretty_assertions::assert_eq;

    pub(crate) fn fixed_prompt() -> Prompt {
        Prompt {
            model: "local".into(),
            input: vec![
                ResponseItem::developer_text("very long hosted-model instructions"),
                ResponseItem::user_text("create hello.py that prints hello, then run it"),
                ResponseItem::FunctionCall {
                    id: None,
                    name: "write_file".into(),
                    arguments: r#"{"path":"hello.py","content":"print('hello')\n"}"#.into(),
                    call_id: "c1".into(),
                    extra: Default::default(),
                },
                ResponseItem::FunctionCallOutput {
                    call_id: "c1".into(),
                    output: FunctionCallOutputPayload::from("Wrote hello.py".to_string()),
                },
            ],
            tools: vec![crate::tools::write_file_spec()],
            ..Prompt::default()
        }
    }

    #[test]
    fn history_maps_to_qwen_tool_turns() {
        let prompt = fixed_prompt();
        let tools = ToolDef::from_specs(&prompt.tools);
        let msgs = messages(&prompt, &tools, PromptStyle::Compact);
        let roles: Vec<_> = msgs.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert!(
            msgs[0].content.contains(
                r#""name":"write_file","parameters":{"additionalProperties":false,"properties":{"content":{"description":"The whole file content.","type":"string"}"#
            ),
            "{}",
            msgs[0].content
        );
        assert!(!msgs[0].content.contains("very long"));
        assert_eq!(
            msgs[2].content,
            "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.py\", \"content\": \"print('hello')\\n\"}}\n</tool_call>"
        );
        assert_eq!(
            msgs[3].content,
            "<tool_response>\nWrote hello.py\n</tool_response>"
        );
    }

    #[test]
    fn the_rules_prefer_edit_file_for_existing_files_only_when_it_is_offered() {
        let write = ToolDef::from_specs(&[crate::tools::write_file_spec()]);
        let both = ToolDef::from_specs(&[
            crate::tools::write_file_spec(),
            crate::tools::edit_file_spec(),
        ]);
        let without = system_message(&write).content;
        let with = system_message(&both).content;
        assert!(!without.contains("call edit_file"), "{without}");
        assert!(
            with.contains("To change an existing file, call edit_file"),
            "{with}"
        );
        assert!(with.contains(r#""name":"edit_file""#), "{with}");
        assert!(
            with.contains("- To run a program"),
            "the rules go on: {with}"
        );
    }

    #[test]
    fn client_style_keeps_the_clients_instructions() {
        let mut prompt = fixed_prompt();
        prompt
            .input
            .insert(2, ResponseItem::developer_text("sandbox: read-only"));
        let tools = ToolDef::from_specs(&prompt.tools);
        let msgs = messages(&prompt, &tools, PromptStyle::Client);
        let roles: Vec<_> = msgs.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "system", "assistant", "user"]);
        assert!(
            msgs[0]
                .content
                .starts_with("very long hosted-model instructions\n\n# Tools")
        );
        assert!(msgs[0].content.contains("<tool_call>"));
        assert!(!msgs[0].content.contains("Rules:"), "{}", msgs[0].content);
        assert_eq!(msgs[2].content, "sandbox: read-only");

        // The Responses `instructions` field wins, and the leading developer message stays.
        prompt.instructions = Some("client rules".into());
        let msgs = messages(&prompt, &tools, PromptStyle::Client);
        assert!(msgs[0].content.starts_with("client rules\n\n# Tools"));
        assert_eq!(msgs[1].content, "very long hosted-model instructions");
    }

    #[test]
    fn long_outputs_keep_head_and_tail() {
        let text = "a".repeat(3000) + &"b".repeat(3000);
        let clipped = clip(&text);
        assert!(clipped.starts_with("aaa") && clipped.ends_with("bbb"));
        assert!(clipped.contains("2000 characters omitted"));
    }

    fn call(id: &str) -> ResponseItem {
        ResponseItem::FunctionCall {
            id: None,
            name: "shell_command".into(),
            arguments: format!(r#"{{"command":"cat {id}.txt"}}"#),
            call_id: id.into(),
            extra: Default::default(),
        }
    }

    fn output(id: &str, text: &str) -> ResponseItem {
        ResponseItem::FunctionCallOutput {
            call_id: id.into(),
            output: FunctionCallOutputPayload::from(text.to_string()),
        }
    }

    /// A turn that read three large files one after another, then two at once.
    fn long_turn() -> Prompt {
        Prompt {
            model: "local".into(),
            input: vec![
                ResponseItem::user_text("summarise the logs"),
                call("a"),
                output("a", &"a".repeat(900)),
                call("b"),
                output("b", "ok"),
                call("c"),
                output("c", &"c".repeat(900)),
                call("d"),
                call("e"),
                output("d", &"d".repeat(900)),
                output("e", &"e".repeat(900)),
            ],
            ..Prompt::default()
        }
    }

    fn rendered_chars(prompt: &Prompt) -> usize {
        messages(prompt, &[], PromptStyle::Compact)
            .iter()
            .map(|m| m.content.chars().count())
            .sum()
    }

    #[test]
    fn the_outputs_of_the_latest_calls_and_short_ones_are_never_left_out() {
        let prompt = long_turn();
        // a and c; not b (shorter than the placeholder), not d and e (the latest calls).
        assert_eq!(omittable_outputs(&prompt), [2, 6]);
        // Once the model answered, the latest outputs may go too.
        let mut answered = prompt;
        answered.input.push(ResponseItem::assistant_text("Done."));
        answered.input.push(ResponseItem::user_text("and now?"));
        assert_eq!(omittable_outputs(&answered), [2, 6, 9, 10]);
    }

    #[test]
    fn an_over_long_conversation_loses_its_oldest_outputs_first_and_only_as_many_as_needed() {
        let prompt = long_turn();
        let full = rendered_chars(&prompt);
        let fits_under = |budget: usize| move |p: &Prompt| Ok::<_, ()>(rendered_chars(p) <= budget);

        // Fits as it is: unchanged.
        let (same, omitted) = fit_by_omitting_outputs(&prompt, fits_under(full))
            .unwrap()
            .unwrap();
        assert_eq!((same, omitted), (prompt.clone(), 0));

        // A little too long: only the oldest output goes, the calls all stay.
        let (trimmed, omitted) = fit_by_omitting_outputs(&prompt, fits_under(full - 10))
            .unwrap()
            .unwrap();
        assert_eq!(omitted, 1);
        assert_eq!(trimmed, omit_outputs(&prompt, &[2]));
        let shown = messages(&trimmed, &[], PromptStyle::Compact);
        assert!(shown[3].content.contains(OMITTED_OUTPUT), "{shown:?}");
        assert!(shown.iter().all(|m| !m.content.contains("aaaa")));
        assert!(shown.iter().any(|m| m.content.contains("cccc")));
        assert_eq!(trimmed.input.len(), prompt.input.len());

        // Needs both old outputs gone.
        let (trimmed, omitted) = fit_by_omitting_outputs(&prompt, fits_under(full - 1000))
            .unwrap()
            .unwrap();
        assert_eq!(omitted, 2);
        assert_eq!(trimmed, omit_outputs(&prompt, &[2, 6]));

        // Would need the latest outputs too: not fitted here (the agent compacts instead).
        assert_eq!(
            fit_by_omitting_outputs(&prompt, fits_under(full - 2000)).unwrap(),
            None
        );
    }

    #[test]
    fn previous_call_is_the_last_call_in_history() {
        let (name, args) = previous_call(&fixed_prompt()).unwrap();
        assert_eq!(name, "write_file");
        assert_eq!(args["path"], "hello.py");
    }
}
