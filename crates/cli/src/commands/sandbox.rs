//! `osprey sandbox [--policy P] [--writable-root DIR]... [--network] -- CMD...`: runs one
//! command under a policy; its output goes to stdout (stdout and stderr combined, in arrival
//! order) and its exit code is passed through. `osprey-sandboxing` builds the confined
//! request and `osprey-linux-sandbox` moves its confinement into the spawned child when it
//! can, as for the agent's own commands; this module parses the flags and spawns it.

use std::io::Write;
use std::path::PathBuf;

use osprey_sandboxing::{LinuxBackend, SandboxCommand, SandboxMode};

/// Arguments of `osprey sandbox`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct SandboxArgs {
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
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
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

/// The `--backend` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// Landlock when the policy allows it, bubblewrap otherwise.
    Auto,
    /// Landlock only; fails for policies it cannot express.
    Landlock,
    /// Bubblewrap (mount namespaces) for everything.
    Bubblewrap,
}

impl From<BackendArg> for LinuxBackend {
    fn from(arg: BackendArg) -> Self {
        match arg {
            BackendArg::Auto => LinuxBackend::Auto,
            BackendArg::Landlock => LinuxBackend::Landlock,
            BackendArg::Bubblewrap => LinuxBackend::Bubblewrap,
        }
    }
}

impl SandboxArgs {
    /// The plain request these flags describe.
    pub fn to_command(&self) -> SandboxCommand {
        SandboxCommand {
            mode: match self.policy {
                PolicyArg::ReadOnly => SandboxMode::ReadOnly,
                PolicyArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
                PolicyArg::DangerFullAccess => SandboxMode::DangerFullAccess,
            },
            writable_roots: self.writable_roots.clone(),
            network: self.network,
            exclude_tmpdir_env_var: self.exclude_tmpdir_env_var,
            exclude_slash_tmp: self.exclude_slash_tmp,
            backend: self.backend.into(),
            command: self.command.clone(),
        }
    }
}

/// Runs `osprey sandbox …` and returns the command's exit code (128 + signal when killed).
pub async fn run(args: SandboxArgs) -> i32 {
    let fail = |message: String| {
        let _ = writeln!(std::io::stderr(), "Error: {message}");
        1
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return fail(format!("cannot read the current directory: {e}")),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return fail(format!(
                "cannot find the osprey executable for the sandbox helper: {e}"
            ));
        }
    };
    let env = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let request = match args.to_command().build_request(&cwd, env, &exe) {
        Ok(request) => osprey_linux_sandbox::confine_in_child(request),
        Err(e) => return fail(e.to_string()),
    };
    let sink = osprey_process::OutputSink::callback(|bytes: &[u8]| {
        let mut out = std::io::stdout();
        let _ = out.write_all(bytes);
        let _ = out.flush();
    });
    match osprey_process::run_to_completion(
        request,
        osprey_process::ExecExpiration::never(),
        osprey_process::OutputCaps {
            head_bytes: 0,
            tail_bytes: 0,
        },
        Some(sink),
    )
    .await
    {
        Ok(outcome) => outcome
            .exit_code
            .unwrap_or_else(|| 128 + outcome.signal.unwrap_or(0)),
        Err(e) => fail(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use osprey_sandboxing::SandboxPolicy;
    use pretty_assertions::assert_eq;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SandboxArgs,
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
            "--backend",
            "bubblewrap",
            "--",
            "make",
            "-j2",
        ])
        .unwrap();
        let command = cli.args.to_command();
        assert_eq!(
            command.sandbox_policy(),
            SandboxPolicy::WorkspaceWrite {
                writable_roots: vec![PathBuf::from("/a"), PathBuf::from("b")],
                network_access: true,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: false,
            }
        );
        assert_eq!(command.backend, LinuxBackend::Bubblewrap);
        assert_eq!(command.command, ["make", "-j2"]);
        let default = Cli::try_parse_from(["osprey", "--", "ls"]).unwrap();
        assert_eq!(
            default.args.to_command().sandbox_policy(),
            SandboxPolicy::ReadOnly
        );
        assert_eq!(default.args.to_command().backend, LinuxBackend::Auto);
        assert!(Cli::try_parse_from(["osprey", "--policy", "read-only"]).is_err());
    }

    #[test]
    fn every_policy_and_backend_value_maps_to_its_namesake() {
        use clap::ValueEnum;
        for policy in PolicyArg::value_variants() {
            let name = policy.to_possible_value().unwrap().get_name().to_owned();
            let args = Cli::try_parse_from(["osprey", "--policy", &name, "--", "ls"]).unwrap();
            let mode = serde_json::to_value(args.args.to_command().mode).unwrap();
            assert_eq!(mode, serde_json::Value::String(name));
        }
        for backend in BackendArg::value_variants() {
            let name = backend.to_possible_value().unwrap().get_name().to_owned();
            let args = Cli::try_parse_from(["osprey", "--backend", &name, "--", "ls"]).unwrap();
            let mapped = serde_json::to_value(args.args.to_command().backend).unwrap();
            assert_eq!(mapped, serde_json::Value::String(name));
        }
    }
}
