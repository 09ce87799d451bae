//! The multi-agent collaboration tools (Codex's v1 generation): `spawn_agent`,
//! `send_input`, `wait_agent`, `close_agent`, `resume_agent` — their specs, offered directly
//! in `tools` with Codex's names, schemas and descriptions, and their argument structs.

use crate::args::ToolArguments;
use crate::spec::{JsonSchema, ToolSpec, names};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const SPAWN_DESCRIPTION: &str = r#"Spawn a sub-agent for a well-scoped task. Returns the spawned agent id plus the user-facing nickname when available. Spawned agents inherit your current model by default. Omit `model` to use that preferred default; set `model` only when an explicit override is needed.
This spawn_agent tool provides you access to sub-agents that inherit your current model by default. Do not set the `model` field unless the user explicitly asks for a different model. You should follow the rules and guidelines below to use this tool.

Do not spawn sub-agents unless the user or applicable AGENTS.md/skill instructions explicitly ask for sub-agents, delegation, or parallel agent work.
Requests for depth, thoroughness, research, investigation, or detailed codebase analysis do not count as permission to spawn.
Agent-role guidance below only helps choose which agent to use after spawning is already authorized; it never authorizes spawning by itself.

### When to delegate vs. do the subtask yourself
- First, quickly analyze the overall user task and form a succinct high-level plan. Identify which tasks are immediate blockers on the critical path, and which tasks are sidecar tasks that are needed but can run in parallel without blocking the next local step. As part of that plan, explicitly decide what immediate task you should do locally right now. Do this planning step before delegating to agents so you do not hand off the immediate blocking task to a submodel and then waste time waiting on it.
- Use a subagent when a subtask is easy enough for it to handle and can run in parallel with your local work. Prefer delegating concrete, bounded sidecar tasks that materially advance the main task without blocking your immediate next local step.
- Do not delegate urgent blocking work when your immediate next step depends on that result. If the very next action is blocked on that task, the main rollout should usually do it locally to keep the critical path moving.
- Keep work local when the subtask is too difficult to delegate well and when it is tightly coupled, urgent, or likely to block your immediate next step.

### Designing delegated subtasks
- Subtasks must be concrete, well-defined, and self-contained.
- Delegated subtasks must materially advance the main task.
- Do not duplicate work between the main rollout and delegated subtasks.
- Avoid issuing multiple delegate calls on the same unresolved thread unless the new delegated task is genuinely different and necessary.
- Narrow the delegated ask to the concrete output you need next.
- For coding tasks, prefer delegating concrete code-change worker subtasks over read-only explorer analysis when the subagent can make a bounded patch in a clear write scope.
- When delegating coding work, instruct the submodel to edit files directly in its forked workspace and list the file paths it changed in the final answer.
- For code-edit subtasks, decompose work so each delegated task has a disjoint write set.

### After you delegate
- Call wait_agent very sparingly. Only call wait_agent when you need the result immediately for the next critical-path step and you are blocked until it returns.
- Do not redo delegated subagent tasks yourself; focus on integrating results or tackling non-overlapping work.
- While the subagent is running in the background, do meaningful non-overlapping work immediately.
- Do not repeatedly wait by reflex.
- When a delegated coding task returns, quickly review the uploaded changes, then integrate or refine them.

### Parallel delegation patterns
- Run multiple independent information-seeking subtasks in parallel when you have distinct questions that can be answered independently.
- Split implementation into disjoint codebase slices and spawn multiple agents for them in parallel when the write scopes do not overlap.
- Delegate verification only when it can run in parallel with ongoing implementation and is likely to catch a concrete risk before final integration.
- The key is to find opportunities to spawn multiple independent subtasks in parallel within the same round, while ensuring each subtask is well-defined, self-contained, and materially advances the main task."#;
const SEND_INPUT_DESCRIPTION: &str = r#"Send a message to an existing agent. Use interrupt=true to redirect work immediately. You should reuse the agent by send_input if you believe your assigned task is highly dependent on the context of a previous task."#;
const WAIT_DESCRIPTION: &str = r#"Wait for agents to reach a final status. Completed statuses may include the agent's final message. Returns empty status when timed out. Once the agent reaches a final status, a notification message will be received containing the same completed status."#;
const CLOSE_DESCRIPTION: &str = r#"Close an agent and any open descendants when they are no longer needed, and return the target agent's previous status before shutdown was requested. Completed agents remain open and count toward the concurrency limit until closed. Don't keep agents open for too long if they are not needed anymore."#;
const RESUME_DESCRIPTION: &str =
    r#"Resume a previously closed agent by id so it can receive send_input and wait_agent calls."#;

fn collab_function(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec::Function {
        name: name.to_string(),
        description: description.to_string(),
        strict: false,
        parameters: JsonSchema(parameters),
    }
}

