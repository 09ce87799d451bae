//! Making an MCP tool's input schema acceptable as function `parameters`.
//!
//! MCP servers publish JSON Schema written for their own validators; the model APIs accept a
//! narrower dialect and reject a whole request over one construct they dislike. The schema is
//! passed through as written except where a known rejection would follow:
//!
//! * **The root** must be `type: "object"` with a `properties` object, and may not carry
//!   `anyOf`/`oneOf`/`allOf`/`enum`/`not` (nor `const`, `if`/`then`/`else`). A root union of
//!   object variants is flattened: the variants' properties are merged, and only what every
//!   variant requires (all of them for `allOf`) stays required. Anything that is not an object
//!   schema at all becomes the empty object schema.
//! * **Draft metadata** (`$schema`, `$id`) is dropped everywhere.
//! * **Every nested schema** gets a `type` when it has none, inferred from its keywords
//!   (`properties` → object, `items` → array, `enum`/`const` values, numeric bounds) and
//!   otherwise `string` — the API refuses untyped property schemas. Unions (`anyOf`, `oneOf`)
//!   and references (`$ref`) are left untyped, since they carry their types inside.
//! * **Objects** get `properties: {}` and **arrays** get `items` (typed by the rule above, so
//!   a string schema) when missing; `oneOf` becomes
//!   `anyOf`, which the API understands with the same meaning for model-written arguments;
//!   boolean sub-schemas (`true`) become `{}` typed as above.
//!
//! Everything else (descriptions, `required`, `enum`, `default`, formats, bounds,
//! `additionalProperties`) is kept, so the model sees what the server author wrote.

use serde_json::{Map, Value, json};

/// Keywords the API refuses at the root of `parameters`.
const ROOT_FORBIDDEN: &[&str] = &[
    "anyOf", "oneOf", "allOf", "enum", "not", "const", "if", "then", "else",
];
/// Draft metadata removed at every level.
const METADATA: &[&str] = &["$schema", "$id"];
/// Keywords holding a map of named sub-schemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "$defs", "definitions"];
/// Keywords holding one sub-schema.
const SCHEMA_SINGLES: &[&str] = &["items", "additionalProperties", "not", "contains"];
/// Keywords holding a list of sub-schemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "allOf", "prefixItems"];

/// Returns a copy of `schema` that the model APIs accept as function parameters.
pub fn sanitize_input_schema(schema: &Value) -> Value {
    let Some(root) = schema.as_object() else {
        return empty_object_schema();
    };
    let mut root = root.clone();
    flatten_root_unions(&mut root);
    for key in ROOT_FORBIDDEN {
        root.remove(*key);
    }
    root.insert("type".to_owned(), Value::String("object".to_owned()));
    if !root.get("properties").is_some_and(Value::is_object) {
        root.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    if let Some(Value::Array(required)) = root.get_mut("required") {
        required.retain(Value::is_string);
    }
    let mut root = Value::Object(root);
    sanitize_children(&mut root);
    if let Some(map) = root.as_object_mut() {
        for key in METADATA {
            map.remove(*key);
        }
    }
    root
}

fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// Merges root `anyOf`/`oneOf`/`allOf` object variants into the root's own properties.
fn flatten_root_unions(root: &mut Map<String, Value>) {
    let mut properties = match root.remove("properties") {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut required: Vec<Value> = match root.remove("required") {
        Some(Value::Array(items)) => items,
        _ => Vec::new(),
    };
    for (keyword, all_apply) in [("allOf", true), ("anyOf", false), ("oneOf", false)] {
        let Some(Value::Array(variants)) = root.get(keyword) else {
            continue;
        };
        let mut common: Option<Vec<Value>> = None;
        for variant in variants {
            let Some(variant) = variant.as_object() else {
                continue;
            };
            if let Some(Value::Object(props)) = variant.get("properties") {
                for (name, schema) in props {
                    properties
                        .entry(name.clone())
                        .or_insert_with(|| schema.clone());
                }
            }
            let variant_required: Vec<Value> = match variant.get("required") {
                Some(Value::Array(items)) => items.clone(),
                _ => Vec::new(),
            };
            if all_apply {
                for name in variant_required {
                    if !required.contains(&name) {
                        required.push(name);
                    }
                }
            } else {
                common = Some(match common {
                    None => variant_required,
                    Some(previous) => previous
                        .into_iter()
                        .filter(|name| variant_required.contains(name))
                        .collect(),
                });
            }
        }
        for name in common.unwrap_or_default() {
            if !required.contains(&name) {
                required.push(name);
            }
        }
    }
    root.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        root.insert("required".to_owned(), Value::Array(required));
    }
}

/// Sanitizes every sub-schema of `schema` (but not `schema`'s own `type`).
fn sanitize_children(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if let Some(one_of) = map.remove("oneOf") {
        // Merge with an existing anyOf rather than overwrite it.
        match map.get_mut("anyOf") {
            Some(Value::Array(existing)) => {
                if let Value::Array(items) = one_of {
                    existing.extend(items);
                }
            }
            _ => {
                map.insert("anyOf".to_owned(), one_of);
            }
        }
    }
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(children)) = map.get_mut(*key) {
            for child in children.values_mut() {
                sanitize_nested(child);
            }
        }
    }
    for key in SCHEMA_SINGLES {
        if let Some(child) = map.get_mut(*key) {
            // `additionalProperties: false` is meaningful as a boolean; keep it.
            if child.is_object() || (*key != "additionalProperties" && child.is_boolean()) {
                sanitize_nested(child);
            }
        }
    }
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(children)) = map.get_mut(*key) {
            for child in children {
                sanitize_nested(child);
            }
        }
    }
}

