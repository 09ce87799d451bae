//! Layers: one TOML table per source, checked on its own (for exact positions and unknown-key
//! warnings), then merged deeply in order.

use std::path::Path;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::codex_keys::{is_codex_only_feature, is_codex_only_key};
use crate::error::{
    ConfigError, ConfigSource, ConfigWarning, Location, from_toml_error, locate_key,
};
use crate::features::is_known_feature;
use crate::schema::ConfigToml;

/// One source's table. `text` (with `prefix`, the path of `table` inside it) lets messages
/// point at a line and column.
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub source: ConfigSource,
    pub table: toml::Table,
    pub text: Option<Arc<str>>,
    pub prefix: Vec<String>,
}

impl Layer {
    pub fn new(source: ConfigSource, table: toml::Table) -> Self {
        Self {
            source,
            table,
            text: None,
            prefix: Vec::new(),
        }
    }

    /// Whether this layer sets `path`.
    pub fn contains(&self, path: &[String]) -> bool {
        lookup(&self.table, path).is_some()
    }

    /// Where this layer sets `path` (with line and column when the text is known).
    pub fn location_of(&self, path: &[String]) -> Location {
        let line_col = self.text.as_deref().and_then(|text| {
            let full: Vec<String> = self.prefix.iter().chain(path).cloned().collect();
            locate_key(text, &full)
        });
        Location::at(self.source.clone(), line_col)
    }
}

/// The value at `path` in `table`.
pub(crate) fn lookup<'a>(table: &'a toml::Table, path: &[String]) -> Option<&'a toml::Value> {
    let (first, rest) = path.split_first()?;
    let mut value = table.get(first)?;
    for segment in rest {
        value = value.as_table()?.get(segment)?;
    }
    Some(value)
}

/// The highest layer that sets `path`.
pub(crate) fn origin<'a>(layers: &'a [Layer], path: &[String]) -> Option<&'a Layer> {
    layers.iter().rev().find(|l| l.contains(path))
}

/// Where the effective value of `path` comes from (the built-in default if no layer sets it).
pub(crate) fn location_of(layers: &[Layer], path: &[String]) -> Location {
    origin(layers, path).map_or(Location::new(ConfigSource::Default), |l| {
        l.location_of(path)
    })
}

/// Index of the layer that sets `path` (higher wins); `None` when no layer does.
pub(crate) fn rank_of(layers: &[Layer], path: &[String]) -> Option<usize> {
    layers.iter().rposition(|l| l.contains(path))
}

