//! Tool definitions and the GBNF grammar that constrains sampling to them.
//!
//! Each response must be either a plain message or exactly one tool call in the model's
//! native form, `<tool_call>` + `{"name": N, "arguments": A}` + `</tool_call>`, where `N`
//! is one of the offered tools and `A` follows that tool's JSON schema. The grammar is
//! generated from the schemas (a practical subset: objects with known properties, strings,
//! enums, numbers, booleans, arrays; anything else becomes "any JSON value") and enforced by
//! llama.cpp while sampling, so a call can be malformed only if sampling was unconstrained.
//! [`validate`] checks the same subset after the fact, for calls read out of free text.

use std::fmt::Write as _;

use serde_json::{Map, Value};

/// Named property schemas, in order.
pub type Properties = Vec<(String, Value)>;

/// One offered function tool: its name, description and parameter schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl ToolDef {
    /// The function tools among Responses-API tool specs (custom/freeform tools and
    /// namespaces are skipped: a small model cannot use them).
    pub fn from_specs(specs: &[Value]) -> Vec<ToolDef> {
        specs
            .iter()
            .filter(|s| s.get("type").and_then(Value::as_str) == Some("function"))
            .filter_map(|s| {
                Some(ToolDef {
                    name: s.get("name")?.as_str()?.to_string(),
                    description: s
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    parameters: s
                        .get("parameters")
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
                })
            })
            .collect()
    }

    /// Property names: required ones first in `required` order, then the rest.
    pub fn ordered_properties(schema: &Value) -> (Properties, Properties) {
        let empty = Map::new();
        let props = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let req = required
            .iter()
            .filter_map(|k| props.get(*k).map(|v| ((*k).to_string(), v.clone())))
            .collect();
        let opt = props
            .iter()
            .filter(|(k, _)| !required.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (req, opt)
    }
}

const PRIMITIVES: &str = r#"jstring ::= "\"" jchar* "\""
jchar ::= [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
jint ::= "-"? ("0" | [1-9] [0-9]*)
jnumber ::= jint ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
jbool ::= "true" | "false"
jvalue ::= jobject | jarray | jstring | jnumber | jbool | "null"
jobject ::= "{" ( jstring ": " jvalue ( ", " jstring ": " jvalue )* )? "}"
jarray ::= "[" ( jvalue ( ", " jvalue )* )? "]"
"#;

/// Opening and closing tags of a tool call, as Qwen2.5 writes them.
pub const CALL_OPEN: &str = "<tool_call>\n";
pub const CALL_CLOSE: &str = "\n</tool_call>";

/// The grammar for "a plain message, or one call to one of `tools`". With no tools, only
/// a message. The root rule is `root`.
pub fn tools_grammar(tools: &[ToolDef]) -> String {
    grammar(tools, false)
}

/// The grammar for `tool_choice = "required"`: exactly one call to one of `tools`, with no
/// text (allowed a line first, the model wrote that line until the token limit instead of
/// calling). With no tools, a message.
pub fn required_call_grammar(tools: &[ToolDef]) -> String {
    grammar(tools, true)
}

/// `tools` cut down to the one called `name`, for a `tool_choice` that names a function; all
/// of them when none has that name (the answer must still be a valid call).
pub fn only_tool(tools: &[ToolDef], name: &str) -> Vec<ToolDef> {
    let named: Vec<ToolDef> = tools.iter().filter(|t| t.name == name).cloned().collect();
    if named.is_empty() {
        tools.to_vec()
    } else {
        named
    }
}

fn grammar(tools: &[ToolDef], require_call: bool) -> String {
    let mut rules = String::new();
    let mut calls = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let mut generator = Gen {
            rules: &mut rules,
            prefix: format!("t{i}"),
            counter: 0,
        };
        let args = generator.value(&tool.parameters, 0);
        let _ = writeln!(
            rules,
            "call{i} ::= {} {args} \"}}\"",
            literal(&format!(
                "{{\"name\": \"{}\", \"arguments\": ",
                json_escape(&tool.name)
            ))
        );
        calls.push(format!("call{i}"));
    }
    let mut out = String::new();
    if calls.is_empty() {
        out.push_str("message ::= [^\\x00]+\n");
        out.push_str("root ::= message\n");
    } else {
        // With tools, a reply is a call, or one line of text optionally followed by a call.
        // The line may not open like a call or a JSON document (that pushes the model to the
        // tagged form); once it ends, only a call may follow. Small models otherwise narrate
        // a fenced shell block for the user instead of calling the tool.
        out.push_str("line ::= [^<{`\\x00-\\x20] [^\\n\\x00]*\n");
        let _ = writeln!(
            out,
            "call ::= {} ({}) {}",
            literal(CALL_OPEN),
            calls.join(" | "),
            literal(CALL_CLOSE)
        );
        out.push_str(if require_call {
            "root ::= call\n"
        } else {
            "root ::= call | line (\"\\n\"+ call)?\n"
        });
    }
    out.push_str(&rules);
    out.push_str(PRIMITIVES);
    out
}

