//! What configuration adds to a coarse [`SandboxPolicy`]: the Linux backend, and a named
//! permission profile (per-path `read` / `write` / `none` rules, Codex's
//! `[permissions.<name>]`) that replaces the coarse policy's filesystem view.
//!
//! A profile's rules are symbolic until a command runs: `:workspace_roots` means that
//! command's working directory and the policy's writable roots, `:tmpdir` its `$TMPDIR`,
//! `~` its `$HOME`. The coarse policy still caps what a profile grants: under `read-only`
//! every `write` rule reads only, and `danger-full-access` is not confined at all. Inside
//! every writable directory `.git` and `.osprey` stay read-only, as with coarse policies.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use osprey_process::ExecRequest;
use osprey_protocol::SandboxPolicy;

use crate::fs_policy::normalize;
use crate::{
    Confinement, FileSystemPolicy, FsAccess, FsEntry, LinuxBackend, SandboxError, WRITABLE_DEVICES,
    confine_linux_with, confine_macos_with, protected_subpaths,
};

/// What `:minimal` stands for: the system's programs, libraries and configuration, and the
/// kernel's `/dev`, `/proc` and `/sys`.
pub const MINIMAL_PATHS: &[&str] = &[
    "/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/run",
    "/var/lib", "/dev", "/proc", "/sys",
];

/// Where a permission rule applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionPath {
    /// An absolute path.
    Absolute(PathBuf),
    /// Relative to the command's `$HOME` (empty for `$HOME` itself).
    Home(PathBuf),
    /// `/`.
    Root,
    /// [`MINIMAL_PATHS`].
    Minimal,
    /// The working directory and the writable roots, each joined with this relative path.
    WorkspaceRoots(PathBuf),
    /// The command's `$TMPDIR` (nothing when unset).
    Tmpdir,
    /// `/tmp`.
    SlashTmp,
}

/// One rule: `access` beneath `path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionRule {
    pub path: PermissionPath,
    pub access: FsAccess,
}

/// A named set of rules, and optionally the network switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionProfile {
    /// The profile's name, for messages.
    pub name: String,
    pub rules: Vec<PermissionRule>,
    /// `None`: the coarse policy's network setting.
    pub network: Option<bool>,
}

/// How commands are confined, beyond the coarse policy of each turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxSettings {
    pub linux_backend: LinuxBackend,
    pub permissions: Option<PermissionProfile>,
}

impl PermissionProfile {
    /// The confinement of a command under `policy` in `cwd` with environment `env`;
    /// `None` for `danger-full-access`.
    pub fn confinement(
        &self,
        policy: &SandboxPolicy,
        cwd: &Path,
        env: &HashMap<String, String>,
    ) -> Result<Option<Confinement>, SandboxError> {
        let writable_roots = match policy {
            SandboxPolicy::DangerFullAccess => return Ok(None),
            SandboxPolicy::ReadOnly => Vec::new(),
            SandboxPolicy::WorkspaceWrite { writable_roots, .. } => writable_roots.clone(),
        };
        let read_only = matches!(policy, SandboxPolicy::ReadOnly);
        let mut workspace = vec![cwd.to_path_buf()];
        workspace.extend(writable_roots.iter().map(|r| cwd.join(r)));
        // Equally specific rules for one path: `none` beats `write` beats `read` (Codex's
        // precedence), whatever order the file lists them in.
        let mut by_path: BTreeMap<PathBuf, FsAccess> = BTreeMap::new();
        for rule in &self.rules {
            let access = match rule.access {
                FsAccess::Write if read_only => FsAccess::Read,
                other => other,
            };
            for path in self.expand(&rule.path, &workspace, env)? {
                let slot = by_path.entry(normalize(&path)).or_insert(access);
                *slot = strongest(*slot, access);
            }
        }
        let mut entries: Vec<FsEntry> = by_path
            .into_iter()
            .map(|(path, access)| FsEntry::new(path, access))
            .collect();
        entries.extend(
            WRITABLE_DEVICES
                .iter()
                .map(|d| FsEntry::new(*d, FsAccess::Write)),
        );
        let protected: Vec<FsEntry> = entries
            .iter()
            .filter(|e| e.access == FsAccess::Write && !e.path.starts_with("/dev"))
            .flat_map(|e| protected_subpaths(&e.path))
            .map(|p| FsEntry::new(p, FsAccess::Read))
            .collect();
        // Last, so the carve-outs win over a rule for the same path.
        entries.extend(protected);
        Ok(Some(Confinement {
            filesystem: FileSystemPolicy::new(entries)?,
            network: self.network.unwrap_or(policy.has_full_network_access()),
        }))
    }

    fn expand(
        &self,
        path: &PermissionPath,
        workspace: &[PathBuf],
        env: &HashMap<String, String>,
    ) -> Result<Vec<PathBuf>, SandboxError> {
        Ok(match path {
            PermissionPath::Absolute(p) => vec![p.clone()],
            PermissionPath::Root => vec![PathBuf::from("/")],
            PermissionPath::Minimal => MINIMAL_PATHS.iter().map(PathBuf::from).collect(),
            PermissionPath::SlashTmp => vec![PathBuf::from("/tmp")],
            PermissionPath::Tmpdir => env
                .get("TMPDIR")
                .map(PathBuf::from)
                .filter(|t| t.is_absolute() && normalize(t) != Path::new("/"))
                .into_iter()
                .collect(),
            PermissionPath::WorkspaceRoots(sub) => workspace.iter().map(|r| r.join(sub)).collect(),
            PermissionPath::Home(sub) => {
                let home = env
                    .get("HOME")
                    .map(PathBuf::from)
                    .filter(|h| h.is_absolute())
                    .ok_or_else(|| SandboxError::UnresolvedPermission {
                        profile: self.name.clone(),
                        path: format!("~/{}", sub.display()),
                        reason: "the command's $HOME is not set to an absolute path".to_owned(),
                    })?;
                vec![home.join(sub)]
            }
        })
    }
}

