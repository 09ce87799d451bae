//! Reading tool calls out of generated text.
//!
//! Constrained sampling produces the tagged form, but the same parser also serves
//! unconstrained output (the OpenAI-compatible server, or a grammar that was turned off),
//! where small models write calls as fenced ```json blocks or as a bare JSON object. A
//! candidate counts as a call only if its name is an offered tool and its arguments validate
//! against that tool's schema; everything else stays text.

use serde_json::Value;

use crate::grammar::{ToolDef, render_arguments, validate};

/// One tool call read from the output; `arguments` is JSON text in the grammar's style
/// (see [`render_arguments`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCall {
    pub name: String,
    pub arguments: String,
}

/// The output split into the text to show and the calls to run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedOutput {
    /// The text with recognised calls removed, trimmed; empty when only calls were written.
    pub text: String,
    pub calls: Vec<ParsedCall>,
}

/// Splits `output` into text and valid calls to `tools`.
pub fn parse_output(output: &str, tools: &[ToolDef]) -> ParsedOutput {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut rest = output;

    // 1. Tagged calls (a missing closing tag at the very end is forgiven).
    while let Some(start) = rest.find("<tool_call>") {
        text.push_str(rest.get(..start).unwrap_or_default());
        let after = rest.get(start + "<tool_call>".len()..).unwrap_or_default();
        let (inner, consumed) = match after.find("</tool_call>") {
            Some(end) => (
                after.get(..end).unwrap_or_default(),
                end + "</tool_call>".len(),
            ),
            None => (after, after.len()),
        };
        let segment_end = start + "<tool_call>".len() + consumed;
        match call_from_json(inner, tools) {
            Some(call) => calls.push(call),
            None => text.push_str(rest.get(start..segment_end).unwrap_or_default()),
        }
        rest = rest.get(segment_end..).unwrap_or_default();
    }
    text.push_str(rest);
    if !calls.is_empty() {
        return ParsedOutput {
            text: text.trim().to_string(),
            calls,
        };
    }

    // 2. Fenced blocks.
    let mut remaining = String::new();
    let mut cursor = text.as_str();
    while let Some(open) = cursor.find("```") {
        let before = cursor.get(..open).unwrap_or_default();
        let after_fence = cursor.get(open + 3..).unwrap_or_default();
        let body_start = after_fence.find('\n').map_or(0, |i| i + 1);
        let Some(close) = after_fence.get(body_start..).and_then(|b| b.find("```")) else {
            break;
        };
        let body = after_fence
            .get(body_start..body_start + close)
            .unwrap_or_default();
        let block_end = body_start + close + 3;
        remaining.push_str(before);
        match call_from_json(body, tools) {
            Some(call) => calls.push(call),
            None => remaining.push_str(cursor.get(open..open + 3 + block_end).unwrap_or_default()),
        }
        cursor = after_fence.get(block_end..).unwrap_or_default();
    }
    remaining.push_str(cursor);
    if !calls.is_empty() {
        return ParsedOutput {
            text: remaining.trim().to_string(),
            calls,
        };
    }

    // 3. The whole output as one bare JSON object.
    if let Some(call) = call_from_json(&text, tools) {
        return ParsedOutput {
            text: String::new(),
            calls: vec![call],
        };
    }
    ParsedOutput {
        text: text.trim().to_string(),
        calls,
    }
}

/// `{"name": N, "arguments": A}` (also `parameters` for `arguments`, and `A` given as a
/// JSON string) naming an offered tool with valid arguments.
fn call_from_json(text: &str, tools: &[ToolDef]) -> Option<ParsedCall> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    let obj = value.as_object()?;
    let name = obj.get("name")?.as_str()?;
    let tool = tools.iter().find(|t| t.name == name)?;
    let args = match obj.get("arguments").or_else(|| obj.get("parameters")) {
        Some(Value::String(s)) => serde_json::from_str(s).ok()?,
        Some(v) => v.clone(),
        None => Value::Object(serde_json::Map::new()),
    };
    validate(&args, &tool.parameters).ok()?;
    Some(ParsedCall {
        name: name.to_string(),
        arguments: render_arguments(&args, &tool.parameters),
    })
}

/// A call the output began but did not finish (generation stopped mid-way): where it starts
/// in the output, the tool it names and its `path` argument, when those were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnfinishedCall {
    /// Byte offset of the call's opening (`<tool_call>`, a fence, or `{`).
    pub start: usize,
    pub name: Option<String>,
    pub path: Option<String>,
}

