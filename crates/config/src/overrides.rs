//! The two command-line layers: `-c key=value` overrides and typed options.

use std::path::PathBuf;

use osprey_protocol::{AskForApproval, ReasoningEffort, SandboxMode};
use toml::de::{DeTable, DeValue};

use crate::choice::Choice;
use crate::error::ConfigError;

/// Typed command-line options; the highest layer. `None`/empty means "not given".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigOverrides {
    /// `--model`.
    pub model: Option<String>,
    /// `--model-provider` (beats the provider `--oss` would pick).
    pub model_provider: Option<String>,
    /// `--profile`: beats the `profile` key.
    pub profile: Option<String>,
    /// `--cd`: the working directory; relative paths are resolved against the process's.
    pub cwd: Option<PathBuf>,
    /// `--ask-for-approval`.
    pub approval_policy: Option<AskForApproval>,
    /// `--sandbox`.
    pub sandbox_mode: Option<SandboxMode>,
    /// `--add-dir`: extra writable roots under `workspace-write`.
    pub add_dirs: Vec<PathBuf>,
    /// `--oss`: use `oss_provider`, and a local default model when no layer sets `model`.
    pub oss: bool,
    pub base_instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub model_reasoning_effort: Option<ReasoningEffort>,
}

impl ConfigOverrides {
    /// The config keys these options set, as a TOML table. `oss_model_provider` and
    /// `oss_default_model` are what `--oss` implies, computed by the builder.
    pub(crate) fn to_table(
        &self,
        oss_model_provider: Option<&str>,
        oss_default_model: Option<&str>,
    ) -> toml::Table {
        let mut t = toml::Table::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                t.insert(k.to_owned(), toml::Value::String(v));
            }
        };
        put(
            "model",
            self.model
                .clone()
                .or_else(|| oss_default_model.map(str::to_owned)),
        );
        put(
            "model_provider",
            self.model_provider
                .clone()
                .or_else(|| oss_model_provider.map(str::to_owned)),
        );
        put(
            "approval_policy",
            self.approval_policy.map(|p| p.name().to_owned()),
        );
        put(
            "sandbox_mode",
            self.sandbox_mode.map(|m| m.name().to_owned()),
        );
        put("base_instructions", self.base_instructions.clone());
        put(
            "developer_instructions",
            self.developer_instructions.clone(),
        );
        put(
            "model_reasoning_effort",
            self.model_reasoning_effort.map(|e| e.name().to_owned()),
        );
        t
    }
}

/// One parsed `-c key=value` argument.
#[derive(Debug, Clone, PartialEq)]
pub struct CliOverride {
    /// The argument as given, for messages.
    pub arg: String,
    /// The key path, one entry per dotted segment (quotes removed).
    pub path: Vec<String>,
    /// The value: parsed as TOML when it is valid TOML, else the raw text as a string.
    pub value: toml::Value,
}

impl CliOverride {
    /// Parses `key=value`. The key is a TOML dotted key (`a.b`, `projects."/x".trust_level`);
    /// the value is TOML if it parses (`true`, `3`, `["a"]`, `"o3"`), else a string (`o3`).
    pub fn parse(arg: &str) -> Result<Self, ConfigError> {
        let syntax = |reason: &str| ConfigError::OverrideSyntax {
            arg: arg.to_owned(),
            reason: reason.to_owned(),
        };
        let eq = find_unquoted_eq(arg).ok_or_else(|| syntax("missing `=`"))?;
        let (key, value) = (arg[..eq].trim(), arg[eq + 1..].trim());
        if key.is_empty() {
            return Err(syntax("empty key"));
        }
        let path = parse_key_path(key).ok_or_else(|| syntax("the key is not a valid TOML key"))?;
        Ok(Self {
            arg: arg.to_owned(),
            path,
            value: parse_value(value),
        })
    }

    /// A table holding just this override.
    pub(crate) fn to_table(&self) -> toml::Table {
        let mut table = toml::Table::new();
        set_path(&mut table, &self.path, self.value.clone());
        table
    }

    /// The dotted key as written by the user (without the value).
    pub fn key(&self) -> String {
        self.path.join(".")
    }
}

fn find_unquoted_eq(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '=' => return Some(i),
            None => {}
        }
    }
    None
}

