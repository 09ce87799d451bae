//! How sandboxed commands are confined beyond `sandbox_mode`: `[sandbox] linux_backend`
//! (Osprey's own) and Codex's permission profiles, `default_permissions = "<name>"` with
//! `[permissions.<name>.filesystem]` and `[permissions.<name>.network]`.
//!
//! A profile lists paths, each `read`, `write` or `none` (Codex's `deny` is accepted for
//! `none`); the most specific path wins. Paths are absolute, `~/…`, or one of Codex's special
//! names: `:root` (`/`), `:minimal` (the system's programs and libraries),
//! `:workspace_roots` (the working directory and the writable roots), `:tmpdir` (`$TMPDIR`)
//! and `:slash_tmp` (`/tmp`). A table value scopes relative paths under its key:
//! `":workspace_roots" = { "." = "write", "secrets" = "none" }`. Special names and `~` are
//! kept symbolic here; the sandbox resolves them for each command (its working directory,
//! its `$TMPDIR` and `$HOME`).
//!
//! Only the selected profile is checked strictly: an unknown special name or a glob in it
//! is an error (a rule that cannot be enforced must not be dropped), while other profiles
//! in the file may use Codex features Osprey lacks.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::error::ConfigError;
use crate::layers::{Layer, location_of};

/// `[sandbox] linux_backend`: which Linux mechanism enforces the filesystem policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinuxBackendSetting {
    /// Landlock when the kernel has it and the policy allows it, bubblewrap otherwise.
    #[default]
    Auto,
    /// Landlock only: commands whose policy it cannot express are refused.
    Landlock,
    /// Bubblewrap (mount namespaces) for every command.
    Bubblewrap,
}

/// What a permission profile allows beneath a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PathAccess {
    /// Neither read nor write.
    #[serde(alias = "deny")]
    None,
    /// Read, list and execute.
    Read,
    /// Also create, change and delete.
    Write,
}

/// Where a permission rule applies, as written (resolved per command by the sandbox).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionPath {
    /// An absolute path.
    Absolute(PathBuf),
    /// A path relative to the command's `$HOME` (`~` or `~/…`; empty for `~` itself).
    Home(PathBuf),
    /// `:root`: `/`.
    Root,
    /// `:minimal`: the system's programs and libraries.
    Minimal,
    /// `:workspace_roots` (with a relative subpath, empty for the roots themselves): the
    /// working directory and the writable roots.
    WorkspaceRoots(PathBuf),
    /// `:tmpdir`: the command's `$TMPDIR`.
    Tmpdir,
    /// `:slash_tmp`: `/tmp`.
    SlashTmp,
}

/// One rule of a permission profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionRule {
    pub path: PermissionPath,
    pub access: PathAccess,
}

/// The profile `default_permissions` selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionProfile {
    pub name: String,
    pub filesystem: Vec<PermissionRule>,
    /// `[permissions.<name>.network] enabled`; `None` leaves it to `sandbox_mode`'s setting.
    pub network: Option<bool>,
}

/// Everything configuration says about confining commands, besides `sandbox_mode`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxConfig {
    pub linux_backend: LinuxBackendSetting,
    /// `None` without `default_permissions` (or with one of Codex's built-in profiles,
    /// `:read-only`, `:workspace`, `:danger-full-access`, which `sandbox_mode` expresses).
    pub permissions: Option<PermissionProfile>,
}

/// `[sandbox]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct SandboxToml {
    pub linux_backend: Option<LinuxBackendSetting>,
}

/// `[permissions.<name>]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct PermissionProfileToml {
    pub filesystem: Option<BTreeMap<String, FilesystemPermissionToml>>,
    pub network: Option<NetworkPermissionToml>,
}

/// One `[permissions.<name>.filesystem]` entry: an access, a table of relative paths, or one
/// of Codex's settings that share the table (`glob_scan_max_depth`,
/// `allow_limited_git_writes`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum FilesystemPermissionToml {
    Access(PathAccess),
    Scoped(BTreeMap<String, PathAccess>),
    Setting(toml::Value),
}

/// `[permissions.<name>.network]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct NetworkPermissionToml {
    pub enabled: Option<bool>,
}

/// Codex's built-in profile names, which need no table.
const BUILT_IN_PROFILES: &[&str] = &[":read-only", ":workspace", ":danger-full-access"];

/// Codex settings inside a filesystem table that are not paths.
const FILESYSTEM_SETTINGS: &[&str] = &["glob_scan_max_depth", "allow_limited_git_writes"];

