//! Managed requirements: limits an administrator sets that no user layer can loosen.
//!
//! `requirements.toml` lists `allowed_approval_policies` and `allowed_sandbox_modes`. Both the
//! system file (`/etc/osprey/requirements.toml`) and the home one apply; a value must pass
//! every file that restricts its key. A value a user asked for (in a file, profile, `-c` or
//! option) that is not allowed is refused with an error naming the requirements file. Only a
//! built-in default is replaced, by the first allowed value, with a warning.

use std::path::{Path, PathBuf};

use osprey_protocol::{AskForApproval, SandboxMode};

use crate::choice::Choice;
use crate::error::{ConfigError, ConfigSource, ConfigWarning, Location, RequirementViolation};
use crate::layers::{deserialize_text, read_optional};
use crate::schema::RequirementsToml;

/// Where managed requirements live on this system.
pub const SYSTEM_REQUIREMENTS_PATH: &str = "/etc/osprey/requirements.toml";

/// One `requirements.toml` that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequirementsFile {
    pub path: PathBuf,
    /// `None`: any approval policy.
    pub allowed_approval_policies: Option<Vec<AskForApproval>>,
    /// `None`: any sandbox mode.
    pub allowed_sandbox_modes: Option<Vec<SandboxMode>>,
}

/// Every requirements file in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigRequirements {
    files: Vec<RequirementsFile>,
}

impl ConfigRequirements {
    /// Reads the files that exist among `paths` (missing ones impose nothing).
    pub fn load(paths: &[PathBuf]) -> Result<(Self, Vec<ConfigWarning>), ConfigError> {
        let mut files = Vec::new();
        let mut warnings = Vec::new();
        for path in paths {
            let Some(text) = read_optional(path)? else {
                continue;
            };
            let source = ConfigSource::Requirements(path.clone());
            let (raw, ignored): (RequirementsToml, _) = deserialize_text(&source, &text)?;
            warnings.extend(ignored.into_iter().map(|key| ConfigWarning {
                location: Location::new(source.clone()),
                key: key.join("."),
                message: "unknown requirement; it is ignored".to_owned(),
            }));
            files.push(RequirementsFile {
                path: path.clone(),
                allowed_approval_policies: raw
                    .allowed_approval_policies
                    .map(|v| v.into_iter().map(|p| p.0).collect()),
                allowed_sandbox_modes: raw
                    .allowed_sandbox_modes
                    .map(|v| v.into_iter().map(|p| p.0).collect()),
            });
        }
        Ok((Self { files }, warnings))
    }

    /// Requirements from explicit data (tests and embedders that already parsed them).
    pub fn from_files(files: Vec<RequirementsFile>) -> Self {
        Self { files }
    }

    pub fn files(&self) -> &[RequirementsFile] {
        &self.files
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn allows_approval_policy(&self, value: AskForApproval) -> bool {
        self.files
            .iter()
            .all(|f| allows(f.allowed_approval_policies.as_deref(), value))
    }

    pub fn allows_sandbox_mode(&self, value: SandboxMode) -> bool {
        self.files
            .iter()
            .all(|f| allows(f.allowed_sandbox_modes.as_deref(), value))
    }

    /// `Ok` when allowed; otherwise the error names the value, where it came from and the file.
    pub fn check_approval_policy(
        &self,
        value: AskForApproval,
        location: &Location,
    ) -> Result<(), ConfigError> {
        check(
            value,
            location,
            "approval_policy",
            "allowed_approval_policies",
            self.files
                .iter()
                .map(|f| (f.path.as_path(), f.allowed_approval_policies.as_deref())),
        )
    }

    pub fn check_sandbox_mode(
        &self,
        value: SandboxMode,
        location: &Location,
    ) -> Result<(), ConfigError> {
        check(
            value,
            location,
            "sandbox_mode",
            "allowed_sandbox_modes",
            self.files
                .iter()
                .map(|f| (f.path.as_path(), f.allowed_sandbox_modes.as_deref())),
        )
    }

    /// Applies the rules to an approval policy; `is_default` marks a built-in default, which
    /// may be replaced (with a warning) instead of refused.
    pub(crate) fn enforce_approval_policy(
        &self,
        value: AskForApproval,
        location: &Location,
        is_default: bool,
        warnings: &mut Vec<ConfigWarning>,
    ) -> Result<AskForApproval, ConfigError> {
        enforce(
            value,
            location,
            is_default,
            warnings,
            "approval_policy",
            |v| self.check_approval_policy(v, location),
            |v| self.allows_approval_policy(v),
            self.files
                .iter()
                .filter_map(|f| f.allowed_approval_policies.as_deref()),
        )
    }

    pub(crate) fn enforce_sandbox_mode(
        &self,
        value: SandboxMode,
        location: &Location,
        is_default: bool,
        warnings: &mut Vec<ConfigWarning>,
    ) -> Result<SandboxMode, ConfigError> {
        enforce(
            value,
            location,
            is_default,
            warnings,
            "sandbox_mode",
            |v| self.check_sandbox_mode(v, location),
            |v| self.allows_sandbox_mode(v),
            self.files
                .iter()
                .filter_map(|f| f.allowed_sandbox_modes.as_deref()),
        )
    }
}

fn allows<T: PartialEq>(list: Option<&[T]>, value: T) -> bool {
    list.is_none_or(|l| l.contains(&value))
}

fn check<'a, T: Choice>(
    value: T,
    location: &Location,
    key: &'static str,
    requirement: &'static str,
    lists: impl Iterator<Item = (&'a Path, Option<&'a [T]>)>,
) -> Result<(), ConfigError> {
    for (path, list) in lists {
        if let Some(list) = list
            && !list.contains(&value)
        {
            return Err(ConfigError::NotAllowed(Box::new(RequirementViolation {
                key,
                value: value.name().to_owned(),
                location: location.clone(),
                requirement,
                allowed: list.iter().map(|v| v.name().to_owned()).collect(),
                requirements_file: path.to_owned(),
            })));
        }
    }
    Ok(())
}