/// Splits a TOML dotted key by letting the TOML parser read `<key> = 0`.
pub(crate) fn parse_key_path(key: &str) -> Option<Vec<String>> {
    if key.contains(['\n', '\r', '#', '[', ']']) && !key.contains(['"', '\'']) {
        return None;
    }
    let doc = format!("{key} = 0\n");
    let table = DeTable::parse(&doc).ok()?;
    let mut path = Vec::new();
    let mut current = table.into_inner();
    loop {
        if current.len() != 1 {
            return None;
        }
        let (k, v) = current.into_iter().next()?;
        path.push(k.into_inner().into_owned());
        match v.into_inner() {
            DeValue::Table(inner) => current = inner,
            DeValue::Integer(_) => return Some(path),
            _ => return None,
        }
    }
}

fn parse_value(value: &str) -> toml::Value {
    let doc = format!("v = {value}\n");
    match doc.parse::<toml::Table>() {
        Ok(mut t) if t.len() == 1 => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(value.to_owned())),
        _ => toml::Value::String(value.to_owned()),
    }
}

/// Sets `path` in `table` to `value`, creating (or replacing non-table values with) tables on
/// the way.
pub(crate) fn set_path(table: &mut toml::Table, path: &[String], value: toml::Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut current = table;
    for segment in parents {
        let entry = current
            .entry(segment.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = entry else {
            return;
        };
        current = next;
    }
    current.insert(last.clone(), value);
}

/// The TOML value for a JSON value. `null` (also inside arrays and objects) has no TOML
/// form and is refused.
pub fn json_to_toml(value: &serde_json::Value) -> Result<toml::Value, String> {
    Ok(match value {
        serde_json::Value::Null => {
            return Err("null has no TOML form; leave the key out instead".to_string());
        }
        serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => toml::Value::Integer(i),
            (None, Some(f)) => toml::Value::Float(f),
            (None, None) => return Err(format!("the number {n} does not fit TOML")),
        },
        serde_json::Value::String(s) => toml::Value::String(s.clone()),
        serde_json::Value::Array(items) => {
            toml::Value::Array(items.iter().map(json_to_toml).collect::<Result<_, _>>()?)
        }
        serde_json::Value::Object(map) => {
            let mut table = toml::Table::new();
            for (k, v) in map {
                table.insert(k.clone(), json_to_toml(v)?);
            }
            toml::Value::Table(table)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn bare_words_become_strings() {
        let o = CliOverride::parse("model=o3").unwrap();
        assert_eq!(o.path, path(&["model"]));
        assert_eq!(o.value, toml::Value::String("o3".into()));
        // a value with dots and dashes that is not TOML
        let o = CliOverride::parse("model = gpt-5.1-codex").unwrap();
        assert_eq!(o.value, toml::Value::String("gpt-5.1-codex".into()));
    }

    #[test]
    fn toml_values_keep_their_type() {
        let o = CliOverride::parse("sandbox_workspace_write.network_access=true").unwrap();
        assert_eq!(o.path, path(&["sandbox_workspace_write", "network_access"]));
        assert_eq!(o.value, toml::Value::Boolean(true));
        let o = CliOverride::parse("project_doc_max_bytes=100").unwrap();
        assert_eq!(o.value, toml::Value::Integer(100));
        let o = CliOverride::parse("model=\"quoted\"").unwrap();
        assert_eq!(o.value, toml::Value::String("quoted".into()));
        let o = CliOverride::parse("tools.list=[\"a\", \"b\"]").unwrap();
        assert_eq!(o.value, toml::Value::Array(vec!["a".into(), "b".into()]));
        // something that would smuggle a second key stays a string
        let o = CliOverride::parse("model=1\nother = 2").unwrap();
        assert_eq!(o.value, toml::Value::String("1\nother = 2".into()));
    }

    #[test]
    fn quoted_key_segments() {
        let o = CliOverride::parse("projects.\"/a/b.c\".trust_level=trusted").unwrap();
        assert_eq!(o.path, path(&["projects", "/a/b.c", "trust_level"]));
        let o = CliOverride::parse("model_tools.'x=y'.shell_type=shell").unwrap();
        assert_eq!(o.path, path(&["model_tools", "x=y", "shell_type"]));
        let mut expected = toml::Table::new();
        set_path(&mut expected, &o.path, "shell".into());
        assert_eq!(o.to_table(), expected);
    }

    #[test]
    fn missing_equals_names_the_argument() {
        let err = CliOverride::parse("model").unwrap_err();
        assert!(matches!(&err, ConfigError::OverrideSyntax { arg, .. } if arg == "model"));
        assert!(
            err.to_string()
                .contains("invalid -c override `model`: missing `=`")
        );
        assert!(CliOverride::parse("=x").is_err());
        assert!(CliOverride::parse("a..b=x").is_err());
    }
}