/// Resolves the sandbox settings from the merged table.
pub(crate) fn resolve(
    sandbox: Option<&SandboxToml>,
    default_permissions: Option<&str>,
    permissions: &BTreeMap<String, PermissionProfileToml>,
    layers: &[Layer],
) -> Result<SandboxConfig, ConfigError> {
    let linux_backend = sandbox.and_then(|s| s.linux_backend).unwrap_or_default();
    let Some(name) = default_permissions else {
        return Ok(SandboxConfig {
            linux_backend,
            permissions: None,
        });
    };
    let selected = key(&["default_permissions"]);
    let invalid = |path: &[String], message: String| ConfigError::Invalid {
        location: location_of(layers, path),
        message,
    };
    if BUILT_IN_PROFILES.contains(&name) {
        return Ok(SandboxConfig {
            linux_backend,
            permissions: None,
        });
    }
    if name.starts_with(':') {
        return Err(invalid(
            &selected,
            format!(
                "default_permissions = \"{name}\" is not a built-in profile; use one of {} or \
                 the name of a [permissions.<name>] table",
                BUILT_IN_PROFILES.join(", ")
            ),
        ));
    }
    let Some(profile) = permissions.get(name) else {
        let known: Vec<&str> = permissions.keys().map(String::as_str).collect();
        return Err(invalid(
            &selected,
            format!(
                "default_permissions = \"{name}\" names no [permissions.{name}] table{}",
                if known.is_empty() {
                    String::new()
                } else {
                    format!(" (defined: {})", known.join(", "))
                }
            ),
        ));
    };
    let mut filesystem = Vec::new();
    for (path, entry) in profile.filesystem.iter().flatten() {
        let at = key(&["permissions", name, "filesystem", path]);
        let fail = |message: String| {
            invalid(
                &at,
                format!("permissions.{name}.filesystem.\"{path}\": {message}"),
            )
        };
        match entry {
            FilesystemPermissionToml::Access(access) => filesystem.push(PermissionRule {
                path: parse_path(path).map_err(fail)?,
                access: *access,
            }),
            FilesystemPermissionToml::Scoped(entries) => {
                for (sub, access) in entries {
                    filesystem.push(PermissionRule {
                        path: parse_scoped(path, sub).map_err(fail)?,
                        access: *access,
                    });
                }
            }
            FilesystemPermissionToml::Setting(value)
                if FILESYSTEM_SETTINGS.contains(&path.as_str()) =>
            {
                tracing::debug!(
                    "permissions.{name}.filesystem.{path} = {value} is a Codex setting Osprey \
                     does not use"
                );
            }
            FilesystemPermissionToml::Setting(_) => {
                return Err(fail(
                    "expected \"read\", \"write\" or \"none\", or a table of relative paths"
                        .to_owned(),
                ));
            }
        }
    }
    if filesystem.is_empty() {
        return Err(invalid(
            &key(&["permissions", name]),
            format!(
                "[permissions.{name}] has no filesystem entries, so commands could read \
                 nothing; add e.g. `\":root\" = \"read\"` under [permissions.{name}.filesystem]"
            ),
        ));
    }
    Ok(SandboxConfig {
        linux_backend,
        permissions: Some(PermissionProfile {
            name: name.to_owned(),
            filesystem,
            network: profile.network.as_ref().and_then(|n| n.enabled),
        }),
    })
}

fn key(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| (*s).to_owned()).collect()
}

fn has_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', ']'])
}

/// An unscoped path: absolute, `~/…` or a special name.
fn parse_path(path: &str) -> Result<PermissionPath, String> {
    if has_glob(path) {
        return Err("globs are not supported by Osprey's sandbox; list the paths".to_owned());
    }
    match path {
        ":root" => return Ok(PermissionPath::Root),
        ":minimal" => return Ok(PermissionPath::Minimal),
        ":workspace_roots" => return Ok(PermissionPath::WorkspaceRoots(PathBuf::new())),
        ":tmpdir" => return Ok(PermissionPath::Tmpdir),
        ":slash_tmp" => return Ok(PermissionPath::SlashTmp),
        special if special.starts_with(':') => {
            return Err(
                "unknown special path; use :root, :minimal, :workspace_roots, :tmpdir or \
                 :slash_tmp"
                    .to_owned(),
            );
        }
        _ => {}
    }
    if path == "~" {
        return Ok(PermissionPath::Home(PathBuf::new()));
    }
    if let Some(rest) = path.strip_prefix("~/") {
        return Ok(PermissionPath::Home(relative(rest)?));
    }
    if !Path::new(path).is_absolute() {
        return Err("paths must be absolute, start with `~/`, or be a special name".to_owned());
    }
    Ok(PermissionPath::Absolute(PathBuf::from(path)))
}

/// A path in a scoped table: `.` for the key itself, else a relative path beneath it.
fn parse_scoped(base: &str, sub: &str) -> Result<PermissionPath, String> {
    let base_path = parse_path(base)?;
    if sub == "." {
        return Ok(base_path);
    }
    if has_glob(sub) {
        return Err(format!(
            "`{sub}`: globs are not supported by Osprey's sandbox; list the paths"
        ));
    }
    let sub = relative(sub)?;
    match base_path {
        PermissionPath::WorkspaceRoots(_) => Ok(PermissionPath::WorkspaceRoots(sub)),
        PermissionPath::Absolute(p) => Ok(PermissionPath::Absolute(p.join(sub))),
        PermissionPath::Home(p) => Ok(PermissionPath::Home(p.join(sub))),
        _ => Err(format!("`{base}` does not take nested entries")),
    }
}