/// The call `output` ends inside, if it ends inside one: after its last `<tool_call>` tag,
/// or, in unconstrained output, in a fence or bare JSON object it starts with. Only
/// meaningful for output that [`parse_output`] found no call in.
pub fn unfinished_call(output: &str) -> Option<UnfinishedCall> {
    let start = match output.rfind("<tool_call>") {
        Some(tag) => tag,
        None => {
            let body = output.trim_start();
            if !(body.starts_with('{') || body.starts_with("```")) {
                return None;
            }
            output.len() - body.len()
        }
    };
    let body = output.get(start..).unwrap_or_default();
    Some(UnfinishedCall {
        start,
        name: string_member(body, "name"),
        path: string_member(body, "path"),
    })
}

/// The first `"key": "…"` string member in `json` (which may be cut off after it).
fn string_member(json: &str, key: &str) -> Option<String> {
    let quoted = format!("\"{key}\"");
    let after = json.get(json.find(&quoted)? + quoted.len()..)?;
    let value = after.trim_start().strip_prefix(':')?.trim_start();
    serde_json::Deserializer::from_str(value)
        .into_iter::<String>()
        .next()?
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn tools() -> Vec<ToolDef> {
        ToolDef::from_specs(&[crate::tools::write_file_spec()])
    }

    fn call(path: &str) -> ParsedCall {
        ParsedCall {
            name: "write_file".into(),
            arguments: format!(r#"{{"path": "{path}", "content": "x"}}"#),
        }
    }

    #[test]
    fn a_call_cut_off_mid_way_is_named_with_its_path() {
        let cut = "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"big.py\", \"content\": \"def f():\\n    ret";
        assert_eq!(parse_output(cut, &tools()).calls, Vec::new());
        assert_eq!(
            unfinished_call(cut),
            Some(UnfinishedCall {
                start: 0,
                name: Some("write_file".into()),
                path: Some("big.py".into()),
            })
        );
        // After a message line; cut before the path is complete.
        let cut = "I will write it.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"big";
        assert_eq!(
            unfinished_call(cut),
            Some(UnfinishedCall {
                start: 17,
                name: Some("write_file".into()),
                path: None,
            })
        );
        // Unconstrained: a bare object or a fence.
        let bare = unfinished_call("  {\"name\": \"shell_command\", \"arg").unwrap();
        assert_eq!(
            (bare.start, bare.name.as_deref()),
            (2, Some("shell_command"))
        );
        assert_eq!(unfinished_call("```json\n{\"na").unwrap().name, None);
        // Plain text is no call.
        assert_eq!(unfinished_call("The file is written and the test pa"), None);
    }

    #[test]
    fn tagged_call() {
        let out = parse_output(
            "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.py\", \"content\": \"x\"}}\n</tool_call>",
            &tools(),
        );
        assert_eq!(
            out,
            ParsedOutput {
                text: String::new(),
                calls: vec![call("a.py")]
            }
        );
    }

    #[test]
    fn tagged_call_without_closing_tag_and_string_arguments() {
        let out = parse_output(
            "Writing it.\n<tool_call>{\"name\": \"write_file\", \"arguments\": \"{\\\"path\\\": \\\"b.py\\\", \\\"content\\\": \\\"x\\\"}\"}",
            &tools(),
        );
        assert_eq!(
            out,
            ParsedOutput {
                text: "Writing it.".into(),
                calls: vec![call("b.py")]
            }
        );
    }

    #[test]
    fn fenced_call() {
        let out = parse_output(
            "I'll create it:\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"c.py\", \"content\": \"x\"}}\n```\nDone.",
            &tools(),
        );
        assert_eq!(out.calls, vec![call("c.py")]);
        assert_eq!(out.text, "I'll create it:\n\nDone.");
    }

    #[test]
    fn bare_call() {
        let out = parse_output(
            " {\"name\": \"write_file\", \"parameters\": {\"path\": \"d.py\", \"content\": \"x\"}} ",
            &tools(),
        );
        assert_eq!(out.calls, vec![call("d.py")]);
    }

    #[test]
    fn malformed_or_invented_calls_stay_text() {
        for text in [
            "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.py\"\n</tool_call>",
            "<tool_call>{\"name\": \"create_file\", \"arguments\": {\"path\": \"a.py\", \"content\": \"x\"}}</tool_call>",
            "```python\nprint('hello')\n```",
            "{\"name\": \"write_file\", \"arguments\": {\"path\": 3, \"content\": \"x\"}}",
            "Just a final answer.",
        ] {
            let out = parse_output(text, &tools());
            assert_eq!(out.calls, vec![], "{text}");
            assert_eq!(out.text, text.trim(), "{text}");
        }
    }
}
