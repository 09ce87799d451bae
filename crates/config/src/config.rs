//! [`Config`]: every setting resolved, defaults applied, requirements enforced.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use osprey_protocol::{AskForApproval, ReasoningEffort, SandboxMode, SandboxPolicy};

use crate::error::{ConfigError, ConfigSource, ConfigWarning, Location};
use crate::features::Features;
use crate::layers::{Layer, location_of, origin, rank_of};
use crate::mcp::McpServerConfig;
use crate::paths::absolute;
use crate::provider::{
    LMSTUDIO_PROVIDER_ID, LOCAL_MODEL_NAME, LOCAL_PROVIDER_ID, ModelProviderInfo,
    OLLAMA_PROVIDER_ID, OPENAI_PROVIDER_ID,
};
use crate::requirements::ConfigRequirements;
use crate::sandbox::SandboxConfig;
use crate::schema::{ApplyPatchSetting, ConfigToml, LocalModelToml};
use crate::types::{
    ApplyPatchToolType, LocalModelConfig, ReasoningSummaryMode, ShellEnvironmentPolicy,
    ShellToolType, ToolsConfig,
};

/// The model used when no layer sets `model`.
pub const DEFAULT_MODEL: &str = "gpt-5.1-codex";
/// The provider used when no layer sets `model_provider`.
pub const DEFAULT_MODEL_PROVIDER: &str = OPENAI_PROVIDER_ID;
/// The provider `--oss` selects when no layer sets `oss_provider`.
pub const DEFAULT_OSS_PROVIDER: &str = OLLAMA_PROVIDER_ID;
/// The model `--oss` selects with Ollama (and any provider other than LM Studio).
pub const DEFAULT_OSS_MODEL: &str = "qwen2.5-coder:7b";
/// The model `--oss` selects with LM Studio, which names models differently.
pub const DEFAULT_LMSTUDIO_MODEL: &str = "qwen2.5-coder-7b-instruct";
/// Default `project_doc_max_bytes`.
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: usize = 32 * 1024;

/// The local model `--oss` picks for `provider_id` when no model is configured.
pub fn default_oss_model(provider_id: &str) -> &'static str {
    if provider_id == LMSTUDIO_PROVIDER_ID {
        DEFAULT_LMSTUDIO_MODEL
    } else {
        DEFAULT_OSS_MODEL
    }
}

/// A front end's choice of execution environment for a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentSelection {
    /// An id of `environments.toml` (`local` is this machine).
    pub id: String,
    /// The working directory on that side; the exec server's own when `None`.
    pub cwd: Option<PathBuf>,
}

/// The effective configuration of one Osprey run.
///
/// Built only by [`crate::ConfigBuilder`] (or, in tests, `Config::for_tests`), so the
/// approval and sandbox policy always satisfy the managed requirements; changing them later
/// goes through [`Config::set_approval_policy`] / [`Config::set_sandbox_policy`], which check
/// again.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `$OSPREY_HOME` (default `~/.osprey`).
    pub osprey_home: PathBuf,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// Nearest ancestor of `cwd` with `.git`, else `cwd`.
    pub project_root: PathBuf,
    /// Whether `project_root` (or `cwd`) is marked trusted in `[projects]`.
    pub active_project_trusted: bool,
    /// The active profile, if any.
    pub profile: Option<String>,
    /// The environment of `environments.toml` this thread's tools act in, when a front end
    /// chose one (`osprey exec --environment`, thread/start's `environments`); `None` leaves
    /// it to the file's `default`.
    pub environment: Option<EnvironmentSelection>,

    pub model: String,
    pub model_provider_id: String,
    /// The selected provider, with `id` filled in.
    pub model_provider: ModelProviderInfo,
    /// Every provider known to this configuration (built-ins plus `[model_providers]`).
    pub model_providers: BTreeMap<String, ModelProviderInfo>,
    pub model_reasoning_effort: Option<ReasoningEffort>,
    pub model_reasoning_summary: Option<ReasoningSummaryMode>,
    pub model_context_window: Option<u64>,
    pub model_auto_compact_token_limit: Option<i64>,
    /// Provider `--oss` uses.
    pub oss_provider: String,

    approval_policy: AskForApproval,
    sandbox_policy: SandboxPolicy,

    pub features: Features,
    /// Tools for `model` (`[tools]` overlaid with `[model_tools."<model>"]`).
    pub tools: ToolsConfig,
    pub shell_environment_policy: ShellEnvironmentPolicy,

    /// Replaces the built-in system prompt when set (inline text or the instructions file).
    pub base_instructions: Option<String>,
    /// Extra developer-role instructions sent with every turn.
    pub developer_instructions: Option<String>,
    pub project_doc_max_bytes: usize,
    /// File names tried, in order, where no `AGENTS.md` exists.
    pub project_doc_fallback_filenames: Vec<String>,

    pub mcp_servers: BTreeMap<String, McpServerConfig>,

    /// `[local_model]`: the embedded model's settings (used when the provider is `local`).
    pub local_model: LocalModelConfig,

    /// `[sandbox]` and the permission profile `default_permissions` selects.
    pub sandbox: SandboxConfig,

    /// `[agents]`: multi-agent limits and defaults.
    pub agents: crate::agents::AgentsConfig,

    requirements: ConfigRequirements,
}

