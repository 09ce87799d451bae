//! [`ConfigBuilder`]: reads the layers, merges them, resolves and checks the result.
//!
//! Layers, lowest first: built-in defaults < `$OSPREY_HOME/config.toml` < the active profile
//! < the trusted project's `.osprey/config.toml` < each `-c key=value` in order < typed
//! options. Every layer is checked on its own first (so errors carry its file position and
//! unknown keys are reported against it), then the tables are merged deeply and
//! deserialized once. Managed requirements are applied last.

use std::path::{Path, PathBuf};

use crate::config::{Config, ResolveInputs, default_oss_model};
use crate::env_vars::EnvSnapshot;
use crate::error::{ConfigError, ConfigSource, ConfigWarning, Location};
use crate::layers::{Layer, check_table, load_text, lookup, merge_all, read_optional};
use crate::overrides::{CliOverride, ConfigOverrides};
use crate::paths::{
    CONFIG_FILE_NAME, PROJECT_CONFIG_DIR, REQUIREMENTS_FILE_NAME, absolute, find_osprey_home,
    project_root,
};
use crate::provider::built_in_providers;
use crate::requirements::{ConfigRequirements, SYSTEM_REQUIREMENTS_PATH};
use crate::schema::{ConfigToml, ProjectToml};
use crate::types::TrustLevel;

/// A built configuration and what was odd about it.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub config: Config,
    /// Unknown keys and features, ignored project files, adjusted defaults. Front ends show
    /// them once at startup.
    pub warnings: Vec<ConfigWarning>,
}

/// Assembles a [`Config`] from files, `-c` overrides and options.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    env: EnvSnapshot,
    process_cwd: Option<PathBuf>,
    cli_overrides: Vec<String>,
    overrides: ConfigOverrides,
    requirements_paths: Option<Vec<PathBuf>>,
}

impl ConfigBuilder {
    /// A builder reading variables from `env` (use [`EnvSnapshot::from_process`] in programs).
    pub fn new(env: EnvSnapshot) -> Self {
        Self {
            env,
            process_cwd: None,
            cli_overrides: Vec::new(),
            overrides: ConfigOverrides::default(),
            requirements_paths: None,
        }
    }

