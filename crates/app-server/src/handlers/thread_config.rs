//! A thread's configuration from `thread/start` / `resume` / `fork` params: the user's
//! files and profile, then the `config` object as `-c key=value` overrides (in key order),
//! then the typed fields (which win), exactly like `osprey exec`'s flags.

use std::path::{Path, PathBuf};

use osprey_app_server_protocol::ThreadOverrides;
use osprey_config::{Config, ConfigBuilder, ConfigOverrides, ConfigWarning};

use crate::convert;
use crate::server::Server;

pub(crate) struct BuiltConfig {
    pub config: Config,
    pub warnings: Vec<ConfigWarning>,
}

/// Builds the configuration; `default_cwd` is used when the params name none (the session
/// file's directory for resume and fork, the server's for a new thread).
pub(crate) fn build(
    server: &Server,
    overrides: &ThreadOverrides,
    default_cwd: Option<&Path>,
) -> Result<BuiltConfig, String> {
    let base = &server.options.process_cwd;
    let cwd: Option<PathBuf> = match &overrides.cwd {
        Some(dir) => Some(convert::resolve_cwd(base, dir)?),
        None => default_cwd.filter(|d| d.is_dir()).map(Path::to_path_buf),
    };
    let approval_policy = overrides
        .approval_policy
        .as_ref()
        .map(convert::approval_policy)
        .transpose()?;
    if let Some(reviewer) = &overrides.approvals_reviewer
        && reviewer != "user"
    {
        return Err(format!(
            "approvalsReviewer `{reviewer}` is not supported: approvals in Osprey go to the user"
        ));
    }
    let typed = ConfigOverrides {
        model: overrides.model.clone(),
        model_provider: overrides.model_provider.clone(),
        cwd,
        approval_policy,
        sandbox_mode: overrides.sandbox.map(convert::sandbox_mode),
        base_instructions: overrides.base_instructions.clone(),
        developer_instructions: overrides.developer_instructions.clone(),
        ..Default::default()
    };
    let mut cli = Vec::new();
    if let Some(config) = &overrides.config {
        let mut keys: Vec<&String> = config.keys().collect();
        keys.sort();
        for key in keys {
            let value = osprey_config::json_to_toml(&config[key])
                .map_err(|reason| format!("config.{key}: {reason}"))?;
            cli.push(format!("{key}={value}"));
        }
    }
    let loaded = ConfigBuilder::new(server.env.clone())
        .process_cwd(base)
        .cli_overrides(cli)
        .overrides(typed)
        .build()
        .map_err(|e| format!("the configuration could not be loaded: {e}"))?;
    Ok(BuiltConfig {
        config: loaded.config,
        warnings: loaded.warnings,
    })
}

/// thread/start's first `environments` entry as the configuration's choice. Its `cwd` is a
/// path on that environment's side (absolute; a `file://` URI is taken too).
pub(crate) fn environment_selection(
    environment: &osprey_app_server_protocol::TurnEnvironmentParams,
) -> Result<osprey_config::EnvironmentSelection, String> {
    let cwd = environment.cwd.trim();
    let cwd = cwd.strip_prefix("file://").unwrap_or(cwd);
    let cwd = (!cwd.is_empty()).then(|| PathBuf::from(cwd));
    if let Some(dir) = &cwd
        && !dir.is_absolute()
    {
        return Err(format!(
            "environments[0].cwd `{}` is not absolute: give the working directory on the side of environment `{}` as an absolute path",
            dir.display(),
            environment.environment_id
        ));
    }
    Ok(osprey_config::EnvironmentSelection {
        id: environment.environment_id.clone(),
        cwd,
    })
}