/// A relative path of plain components only.
fn relative(sub: &str) -> Result<PathBuf, String> {
    let path = Path::new(sub);
    if sub.is_empty() || !path.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(format!(
            "`{sub}` must be a relative path without `.` or `..` components"
        ));
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ConfigSource;
    use pretty_assertions::assert_eq;

    fn resolve_text(text: &str) -> Result<SandboxConfig, ConfigError> {
        let source = ConfigSource::UserFile("/h/config.toml".into());
        let (toml, ignored) =
            crate::layers::deserialize_text::<crate::schema::ConfigToml>(&source, text)?;
        assert_eq!(ignored, Vec::<Vec<String>>::new(), "{text}");
        let table: toml::Table = text.parse().unwrap();
        let layers = vec![Layer::new(source, table)];
        resolve(
            toml.sandbox.as_ref(),
            toml.default_permissions.as_deref(),
            &toml.permissions,
            &layers,
        )
    }

    #[test]
    fn a_codex_profile_resolves_to_symbolic_rules() {
        let got = resolve_text(
            r#"
default_permissions = "dev"
[sandbox]
linux_backend = "bubblewrap"
[permissions.dev.filesystem]
":root" = "read"
":workspace_roots" = { "." = "write", "secrets" = "none" }
"~/.cache" = "write"
"/opt/data" = { "." = "read", "private" = "deny" }
":tmpdir" = "write"
glob_scan_max_depth = 3
[permissions.dev.network]
enabled = true
[permissions.other.filesystem]
"/x/**/*.env" = "none"
"#,
        )
        .unwrap();
        let rule = |path, access| PermissionRule { path, access };
        assert_eq!(
            got,
            SandboxConfig {
                linux_backend: LinuxBackendSetting::Bubblewrap,
                permissions: Some(PermissionProfile {
                    name: "dev".into(),
                    filesystem: vec![
                        rule(
                            PermissionPath::Absolute("/opt/data".into()),
                            PathAccess::Read
                        ),
                        rule(
                            PermissionPath::Absolute("/opt/data/private".into()),
                            PathAccess::None
                        ),
                        rule(PermissionPath::Root, PathAccess::Read),
                        rule(PermissionPath::Tmpdir, PathAccess::Write),
                        rule(
                            PermissionPath::WorkspaceRoots(PathBuf::new()),
                            PathAccess::Write
                        ),
                        rule(
                            PermissionPath::WorkspaceRoots("secrets".into()),
                            PathAccess::None
                        ),
                        rule(PermissionPath::Home(".cache".into()), PathAccess::Write),
                    ],
                    network: Some(true),
                }),
            }
        );
    }

    #[test]
    fn without_a_selection_only_the_backend_counts() {
        let got = resolve_text("[permissions.unused.filesystem]\n\"rel\" = \"read\"\n").unwrap();
        assert_eq!(got, SandboxConfig::default());
        let builtin = resolve_text("default_permissions = \":workspace\"\n").unwrap();
        assert_eq!(builtin.permissions, None);
    }

    #[test]
    fn mistakes_in_the_selected_profile_are_errors_that_say_where() {
        let cases = [
            (
                "default_permissions = \"nope\"\n[permissions.dev.filesystem]\n\":root\" = \"read\"\n",
                "names no [permissions.nope] table (defined: dev)",
            ),
            (
                "default_permissions = \":custom\"\n",
                "is not a built-in profile",
            ),
            (
                "default_permissions = \"p\"\n[permissions.p.filesystem]\n\"rel/path\" = \"read\"\n",
                "paths must be absolute",
            ),
            (
                "default_permissions = \"p\"\n[permissions.p.filesystem]\n\":home\" = \"read\"\n",
                "unknown special path",
            ),
            (
                "default_permissions = \"p\"\n[permissions.p.filesystem]\n\"/a/*.env\" = \"none\"\n",
                "globs are not supported",
            ),
            (
                "default_permissions = \"p\"\n[permissions.p.filesystem]\n\":workspace_roots\" = { \"../up\" = \"read\" }\n",
                "without `.` or `..`",
            ),
            (
                "default_permissions = \"p\"\n[permissions.p.filesystem]\n\":root\" = { \"x\" = \"read\" }\n",
                "does not take nested entries",
            ),
            (
                "default_permissions = \"p\"\n[permissions.p.filesystem]\n\"/a\" = 3\n",
                "expected \"read\", \"write\" or \"none\"",
            ),
            (
                "default_permissions = \"p\"\n[permissions.p.network]\nenabled = true\n",
                "has no filesystem entries",
            ),
        ];
        for (text, needle) in cases {
            let err = resolve_text(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}\n=> {err}");
            assert!(err.contains("/h/config.toml"), "{err}");
        }
    }
}
