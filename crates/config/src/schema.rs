//! The shape of `config.toml` as written: every field optional, so that any layer may set
//! any subset and layers can be merged as plain TOML tables before one final deserialize.
//!
//! Keys not listed here are reported as warnings (via `serde_ignored`), not errors, so a
//! Codex `config.toml` with keys Osprey does not implement still loads.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use osprey_protocol::{AskForApproval, ReasoningEffort, SandboxMode};
use serde::Deserialize;
use serde::de::{self, Deserializer, Unexpected, Visitor};

use crate::choice::{Choice, Pick};
use crate::mcp::McpServerToml;
use crate::provider::WireApi;
use crate::types::{
    ApplyPatchToolType, LocalToolProfile, ReasoningSummaryMode, ShellEnvironmentInherit,
    ShellToolType, TrustLevel,
};

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ConfigToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    #[serde(default)]
    pub model_providers: BTreeMap<String, ProviderToml>,
    pub model_reasoning_effort: Option<Pick<ReasoningEffort>>,
    pub model_reasoning_summary: Option<ReasoningSummaryMode>,
    pub model_context_window: Option<u64>,
    pub model_auto_compact_token_limit: Option<i64>,
    pub approval_policy: Option<Pick<AskForApproval>>,
    pub sandbox_mode: Option<Pick<SandboxMode>>,
    pub sandbox_workspace_write: Option<SandboxWorkspaceWriteToml>,
    pub profile: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileToml>,
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
    pub base_instructions: Option<String>,
    pub experimental_instructions_file: Option<PathBuf>,
    pub developer_instructions: Option<String>,
    pub project_doc_max_bytes: Option<usize>,
    pub project_doc_fallback_filenames: Option<Vec<String>>,
    pub shell_environment_policy: Option<ShellEnvironmentPolicyToml>,
    pub tools: Option<ToolsToml>,
    #[serde(default)]
    pub model_tools: BTreeMap<String, ToolsToml>,
    pub login_shell: Option<bool>,
    #[serde(default)]
    pub projects: BTreeMap<String, ProjectToml>,
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerToml>,
    pub oss_provider: Option<String>,
    pub local_model: Option<LocalModelToml>,
    pub agents: Option<AgentsToml>,
    pub sandbox: Option<crate::sandbox::SandboxToml>,
    pub default_permissions: Option<String>,
    #[serde(default)]
    pub permissions: BTreeMap<String, crate::sandbox::PermissionProfileToml>,
}

/// `[local_model]` (Osprey's own table; Codex has no embedded model).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct LocalModelToml {
    pub context_tokens: Option<u32>,
    pub threads: Option<u32>,
    pub max_output_tokens: Option<u32>,
    pub constrained_decoding: Option<bool>,
    pub tool_profile: Option<LocalToolProfile>,
    pub loop_guard: Option<bool>,
    pub repeat_nudge: Option<bool>,
    pub prefix_cache: Option<bool>,
    pub read_before_write: Option<bool>,
    pub protect_named_check: Option<bool>,
    pub context_echo: Option<bool>,
    pub strip_line_numbers: Option<bool>,
    pub verify_named_check: Option<bool>,
    pub fix_failed_check: Option<bool>,
    pub check_expected_output: Option<bool>,
    pub answer_from_evidence: Option<bool>,
    pub question_read_only: Option<bool>,
    pub related_files: Option<bool>,
    pub missing_name: Option<bool>,
    pub quoted_arguments: Option<bool>,
    pub write_diff: Option<bool>,
    pub keep_content: Option<bool>,
    pub hide_call_narration: Option<bool>,
    pub question_focus: Option<bool>,
    pub edit_tool: Option<bool>,
}

/// `[agents]` (Codex's multi-agent limits; `min_wait_timeout_ms` and
/// `default_wait_timeout_ms` are Osprey's, for tests).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct AgentsToml {
    pub max_threads: Option<usize>,
    pub max_concurrent_threads_per_session: Option<usize>,
    pub max_depth: Option<u32>,
    pub default_subagent_model: Option<String>,
    pub default_wait_timeout_ms: Option<u64>,
    pub min_wait_timeout_ms: Option<u64>,
}