/// Deep merge: tables merge key by key, anything else in `over` replaces `base`.
pub(crate) fn merge_into(base: &mut toml::Table, over: &toml::Table) {
    for (key, value) in over {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_into(b, o),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

pub(crate) fn merge_all(layers: &[Layer]) -> toml::Table {
    let mut out = toml::Table::new();
    for layer in layers {
        merge_into(&mut out, &layer.table);
    }
    out
}

/// A file checked and turned into a layer, with its warnings.
pub(crate) struct LoadedFile {
    pub layer: Layer,
    pub warnings: Vec<ConfigWarning>,
}

/// Reads a file; `Ok(None)` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Parses and checks one `config.toml`-shaped text.
pub(crate) fn load_text(source: ConfigSource, text: String) -> Result<LoadedFile, ConfigError> {
    let table: toml::Table = text
        .parse()
        .map_err(|e| from_toml_error(source.clone(), &text, &e))?;
    let (parsed, ignored) = deserialize_text::<ConfigToml>(&source, &text)?;
    let layer = Layer {
        source,
        table,
        text: Some(Arc::from(text)),
        prefix: Vec::new(),
    };
    let warnings = collect_warnings(&layer, ignored, &parsed);
    Ok(LoadedFile { layer, warnings })
}

/// Deserializes `text` as `T`, returning unknown key paths alongside.
pub(crate) fn deserialize_text<T: DeserializeOwned>(
    source: &ConfigSource,
    text: &str,
) -> Result<(T, Vec<Vec<String>>), ConfigError> {
    let mut ignored = Vec::new();
    let deserializer =
        toml::Deserializer::parse(text).map_err(|e| from_toml_error(source.clone(), text, &e))?;
    let value = serde_ignored::deserialize(deserializer, |path| ignored.push(path_segments(&path)))
        .map_err(|e| from_toml_error(source.clone(), text, &e))?;
    Ok((value, ignored))
}

/// Checks a layer that has no text (`-c`, options); errors name `key`.
pub(crate) fn check_table(
    layer: &Layer,
    key: &str,
) -> Result<(ConfigToml, Vec<ConfigWarning>), ConfigError> {
    let mut ignored = Vec::new();
    let parsed: ConfigToml =
        serde_ignored::deserialize(toml::Value::Table(layer.table.clone()), |path| {
            ignored.push(path_segments(&path))
        })
        .map_err(|e| ConfigError::Invalid {
            location: Location::new(layer.source.clone()),
            message: format!("{key}: {}", e.message().trim_end()),
        })?;
    let warnings = collect_warnings(layer, ignored, &parsed);
    Ok((parsed, warnings))
}

fn collect_warnings(
    layer: &Layer,
    ignored: Vec<Vec<String>>,
    parsed: &ConfigToml,
) -> Vec<ConfigWarning> {
    let mut warnings: Vec<ConfigWarning> = ignored
        .into_iter()
        .filter(|path| {
            let codex = is_codex_only_key(path);
            if codex {
                log_codex_key(layer, path, "key");
            }
            !codex
        })
        .map(|path| ConfigWarning {
            location: layer.location_of(&path),
            key: path.join("."),
            message: "unknown key; it is ignored (check the spelling against docs/config.md)"
                .to_owned(),
        })
        .collect();
    let feature_maps = std::iter::once((Vec::new(), &parsed.features)).chain(
        parsed
            .profiles
            .iter()
            .map(|(name, p)| (vec!["profiles".to_owned(), name.clone()], &p.features)),
    );
    for (prefix, map) in feature_maps {
        for name in map.keys().filter(|n| !is_known_feature(n)) {
            let mut path = prefix.clone();
            path.extend(["features".to_owned(), name.clone()]);
            if is_codex_only_feature(name) {
                log_codex_key(layer, &path, "feature");
                continue;
            }
            warnings.push(ConfigWarning {
                location: layer.location_of(&path),
                key: path.join("."),
                message: "unknown feature; it is ignored".to_owned(),
            });
        }
    }
    // Report in file order.
    warnings.sort_by_key(|w| w.location.line_col);
    warnings
}

/// A Codex key or feature Osprey does not use is not a warning, only a debug-level note.
fn log_codex_key(layer: &Layer, path: &[String], what: &str) {
    tracing::debug!(
        key = %path.join("."),
        location = %layer.location_of(path),
        "a Codex {what} Osprey does not use; ignored"
    );
}

fn path_segments(path: &serde_ignored::Path<'_>) -> Vec<String> {
    use serde_ignored::Path;
    match path {
        Path::Root => Vec::new(),
        Path::Seq { parent, index } => {
            let mut v = path_segments(parent);
            v.push(index.to_string());
            v
        }
        Path::Map { parent, key } => {
            let mut v = path_segments(parent);
            v.push(key.clone());
            v
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => path_segments(parent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn merge_is_deep_and_replaces_scalars_and_arrays() {
        let mut base = table("a = 1\nlist = [1, 2]\n[t]\nx = 1\ny = 2\n");
        merge_into(&mut base, &table("list = [3]\n[t]\ny = 3\nz = 4\n"));
        assert_eq!(base, table("a = 1\nlist = [3]\n[t]\nx = 1\ny = 3\nz = 4\n"));
    }

    /// A `config.toml` as a Codex user has it, with keys Codex defines and Osprey does not
    /// read (top level, inside tables Osprey reads, in profiles, and Codex features).
    const CODEX_USER_CONFIG: &str = r#"
model = "gpt-5-codex"
model_provider = "azure"
model_reasoning_effort = "high"
model_verbosity = "low"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
notify = ["notify-send", "Codex"]
hide_agent_reasoning = true
show_raw_agent_reasoning = false
file_opener = "vscode"
windows_wsl_setup_acknowledged = true
check_for_update_on_startup = false
disable_response_storage = true
web_search = "cached"
personality = "pragmatic"

[analytics]
enabled = false

[history]
persistence = "save-all"
max_bytes = 10485760

[tui]
notifications = true
animations = false

[tui.notice]
hide_full_access_warning = true

[otel]
environment = "dev"
exporter = "none"
log_user_prompt = false

[features]
unified_exec = true
shell_snapshot = true
undo = false
rmcp_client = true
web_search_cached = false

[tools]
web_search = true
web_search_request = true

[shell_environment_policy]
inherit = "core"
experimental_use_profile = false

[model_providers.azure]
name = "Azure"
base_url = "https://example.openai.azure.com/openai"
env_key = "AZURE_OPENAI_API_KEY"
wire_api = "responses"
query_params = { api-version = "2025-04-01-preview" }
requires_openai_auth = false
supports_websockets = false

[mcp_servers.docs]
command = "docs-mcp"
startup_timeout_ms = 20000
env_vars = ["DOCS_TOKEN"]

[profiles.fast]
model = "gpt-5-mini"
model_verbosity = "low"
service_tier = "fast"
personality = "friendly"

[profiles.fast.features]
js_repl = true

[projects."/home/me/code"]
trust_level = "trusted"

[notice]
hide_gpt5_1_migration_prompt = true
"#;

    #[test]
    fn a_codex_users_config_loads_without_warnings() {
        let file = load_text(
            ConfigSource::UserFile("/h/config.toml".into()),
            CODEX_USER_CONFIG.to_owned(),
        )
        .unwrap();
        let got: Vec<String> = file.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(got, Vec::<String>::new());
    }

    #[test]
    fn keys_neither_osprey_nor_codex_knows_still_warn_beside_codex_keys() {
        let text = format!(
            "{CODEX_USER_CONFIG}\n[model_providers.typo]\nbase_ulr = \"x\"\n\
             [profiles.slow]\nmodel_verbosty = \"low\"\n"
        )
        .replace("notify = [", "notifyy = [")
        .replace("[tui]", "[tuii]")
        .replace("undo = false", "undoo = false");
        let file = load_text(ConfigSource::UserFile("/h/config.toml".into()), text).unwrap();
        let keys: Vec<&str> = file.warnings.iter().map(|w| w.key.as_str()).collect();
        assert_eq!(
            keys,
            vec![
                "notifyy",
                "tuii",
                "features.undoo",
                "model_providers.typo.base_ulr",
                "profiles.slow.model_verbosty",
            ]
        );
    }

    #[test]
    fn unknown_keys_are_warnings_with_positions() {
        let file = load_text(
            ConfigSource::UserFile("/h/config.toml".into()),
            "model = \"m\"\nbogus = 1\n[tools]\nshel_type = \"shell\"\n[features]\nwarp = true\n"
                .to_owned(),
        )
        .unwrap();
        let got: Vec<String> = file.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            got,
            vec![
                "/h/config.toml:2:1: `bogus`: unknown key; it is ignored (check the spelling \
                 against docs/config.md)",
                "/h/config.toml:4:1: `tools.shel_type`: unknown key; it is ignored (check the \
                 spelling against docs/config.md)",
                "/h/config.toml:6:1: `features.warp`: unknown feature; it is ignored",
            ]
        );
    }
}