impl Config {
    pub fn approval_policy(&self) -> AskForApproval {
        self.approval_policy
    }

    pub fn sandbox_policy(&self) -> &SandboxPolicy {
        &self.sandbox_policy
    }

    /// The managed requirements this configuration was checked against.
    pub fn requirements(&self) -> &ConfigRequirements {
        &self.requirements
    }

    /// Changes the approval policy if the requirements allow it.
    pub fn set_approval_policy(&mut self, policy: AskForApproval) -> Result<(), ConfigError> {
        self.requirements
            .check_approval_policy(policy, &Location::new(ConfigSource::Runtime))?;
        self.approval_policy = policy;
        Ok(())
    }

    /// Changes the sandbox policy if the requirements allow its mode.
    pub fn set_sandbox_policy(&mut self, policy: SandboxPolicy) -> Result<(), ConfigError> {
        self.requirements
            .check_sandbox_mode(policy.mode(), &Location::new(ConfigSource::Runtime))?;
        self.sandbox_policy = policy;
        Ok(())
    }
}

/// What the builder knows besides the merged table.
pub(crate) struct ResolveInputs<'a> {
    pub layers: &'a [Layer],
    pub osprey_home: PathBuf,
    pub cwd: PathBuf,
    pub project_root: PathBuf,
    pub active_project_trusted: bool,
    pub profile: Option<String>,
    pub add_dirs: &'a [PathBuf],
    pub requirements: ConfigRequirements,
    /// Whether `OPENAI_API_KEY` is set: without it, and with no provider and no model configured,
    /// the embedded local model is used.
    pub openai_key_present: bool,
}

fn key(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| (*s).to_owned()).collect()
}

impl Config {
    pub(crate) fn resolve(
        mut toml: ConfigToml,
        inputs: ResolveInputs<'_>,
        warnings: &mut Vec<ConfigWarning>,
    ) -> Result<Config, ConfigError> {
        let layers = inputs.layers;
        let cwd = inputs.cwd;

        // Nothing chooses a model (no provider and no model in any layer or flag) and there is
        // no OpenAI key: the embedded model, so a fresh machine works. Whoever named a model
        // meant a hosted one, and gets the missing-key error instead of a 1.1 GB download.
        let implicit_local =
            toml.model_provider.is_none() && toml.model.is_none() && !inputs.openai_key_present;
        if implicit_local {
            toml.model_provider = Some(LOCAL_PROVIDER_ID.to_owned());
            warnings.push(ConfigWarning {
                location: Location::new(ConfigSource::Default),
                key: "model_provider".to_owned(),
                message:
                    "no model or model provider is configured and OPENAI_API_KEY is not set, so \
                          the embedded local model runs (Qwen2.5-Coder-1.5B on the CPU: slow, \
                          and far weaker than hosted models). To use a hosted model, export \
                          OPENAI_API_KEY or set `model_provider` in config.toml."
                        .to_owned(),
            });
        }
        let model = toml.model.clone().unwrap_or_else(|| {
            if toml.model_provider.as_deref() == Some(LOCAL_PROVIDER_ID) {
                LOCAL_MODEL_NAME.to_owned()
            } else {
                DEFAULT_MODEL.to_owned()
            }
        });
        let model_providers: BTreeMap<String, ModelProviderInfo> =
            std::mem::take(&mut toml.model_providers)
                .into_iter()
                .map(|(id, raw)| {
                    let info = raw.into_info(&id);
                    (id, info)
                })
                .collect();
        let model_provider_id = toml
            .model_provider
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL_PROVIDER.to_owned());
        let model_provider = model_providers
            .get(&model_provider_id)
            .cloned()
            .ok_or_else(|| ConfigError::UnknownProvider {
                id: model_provider_id.clone(),
                known: model_providers.keys().cloned().collect(),
                location: location_of(layers, &key(&["model_provider"])),
            })?;

