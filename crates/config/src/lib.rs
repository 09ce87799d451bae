//! Osprey's configuration: the `config.toml` schema, how layers combine, and what an
//! administrator can pin down.
//!
//! # What it owns
//!
//! * The file format. `config.toml` uses Codex's key names (`model`, `approval_policy`,
//!   `sandbox_mode`, `[model_providers.<id>]`, `[profiles.<name>]`, `[mcp_servers.<name>]`, …)
//!   plus Osprey's own `[tools]` table, so an existing Codex file loads unchanged. Every key is
//!   documented in `docs/config.md`.
//! * [`ConfigBuilder`], which stacks the layers — built-in defaults < `$OSPREY_HOME/config.toml`
//!   < the active profile < a trusted project's `.osprey/config.toml` < `-c key=value` <
//!   typed options ([`ConfigOverrides`]) — and produces a [`Config`] with every default filled
//!   in, plus a list of [`ConfigWarning`]s.
//! * [`ConfigRequirements`]: managed `requirements.toml` files that restrict approval policies
//!   and sandbox modes. A user layer asking for something forbidden is an error, never a
//!   silent downgrade.
//! * The provider table ([`ModelProviderInfo`], built-ins `openai`, `ollama`, `lmstudio`),
//!   feature switches ([`Features`]), MCP server entries ([`McpServerConfig`]), the shell
//!   environment policy, and the registry of environment variables ([`env_vars::ENV_VARS`]).
//! * [`edit`]: changing one key of a `config.toml` in place, keeping the user's comments.
//!
//! # Why it is shaped this way
//!
//! Layers are kept as raw TOML tables until the end. Each one is first deserialized on its
//! own, straight from its text: that is where a syntax or type error gets an exact
//! `file:line:col`, and where unknown keys are collected as warnings with their position. The
//! tables are then merged deeply (tables key by key, everything else replaced) and
//! deserialized once, so "which layer wins" has a single definition. The layers are kept
//! alongside the result, so later checks (an unknown provider, an invalid MCP entry, a value
//! the requirements refuse) can still say which file and line asked for it.
//!
//! Nothing here reads the process environment directly: callers pass an [`EnvSnapshot`], so
//! tests can run many configurations in one process without touching global state. A
//! [`Config`] can only come out of [`ConfigBuilder::build`] (or test-only constructors behind
//! the `testing` feature), which is what makes the requirements binding.

mod agents;
mod builder;
mod choice;
mod codex_keys;
mod config;
pub mod edit;
pub mod env_vars;
mod error;
pub mod features;
mod layers;
mod mcp;
mod model_table;
mod overrides;
mod paths;
mod provider;
mod requirements;
mod sandbox;
mod schema;
mod tool_choice;
mod types;

pub use agents::AgentsConfig;
pub use builder::{ConfigBuilder, LoadedConfig};
pub use choice::Choice;
pub use config::{
    Config, DEFAULT_LMSTUDIO_MODEL, DEFAULT_MODEL, DEFAULT_MODEL_PROVIDER, DEFAULT_OSS_MODEL,
    DEFAULT_OSS_PROVIDER, DEFAULT_PROJECT_DOC_MAX_BYTES, EnvironmentSelection, default_oss_model,
};
pub use env_vars::{ENV_VARS, EnvScope, EnvSnapshot, EnvVar};
pub use error::{ConfigError, ConfigSource, ConfigWarning, Location, RequirementViolation};
pub use features::{FEATURES, FeatureSpec, Features};
pub use mcp::{McpApprovalMode, McpServerConfig, McpTransport};
pub use model_table::known_context_window;
pub use overrides::{CliOverride, ConfigOverrides, json_to_toml};
pub use paths::{
    CONFIG_FILE_NAME, PROJECT_CONFIG_DIR, REQUIREMENTS_FILE_NAME, absolute, find_osprey_home,
    project_root,
};
pub use provider::{
    IN_PROCESS_PROVIDER_IDS, LMSTUDIO_PROVIDER_ID, LOCAL_MODEL_NAME, LOCAL_PROVIDER_ID,
    ModelProviderInfo, OLLAMA_PROVIDER_ID, OPENAI_DEFAULT_BASE_URL, OPENAI_PROVIDER_ID, WireApi,
    built_in_providers,
};
pub use requirements::{ConfigRequirements, RequirementsFile, SYSTEM_REQUIREMENTS_PATH};
pub use sandbox::{
    LinuxBackendSetting, PathAccess, PermissionPath, PermissionProfile, PermissionRule,
    SandboxConfig,
};
pub use tool_choice::{ToolProfileChoice, ToolProfileKind};
pub use types::{
    ApplyPatchToolType, CORE_ENV_VARS, DEFAULT_ENV_EXCLUDES, LocalModelConfig, LocalToolProfile,
    ReasoningSummaryMode, ShellEnvironmentInherit, ShellEnvironmentPolicy, ShellToolType,
    ToolsConfig, TrustLevel, glob_matches,
};
