//! Checking a tool call's arguments against the tool's own JSON schema.
//!
//! serde's messages say *what* type was expected but not *which field* held the wrong value,
//! and they speak in Rust types (`u64`, `struct ExecCommandArgs`). So before deserialising, we
//! walk the schema we sent to the model and the JSON the model sent back side by side, and
//! report the first mismatch in plain words with the field's path (`plan[1].status`). The
//! schema is the single source of truth: what we offer is exactly what we check.
//!
//! Every `number` in our schemas is a count, a duration or an id, so a number must be a whole
//! number of zero or more (`2.0` is accepted as 2).

use serde_json::{Map, Value};

/// Check `value` against `schema`; on a mismatch return a plain-words description of it.
pub(crate) fn check(schema: &Value, value: &Value) -> Result<(), String> {
    match value {
        Value::Object(map) => check_object(schema, map, ""),
        other => Err(format!(
            "the arguments must be a JSON object, but they are {}",
            describe(other)
        )),
    }
}

fn check_object(schema: &Value, map: &Map<String, Value>, path: &str) -> Result<(), String> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));

    if closed && let Some(unknown) = map.keys().find(|key| !properties.contains_key(*key)) {
        let accepted: Vec<String> = properties.keys().map(|k| format!("`{k}`")).collect();
        let place = if path.is_empty() {
            String::new()
        } else {
            format!(" in `{path}`")
        };
        return Err(format!(
            "unknown field `{unknown}`{place} (accepted fields: {})",
            accepted.join(", ")
        ));
    }

    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if map.get(required).is_none_or(Value::is_null) {
            return Err(format!("missing field `{}`", join(path, required)));
        }
    }

    for (key, item) in map {
        if item.is_null() {
            continue;
        }
        if let Some(item_schema) = properties.get(key) {
            check_value(item_schema, item, &join(path, key))?;
        }
    }
    Ok(())
}

fn check_value(schema: &Value, value: &Value, path: &str) -> Result<(), String> {
    let expected = schema.get("type").and_then(Value::as_str).unwrap_or("");
    match expected {
        "string" => {
            let Value::String(text) = value else {
                return Err(mismatch("a string", path, value));
            };
            if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
                && !allowed.iter().any(|a| a.as_str() == Some(text.as_str()))
            {
                return Err(format!(
                    "`{path}` must be one of {}, but it is {text:?}",
                    list_enum(allowed)
                ));
            }
            Ok(())
        }
        "number" | "integer" => check_whole_number(value, path),
        "boolean" => match value {
            Value::Bool(_) => Ok(()),
            other => Err(mismatch("true or false", path, other)),
        },
        "array" => {
            let Value::Array(items) = value else {
                return Err(mismatch("a list", path, value));
            };
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    let item_path = format!("{path}[{index}]");
                    if item.is_null() {
                        return Err(format!("`{item_path}` is null, but a value is needed"));
                    }
                    check_value(item_schema, item, &item_path)?;
                }
            }
            Ok(())
        }
        "object" => match value {
            Value::Object(map) => check_object(schema, map, path),
            other => Err(mismatch("an object", path, other)),
        },
        _ => Ok(()),
    }
}

fn check_whole_number(value: &Value, path: &str) -> Result<(), String> {
    let Value::Number(number) = value else {
        return Err(mismatch("a number", path, value));
    };
    if number.is_u64() {
        return Ok(());
    }
    if let Some(negative) = number.as_i64() {
        return Err(format!("`{path}` must be 0 or more, but it is {negative}"));
    }
    let float = number.as_f64().unwrap_or(f64::NAN);
    if float < 0.0 {
        Err(format!("`{path}` must be 0 or more, but it is {number}"))
    } else if float.fract() != 0.0 {
        Err(format!(
            "`{path}` must be a whole number, but it is {number}"
        ))
    } else if float >= u64::MAX as f64 {
        Err(format!("`{path}` is far too large ({number})"))
    } else {
        Ok(())
    }
}

