//! One command under a policy, as `osprey sandbox` runs it. This module only turns plain
//! values into the confined [`ExecRequest`]; the `cli` crate parses the command line, spawns
//! the request through `osprey-process` and passes the exit code through.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use osprey_process::ExecRequest;
use osprey_protocol::{SandboxMode, SandboxPolicy};

use crate::{LinuxBackend, SandboxError};

/// A command and the policy to run it under: what
/// `osprey sandbox [--policy P] [--writable-root DIR]... [--network] -- CMD...` describes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SandboxCommand {
    /// The coarse policy.
    pub mode: SandboxMode,
    /// Extra writable directories (workspace-write only).
    pub writable_roots: Vec<PathBuf>,
    /// Allow network access (workspace-write only).
    pub network: bool,
    /// Do not make `$TMPDIR` writable (workspace-write only).
    pub exclude_tmpdir_env_var: bool,
    /// Do not make `/tmp` writable (workspace-write only).
    pub exclude_slash_tmp: bool,
    /// Linux only: which mechanism enforces the filesystem policy.
    pub backend: LinuxBackend,
    /// The command and its arguments.
    pub command: Vec<String>,
}

impl SandboxCommand {
    /// The policy these settings describe. The writable roots, the network switch and the
    /// exclusions only mean something for `workspace-write`.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        match self.mode {
            SandboxMode::ReadOnly => SandboxPolicy::ReadOnly,
            SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
            SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
                writable_roots: self.writable_roots.clone(),
                network_access: self.network,
                exclude_tmpdir_env_var: self.exclude_tmpdir_env_var,
                exclude_slash_tmp: self.exclude_slash_tmp,
            },
        }
    }

    /// The confined request for this command, run in `cwd` with environment `env`.
    /// `helper_exe` is the `osprey` binary (entered again as `osprey-linux-sandbox`).
    pub fn build_request(
        &self,
        cwd: &Path,
        env: HashMap<String, String>,
        helper_exe: &Path,
    ) -> Result<ExecRequest, SandboxError> {
        let (program, args) = self
            .command
            .split_first()
            .ok_or(SandboxError::EmptyCommand)?;
        let request = ExecRequest::new(program.clone(), cwd)
            .args(args.iter().cloned())
            .envs(env);
        crate::confine(
            request,
            &self.sandbox_policy(),
            cwd,
            helper_exe,
            self.backend,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn workspace_write_carries_its_settings_and_other_modes_ignore_them() {
        let command = SandboxCommand {
            mode: SandboxMode::WorkspaceWrite,
            writable_roots: vec![PathBuf::from("/a"), PathBuf::from("b")],
            network: true,
            exclude_slash_tmp: true,
            command: vec!["make".into(), "-j2".into()],
            ..SandboxCommand::default()
        };
        assert_eq!(
            command.sandbox_policy(),
            SandboxPolicy::WorkspaceWrite {
                writable_roots: vec![PathBuf::from("/a"), PathBuf::from("b")],
                network_access: true,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: true,
            }
        );
        let read_only = SandboxCommand {
            mode: SandboxMode::ReadOnly,
            ..command.clone()
        };
        assert_eq!(read_only.sandbox_policy(), SandboxPolicy::ReadOnly);
        let full = SandboxCommand {
            mode: SandboxMode::DangerFullAccess,
            ..command
        };
        assert_eq!(full.sandbox_policy(), SandboxPolicy::DangerFullAccess);
    }

    #[test]
    fn an_empty_command_is_refused() {
        let err = SandboxCommand::default()
            .build_request(Path::new("/"), HashMap::new(), Path::new("/bin/osprey"))
            .unwrap_err();
        assert!(matches!(err, SandboxError::EmptyCommand), "{err}");
    }
}