        let requirements = inputs.requirements;
        let approval_key = key(&["approval_policy"]);
        let approval_policy = requirements.enforce_approval_policy(
            toml.approval_policy
                .map_or(AskForApproval::default(), |p| p.0),
            &location_of(layers, &approval_key),
            rank_of(layers, &approval_key).is_none(),
            warnings,
        )?;
        let sandbox_key = key(&["sandbox_mode"]);
        let sandbox_mode = requirements.enforce_sandbox_mode(
            toml.sandbox_mode.map_or(SandboxMode::default(), |p| p.0),
            &location_of(layers, &sandbox_key),
            rank_of(layers, &sandbox_key).is_none(),
            warnings,
        )?;
        let sandbox_policy = sandbox_policy(sandbox_mode, &toml, &cwd, inputs.add_dirs, warnings);

        let features = Features::from_map(&toml.features);
        let tools = resolve_tools(&toml, &model, &features);

        let shell_environment_policy = toml.shell_environment_policy.clone().map_or_else(
            ShellEnvironmentPolicy::default,
            |raw| {
                let default = ShellEnvironmentPolicy::default();
                ShellEnvironmentPolicy {
                    inherit: raw.inherit.unwrap_or(default.inherit),
                    ignore_default_excludes: raw
                        .ignore_default_excludes
                        .unwrap_or(default.ignore_default_excludes),
                    exclude: raw.exclude.unwrap_or_default(),
                    include_only: raw.include_only.unwrap_or_default(),
                    set: raw.set.unwrap_or_default(),
                }
            },
        );

        let base_instructions = resolve_base_instructions(&toml, layers, &cwd)?;

        let mut mcp_servers = BTreeMap::new();
        for (name, raw) in toml.mcp_servers {
            let server = raw.resolve().map_err(|message| ConfigError::Invalid {
                location: location_of(layers, &key(&["mcp_servers", &name])),
                message: format!("mcp_servers.{name}: {message}"),
            })?;
            mcp_servers.insert(name, server);
        }

        let local_model = resolve_local_model(toml.local_model.take().unwrap_or_default())
            .map_err(|message| ConfigError::Invalid {
                location: location_of(layers, &key(&["local_model"])),
                message,
            })?;

        let agents = crate::agents::resolve_agents(toml.agents.as_ref());
        let sandbox = crate::sandbox::resolve(
            toml.sandbox.as_ref(),
            toml.default_permissions.as_deref(),
            &toml.permissions,
            layers,
        )?;

        Ok(Config {
            osprey_home: inputs.osprey_home,
            project_root: inputs.project_root,
            active_project_trusted: inputs.active_project_trusted,
            profile: inputs.profile,
            environment: None,
            model,
            model_provider_id,
            model_provider,
            model_providers,
            model_reasoning_effort: toml.model_reasoning_effort.map(|p| p.0),
            model_reasoning_summary: toml.model_reasoning_summary,
            model_context_window: toml.model_context_window,
            model_auto_compact_token_limit: toml.model_auto_compact_token_limit,
            oss_provider: toml
                .oss_provider
                .unwrap_or_else(|| DEFAULT_OSS_PROVIDER.to_owned()),
            approval_policy,
            sandbox_policy,
            features,
            tools,
            shell_environment_policy,
            base_instructions,
            developer_instructions: toml.developer_instructions,
            project_doc_max_bytes: toml
                .project_doc_max_bytes
                .unwrap_or(DEFAULT_PROJECT_DOC_MAX_BYTES),
            project_doc_fallback_filenames: toml.project_doc_fallback_filenames.unwrap_or_default(),
            mcp_servers,
            local_model,
            sandbox,
            agents,
            requirements,
            cwd,
        })
    }
}

