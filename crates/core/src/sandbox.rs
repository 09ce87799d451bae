//! The platform sandbox behind the orchestrator's [`Sandbox`] seam.
//!
//! Commands under `read-only` and `workspace-write` are rewritten by `osprey-sandboxing` to run
//! through the `osprey-linux-sandbox` helper (Landlock + seccomp, or bubblewrap for split
//! policies and for kernels without Landlock) — the `osprey` binary re-entered under another
//! name — or through Seatbelt on macOS. Where the helper's work can be done in the
//! command's own child before `exec` (Landlock without the creation guard), it is
//! (`osprey_linux_sandbox::confine_in_child`): the same confinement without a second start
//! of the binary. The configuration chooses the Linux backend
//! (`[sandbox] linux_backend`) and may replace the coarse policy's filesystem view with a
//! permission profile (`default_permissions`). Without a known helper executable nothing
//! sandboxed can run, and the command is refused with the reason: the sandbox fails closed.

use crate::tools::orchestrator::Sandbox;
use osprey_config::{
    Config, LinuxBackendSetting, PathAccess, PermissionPath as ConfigPath, SandboxConfig,
};
use osprey_process::ExecRequest;
use osprey_protocol::SandboxPolicy;
use osprey_sandboxing::{
    DenialContext, FileSystemPolicy, FsAccess, LinuxBackend, PermissionPath, PermissionProfile,
    PermissionRule, SandboxSettings,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub struct PlatformSandbox {
    helper_exe: Option<PathBuf>,
    settings: SandboxSettings,
    /// The thread's working directory. The seam gives [`Sandbox::denial`] no directory, and
    /// relative paths in a failed command's messages are read against this one.
    cwd: PathBuf,
}

impl PlatformSandbox {
    pub fn new(helper_exe: Option<PathBuf>, config: &Config) -> Self {
        Self {
            helper_exe,
            settings: settings_from(&config.sandbox),
            cwd: config.cwd.clone(),
        }
    }
}

/// The Linux backend `[sandbox] linux_backend` chooses.
pub(crate) fn linux_backend(config: &SandboxConfig) -> LinuxBackend {
    match config.linux_backend {
        LinuxBackendSetting::Auto => LinuxBackend::Auto,
        LinuxBackendSetting::Landlock => LinuxBackend::Landlock,
        LinuxBackendSetting::Bubblewrap => LinuxBackend::Bubblewrap,
    }
}

/// The sandbox crate's form of what the configuration says.
fn settings_from(config: &SandboxConfig) -> SandboxSettings {
    let linux_backend = linux_backend(config);
    let permissions = config
        .permissions
        .as_ref()
        .map(|profile| PermissionProfile {
            name: profile.name.clone(),
            rules: profile
                .filesystem
                .iter()
                .map(|rule| PermissionRule {
                    path: match &rule.path {
                        ConfigPath::Absolute(p) => PermissionPath::Absolute(p.clone()),
                        ConfigPath::Home(p) => PermissionPath::Home(p.clone()),
                        ConfigPath::Root => PermissionPath::Root,
                        ConfigPath::Minimal => PermissionPath::Minimal,
                        ConfigPath::WorkspaceRoots(p) => PermissionPath::WorkspaceRoots(p.clone()),
                        ConfigPath::Tmpdir => PermissionPath::Tmpdir,
                        ConfigPath::SlashTmp => PermissionPath::SlashTmp,
                    },
                    access: match rule.access {
                        PathAccess::None => FsAccess::None,
                        PathAccess::Read => FsAccess::Read,
                        PathAccess::Write => FsAccess::Write,
                    },
                })
                .collect(),
            network: profile.network,
        });
    SandboxSettings {
        linux_backend,
        permissions,
    }
}

impl Sandbox for PlatformSandbox {
    fn is_active(&self, policy: &SandboxPolicy) -> bool {
        !matches!(policy, SandboxPolicy::DangerFullAccess)
    }

    fn confine(
        &self,
        request: ExecRequest,
        policy: &SandboxPolicy,
        cwd: &Path,
    ) -> Result<ExecRequest, String> {
        let Some(helper) = &self.helper_exe else {
            return Err(
                "the sandbox helper (the osprey executable) is unknown to this session, so sandboxed commands cannot run; use danger-full-access only if you accept running unconfined".to_string(),
            );
        };
        self.settings
            .confine(request, policy, cwd, helper)
            .map(osprey_linux_sandbox::confine_in_child)
            .map_err(|e| e.to_string())
    }

    fn filesystem(
        &self,
        policy: &SandboxPolicy,
        cwd: &Path,
        env: &HashMap<String, String>,
    ) -> Result<FileSystemPolicy, String> {
        match self.settings.confinement(policy, cwd, env) {
            Ok(Some(confinement)) => Ok(confinement.filesystem),
            Ok(None) => Ok(FileSystemPolicy::full_access()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn denial(
        &self,
        policy: &SandboxPolicy,
        cwd: &Path,
        exit_code: Option<i32>,
        output: &str,
    ) -> Option<String> {
        // The command's `$TMPDIR` and `$HOME` are the agent's unless the shell policy
        // changed them; close enough to read a message by.
        let env: HashMap<String, String> = ["TMPDIR", "HOME"]
            .into_iter()
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
            .collect();
        let confinement = self
            .settings
            .confinement(policy, &self.cwd, &env)
            .ok()
            .flatten();
        let ctx = DenialContext {
            policy,
            filesystem: confinement.as_ref().map(|c| &c.filesystem),
            cwd: Some(cwd),
        };
        osprey_sandboxing::detect_denial_in(&ctx, exit_code, output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_sandboxing::Confinement;
    use osprey_sandboxing::helper_args::{HelperInvocation, HelperMode};

    fn sandbox_for(config_toml: &str) -> (tempfile::TempDir, PathBuf, PlatformSandbox) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (home, cwd) = (base.join("home"), base.join("repo"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(cwd.join("secrets")).unwrap();
        std::fs::write(home.join("config.toml"), config_toml).unwrap();
        let config = Config::for_tests(&home, &cwd).unwrap();
        let sandbox = PlatformSandbox::new(Some(PathBuf::from("/opt/osprey")), &config);
        (dir, cwd, sandbox)
    }

    fn helper_call(sandbox: &PlatformSandbox, cwd: &Path) -> HelperInvocation {
        let request = ExecRequest::new("true", cwd).env("PATH", "/usr/local/bin:/usr/bin:/bin");
        let policy = SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access: false,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        };
        let out = sandbox.confine(request, &policy, cwd).unwrap();
        let args: Vec<std::ffi::OsString> = out.args.iter().map(Into::into).collect();
        HelperInvocation::parse(&args).unwrap()
    }

    #[test]
    fn the_configured_profile_and_backend_reach_the_helper() {
        let (_dir, cwd, sandbox) = sandbox_for(
            r#"
default_permissions = "dev"
[permissions.dev.filesystem]
":root" = "read"
":workspace_roots" = { "." = "write", "secrets" = "none" }
[permissions.dev.network]
enabled = true
"#,
        );
        let call = helper_call(&sandbox, &cwd);
        let Confinement {
            filesystem,
            network,
        } = &call.confinement;
        assert_eq!(filesystem.access(&cwd.join("src/a.rs")), FsAccess::Write);
        assert_eq!(filesystem.access(&cwd.join("secrets/k")), FsAccess::None);
        assert!(network, "the profile's network switch wins");
        // A `none` path under a readable one: `auto` chose bubblewrap (if it is installed;
        // without it the request would have been refused, not run under Landlock).
        assert!(
            matches!(call.mode, HelperMode::BubblewrapOuter { .. }),
            "{:?}",
            call.mode
        );
    }

    #[test]
    fn without_a_profile_the_coarse_policy_and_the_backend_setting_apply() {
        let (_dir, cwd, sandbox) = sandbox_for("[sandbox]\nlinux_backend = \"bubblewrap\"\n");
        let call = helper_call(&sandbox, &cwd);
        assert_eq!(
            call.confinement.filesystem.access(&cwd.join("secrets/k")),
            FsAccess::Write
        );
        assert!(matches!(call.mode, HelperMode::BubblewrapOuter { .. }));
        let (_dir, cwd, sandbox) = sandbox_for("[sandbox]\nlinux_backend = \"landlock\"\n");
        assert_eq!(helper_call(&sandbox, &cwd).mode, HelperMode::Landlock);
    }

    #[test]
    fn denials_are_judged_against_the_thread_directory() {
        let (_dir, cwd, sandbox) = sandbox_for("");
        let policy = SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access: false,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        };
        // Inside the working directory: the sandbox allows it, so it is not the sandbox.
        let inside = format!("bash: {}/data: Permission denied", cwd.display());
        assert_eq!(sandbox.denial(&policy, &cwd, Some(1), &inside), None);
        assert_eq!(
            sandbox.denial(&policy, &cwd, Some(1), "bash: data: Permission denied"),
            None
        );
        assert_eq!(
            sandbox.denial(&policy, &cwd, Some(1), "Permission denied"),
            None
        );
        // Next to it, outside: the sandbox's doing.
        let outside = cwd.parent().unwrap().join("home/notes");
        let line = format!("bash: {}: Read-only file system", outside.display());
        assert!(sandbox.denial(&policy, &cwd, Some(1), &line).is_some());
        // Relative paths start at the command's own directory, not the thread's.
        let elsewhere = std::path::Path::new("/usr");
        assert!(
            sandbox
                .denial(&policy, elsewhere, Some(1), "bash: data: Permission denied")
                .is_some(),
            "`data` in /usr is outside the writable roots"
        );
        let sub = cwd.join("sub");
        assert_eq!(
            sandbox.denial(&policy, &sub, Some(1), "bash: data: Permission denied"),
            None,
            "`data` in a subdirectory of the workspace is writable: not the sandbox"
        );
    }
}
