//! `osprey sandbox`: run one command under a policy. This module only parses the
//! arguments and builds the confined [`ExecRequest`]; the `cli` crate spawns it through
//! `osprey-process` and passes the exit code through.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use osprey_process::ExecRequest;
use osprey_protocol::{SandboxMode, SandboxPolicy};

use crate::{LinuxBackend, SandboxError};

/// Arguments of `osprey sandbox [--policy P] [--writable-root DIR]... [--network] -- CMD...`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct SandboxCommandArgs {
    /// The sandbox policy to run the command under.
    #[arg(long, value_enum, default_value_t = PolicyArg::ReadOnly)]
    pub policy: PolicyArg,
    /// An extra writable directory (workspace-write only); repeat for several.
    #[arg(long = "writable-root", value_name = "DIR")]
    pub writable_roots: Vec<PathBuf>,
    /// Allow network access (workspace-write only).
    #[arg(long)]
    pub network: bool,
    /// Do not make `$TMPDIR` writable (workspace-write only).
    #[arg(long)]
    pub exclude_tmpdir_env_var: bool,
    /// Do not make `/tmp` writable (workspace-write only).
    #[arg(long)]
    pub exclude_slash_tmp: bool,
    /// Linux only: which mechanism enforces the filesystem policy.
    #[arg(long, value_enum, default_value_t = LinuxBackend::Auto)]
    pub backend: LinuxBackend,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// The `--policy` values, spelled as in `sandbox_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    /// Read anything, write nothing, no network.
    ReadOnly,
    /// Write the working directory, the writable roots and temp directories.
    WorkspaceWrite,
    /// No sandbox.
    DangerFullAccess,
}

impl From<PolicyArg> for SandboxMode {
    fn from(p: PolicyArg) -> Self {
        match p {
            PolicyArg::ReadOnly => SandboxMode::ReadOnly,
            PolicyArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            PolicyArg::DangerFullAccess => SandboxMode::DangerFullAccess,
        }
    }
}

impl SandboxCommandArgs {
    /// The policy these flags describe. `--writable-root`, `--network` and the exclusions
    /// only mean something for `workspace-write`.
    pub fn sandbox_policy(&self) -> SandboxPolicy {
        match self.policy {
            PolicyArg::ReadOnly => SandboxPolicy::ReadOnly,
            PolicyArg::DangerFullAccess => SandboxPolicy::DangerFullAccess,
            PolicyArg::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
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
    use clap::Parser;
    use pretty_assertions::assert_eq;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SandboxCommandArgs,
    }

    #[test]
    fn parses_the_documented_form() {
        let cli = Cli::try_parse_from([
            "osprey",
            "--policy",
            "workspace-write",
            "--writable-root",
            "/a",
            "--writable-root",
            "b",
            "--network",
            "--",
            "make",
            "-j2",
        ])
        .unwrap();
        assert_eq!(
            cli.args.sandbox_policy(),
            SandboxPolicy::WorkspaceWrite {
                writable_roots: vec![PathBuf::from("/a"), PathBuf::from("b")],
                network_access: true,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: false,
            }
        );
        assert_eq!(cli.args.command, ["make", "-j2"]);
        let default = Cli::try_parse_from(["osprey", "--", "ls"]).unwrap();
        assert_eq!(default.args.sandbox_policy(), SandboxPolicy::ReadOnly);
        assert!(Cli::try_parse_from(["osprey", "--policy", "read-only"]).is_err());
    }
}
