//! The two tools this server offers, their argument shapes, and how the arguments of an
//! `osprey` call become a [`Config`].
//!
//! The shapes follow Codex's MCP server (`codex` / `codex-reply`): the start tool takes
//! kebab-case keys (`approval-policy`, `base-instructions`), the reply tool camelCase ones
//! (`threadId`). Callers written against either spelling work, because the snake_case forms
//! (`approval_policy`, `thread_id`) are accepted as aliases. Unknown keys are refused with a
//! message naming them, so a caller that guessed an argument learns it at once.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use osprey_config::{Config, ConfigBuilder, ConfigOverrides, ConfigWarning, EnvSnapshot};
use osprey_protocol::{AskForApproval, SandboxMode, ThreadId};
use rmcp::model::{JsonObject, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::McpServerError;

/// Name of the tool that starts a thread.
pub const OSPREY_TOOL: &str = "osprey";
/// Name of the tool that continues a thread.
pub const OSPREY_REPLY_TOOL: &str = "osprey-reply";

/// Arguments of the `osprey` tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OspreyToolCallParam {
    /// The first user message of the new thread.
    pub prompt: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub profile: Option<String>,
    /// Working directory; relative paths are resolved against the server's own.
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(
        default,
        rename = "approval-policy",
        alias = "approval_policy",
        deserialize_with = "approval_policy"
    )]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default, deserialize_with = "sandbox_mode")]
    pub sandbox: Option<SandboxMode>,
    /// `-c key=value` overrides: keys are dotted config paths, values any JSON value that
    /// has a TOML equivalent.
    #[serde(default)]
    pub config: Option<BTreeMap<String, Value>>,
    #[serde(default, rename = "base-instructions", alias = "base_instructions")]
    pub base_instructions: Option<String>,
    #[serde(
        default,
        rename = "developer-instructions",
        alias = "developer_instructions"
    )]
    pub developer_instructions: Option<String>,
}

/// Reads a name from `names` into its value; the error names the argument and the choices,
/// which serde's "unknown variant" message would not.
fn one_of<'de, D, T: Copy>(
    deserializer: D,
    argument: &str,
    names: &[(&str, T)],
) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let Some(raw) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    match names.iter().find(|(name, _)| *name == raw.trim()) {
        Some((_, value)) => Ok(Some(*value)),
        None => {
            let choices: Vec<&str> = names.iter().map(|(name, _)| *name).collect();
            Err(serde::de::Error::custom(format!(
                "`{argument}` must be one of {} (got `{raw}`)",
                choices.join(", ")
            )))
        }
    }
}

fn approval_policy<'de, D>(deserializer: D) -> Result<Option<AskForApproval>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let names: Vec<(&str, AskForApproval)> = AskForApproval::ALL
        .iter()
        .map(|p| (p.as_str(), *p))
        .collect();
    one_of(deserializer, "approval-policy", &names)
}

fn sandbox_mode<'de, D>(deserializer: D) -> Result<Option<SandboxMode>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let names: Vec<(&str, SandboxMode)> =
        SandboxMode::ALL.iter().map(|m| (m.as_str(), *m)).collect();
    one_of(deserializer, "sandbox", &names)
}

/// Arguments of the `osprey-reply` tool.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OspreyToolCallReplyParam {
    #[serde(default, rename = "threadId", alias = "thread_id")]
    pub thread_id: Option<String>,
    /// Codex's older name for the thread id.
    #[serde(default, rename = "conversationId", alias = "conversation_id")]
    pub conversation_id: Option<String>,
    /// The next user message.
    pub prompt: String,
}

impl OspreyToolCallReplyParam {
    /// The thread to continue: `threadId`, else the older `conversationId`.
    pub fn thread_id(&self) -> Result<ThreadId, McpServerError> {
        let raw = self
            .thread_id
            .as_deref()
            .or(self.conversation_id.as_deref())
            .ok_or(McpServerError::MissingThreadId)?;
        raw.parse::<ThreadId>()
            .map_err(|_| McpServerError::BadThreadId {
                value: raw.to_string(),
            })
    }
}

/// Parses tool arguments, turning serde's message into one that names the tool.
pub fn parse_arguments<T: for<'de> Deserialize<'de>>(
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<T, McpServerError> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|source| McpServerError::BadArguments {
        tool: tool.to_string(),
        reason: source.to_string(),
    })
}

/// A built configuration and the warnings a front end shows once.
pub struct ThreadConfig {
    pub prompt: String,
    pub config: Config,
    pub warnings: Vec<ConfigWarning>,
}