fn resolve_local_model(raw: LocalModelToml) -> Result<LocalModelConfig, String> {
    let default = LocalModelConfig::default();
    let context_tokens = raw.context_tokens.unwrap_or(default.context_tokens);
    let range = LocalModelConfig::MIN_CONTEXT_TOKENS..=LocalModelConfig::MAX_CONTEXT_TOKENS;
    if !range.contains(&context_tokens) {
        return Err(format!(
            "local_model.context_tokens = {context_tokens} is outside {}..={} (the model was \
             trained for at most {} tokens)",
            range.start(),
            range.end(),
            range.end()
        ));
    }
    let max_output_tokens = raw.max_output_tokens.unwrap_or(default.max_output_tokens);
    if max_output_tokens == 0 || max_output_tokens >= context_tokens {
        return Err(format!(
            "local_model.max_output_tokens = {max_output_tokens} must be at least 1 and below \
             local_model.context_tokens ({context_tokens})"
        ));
    }
    if raw.threads == Some(0) {
        return Err(
            "local_model.threads = 0: give a thread count of at least 1, or remove the key \
             to use every core"
                .to_owned(),
        );
    }
    Ok(LocalModelConfig {
        context_tokens,
        threads: raw.threads,
        max_output_tokens,
        constrained_decoding: raw
            .constrained_decoding
            .unwrap_or(default.constrained_decoding),
        tool_profile: raw.tool_profile.unwrap_or(default.tool_profile),
        loop_guard: raw.loop_guard.unwrap_or(default.loop_guard),
        repeat_nudge: raw.repeat_nudge.unwrap_or(default.repeat_nudge),
        prefix_cache: raw.prefix_cache.unwrap_or(default.prefix_cache),
        read_before_write: raw.read_before_write.unwrap_or(default.read_before_write),
        protect_named_check: raw
            .protect_named_check
            .unwrap_or(default.protect_named_check),
        verify_named_check: raw.verify_named_check.unwrap_or(default.verify_named_check),
        fix_failed_check: raw.fix_failed_check.unwrap_or(default.fix_failed_check),
        check_expected_output: raw
            .check_expected_output
            .unwrap_or(default.check_expected_output),
        answer_from_evidence: raw
            .answer_from_evidence
            .unwrap_or(default.answer_from_evidence),
        question_read_only: raw.question_read_only.unwrap_or(default.question_read_only),
        related_files: raw.related_files.unwrap_or(default.related_files),
        write_diff: raw.write_diff.unwrap_or(default.write_diff),
        keep_content: raw.keep_content.unwrap_or(default.keep_content),
        missing_name: raw.missing_name.unwrap_or(default.missing_name),
        quoted_arguments: raw.quoted_arguments.unwrap_or(default.quoted_arguments),
        context_echo: raw.context_echo.unwrap_or(default.context_echo),
        strip_line_numbers: raw.strip_line_numbers.unwrap_or(default.strip_line_numbers),
        hide_call_narration: raw
            .hide_call_narration
            .unwrap_or(default.hide_call_narration),
        question_focus: raw.question_focus.unwrap_or(default.question_focus),
        edit_tool: raw.edit_tool.unwrap_or(default.edit_tool),
    })
}