/// `none` over `write` over `read`.
fn strongest(a: FsAccess, b: FsAccess) -> FsAccess {
    let rank = |x: FsAccess| match x {
        FsAccess::None => 2,
        FsAccess::Write => 1,
        FsAccess::Read => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

impl SandboxSettings {
    /// The confinement of a command: the profile's, or the coarse policy's without one.
    /// `None` for `danger-full-access`.
    pub fn confinement(
        &self,
        policy: &SandboxPolicy,
        cwd: &Path,
        env: &HashMap<String, String>,
    ) -> Result<Option<Confinement>, SandboxError> {
        match &self.permissions {
            Some(profile) => profile.confinement(policy, cwd, env),
            None => Ok(Confinement::from_sandbox_policy(policy, cwd, env)),
        }
    }

    /// Confines `request` with this platform's sandbox. `helper_exe` is the `osprey` binary
    /// (used on Linux only).
    pub fn confine(
        &self,
        request: ExecRequest,
        policy: &SandboxPolicy,
        cwd: &Path,
        helper_exe: &Path,
    ) -> Result<ExecRequest, SandboxError> {
        if !(cfg!(target_os = "linux") || cfg!(target_os = "macos")) {
            if matches!(policy, SandboxPolicy::DangerFullAccess) {
                return Ok(request);
            }
            return Err(SandboxError::UnsupportedPlatform {
                os: std::env::consts::OS,
            });
        }
        let Some(confinement) = self.confinement(policy, &normalize(cwd), &request.env)? else {
            return Ok(request);
        };
        if cfg!(target_os = "macos") {
            Ok(confine_macos_with(request, &confinement))
        } else {
            confine_linux_with(request, &confinement, helper_exe, self.linux_backend)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn rule(path: PermissionPath, access: FsAccess) -> PermissionRule {
        PermissionRule { path, access }
    }

    fn ww(writable_roots: Vec<PathBuf>) -> SandboxPolicy {
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access: true,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }
    }

    #[test]
    fn rules_resolve_per_command_and_read_only_caps_writes() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (cwd, extra, home) = (base.join("repo"), base.join("extra"), base.join("home"));
        for d in [&cwd, &extra, &home, &cwd.join(".git")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let profile = PermissionProfile {
            name: "dev".into(),
            rules: vec![
                rule(PermissionPath::Root, FsAccess::Read),
                rule(
                    PermissionPath::WorkspaceRoots(PathBuf::new()),
                    FsAccess::Write,
                ),
                rule(
                    PermissionPath::WorkspaceRoots("secrets".into()),
                    FsAccess::None,
                ),
                rule(PermissionPath::Home(".cache".into()), FsAccess::Write),
                rule(PermissionPath::Tmpdir, FsAccess::Write),
                // Same path twice: `none` wins.
                rule(PermissionPath::Absolute(home.join("k")), FsAccess::Write),
                rule(PermissionPath::Absolute(home.join("k")), FsAccess::None),
            ],
            network: None,
        };
        let env: HashMap<String, String> =
            [("HOME".to_string(), home.display().to_string())].into();
        let conf = profile
            .confinement(&ww(vec![extra.clone()]), &cwd, &env)
            .unwrap()
            .unwrap();
        let fs = &conf.filesystem;
        assert!(
            conf.network,
            "the coarse policy's network when the profile is silent"
        );
        assert_eq!(fs.access(Path::new("/usr/bin/env")), FsAccess::Read);
        assert_eq!(fs.access(&cwd.join("src/main.rs")), FsAccess::Write);
        assert_eq!(fs.access(&extra.join("x")), FsAccess::Write);
        assert_eq!(fs.access(&cwd.join("secrets/key")), FsAccess::None);
        assert_eq!(fs.access(&extra.join("secrets/key")), FsAccess::None);
        assert_eq!(fs.access(&home.join(".cache/pip")), FsAccess::Write);
        assert_eq!(fs.access(&home.join("k")), FsAccess::None);
        assert_eq!(fs.access(&cwd.join(".git/config")), FsAccess::Read);
        assert_eq!(fs.access(Path::new("/dev/null")), FsAccess::Write);

        let ro = profile
            .confinement(&SandboxPolicy::ReadOnly, &cwd, &env)
            .unwrap()
            .unwrap();
        assert_eq!(ro.filesystem.access(&cwd.join("a")), FsAccess::Read);
        assert_eq!(
            ro.filesystem.access(&extra.join("a")),
            FsAccess::Read,
            "no roots"
        );
        assert_eq!(ro.filesystem.access(&cwd.join("secrets/k")), FsAccess::None);
        assert!(!ro.network);

        assert_eq!(
            profile
                .confinement(&SandboxPolicy::DangerFullAccess, &cwd, &env)
                .unwrap(),
            None
        );
        let err = profile
            .confinement(&SandboxPolicy::ReadOnly, &cwd, &HashMap::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("~/.cache") && err.contains("$HOME"), "{err}");
    }

    #[test]
    fn without_a_profile_the_coarse_policy_applies() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        let settings = SandboxSettings::default();
        let env = HashMap::new();
        assert_eq!(
            settings
                .confinement(&SandboxPolicy::ReadOnly, &cwd, &env)
                .unwrap(),
            Confinement::from_sandbox_policy(&SandboxPolicy::ReadOnly, &cwd, &env)
        );
    }
}