/// `[profiles.<name>]`: the keys a profile may set. Its table is merged over the user file.
#[derive(Debug, Clone, Default, Deserialize)]
#[expect(
    dead_code,
    reason = "deserialized to type-check profiles and find unknown keys; the raw table is merged"
)]
pub(crate) struct ProfileToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub approval_policy: Option<Pick<AskForApproval>>,
    pub sandbox_mode: Option<Pick<SandboxMode>>,
    pub model_reasoning_effort: Option<Pick<ReasoningEffort>>,
    pub model_reasoning_summary: Option<ReasoningSummaryMode>,
    pub tools: Option<ToolsToml>,
    #[serde(default)]
    pub model_tools: BTreeMap<String, ToolsToml>,
    pub login_shell: Option<bool>,
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct SandboxWorkspaceWriteToml {
    pub writable_roots: Option<Vec<PathBuf>>,
    pub network_access: Option<bool>,
    pub exclude_tmpdir_env_var: Option<bool>,
    pub exclude_slash_tmp: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ShellEnvironmentPolicyToml {
    pub inherit: Option<ShellEnvironmentInherit>,
    pub ignore_default_excludes: Option<bool>,
    pub exclude: Option<Vec<String>>,
    pub include_only: Option<Vec<String>>,
    pub set: Option<BTreeMap<String, String>>,
}

/// `[tools]` and `[model_tools."<model>"]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ToolsToml {
    pub shell_type: Option<ShellToolType>,
    pub apply_patch: Option<ApplyPatchSetting>,
    pub exec_command: Option<bool>,
    pub read_file: Option<bool>,
    pub list_dir: Option<bool>,
    pub grep_files: Option<bool>,
    pub view_image: Option<bool>,
    pub update_plan: Option<bool>,
    pub web_search: Option<bool>,
    pub view_image_max_dimension: Option<u32>,
    pub unified_exec_max_sessions: Option<usize>,
}

impl ToolsToml {
    /// `self` with every field that `over` sets replaced.
    pub fn overlaid(&self, over: &ToolsToml) -> ToolsToml {
        ToolsToml {
            shell_type: over.shell_type.or(self.shell_type),
            apply_patch: over.apply_patch.or(self.apply_patch),
            exec_command: over.exec_command.or(self.exec_command),
            read_file: over.read_file.or(self.read_file),
            list_dir: over.list_dir.or(self.list_dir),
            grep_files: over.grep_files.or(self.grep_files),
            view_image: over.view_image.or(self.view_image),
            update_plan: over.update_plan.or(self.update_plan),
            web_search: over.web_search.or(self.web_search),
            view_image_max_dimension: over
                .view_image_max_dimension
                .or(self.view_image_max_dimension),
            unified_exec_max_sessions: over
                .unified_exec_max_sessions
                .or(self.unified_exec_max_sessions),
        }
    }
}

/// `tools.apply_patch`: `true`/`false` switch the tool; a string picks its form (and keeps it
/// on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApplyPatchSetting {
    Enabled(bool),
    Kind(ApplyPatchToolType),
}

impl<'de> Deserialize<'de> for ApplyPatchSetting {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ApplyPatchSetting;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("true, false, `freeform` or `function`")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(ApplyPatchSetting::Enabled(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                ApplyPatchToolType::from_name(v)
                    .map(ApplyPatchSetting::Kind)
                    .ok_or_else(|| E::invalid_value(Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

/// `[projects."<absolute path>"]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ProjectToml {
    pub trust_level: Option<TrustLevel>,
}

/// `[model_providers.<id>]` as written; merged field by field over a built-in of the same id.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ProviderToml {
    pub name: Option<String>,
    pub base_url: Option<String>,
    pub env_key: Option<String>,
    pub env_key_instructions: Option<String>,
    pub wire_api: Option<WireApi>,
    pub http_headers: Option<BTreeMap<String, String>>,
    pub env_http_headers: Option<BTreeMap<String, String>>,
    pub query_params: Option<BTreeMap<String, String>>,
    pub request_max_retries: Option<u64>,
    pub stream_max_retries: Option<u64>,
    pub stream_idle_timeout_ms: Option<u64>,
}

/// `requirements.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct RequirementsToml {
    pub allowed_approval_policies: Option<Vec<Pick<AskForApproval>>>,
    pub allowed_sandbox_modes: Option<Vec<Pick<SandboxMode>>>,
}
