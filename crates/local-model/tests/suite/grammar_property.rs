//! The generated grammar, run by llama.cpp's own grammar engine on real tokens, admits
//! exactly calls to the offered tools with schema-valid arguments (and plain messages).

use osprey_local_model::grammar::{ToolDef, required_call_grammar, tools_grammar};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::common::vocab;

fn tools() -> Vec<ToolDef> {
    ToolDef::from_specs(&[
        osprey_local_model::write_file_spec(),
        json!({"type": "function", "name": "shell_command", "description": "Run a script.",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string"}, "workdir": {"type": "string"},
                "timeout_ms": {"type": "number"}}, "required": ["command"]}}),
        json!({"type": "function", "name": "list_dir", "description": "List.",
            "parameters": {"type": "object", "properties": {
                "path": {"type": "string"}, "depth": {"type": "integer"},
                "mode": {"type": "string", "enum": ["flat", "tree"]}}}}),
    ])
}

/// Serialises like the grammar expects: `": "` and `", "` separators, required members in
/// `required` order, then optional ones in name order.
fn render(value: &Value, order: &[&str]) -> String {
    let Value::Object(map) = value else {
        return value.to_string();
    };
    let members: Vec<String> = order
        .iter()
        .filter_map(|k| map.get(*k).map(|v| format!("\"{k}\": {v}")))
        .collect();
    format!("{{{}}}", members.join(", "))
}

fn call(name: &str, args: &str) -> String {
    format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call>")
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a".to_string()),
            Just(" ".to_string()),
            Just("\n".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("é".to_string()),
            Just("print('hello')".to_string()),
            Just("{".to_string()),
            Just("\t".to_string()),
        ],
        0..8,
    )
    .prop_map(|parts| parts.concat())
}

fn valid_call() -> impl Strategy<Value = String> {
    prop_oneof![
        (text(), text()).prop_map(|(p, c)| call(
            "write_file",
            &render(&json!({"path": p, "content": c}), &["path", "content"])
        )),
        (
            text(),
            proptest::option::of(text()),
            proptest::option::of(0u32..100_000)
        )
            .prop_map(|(c, w, t)| {
                let mut v = json!({"command": c});
                if let Some(w) = w {
                    v["workdir"] = json!(w);
                }
                if let Some(t) = t {
                    v["timeout_ms"] = json!(t);
                }
                call(
                    "shell_command",
                    &render(&v, &["command", "timeout_ms", "workdir"]),
                )
            }),
        (
            proptest::option::of(text()),
            proptest::option::of(-5i64..50),
            proptest::option::of(prop_oneof![Just("flat"), Just("tree")])
        )
            .prop_map(|(p, d, m)| {
                let mut v = json!({});
                if let Some(p) = p {
                    v["path"] = json!(p);
                }
                if let Some(d) = d {
                    v["depth"] = json!(d);
                }
                if let Some(m) = m {
                    v["mode"] = json!(m);
                }
                call("list_dir", &render(&v, &["depth", "mode", "path"]))
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn valid_calls_are_admitted(text in valid_call()) {
        let Some(vocab) = vocab() else { return Ok(()) };
        let grammar = tools_grammar(&tools());
        prop_assert!(vocab.grammar_admits(&grammar, &text).unwrap(), "{}", text);
    }

    #[test]
    fn invented_tools_are_refused(name in "[a-z_]{3,12}", p in text()) {
        let Some(vocab) = vocab() else { return Ok(()) };
        prop_assume!(!["write_file", "shell_command", "list_dir"].contains(&name.as_str()));
        let grammar = tools_grammar(&tools());
        let args = render(&json!({"path": p, "content": "x"}), &["path", "content"]);
        prop_assert!(!vocab.grammar_admits(&grammar, &call(&name, &args)).unwrap());
    }
}

#[test]
fn schema_violations_are_refused_and_messages_admitted() {
    let Some(vocab) = vocab() else { return };
    let grammar = tools_grammar(&tools());
    for bad in [
        call("write_file", "{\"path\": \"a.py\"}"),
        call("write_file", "{\"path\": 3, \"content\": \"x\"}"),
        call("write_file", "{\"content\": \"x\", \"path\": \"a.py\"}"),
        call(
            "write_file",
            "{\"path\": \"a\", \"content\": \"x\", \"mode\": \"w\"}",
        ),
        call("shell_command", "{\"command\": [\"ls\"]}"),
        call("list_dir", "{\"mode\": \"deep\"}"),
        call(
            "write_file",
            "{\"path\": \"a\", \"content\": \"line\nbreak\"}",
        ),
        "```json\n{\"name\": \"write_file\"}\n```".to_string(),
        "{\"name\": \"write_file\", \"arguments\": {}}".to_string(),
    ] {
        assert!(
            !vocab.grammar_admits(&grammar, &bad).unwrap(),
            "admitted: {bad}"
        );
    }
    assert!(
        vocab
            .grammar_admits(&grammar, "Done: hello.py prints hello.")
            .unwrap()
    );
    assert!(
        vocab
            .grammar_admits(&grammar, &call("list_dir", "{}"))
            .unwrap()
    );
}

#[test]
fn a_required_call_refuses_a_plain_answer() {
    let Some(vocab) = vocab() else { return };
    let grammar = required_call_grammar(&tools());
    assert!(
        !vocab
            .grammar_admits(&grammar, "Done: hello.py prints hello.")
            .unwrap()
    );
    assert!(
        vocab
            .grammar_admits(&grammar, &call("list_dir", "{}"))
            .unwrap()
    );
    let with_line = format!("Listing first.\n{}", call("list_dir", "{}"));
    assert!(!vocab.grammar_admits(&grammar, &with_line).unwrap());
}