    /// The directory relative paths are resolved against (default: the process's).
    #[must_use]
    pub fn process_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.process_cwd = Some(cwd.into());
        self
    }

    /// Raw `-c key=value` arguments, in command-line order (later ones win).
    #[must_use]
    pub fn cli_overrides<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.cli_overrides = args.into_iter().map(Into::into).collect();
        self
    }

    /// Typed command-line options.
    #[must_use]
    pub fn overrides(mut self, overrides: ConfigOverrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// Replaces the requirements files (`/etc/osprey/requirements.toml` and
    /// `$OSPREY_HOME/requirements.toml`). This crate's own tests only: no program, and no
    /// other crate's tests, can skip managed requirements.
    #[cfg(test)]
    #[must_use]
    pub fn requirements_files(mut self, paths: Vec<PathBuf>) -> Self {
        self.requirements_paths = Some(paths);
        self
    }

    /// Reads, merges, resolves and checks everything.
    pub fn build(self) -> Result<LoadedConfig, ConfigError> {
        let process_cwd = match self.process_cwd {
            Some(cwd) => cwd,
            None => std::env::current_dir().map_err(|source| ConfigError::Cwd { source })?,
        };
        let cwd = match &self.overrides.cwd {
            Some(dir) => absolute(&process_cwd, dir),
            None => absolute(&process_cwd, Path::new("")),
        };
        let osprey_home = find_osprey_home(&self.env, &process_cwd)?;
        let mut warnings = Vec::new();

        let defaults = defaults_layer(&self.env)?;

        let user_path = osprey_home.join(CONFIG_FILE_NAME);
        let user = match read_optional(&user_path)? {
            Some(text) => {
                let loaded = load_text(ConfigSource::UserFile(user_path.clone()), text)?;
                warnings.extend(loaded.warnings);
                Some(loaded.layer)
            }
            None => None,
        };

        let mut cli_layers = Vec::new();
        for arg in &self.cli_overrides {
            let parsed = CliOverride::parse(arg)?;
            let layer = Layer::new(ConfigSource::CliOverride(arg.clone()), parsed.to_table());
            let (_, layer_warnings) = check_table(&layer, &parsed.key())?;
            warnings.extend(layer_warnings);
            cli_layers.push(layer);
        }

        // Trust comes from the user's own layers; a project file cannot vouch for itself.
        let trust_layers: Vec<Layer> = user.iter().chain(&cli_layers).cloned().collect();
        let trust_toml = deserialize_merged(&trust_layers)?;
        let project_root = project_root(&cwd);
        let active_project_trusted =
            trust_level(&trust_toml.projects, &cwd, &project_root) == Some(TrustLevel::Trusted);

        let project_path = project_root.join(PROJECT_CONFIG_DIR).join(CONFIG_FILE_NAME);
        let mut project = None;
        if project_path != user_path
            && let Some(text) = read_optional(&project_path)?
        {
            if active_project_trusted {
                let loaded = load_text(ConfigSource::ProjectFile(project_path), text)?;
                warnings.extend(loaded.warnings);
                project = Some(loaded.layer);
            } else {
                warnings.push(ConfigWarning {
                    location: Location::new(ConfigSource::ProjectFile(project_path)),
                    key: "projects".to_owned(),
                    message: format!(
                        "ignored because the project {root} is not trusted; to use it, add \
                         [projects.\"{root}\"] trust_level = \"trusted\" to {user}",
                        root = project_root.display(),
                        user = user_path.display(),
                    ),
                });
            }
        }

        let named: Vec<Layer> = user
            .iter()
            .chain(&project)
            .chain(&cli_layers)
            .cloned()
            .collect();
        let profile_name = match &self.overrides.profile {
            Some(name) => Some(name.clone()),
            None => deserialize_merged(&named)?.profile,
        };
        let profile = match &profile_name {
            Some(name) => Some(profile_layer(&named, name)?),
            None => None,
        };

        let mut layers: Vec<Layer> = std::iter::once(defaults)
            .chain(user)
            .chain(profile)
            .chain(project)
            .chain(cli_layers)
            .collect();

        let (oss_provider, oss_model) = if self.overrides.oss {
            let before = deserialize_merged(&layers)?;
            let provider = self
                .overrides
                .model_provider
                .clone()
                .or(before.oss_provider)
                .unwrap_or_else(|| crate::config::DEFAULT_OSS_PROVIDER.to_owned());
            let model = (before.model.is_none() && self.overrides.model.is_none())
                .then(|| default_oss_model(&provider).to_owned());
            (Some(provider), model)
        } else {
            (None, None)
        };
        let flags = self
            .overrides
            .to_table(oss_provider.as_deref(), oss_model.as_deref());
        if !flags.is_empty() {
            let layer = Layer::new(ConfigSource::Flag, flags);
            check_table(&layer, "options")?;
            layers.push(layer);
        }

        let merged = deserialize_merged(&layers)?;
        let requirements_paths = self.requirements_paths.unwrap_or_else(|| {
            vec![
                PathBuf::from(SYSTEM_REQUIREMENTS_PATH),
                osprey_home.join(REQUIREMENTS_FILE_NAME),
            ]
        });
        let (requirements, requirement_warnings) = ConfigRequirements::load(&requirements_paths)?;
        warnings.extend(requirement_warnings);

        let config = Config::resolve(
            merged,
            ResolveInputs {
                layers: &layers,
                osprey_home,
                cwd,
                project_root,
                active_project_trusted,
                profile: profile_name,
                add_dirs: &self.overrides.add_dirs,
                requirements,
                openai_key_present: self
                    .env
                    .get_non_empty(crate::env_vars::OPENAI_API_KEY)
                    .is_some(),
            },
            &mut warnings,
        )?;
        Ok(LoadedConfig { config, warnings })
    }
}

