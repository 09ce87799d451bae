//! Errors and warnings, and where in which layer a value came from.
//!
//! Every message points at its origin: a file position (`path:line:col`), a `-c` argument, a
//! command-line option, or the built-in defaults. Positions are computed from the source text
//! with `toml`'s spanned parser, so they are exact for syntax errors, type errors and
//! semantic checks made after the layers are merged.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

/// Which layer of the configuration a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// Osprey's built-in defaults.
    Default,
    /// `$OSPREY_HOME/config.toml`.
    UserFile(PathBuf),
    /// A `[profiles.<name>]` table, defined in `file`.
    Profile { name: String, file: Option<PathBuf> },
    /// `<project root>/.osprey/config.toml` of a trusted project.
    ProjectFile(PathBuf),
    /// One `-c key=value` argument, as the user typed it.
    CliOverride(String),
    /// A typed command-line option such as `--model` or `--sandbox`.
    Flag,
    /// A managed `requirements.toml`.
    Requirements(PathBuf),
    /// A change made while the program runs (for example a `/approvals` switch).
    Runtime,
}

impl ConfigSource {
    /// The file behind this source, if it is a file.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::UserFile(p) | Self::ProjectFile(p) | Self::Requirements(p) => Some(p),
            Self::Profile { file, .. } => file.as_deref(),
            Self::Default | Self::CliOverride(_) | Self::Flag | Self::Runtime => None,
        }
    }
}

/// A source plus, for files, the 1-based line and column of the relevant key or value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub source: ConfigSource,
    pub line_col: Option<(usize, usize)>,
}

impl Location {
    pub fn new(source: ConfigSource) -> Self {
        Self {
            source,
            line_col: None,
        }
    }

    pub fn at(source: ConfigSource, line_col: Option<(usize, usize)>) -> Self {
        Self { source, line_col }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let position = |f: &mut fmt::Formatter<'_>, path: &Path| match self.line_col {
            Some((line, col)) => write!(f, "{}:{line}:{col}", path.display()),
            None => write!(f, "{}", path.display()),
        };
        match &self.source {
            ConfigSource::Default => f.write_str("built-in default"),
            ConfigSource::UserFile(p)
            | ConfigSource::ProjectFile(p)
            | ConfigSource::Requirements(p) => position(f, p),
            ConfigSource::Profile {
                name,
                file: Some(p),
            } => {
                position(f, p)?;
                write!(f, " (profile `{name}`)")
            }
            ConfigSource::Profile { name, file: None } => write!(f, "profile `{name}`"),
            ConfigSource::CliOverride(arg) => write!(f, "-c `{arg}`"),
            ConfigSource::Flag => f.write_str("command-line option"),
            ConfigSource::Runtime => f.write_str("runtime change"),
        }
    }
}

/// Why a configuration could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file exists but could not be read.
    #[error("could not read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },

    /// A file could not be written.
    #[error("could not write {}: {source}", path.display())]
    Write { path: PathBuf, source: io::Error },

    /// A syntax error, a value of the wrong type, or an inconsistent table.
    #[error("{location}: {message}")]
    Invalid { location: Location, message: String },

    /// A `-c` argument without `=`, or with an empty or malformed key.
    #[error(
        "invalid -c override `{arg}`: {reason}; write it as key=value, \
         for example -c model=\"o3\" or -c sandbox_workspace_write.network_access=true"
    )]
    OverrideSyntax { arg: String, reason: String },

    /// `--profile` or `profile = …` names a profile that no layer defines.
    #[error(
        "unknown profile \"{name}\"; {}",
        list_known(
            "known profiles",
            known,
            "no profiles are defined; add a [profiles.<name>] table to config.toml"
        )
    )]
    UnknownProfile { name: String, known: Vec<String> },

    /// `model_provider` (or `oss_provider` with `--oss`) names no provider.
    #[error(
        "{location}: unknown model provider \"{id}\"; {}",
        list_known("known providers", known, "no providers are defined")
    )]
    UnknownProvider {
        id: String,
        known: Vec<String>,
        location: Location,
    },

    /// `experimental_instructions_file` could not be read.
    #[error("{location}: could not read experimental_instructions_file {}: {source}", path.display())]
    InstructionsFile {
        path: PathBuf,
        location: Location,
        source: io::Error,
    },

    /// A managed requirement refuses the value a layer asked for.
    #[error("{0}")]
    NotAllowed(Box<RequirementViolation>),

    /// No home directory could be determined.
    #[error(
        "could not determine the Osprey home directory: neither OSPREY_HOME nor HOME is set; \
         set OSPREY_HOME to a directory"
    )]
    NoHome,

    /// The working directory could not be determined.
    #[error("could not determine the current directory: {source}; pass --cd with an absolute path")]
    Cwd { source: io::Error },
}

impl ConfigError {
    /// Whether the command line itself is malformed (front ends exit with their usage code).
    pub fn is_usage_error(&self) -> bool {
        matches!(self, Self::OverrideSyntax { .. })
    }
}

impl From<&ConfigError> for osprey_protocol::WireError {
    fn from(err: &ConfigError) -> Self {
        osprey_protocol::WireError::new(osprey_protocol::ErrorKind::Config, err.to_string())
    }
}

/// A value refused by a managed requirement: what, where it was asked for, and which file
/// forbids it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{location}: {key} = \"{value}\" is not allowed by {}: {requirement} = [{}]; \
     choose one of those values (requirements are set by your administrator)",
    requirements_file.display(),
    quote_list(allowed)
)]
pub struct RequirementViolation {
    pub key: &'static str,
    pub value: String,
    pub location: Location,
    pub requirement: &'static str,
    pub allowed: Vec<String>,
    pub requirements_file: PathBuf,
}