fn sandbox_policy(
    mode: SandboxMode,
    toml: &ConfigToml,
    cwd: &Path,
    add_dirs: &[PathBuf],
    warnings: &mut Vec<ConfigWarning>,
) -> SandboxPolicy {
    if mode != SandboxMode::WorkspaceWrite && !add_dirs.is_empty() {
        warnings.push(ConfigWarning {
            location: Location::new(ConfigSource::Flag),
            key: "add_dirs".to_owned(),
            message: format!(
                "--add-dir only applies to the workspace-write sandbox; ignored under {mode}"
            ),
        });
    }
    match mode {
        SandboxMode::ReadOnly => SandboxPolicy::ReadOnly,
        SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        SandboxMode::WorkspaceWrite => {
            let table = toml.sandbox_workspace_write.clone().unwrap_or_default();
            let mut writable_roots: Vec<PathBuf> = Vec::new();
            for root in table.writable_roots.iter().flatten().chain(add_dirs) {
                let root = absolute(cwd, root);
                if !writable_roots.contains(&root) {
                    writable_roots.push(root);
                }
            }
            SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access: table.network_access.unwrap_or(false),
                exclude_tmpdir_env_var: table.exclude_tmpdir_env_var.unwrap_or(false),
                exclude_slash_tmp: table.exclude_slash_tmp.unwrap_or(false),
            }
        }
    }
}

fn resolve_tools(toml: &ConfigToml, model: &str, features: &Features) -> ToolsConfig {
    let base = toml.tools.clone().unwrap_or_default();
    let tools = match toml.model_tools.get(model) {
        Some(per_model) => base.overlaid(per_model),
        None => base,
    };
    let default = ToolsConfig::default();
    let shell = (tools.exec_command != Some(false) && features.shell_tool()).then(|| {
        tools.shell_type.unwrap_or(if features.unified_exec() {
            ShellToolType::ExecCommand
        } else {
            ShellToolType::ShellCommand
        })
    });
    let default_patch = if features.apply_patch_freeform() {
        ApplyPatchToolType::Freeform
    } else {
        ApplyPatchToolType::Function
    };
    let apply_patch = match tools.apply_patch {
        Some(ApplyPatchSetting::Enabled(false)) => None,
        Some(ApplyPatchSetting::Kind(kind)) => Some(kind),
        Some(ApplyPatchSetting::Enabled(true)) | None => Some(default_patch),
    };
    ToolsConfig {
        shell,
        apply_patch,
        read_file: tools.read_file.unwrap_or(default.read_file),
        list_dir: tools.list_dir.unwrap_or(default.list_dir),
        grep_files: tools.grep_files.unwrap_or(default.grep_files),
        view_image: tools.view_image.unwrap_or(default.view_image) && features.view_image_tool(),
        update_plan: tools.update_plan.unwrap_or(default.update_plan),
        web_search: tools
            .web_search
            .unwrap_or_else(|| features.web_search_request()),
        view_image_max_dimension: tools
            .view_image_max_dimension
            .unwrap_or(default.view_image_max_dimension),
        unified_exec_max_sessions: tools
            .unified_exec_max_sessions
            .unwrap_or(default.unified_exec_max_sessions),
        login_shell: toml.login_shell.unwrap_or(default.login_shell),
    }
}

/// `base_instructions` or the contents of `experimental_instructions_file`, whichever is set
/// in the higher layer (inline text wins a tie). A relative file path is resolved against the
/// directory of the file that names it, or the working directory for command-line layers.
fn resolve_base_instructions(
    toml: &ConfigToml,
    layers: &[Layer],
    cwd: &Path,
) -> Result<Option<String>, ConfigError> {
    let file_key = key(&["experimental_instructions_file"]);
    let file_rank = rank_of(layers, &file_key);
    let inline_rank = rank_of(layers, &key(&["base_instructions"]));
    let path = match (
        &toml.base_instructions,
        &toml.experimental_instructions_file,
    ) {
        (Some(_), Some(path)) if file_rank > inline_rank => path,
        (Some(text), _) => return Ok(Some(text.clone())),
        (None, Some(path)) => path,
        (None, None) => return Ok(None),
    };
    let base_dir = origin(layers, &file_key)
        .and_then(|l| l.source.file())
        .and_then(Path::parent)
        .unwrap_or(cwd);
    let path = absolute(base_dir, path);
    let location = location_of(layers, &file_key);
    let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::InstructionsFile {
        path: path.clone(),
        location: location.clone(),
        source,
    })?;
    if text.trim().is_empty() {
        return Err(ConfigError::InstructionsFile {
            path,
            location,
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, "the file is empty"),
        });
    }
    Ok(Some(text))
}