struct Gen<'a> {
    rules: &'a mut String,
    prefix: String,
    counter: usize,
}

impl Gen<'_> {
    /// An expression matching `schema`; named rules are appended for objects.
    fn value(&mut self, schema: &Value, depth: usize) -> String {
        if depth > 8 {
            return "jvalue".to_string();
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let alts: Vec<String> = values
                .iter()
                .map(|v| literal(&serde_json::to_string(v).unwrap_or_default()))
                .collect();
            if !alts.is_empty() {
                return format!("({})", alts.join(" | "));
            }
        }
        match schema.get("type") {
            Some(Value::String(t)) => self.typed(t, schema, depth),
            Some(Value::Array(types)) => {
                let alts: Vec<String> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(t, schema, depth))
                    .collect();
                if alts.is_empty() {
                    "jvalue".to_string()
                } else {
                    format!("({})", alts.join(" | "))
                }
            }
            _ if schema.get("properties").is_some() => self.typed("object", schema, depth),
            _ => "jvalue".to_string(),
        }
    }

    fn typed(&mut self, t: &str, schema: &Value, depth: usize) -> String {
        match t {
            "string" => "jstring".to_string(),
            "integer" => "jint".to_string(),
            "number" => "jnumber".to_string(),
            "boolean" => "jbool".to_string(),
            "null" => "\"null\"".to_string(),
            "array" => match schema.get("items") {
                Some(items) => {
                    let item = self.value(items, depth + 1);
                    format!("\"[\" ( {item} ( \", \" {item} )* )? \"]\"")
                }
                None => "jarray".to_string(),
            },
            "object" => self.object(schema, depth),
            _ => "jvalue".to_string(),
        }
    }

    fn object(&mut self, schema: &Value, depth: usize) -> String {
        let (req, opt) = ToolDef::ordered_properties(schema);
        if req.is_empty() && opt.is_empty() {
            return if schema.get("properties").is_some() {
                "\"{}\"".to_string()
            } else {
                "jobject".to_string()
            };
        }
        let member = |this: &mut Self, (k, v): &(String, Value)| {
            let value = this.value(v, depth + 1);
            format!("{} {value}", literal(&format!("\"{}\": ", json_escape(k))))
        };
        let req: Vec<String> = req.iter().map(|p| member(self, p)).collect();
        let opt: Vec<String> = opt.iter().map(|p| member(self, p)).collect();
        let body = if req.is_empty() {
            // Any ordered subset of the optional members, commas between.
            let alts: Vec<String> = (0..opt.len())
                .map(|i| {
                    let rest: String = opt
                        .iter()
                        .skip(i + 1)
                        .map(|m| format!(" ( \", \" {m} )?"))
                        .collect();
                    format!(
                        "{}{rest}",
                        opt.get(i).map(String::as_str).unwrap_or_default()
                    )
                })
                .collect();
            format!("( {} )?", alts.join(" | "))
        } else {
            let rest: String = opt.iter().map(|m| format!(" ( \", \" {m} )?")).collect();
            format!("{}{rest}", req.join(" \", \" "))
        };
        self.counter += 1;
        let name = format!("{}-obj{}", self.prefix, self.counter);
        let _ = writeln!(self.rules, "{name} ::= \"{{\" {body} \"}}\"");
        name
    }
}