fn list_known(label: &str, known: &[String], none: &str) -> String {
    if known.is_empty() {
        none.to_owned()
    } else {
        format!("{label}: {}", known.join(", "))
    }
}

fn quote_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Something in the configuration that was accepted but probably not what the user meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// Where: the file (with position when known), `-c` argument, or option.
    pub location: Location,
    /// Dotted key path the warning is about, e.g. `tools.bogus`.
    pub key: String,
    pub message: String,
}

impl ConfigWarning {
    /// The file this warning is about, if any.
    pub fn file(&self) -> Option<&Path> {
        self.location.source.file()
    }
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`: {}", self.location, self.key, self.message)
    }
}

/// 1-based (line, column) of a byte offset; columns count characters.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, col)
}

/// Turns a `toml` deserialization error on `text` into a located error.
pub(crate) fn from_toml_error(
    source: ConfigSource,
    text: &str,
    err: &toml::de::Error,
) -> ConfigError {
    let span = err.span();
    let line_col = span.as_ref().map(|s| line_col(text, s.start));
    let key = span.clone().and_then(|s| key_at(text, s.start));
    let mut message = err.message().trim_end().to_owned();
    if message == "duplicate key"
        && let Some(name) = span
            .and_then(|s| text.get(s))
            .filter(|n| !n.trim().is_empty())
    {
        message = format!(
            "duplicate key `{}`; a key may be defined only once",
            name.trim()
        );
    }
    if let Some(key) = key {
        message = format!("{key}: {message}");
    }
    ConfigError::Invalid {
        location: Location::at(source, line_col),
        message,
    }
}

/// The dotted path of the innermost key whose value contains `offset`.
pub(crate) fn key_at(text: &str, offset: usize) -> Option<String> {
    let table = DeTable::parse(text).ok()?;
    let mut path = Vec::new();
    walk_to_offset(table.get_ref(), offset, &mut path).then(|| path.join("."))
}

fn walk_to_offset(table: &DeTable<'_>, offset: usize, path: &mut Vec<String>) -> bool {
    for (key, value) in table {
        path.push(key.get_ref().to_string());
        let found = match value.get_ref() {
            // A `[header]` table's own span does not cover its body, so look inside.
            DeValue::Table(inner) => {
                walk_to_offset(inner, offset, path) || value.span().contains(&offset)
            }
            _ => value.span().contains(&offset) || key.span().contains(&offset),
        };
        if found {
            return true;
        }
        path.pop();
    }
    false
}

/// 1-based position of the last key of `path` in `text`, if the text defines it.
pub(crate) fn locate_key(text: &str, path: &[String]) -> Option<(usize, usize)> {
    let table = DeTable::parse(text).ok()?;
    let mut current = table.get_ref();
    let mut found = None;
    for (i, segment) in path.iter().enumerate() {
        let (key, value) = current.get_key_value(segment.as_str())?;
        found = Some(key.span().start);
        if i + 1 < path.len() {
            match value.get_ref() {
                DeValue::Table(inner) => current = inner,
                _ => return None,
            }
        }
    }
    found.map(|offset| line_col(text, offset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn line_col_counts_from_one() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        // after the two-byte `é`, the column counts characters
        assert_eq!(line_col(text, 9), (2, 3));
    }

    #[test]
    fn locates_keys_in_tables_and_dotted_keys() {
        let text = "model = \"x\"\n[tools]\nshell_type = \"shell\"\n[a.b]\nc.d = 1\n";
        let path = |p: &str| p.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(locate_key(text, &path("model")), Some((1, 1)));
        assert_eq!(locate_key(text, &path("tools.shell_type")), Some((3, 1)));
        assert_eq!(locate_key(text, &path("a.b.c.d")), Some((5, 3)));
        assert_eq!(locate_key(text, &path("tools.nope")), None);
    }

    #[test]
    fn key_at_finds_innermost_key() {
        let text = "[tools]\nshell_type = 3\n";
        let offset = text.find('3').unwrap();
        assert_eq!(key_at(text, offset).as_deref(), Some("tools.shell_type"));
    }

    #[test]
    fn duplicate_key_is_named() {
        let text = "model = \"a\"\nmodel = \"b\"\n";
        let err = toml::from_str::<toml::Table>(text).unwrap_err();
        let located = from_toml_error(ConfigSource::UserFile("/c.toml".into()), text, &err);
        assert_eq!(
            located.to_string(),
            "/c.toml:2:1: duplicate key `model`; a key may be defined only once"
        );
    }

    #[test]
    fn not_allowed_message_names_everything() {
        let err = ConfigError::NotAllowed(Box::new(RequirementViolation {
            key: "approval_policy",
            value: "never".into(),
            location: Location::at(
                ConfigSource::UserFile("/h/config.toml".into()),
                Some((2, 1)),
            ),
            requirement: "allowed_approval_policies",
            allowed: vec!["on-request".into()],
            requirements_file: "/etc/osprey/requirements.toml".into(),
        }));
        assert_eq!(
            err.to_string(),
            "/h/config.toml:2:1: approval_policy = \"never\" is not allowed by \
             /etc/osprey/requirements.toml: allowed_approval_policies = [\"on-request\"]; \
             choose one of those values (requirements are set by your administrator)"
        );
    }
}