/// The schema of the structured `items` both `spawn_agent` and `send_input` take.
fn items_schema() -> Value {
    json!({
        "type": "array",
        "description": "Structured input items. Use this to pass explicit mentions (for example app:// connector paths).",
        "items": {
            "type": "object",
            "properties": {
                "audio_url": {
                    "type": "string",
                    "description": "Audio data URL when type is audio."
                },
                "image_url": {
                    "type": "string",
                    "description": "Image URL when type is image."
                },
                "name": {
                    "type": "string",
                    "description": "Display name when type is skill or mention."
                },
                "path": {
                    "type": "string",
                    "description": "Path when type is local_image/local_audio/skill, or structured mention target such as app://<connector-id> or plugin://<plugin-name>@<marketplace-name> when type is mention."
                },
                "text": {
                    "type": "string",
                    "description": "Text content when type is text."
                },
                "type": {
                    "type": "string",
                    "description": "Input item type: text, image, local_image, audio, local_audio, skill, or mention."
                }
            },
            "additionalProperties": false
        }
    })
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

pub fn spawn_agent_spec() -> ToolSpec {
    collab_function(
        names::SPAWN_AGENT,
        SPAWN_DESCRIPTION,
        json!({
            "type": "object",
            "properties": {
                "fork_context": {
                    "type": "boolean",
                    "description": "True forks the current thread history into the new agent; false or omitted starts with only the initial prompt."
                },
                "items": items_schema(),
                "message": string("Initial plain-text task for the new agent. Use either message or items."),
                "model": string("Model override for the new agent. Omit unless an explicit override is needed."),
                "reasoning_effort": string("Reasoning effort override for the new agent. Omit to inherit the parent effort."),
            },
            "additionalProperties": false,
        }),
    )
}

pub fn send_input_spec() -> ToolSpec {
    collab_function(
        names::SEND_INPUT,
        SEND_INPUT_DESCRIPTION,
        json!({
            "type": "object",
            "properties": {
                "interrupt": {
                    "type": "boolean",
                    "description": "True interrupts the current task and handles this message immediately; false or omitted queues it."
                },
                "items": items_schema(),
                "message": string("Legacy plain-text message to send to the agent. Use either message or items."),
                "target": string("Agent id to message (from spawn_agent)."),
            },
            "required": ["target"],
            "additionalProperties": false,
        }),
    )
}

pub fn wait_agent_spec() -> ToolSpec {
    collab_function(
        names::WAIT_AGENT,
        WAIT_DESCRIPTION,
        json!({
            "type": "object",
            "properties": {
                "targets": {
                    "type": "array",
                    "description": "Agent ids to wait on. Pass multiple ids to wait for whichever finishes first.",
                    "items": {"type": "string"}
                },
                "timeout_ms": {
                    "type": "number",
                    "description": "Timeout in milliseconds. Defaults to 30000, min 10000, max 3600000. Prefer longer waits (minutes) to avoid busy polling."
                },
            },
            "required": ["targets"],
            "additionalProperties": false,
        }),
    )
}

pub fn close_agent_spec() -> ToolSpec {
    collab_function(
        names::CLOSE_AGENT,
        CLOSE_DESCRIPTION,
        json!({
            "type": "object",
            "properties": {"target": string("Agent id to close (from spawn_agent).")},
            "required": ["target"],
            "additionalProperties": false,
        }),
    )
}

pub fn resume_agent_spec() -> ToolSpec {
    collab_function(
        names::RESUME_AGENT,
        RESUME_DESCRIPTION,
        json!({
            "type": "object",
            "properties": {"id": string("Agent id to resume.")},
            "required": ["id"],
            "additionalProperties": false,
        }),
    )
}

/// One structured input item of `spawn_agent` / `send_input`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollabInputItem {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub image_url: Option<String>,
    #[serde(default)]
    pub audio_url: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
}

/// Arguments of `spawn_agent`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpawnAgentArgs {
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub items: Option<Vec<CollabInputItem>>,
    #[serde(default)]
    pub fork_context: Option<bool>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub reasoning_effort: Option<String>,
}

impl ToolArguments for SpawnAgentArgs {
    fn spec() -> ToolSpec {
        spawn_agent_spec()
    }
}

/// Arguments of `send_input`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendInputArgs {
    pub target: String,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub items: Option<Vec<CollabInputItem>>,
    #[serde(default)]
    pub interrupt: Option<bool>,
}

impl ToolArguments for SendInputArgs {
    fn spec() -> ToolSpec {
        send_input_spec()
    }
}

/// Arguments of `wait_agent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitAgentArgs {
    pub targets: Vec<String>,
    #[serde(default)]
    pub timeout_ms: Option<f64>,
}

impl ToolArguments for WaitAgentArgs {
    fn spec() -> ToolSpec {
        wait_agent_spec()
    }
}

/// Arguments of `close_agent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloseAgentArgs {
    pub target: String,
}

impl ToolArguments for CloseAgentArgs {
    fn spec() -> ToolSpec {
        close_agent_spec()
    }
}

/// Arguments of `resume_agent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeAgentArgs {
    pub id: String,
}

impl ToolArguments for ResumeAgentArgs {
    fn spec() -> ToolSpec {
        resume_agent_spec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// The specs are Codex 0.171's as sent (minus `defer_loading`, since they are offered
    /// directly, and minus the model list the spawn description starts with).
    #[test]
    fn specs_match_the_codex_capture() {
        let capture: Value =
            serde_json::from_str(include_str!("../tests/codex/collab-tools-v1.json")).unwrap();
        let ours = [
            spawn_agent_spec(),
            wait_agent_spec(),
            send_input_spec(),
            resume_agent_spec(),
            close_agent_spec(),
        ];
        for (theirs, ours) in capture["tools"].as_array().unwrap().iter().zip(ours) {
            let mut theirs = theirs.clone();
            theirs.as_object_mut().unwrap().remove("defer_loading");
            let mut ours = ours.to_responses_json();
            if theirs["name"] == "spawn_agent" {
                let full = theirs["description"].as_str().unwrap().to_string();
                assert!(full.ends_with(ours["description"].as_str().unwrap()));
                ours["description"] = theirs["description"].clone();
            }
            assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn arguments_parse() {
        let args: WaitAgentArgs =
            crate::parse_arguments("wait_agent", r#"{"targets":["a"],"timeout_ms":1000}"#).unwrap();
        assert_eq!(args.targets, ["a"]);
        assert_eq!(args.timeout_ms, Some(1000.0));
        let spawn: SpawnAgentArgs =
            crate::parse_arguments("spawn_agent", r#"{"message":"go"}"#).unwrap();
        assert_eq!(spawn.message.as_deref(), Some("go"));
    }
}
