//! Tool specs: names, required fields and argument types follow Codex's shapes.

use osprey_tools::{
    ToolSpec, apply_patch_freeform_spec, apply_patch_function_spec, exec_command_spec,
    grep_files_spec, list_dir_spec, read_file_spec, shell_command_spec, shell_spec,
    update_plan_spec, view_image_spec, write_stdin_spec,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// The schema with descriptions removed, so shapes can be compared whole.
fn shape(spec: &ToolSpec) -> Value {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "description")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    strip(&spec.to_responses_json())
}

fn approval() -> Value {
    json!({
        "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"]},
        "justification": {"type": "string"},
        "prefix_rule": {"type": "array", "items": {"type": "string"}},
    })
}

fn with_approval(mut properties: Value) -> Value {
    if let (Value::Object(p), Value::Object(a)) = (&mut properties, approval()) {
        p.extend(a);
    }
    properties
}

fn function(name: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "function",
        "name": name,
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        },
    })
}

#[test]
fn command_tools_have_codex_shapes() {
    assert_eq!(
        shape(&exec_command_spec()),
        function(
            "exec_command",
            with_approval(json!({
                "cmd": {"type": "string"},
                "workdir": {"type": "string"},
                "shell": {"type": "string"},
                "login": {"type": "boolean"},
                "tty": {"type": "boolean"},
                "yield_time_ms": {"type": "number"},
                "max_output_tokens": {"type": "number"},
            })),
            &["cmd"]
        )
    );
    assert_eq!(
        shape(&write_stdin_spec()),
        function(
            "write_stdin",
            json!({
                "session_id": {"type": "number"},
                "chars": {"type": "string"},
                "yield_time_ms": {"type": "number"},
                "max_output_tokens": {"type": "number"},
            }),
            &["session_id"]
        )
    );
    assert_eq!(
        shape(&shell_spec()),
        function(
            "shell",
            with_approval(json!({
                "command": {"type": "array", "items": {"type": "string"}},
                "workdir": {"type": "string"},
                "timeout_ms": {"type": "number"},
            })),
            &["command"]
        )
    );
    assert_eq!(
        shape(&shell_command_spec()),
        function(
            "shell_command",
            with_approval(json!({
                "command": {"type": "string"},
                "workdir": {"type": "string"},
                "login": {"type": "boolean"},
                "timeout_ms": {"type": "number"},
            })),
            &["command"]
        )
    );
}

#[test]
fn file_and_plan_tools_have_codex_shapes() {
    assert_eq!(
        shape(&read_file_spec()),
        function(
            "read_file",
            json!({
                "file_path": {"type": "string"},
                "offset": {"type": "number"},
                "limit": {"type": "number"},
                "mode": {"type": "string", "enum": ["slice", "indentation"]},
                "indentation": {
                    "type": "object",
                    "properties": {
                        "anchor_line": {"type": "number"},
                        "max_levels": {"type": "number"},
                        "include_siblings": {"type": "boolean"},
                        "include_header": {"type": "boolean"},
                        "max_lines": {"type": "number"},
                    },
                    "additionalProperties": false,
                },
            }),
            &["file_path"]
        )
    );
    assert_eq!(
        shape(&list_dir_spec()),
        function(
            "list_dir",
            json!({
                "dir_path": {"type": "string"},
                "offset": {"type": "number"},
                "limit": {"type": "number"},
                "depth": {"type": "number"},
            }),
            &["dir_path"]
        )
    );
    assert_eq!(
        shape(&grep_files_spec()),
        function(
            "grep_files",
            json!({
                "pattern": {"type": "string"},
                "include": {"type": "string"},
                "path": {"type": "string"},
                "limit": {"type": "number"},
            }),
            &["pattern"]
        )
    );
    assert_eq!(
        shape(&view_image_spec()),
        function("view_image", json!({"path": {"type": "string"}}), &["path"])
    );
    assert_eq!(
        shape(&update_plan_spec()),
        function(
            "update_plan",
            json!({
                "explanation": {"type": "string"},
                "plan": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        },
                        "required": ["step", "status"],
                        "additionalProperties": false,
                    },
                },
            }),
            &["plan"]
        )
    );
}

#[test]
fn apply_patch_comes_in_both_forms() {
    assert_eq!(
        shape(&apply_patch_function_spec()),
        function(
            "apply_patch",
            json!({"input": {"type": "string"}}),
            &["input"]
        )
    );
    let freeform = apply_patch_freeform_spec("start: begin_patch hunk+ end_patch");
    assert_eq!(
        shape(&freeform),
        json!({
            "type": "custom",
            "name": "apply_patch",
            "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"},
        })
    );
}

#[test]
fn every_tool_and_field_has_a_description() {
    fn check(v: &Value, path: &str) {
        if let Some(props) = v.get("properties").and_then(Value::as_object) {
            for (k, p) in props {
                if p.get("type") != Some(&json!("object")) {
                    assert!(
                        p.get("description").is_some(),
                        "{path}.{k} lacks a description"
                    );
                }
                check(p, &format!("{path}.{k}"));
                if let Some(items) = p.get("items") {
                    check(items, &format!("{path}.{k}[]"));
                }
            }
        }
    }
    for spec in [
        exec_command_spec(),
        write_stdin_spec(),
        shell_spec(),
        shell_command_spec(),
        apply_patch_function_spec(),
        read_file_spec(),
        list_dir_spec(),
        grep_files_spec(),
        view_image_spec(),
        update_plan_spec(),
    ] {
        let v = spec.to_responses_json();
        assert!(
            v["description"].as_str().is_some_and(|d| d.len() > 20),
            "{}",
            spec.name()
        );
        check(&v["parameters"], spec.name());
        let chat = spec.to_chat_completions_json().unwrap();
        assert_eq!(chat["function"]["parameters"], v["parameters"]);
    }
}