#[expect(clippy::too_many_arguments, reason = "one shared body for two keys")]
fn enforce<'a, T: Choice>(
    value: T,
    location: &Location,
    is_default: bool,
    warnings: &mut Vec<ConfigWarning>,
    key: &'static str,
    check: impl Fn(T) -> Result<(), ConfigError>,
    allowed: impl Fn(T) -> bool,
    mut lists: impl Iterator<Item = &'a [T]>,
) -> Result<T, ConfigError> {
    let refused = match check(value) {
        Ok(()) => return Ok(value),
        Err(err) => err,
    };
    if !is_default {
        return Err(refused);
    }
    let replacement = lists
        .next()
        .and_then(|first| first.iter().copied().find(|v| allowed(*v)));
    match replacement {
        Some(replacement) => {
            warnings.push(ConfigWarning {
                location: location.clone(),
                key: key.to_owned(),
                message: format!(
                    "the default \"{}\" is not allowed by the managed requirements; using \"{}\"",
                    value.name(),
                    replacement.name()
                ),
            });
            Ok(replacement)
        }
        None => Err(refused),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn reqs(policies: Option<Vec<AskForApproval>>) -> ConfigRequirements {
        ConfigRequirements::from_files(vec![RequirementsFile {
            path: "/etc/osprey/requirements.toml".into(),
            allowed_approval_policies: policies,
            allowed_sandbox_modes: None,
        }])
    }

    #[test]
    fn absent_list_allows_everything() {
        let r = reqs(None);
        assert!(
            AskForApproval::ALL
                .iter()
                .all(|p| r.allows_approval_policy(*p))
        );
        assert!(r.allows_sandbox_mode(SandboxMode::DangerFullAccess));
    }

    #[test]
    fn default_is_replaced_user_value_is_refused() {
        let r = reqs(Some(vec![AskForApproval::Untrusted, AskForApproval::Never]));
        let loc = Location::new(ConfigSource::Default);
        let mut warnings = Vec::new();
        let got = r
            .enforce_approval_policy(AskForApproval::OnRequest, &loc, true, &mut warnings)
            .unwrap();
        assert_eq!(got, AskForApproval::Untrusted);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("using \"untrusted\""));

        let loc = Location::new(ConfigSource::Flag);
        let err = r
            .enforce_approval_policy(AskForApproval::OnRequest, &loc, false, &mut warnings)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "command-line option: approval_policy = \"on-request\" is not allowed by \
             /etc/osprey/requirements.toml: allowed_approval_policies = [\"untrusted\", \
             \"never\"]; choose one of those values (requirements are set by your administrator)"
        );
    }

    #[test]
    fn empty_list_refuses_even_the_default() {
        let r = reqs(Some(vec![]));
        let loc = Location::new(ConfigSource::Default);
        assert!(
            r.enforce_approval_policy(AskForApproval::OnRequest, &loc, true, &mut Vec::new())
                .is_err()
        );
    }
}