/// `value` written the way the grammar makes the model write it: `": "` and `", "`
/// separators, object members in schema order (unknown ones last). Re-rendering a call the
/// model generated therefore reproduces its exact text, so its KV state is reused.
pub fn render_arguments(value: &Value, schema: &Value) -> String {
    match value {
        Value::Object(map) => {
            let (req, opt) = ToolDef::ordered_properties(schema);
            let mut keys: Vec<&str> = req
                .iter()
                .chain(opt.iter())
                .map(|(k, _)| k.as_str())
                .filter(|k| map.contains_key(*k))
                .collect();
            let known = keys.clone();
            keys.extend(
                map.keys()
                    .map(String::as_str)
                    .filter(|k| !known.contains(k)),
            );
            let props = schema.get("properties");
            let members: Vec<String> = keys
                .iter()
                .filter_map(|k| {
                    let v = map.get(*k)?;
                    let sub = props.and_then(|p| p.get(*k)).unwrap_or(&Value::Null);
                    Some(format!(
                        "{}: {}",
                        serde_json::to_string(k).unwrap_or_default(),
                        render_arguments(v, sub)
                    ))
                })
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Value::Array(items) => {
            let sub = schema.get("items").unwrap_or(&Value::Null);
            let items: Vec<String> = items.iter().map(|i| render_arguments(i, sub)).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// A call as the model writes it between the tags.
pub fn render_call(name: &str, arguments: &str) -> String {
    format!(
        "{{\"name\": {}, \"arguments\": {arguments}}}",
        serde_json::to_string(name).unwrap_or_default()
    )
}

/// A GBNF string literal for `text`.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_escape(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or_default()
        .to_string()
}

/// Whether `value` satisfies `schema` within the subset the grammar enforces: types,
/// enums, required properties, no unknown properties where `properties` is given.
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.contains(value)
    {
        return Err(format!(
            "{value} is not one of {}",
            Value::Array(values.clone())
        ));
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if schema.get("properties").is_some() => vec!["object"],
        _ => return Ok(()),
    };
    let ok = types.iter().any(|t| match (*t, value) {
        ("string", Value::String(_)) | ("boolean", Value::Bool(_)) | ("null", Value::Null) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("number", Value::Number(_)) => true,
        ("array", Value::Array(items)) => match schema.get("items") {
            Some(item_schema) => items.iter().all(|i| validate(i, item_schema).is_ok()),
            None => true,
        },
        ("object", Value::Object(map)) => validate_object(map, schema).is_ok(),
        _ => false,
    });
    if ok {
        return Ok(());
    }
    if let (Value::Object(map), true) = (value, types.contains(&"object")) {
        validate_object(map, schema)?;
    }
    Err(format!("{value} is not of type {}", types.join(" or ")))
}

fn validate_object(map: &Map<String, Value>, schema: &Value) -> Result<(), String> {
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                return Err(format!("missing required property \"{key}\""));
            }
        }
    }
    if let Some(props) = props {
        for (key, v) in map {
            match props.get(key) {
                Some(s) => validate(v, s).map_err(|e| format!("property \"{key}\": {e}"))?,
                None => return Err(format!("unknown property \"{key}\"")),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolDef> {
        ToolDef::from_specs(&[
            crate::tools::write_file_spec(),
            json!({"type": "function", "name": "shell", "description": "Run a command.",
                "parameters": {"type": "object", "properties": {
                    "command": {"type": "array", "items": {"type": "string"}},
                    "timeout_ms": {"type": "integer"}}, "required": ["command"]}}),
            json!({"type": "custom", "name": "apply_patch", "description": "freeform"}),
        ])
    }

    #[test]
    fn only_function_tools_are_offered_in_required_order() {
        let tools = tools();
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["write_file", "shell"]);
        let (req, opt) = ToolDef::ordered_properties(&tools[0].parameters);
        assert_eq!(
            req.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            ["path", "content"]
        );
        assert!(opt.is_empty());
    }

    #[test]
    fn a_named_tool_choice_keeps_only_that_tool_in_the_grammar() {
        let shell_only = required_call_grammar(&only_tool(&tools(), "shell"));
        assert!(
            shell_only.contains(r#"\"name\": \"shell\""#),
            "{shell_only}"
        );
        assert!(!shell_only.contains("write_file"), "{shell_only}");
        assert_eq!(
            only_tool(&tools(), "no_such_tool"),
            tools(),
            "an unknown name keeps all"
        );
    }

    #[test]
    fn grammar_names_each_tool_once_and_has_a_root() {
        let g = tools_grammar(&tools());
        assert!(
            g.contains("call ::= \"<tool_call>\\n\" (call0 | call1) \"\\n</tool_call>\""),
            "{g}"
        );
        assert_eq!(
            g.matches("\\\"name\\\": \\\"write_file\\\"").count(),
            1,
            "{g}"
        );
        assert_eq!(g.matches("\\\"name\\\": \\\"shell\\\"").count(), 1, "{g}");
        assert!(!g.contains("apply_patch"));
        // Optional members come after the required ones.
        assert!(g.contains("\"\\\"command\\\": \" \"[\" ( jstring ( \", \" jstring )* )? \"]\" ( \", \" \"\\\"timeout_ms\\\": \" jint )?"), "{g}");
        assert!(g.contains("root ::= call | line (\"\\n\"+ call)?"), "{g}");
        assert_eq!(tools_grammar(&[]).lines().nth(1), Some("root ::= message"));
    }

    #[test]
    fn arguments_render_in_grammar_style() {
        let t = tools();
        let v = json!({"content": "a\nb", "path": "x.py"});
        assert_eq!(
            render_arguments(&v, &t[0].parameters),
            r#"{"path": "x.py", "content": "a\nb"}"#
        );
        let v = json!({"timeout_ms": 5, "command": ["ls", "-l"]});
        assert_eq!(
            render_arguments(&v, &t[1].parameters),
            r#"{"command": ["ls", "-l"], "timeout_ms": 5}"#
        );
        assert_eq!(
            render_call("shell", "{}"),
            r#"{"name": "shell", "arguments": {}}"#
        );
    }

    #[test]
    fn validation_follows_the_schema_subset() {
        let t = tools();
        let schema = &t[1].parameters;
        assert!(validate(&json!({"command": ["ls"]}), schema).is_ok());
        assert!(validate(&json!({"command": ["ls"], "timeout_ms": 5}), schema).is_ok());
        assert!(validate(&json!({"command": "ls"}), schema).is_err());
        assert!(validate(&json!({"cmd": ["ls"]}), schema).is_err());
        assert!(validate(&json!({"command": ["ls"], "extra": 1}), schema).is_err());
        assert!(validate(&json!("a"), &json!({"enum": ["a", "b"]})).is_ok());
        assert!(validate(&json!("c"), &json!({"enum": ["a", "b"]})).is_err());
    }
}