impl OspreyToolCallParam {
    /// Builds the thread's configuration: the user's files and profile, then `config`
    /// overrides in key order, then the typed arguments (which win).
    pub fn into_config(
        self,
        env: &EnvSnapshot,
        process_cwd: &Path,
    ) -> Result<ThreadConfig, McpServerError> {
        let cwd = match &self.cwd {
            Some(dir) => {
                let dir = process_cwd.join(dir);
                if !dir.is_dir() {
                    return Err(McpServerError::NoSuchCwd { path: dir });
                }
                Some(dir)
            }
            None => None,
        };
        let overrides = ConfigOverrides {
            model: self.model,
            profile: self.profile,
            cwd,
            approval_policy: self.approval_policy,
            sandbox_mode: self.sandbox,
            base_instructions: self.base_instructions,
            developer_instructions: self.developer_instructions,
            ..Default::default()
        };
        let cli_overrides = config_overrides(self.config.unwrap_or_default())?;
        let loaded = ConfigBuilder::new(env.clone())
            .process_cwd(process_cwd)
            .cli_overrides(cli_overrides)
            .overrides(overrides)
            .build()
            .map_err(|source| McpServerError::Config { source })?;
        Ok(ThreadConfig {
            prompt: self.prompt,
            config: loaded.config,
            warnings: loaded.warnings,
        })
    }
}

/// Turns the `config` object into `-c key=value` arguments, the value written as TOML.
fn config_overrides(config: BTreeMap<String, Value>) -> Result<Vec<String>, McpServerError> {
    config
        .into_iter()
        .map(|(key, value)| {
            let value = osprey_config::json_to_toml(&value).map_err(|reason| {
                McpServerError::BadOverride {
                    key: key.clone(),
                    reason,
                }
            })?;
            Ok(format!("{key}={value}"))
        })
        .collect()
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// What both tools return in `structuredContent`.
fn output_schema() -> Arc<JsonObject> {
    object(json!({
        "type": "object",
        "properties": {
            "threadId": { "type": "string" },
            "content": { "type": "string" }
        },
        "required": ["threadId", "content"]
    }))
}

/// The `osprey` tool as listed by `tools/list`.
pub fn osprey_tool() -> Tool {
    let input = object(json!({
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "description": "The task for Osprey: the first user message of a new thread."
            },
            "cwd": {
                "type": "string",
                "description": "Directory to work in. A relative path is taken from the server's working directory."
            },
            "model": {
                "type": "string",
                "description": "Model to use instead of the configured one."
            },
            "profile": {
                "type": "string",
                "description": "A profile from config.toml to start from."
            },
            "approval-policy": {
                "type": "string",
                "enum": ["untrusted", "on-failure", "on-request", "never"],
                "description": "When Osprey must ask before running a command: untrusted (anything not known to be read-only), on-failure (when the sandbox blocked it), on-request (when the model asks to leave the sandbox), never."
            },
            "sandbox": {
                "type": "string",
                "enum": ["read-only", "workspace-write", "danger-full-access"],
                "description": "What commands may touch: read-only, workspace-write (the working directory), or danger-full-access (no sandbox)."
            },
            "config": {
                "type": "object",
                "additionalProperties": true,
                "description": "Settings that override config.toml, as with `-c key=value`: dotted keys, JSON values (for example {\"model_reasoning_effort\": \"high\"})."
            },
            "base-instructions": {
                "type": "string",
                "description": "System instructions to use instead of Osprey's own."
            },
            "developer-instructions": {
                "type": "string",
                "description": "Extra instructions sent to the model as a developer message."
            }
        },
        "required": ["prompt"]
    }));
    Tool::new(
        OSPREY_TOOL,
        "Start an Osprey coding-agent thread on a task and wait for its answer. The result holds the final message and the threadId to continue with osprey-reply.",
        input,
    )
    .with_title("Osprey")
    .with_raw_output_schema(output_schema())
}