#[cfg(any(test, feature = "testing"))]
impl Config {
    /// A configuration for tests: `home` as `OSPREY_HOME` (its `config.toml` and
    /// `requirements.toml` are read if present), `cwd` as the working directory. Managed
    /// requirements apply as they would for the program.
    pub fn for_tests(home: &Path, cwd: &Path) -> Result<Config, ConfigError> {
        let env = EnvSnapshot::from_pairs([(
            crate::env_vars::OSPREY_HOME,
            home.to_string_lossy().into_owned(),
        )]);
        ConfigBuilder::new(env)
            .process_cwd(cwd)
            .build()
            .map(|loaded| loaded.config)
    }
}

fn defaults_layer(env: &EnvSnapshot) -> Result<Layer, ConfigError> {
    let mut providers = toml::Table::new();
    for (id, info) in built_in_providers(env) {
        let value = toml::Value::try_from(&info).map_err(|e| ConfigError::Invalid {
            location: Location::new(ConfigSource::Default),
            message: format!("built-in provider {id}: {e}"),
        })?;
        providers.insert(id, value);
    }
    let mut table = toml::Table::new();
    table.insert("model_providers".to_owned(), toml::Value::Table(providers));
    Ok(Layer::new(ConfigSource::Default, table))
}

/// Deserializes the merge of `layers`. Each layer was checked on its own, so a failure here
/// is a combination problem; it is reported against the highest layer.
fn deserialize_merged(layers: &[Layer]) -> Result<ConfigToml, ConfigError> {
    let merged = merge_all(layers);
    toml::Value::Table(merged)
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Invalid {
            location: Location::new(
                layers
                    .last()
                    .map_or(ConfigSource::Default, |l| l.source.clone()),
            ),
            message: e.message().trim_end().to_owned(),
        })
}

fn profile_layer(named: &[Layer], name: &str) -> Result<Layer, ConfigError> {
    let path = vec!["profiles".to_owned(), name.to_owned()];
    let merged = merge_all(named);
    let Some(toml::Value::Table(table)) = lookup(&merged, &path) else {
        let known = merged
            .get("profiles")
            .and_then(toml::Value::as_table)
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        return Err(ConfigError::UnknownProfile {
            name: name.to_owned(),
            known,
        });
    };
    let defining = named.iter().rev().find(|l| l.contains(&path));
    Ok(Layer {
        source: ConfigSource::Profile {
            name: name.to_owned(),
            file: defining
                .and_then(|l| l.source.file())
                .map(Path::to_path_buf),
        },
        table: table.clone(),
        text: defining.and_then(|l| l.text.clone()),
        prefix: path,
    })
}

/// The trust level recorded for `cwd`, else for `root`.
fn trust_level(
    projects: &std::collections::BTreeMap<String, ProjectToml>,
    cwd: &Path,
    root: &Path,
) -> Option<TrustLevel> {
    let level_for = |dir: &Path| {
        projects
            .iter()
            .find(|(key, _)| same_path(Path::new(key.as_str()), dir))
            .and_then(|(_, p)| p.trust_level)
    };
    level_for(cwd).or_else(|| level_for(root))
}

fn same_path(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_requirements_file_applies() {
        let home = tempfile::tempdir().unwrap();
        let system = home.path().join("system-requirements.toml");
        std::fs::write(&system, "allowed_sandbox_modes = [\"read-only\"]\n").unwrap();
        let user = home.path().join("requirements.toml");
        std::fs::write(&user, "allowed_approval_policies = [\"on-request\"]\n").unwrap();
        let env = EnvSnapshot::from_pairs([(
            crate::env_vars::OSPREY_HOME,
            home.path().to_string_lossy().into_owned(),
        )]);
        let err = ConfigBuilder::new(env)
            .process_cwd(home.path())
            .requirements_files(vec![system.clone(), user])
            .cli_overrides(["sandbox_mode=workspace-write"])
            .build()
            .unwrap_err();
        assert!(matches!(&err, ConfigError::NotAllowed(v) if v.requirements_file == system));
    }
}