/// Sanitizes a schema found below the root.
fn sanitize_nested(schema: &mut Value) {
    if schema.is_boolean() {
        *schema = Value::Object(Map::new());
    }
    let Value::Object(map) = schema else {
        return;
    };
    for key in METADATA {
        map.remove(*key);
    }
    if !map.contains_key("type")
        && !map.contains_key("anyOf")
        && !map.contains_key("oneOf")
        && !map.contains_key("allOf")
        && !map.contains_key("$ref")
    {
        let inferred = infer_type(map);
        map.insert("type".to_owned(), Value::String(inferred.to_owned()));
    }
    let types = type_names(map.get("type"));
    let (is_object, is_array) = (types.contains(&"object"), types.contains(&"array"));
    if is_object && !map.get("properties").is_some_and(Value::is_object) {
        map.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    if is_array && !map.contains_key("items") && !map.contains_key("prefixItems") {
        map.insert("items".to_owned(), json!({}));
    }
    sanitize_children(schema);
}

fn type_names(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn infer_type(map: &Map<String, Value>) -> &'static str {
    let has = |key: &str| map.contains_key(key);
    if has("properties")
        || has("required")
        || has("additionalProperties")
        || has("patternProperties")
    {
        return "object";
    }
    if has("items") || has("prefixItems") || has("minItems") || has("maxItems") {
        return "array";
    }
    let values: Vec<&Value> = match (map.get("enum"), map.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().collect(),
        (_, Some(value)) => vec![value],
        _ => Vec::new(),
    };
    if !values.is_empty() {
        if values.iter().all(|v| v.is_boolean()) {
            return "boolean";
        }
        if values.iter().all(|v| v.is_i64() || v.is_u64()) {
            return "integer";
        }
        if values.iter().all(|v| v.is_number()) {
            return "number";
        }
        return "string";
    }
    if has("minimum")
        || has("maximum")
        || has("exclusiveMinimum")
        || has("exclusiveMaximum")
        || has("multipleOf")
    {
        return "number";
    }
    "string"
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_well_formed_schema_passes_through_without_draft_metadata() {
        // As published by @modelcontextprotocol/server-everything for `get-sum`.
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "First number"},
                "b": {"type": "number", "description": "Second number", "default": 2}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        });
        let mut expected = schema.clone();
        expected.as_object_mut().unwrap().remove("$schema");
        assert_eq!(sanitize_input_schema(&schema), expected);
    }

    #[test]
    fn missing_root_type_and_properties_are_added() {
        assert_eq!(
            sanitize_input_schema(&json!({})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            sanitize_input_schema(&json!({"properties": null, "required": "x"})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            sanitize_input_schema(&json!({"type": "string"})),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn non_object_schemas_become_the_empty_object_schema() {
        for schema in [json!(null), json!(true), json!([1]), json!("object")] {
            assert_eq!(
                sanitize_input_schema(&schema),
                json!({"type": "object", "properties": {}})
            );
        }
    }

    #[test]
    fn root_unions_are_flattened() {
        let schema = json!({
            "anyOf": [
                {"type": "object", "properties": {"id": {"type": "integer"}, "q": {"type": "string"}}, "required": ["q", "id"]},
                {"type": "object", "properties": {"q": {"type": "string"}, "all": {"type": "boolean"}}, "required": ["q"]}
            ]
        });
        assert_eq!(
            sanitize_input_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "q": {"type": "string"},
                    "all": {"type": "boolean"}
                },
                "required": ["q"]
            })
        );
        let all_of = json!({
            "allOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "string"}}, "required": ["b"]}
            ],
            "enum": [1],
            "not": {"required": ["c"]}
        });
        assert_eq!(
            sanitize_input_schema(&all_of),
            json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "required": ["a", "b"]
            })
        );
    }

    #[test]
    fn nested_schemas_get_types_properties_and_items() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array"},
                "options": {"type": "object", "additionalProperties": {"type": "string"}},
                "mode": {"enum": ["fast", "slow"]},
                "count": {"minimum": 1},
                "level": {"enum": [1, 2]},
                "nested": {"properties": {"x": {}}},
                "list": {"items": {"const": true}},
                "either": {"oneOf": [{"type": "string"}, {"type": "null"}]},
                "ref": {"$ref": "#/$defs/thing"},
                "anything": true,
                "nullable_obj": {"type": ["object", "null"]}
            },
            "$defs": {"thing": {"$schema": "x", "properties": {}}}
        });
        assert_eq!(
            sanitize_input_schema(&schema),
            json!({
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "options": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
                    "mode": {"type": "string", "enum": ["fast", "slow"]},
                    "count": {"type": "number", "minimum": 1},
                    "level": {"type": "integer", "enum": [1, 2]},
                    "nested": {"type": "object", "properties": {"x": {"type": "string"}}},
                    "list": {"type": "array", "items": {"type": "boolean", "const": true}},
                    "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "ref": {"$ref": "#/$defs/thing"},
                    "anything": {"type": "string"},
                    "nullable_obj": {"type": ["object", "null"], "properties": {}}
                },
                "$defs": {"thing": {"type": "object", "properties": {}}}
            })
        );
    }

    #[test]
    fn additional_properties_false_is_kept() {
        let schema = json!({
            "type": "object",
            "properties": {"o": {"type": "object", "properties": {}, "additionalProperties": false}},
            "additionalProperties": false
        });
        assert_eq!(sanitize_input_schema(&schema), schema);
    }
}