fn mismatch(expected: &str, path: &str, value: &Value) -> String {
    format!(
        "expected {expected} for `{path}`, but got {}",
        describe(value)
    )
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn list_enum(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A short plain-words description of a JSON value, e.g. `a string ("abc")`.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let preview: String = s.chars().take(40).collect();
            let ellipsis = if preview.len() < s.len() { "…" } else { "" };
            format!("the string {preview:?}{ellipsis}")
        }
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// How to call a tool, from its schema: required and optional fields with their types.
pub(crate) fn usage(tool: &str, schema: &Value) -> String {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let field = |name: &str| -> String {
        let kind = properties.get(name).map(type_name).unwrap_or_default();
        format!("`{name}` ({kind})")
    };
    let required_list: Vec<String> = required.iter().map(|name| field(name)).collect();
    let optional_list: Vec<String> = properties
        .keys()
        .filter(|name| !required.contains(&name.as_str()))
        .map(|name| field(name))
        .collect();

    let mut text = format!("Call {tool} with a JSON object");
    if !required_list.is_empty() {
        text.push_str(&format!(" with required {}", required_list.join(", ")));
    }
    if !optional_list.is_empty() {
        let joiner = if required_list.is_empty() {
            " with"
        } else {
            " and"
        };
        text.push_str(&format!("{joiner} optional {}", optional_list.join(", ")));
    }
    text.push('.');
    text
}

fn type_name(schema: &Value) -> String {
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return format!("one of {}", list_enum(values));
    }
    match kind {
        "number" | "integer" => "whole number".to_string(),
        "array" => {
            let item = schema.get("items").map(type_name).unwrap_or_default();
            if item.contains(' ') {
                format!("list of ({item})")
            } else {
                format!("list of {item}s")
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "count": {"type": "number"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "inner": {"type": "object", "properties": {"flag": {"type": "boolean"}}, "additionalProperties": false},
            },
            "required": ["name"],
            "additionalProperties": false,
        })
    }

    #[test]
    fn reports_each_kind_of_mismatch_with_its_path() {
        let cases = [
            (
                json!([1]),
                "the arguments must be a JSON object, but they are a list",
            ),
            (json!({}), "missing field `name`"),
            (json!({"name": null}), "missing field `name`"),
            (
                json!({"name": "x", "extra": 1}),
                "unknown field `extra` (accepted fields: `count`, `inner`, `mode`, `name`, `tags`)",
            ),
            (
                json!({"name": 5}),
                "expected a string for `name`, but got the number 5",
            ),
            (
                json!({"name": "x", "count": "7"}),
                "expected a number for `count`, but got the string \"7\"",
            ),
            (
                json!({"name": "x", "count": -3}),
                "`count` must be 0 or more, but it is -3",
            ),
            (
                json!({"name": "x", "count": 1.5}),
                "`count` must be a whole number, but it is 1.5",
            ),
            (
                json!({"name": "x", "count": 1e30}),
                "`count` is far too large (1e+30)",
            ),
            (
                json!({"name": "x", "mode": "c"}),
                "`mode` must be one of \"a\", \"b\", but it is \"c\"",
            ),
            (
                json!({"name": "x", "tags": ["a", 1]}),
                "expected a string for `tags[1]`, but got the number 1",
            ),
            (
                json!({"name": "x", "inner": {"flag": "yes"}}),
                "expected true or false for `inner.flag`, but got the string \"yes\"",
            ),
            (
                json!({"name": "x", "inner": {"other": true}}),
                "unknown field `other` in `inner` (accepted fields: `flag`)",
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(
                check(&schema(), &value),
                Err(expected.to_string()),
                "{value}"
            );
        }
    }

    #[test]
    fn accepts_nulls_for_optional_fields_and_whole_floats() {
        let value = json!({"name": "x", "count": 2.0, "mode": null, "tags": null, "inner": null});
        assert_eq!(check(&schema(), &value), Ok(()));
    }

    #[test]
    fn usage_lists_required_then_optional_fields() {
        assert_eq!(
            usage("demo", &schema()),
            "Call demo with a JSON object with required `name` (string) and optional `count` \
             (whole number), `inner` (object), `mode` (one of \"a\", \"b\"), `tags` (list of \
             strings)."
        );
    }
}