/// The `osprey-reply` tool as listed by `tools/list`.
pub fn osprey_reply_tool() -> Tool {
    let input = object(json!({
        "type": "object",
        "properties": {
            "threadId": {
                "type": "string",
                "description": "The threadId an earlier osprey or osprey-reply call returned. Required."
            },
            "prompt": {
                "type": "string",
                "description": "The next user message for that thread."
            }
        },
        "required": ["prompt"]
    }));
    Tool::new(
        OSPREY_REPLY_TOOL,
        "Continue an Osprey thread with a follow-up message; the thread keeps its history and settings.",
        input,
    )
    .with_title("Osprey Reply")
    .with_raw_output_schema(output_schema())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn args(value: Value) -> Option<JsonObject> {
        match value {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    #[test]
    fn start_arguments_accept_kebab_and_snake_case() {
        let kebab: OspreyToolCallParam = parse_arguments(
            OSPREY_TOOL,
            args(json!({
                "prompt": "hi",
                "approval-policy": "untrusted",
                "sandbox": "workspace-write",
                "base-instructions": "be brief",
                "config": {"model_reasoning_effort": "high"}
            })),
        )
        .unwrap();
        let snake: OspreyToolCallParam = parse_arguments(
            OSPREY_TOOL,
            args(json!({
                "prompt": "hi",
                "approval_policy": "untrusted",
                "sandbox": "workspace-write",
                "base_instructions": "be brief",
                "config": {"model_reasoning_effort": "high"}
            })),
        )
        .unwrap();
        assert_eq!(kebab, snake);
        assert_eq!(kebab.approval_policy, Some(AskForApproval::Untrusted));
        assert_eq!(kebab.sandbox, Some(SandboxMode::WorkspaceWrite));
    }

    #[test]
    fn unknown_and_missing_arguments_are_named() {
        let err = parse_arguments::<OspreyToolCallParam>(
            OSPREY_TOOL,
            args(json!({"prompt": "x", "promt": "y"})),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`promt`"), "{err}");
        assert!(err.contains("osprey"), "{err}");
        let err = parse_arguments::<OspreyToolCallParam>(OSPREY_TOOL, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`prompt`"), "{err}");
        let err = parse_arguments::<OspreyToolCallParam>(
            OSPREY_TOOL,
            args(json!({"prompt": "x", "sandbox": "none"})),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`sandbox` must be one of read-only"), "{err}");
        let err = parse_arguments::<OspreyToolCallParam>(
            OSPREY_TOOL,
            args(json!({"prompt": "x", "approval_policy": "always"})),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("`approval-policy` must be one of untrusted"),
            "{err}"
        );
    }

    #[test]
    fn reply_takes_thread_id_in_any_spelling() {
        let id = ThreadId::new();
        for key in ["threadId", "thread_id", "conversationId"] {
            let param: OspreyToolCallReplyParam = parse_arguments(
                OSPREY_REPLY_TOOL,
                args(json!({key: id.to_string(), "prompt": "more"})),
            )
            .unwrap();
            assert_eq!(param.thread_id().unwrap(), id, "{key}");
        }
        let missing: OspreyToolCallReplyParam =
            parse_arguments(OSPREY_REPLY_TOOL, args(json!({"prompt": "more"}))).unwrap();
        assert!(matches!(
            missing.thread_id(),
            Err(McpServerError::MissingThreadId)
        ));
        let bad: OspreyToolCallReplyParam = parse_arguments(
            OSPREY_REPLY_TOOL,
            args(json!({"threadId": "nope", "prompt": "more"})),
        )
        .unwrap();
        assert!(bad.thread_id().unwrap_err().to_string().contains("nope"));
    }

    #[test]
    fn config_object_becomes_toml_overrides() {
        let mut config = BTreeMap::new();
        config.insert("model".to_string(), json!("o3"));
        config.insert("tools.web_search".to_string(), json!(true));
        config.insert("n".to_string(), json!(3));
        config.insert("f".to_string(), json!(0.5));
        config.insert("list".to_string(), json!(["a", "b"]));
        config.insert(
            "sandbox_workspace_write".to_string(),
            json!({"network_access": true}),
        );
        let overrides = config_overrides(config).unwrap();
        assert_eq!(
            overrides,
            vec![
                "f=0.5",
                "list=[\"a\", \"b\"]",
                "model=\"o3\"",
                "n=3",
                "sandbox_workspace_write={ network_access = true }",
                "tools.web_search=true",
            ]
        );
        let mut with_null = BTreeMap::new();
        with_null.insert("model".to_string(), Value::Null);
        let err = config_overrides(with_null).unwrap_err().to_string();
        assert!(err.contains("config.model"), "{err}");
    }

    #[test]
    fn tools_list_shapes_match_codex() {
        let tool = serde_json::to_value(osprey_tool()).unwrap();
        assert_eq!(tool["name"], "osprey");
        assert_eq!(tool["inputSchema"]["required"], json!(["prompt"]));
        let mut keys: Vec<&str> = tool["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            vec![
                "approval-policy",
                "base-instructions",
                "config",
                "cwd",
                "developer-instructions",
                "model",
                "profile",
                "prompt",
                "sandbox"
            ]
        );
        assert_eq!(
            tool["outputSchema"]["required"],
            json!(["threadId", "content"])
        );
        let reply = serde_json::to_value(osprey_reply_tool()).unwrap();
        assert_eq!(reply["name"], "osprey-reply");
        assert!(reply["inputSchema"]["properties"]["threadId"].is_object());
    }
}
