//! Where a thread's tools act: this machine, or the machine of an exec server
//! (`environments.toml`, Codex's format; see `docs/exec-server.md`).
//!
//! A thread picks its environment once, when it starts: the front end's choice
//! (`Config::environment`), else the file's `default`. A remote one is connected before
//! the thread exists, so a wrong entry is a clear start-up error rather than a failing
//! first tool call. Approvals stay on this machine; commands run under the exec server's
//! own sandbox; files are read and written through its fs calls.

pub mod paths;
pub mod remote;
pub mod remote_files;
pub mod remote_process;
pub mod remote_sandbox;
pub mod session_process;

use osprey_config::{Config, ShellEnvironmentInherit, ShellEnvironmentPolicy};
use osprey_exec_server::environments::{Environments, LOCAL_ID, Transport};
use osprey_exec_server::protocol::EnvPolicy;
pub use remote::RemoteEnvironment;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::tools::call::ToolError;
use osprey_process::{
    ExecExpiration, ExecOutcome, ExecRequest, InteractiveProcess, OutputCaps, OutputSink,
};
use remote_process::{RemoteCommand, RemoteSession};
use session_process::SessionProcess;

/// The environment a thread's tools act in.
#[derive(Debug, Clone, Default)]
pub enum ToolEnvironment {
    /// This machine.
    #[default]
    Local,
    /// An exec server's machine.
    Remote(Arc<RemoteEnvironment>),
}

impl ToolEnvironment {
    /// Connects the environment `config` selects. `env` is Osprey's own environment (a
    /// transport program such as `ssh` gets it).
    pub async fn for_thread(
        config: &Config,
        env: &HashMap<String, String>,
    ) -> Result<Self, String> {
        let environments = Environments::load(&config.osprey_home)?;
        let (id, cwd) = match &config.environment {
            Some(choice) => (Some(choice.id.clone()), choice.cwd.clone()),
            None => (environments.default.clone(), None),
        };
        if id.is_none() && !environments.include_local {
            return Err("environments.toml sets include_local = false and names no default environment, so there is nowhere to run tools; set `default`, or pass --environment ID".to_owned());
        }
        let Some(id) = id.filter(|id| id != LOCAL_ID) else {
            if config.environment.is_some() && !environments.include_local {
                return Err(format!(
                    "environments.toml sets include_local = false, so the `{LOCAL_ID}` environment cannot be chosen; pick one of its environments"
                ));
            }
            return Ok(Self::Local);
        };
        let Some(spec) = environments.get(&id)? else {
            return Ok(Self::Local);
        };
        // A WebSocket entry starts nothing here; it only reads its token variable.
        let launch_env = match spec.transport {
            Transport::Program { .. } => transport_env(env),
            Transport::WebSocket { .. } => env.clone(),
        };
        let remote = RemoteEnvironment::connect(
            spec.clone(),
            launch_env,
            config.cwd.clone(),
            cwd,
            config.features.exec_server_discovery_v2(),
            !matches!(
                config.sandbox_policy(),
                osprey_protocol::SandboxPolicy::DangerFullAccess
            ),
        )
        .await?;
        Ok(Self::Remote(Arc::new(remote)))
    }

    /// The path translation when the tools act on a Windows server.
    pub fn windows_paths(&self) -> Option<paths::WindowsPaths> {
        self.remote()
            .filter(|remote| remote.is_windows())
            .map(|_| paths::WindowsPaths)
    }

    /// A path as the model should read it: a Windows server's as `C:\x`.
    pub fn path_for_model(&self, path: &Path) -> String {
        match self.windows_paths() {
            Some(windows) => windows.model_form(path),
            None => path.display().to_string(),
        }
    }

    pub fn remote(&self) -> Option<&Arc<RemoteEnvironment>> {
        match self {
            Self::Local => None,
            Self::Remote(remote) => Some(remote),
        }
    }

    /// The variables a command gets: `base` (Osprey's own) filtered by `policy` here; only
    /// the defaults and `policy.set` for a server, whose own variables the policy filters
    /// there.
    pub fn command_env(
        &self,
        base: &HashMap<String, String>,
        policy: &ShellEnvironmentPolicy,
        tty: bool,
    ) -> HashMap<String, String> {
        match self {
            Self::Local => crate::tools::exec_env::command_env(base, policy, tty),
            Self::Remote(_) => remote_command_env(policy, tty).into_iter().collect(),
        }
    }

    /// The model's `workdir` resolved against `cwd`, checked to be a directory where the
    /// command will run.
    pub async fn resolve_workdir(
        &self,
        cwd: &Path,
        workdir: Option<&str>,
    ) -> Result<PathBuf, ToolError> {
        let remote = match self {
            Self::Local => return crate::tools::exec_env::resolve_workdir(cwd, workdir),
            Self::Remote(remote) => remote,
        };
        let Some(workdir) = workdir.filter(|w| !w.trim().is_empty()) else {
            return Ok(cwd.to_path_buf());
        };
        let workdir = match self.windows_paths() {
            Some(windows) => windows.local_form(workdir),
            None => workdir.to_owned(),
        };
        let path = cwd.join(workdir);
        let files = remote_files::RemoteFiles::new(Arc::clone(remote));
        let probe = path.clone();
        let meta = tokio::task::spawn_blocking(move || files.metadata(&probe))
            .await
            .map_err(|e| ToolError::RespondToModel(format!("the workdir check stopped: {e}")))?;
        match meta {
            Ok(meta) if meta.is_directory => Ok(path),
            _ => Err(ToolError::RespondToModel(format!(
                "workdir {} is not an existing directory in environment `{}`; pass a directory that exists there (absolute, or relative to {})",
                self.path_for_model(&path),
                remote.id(),
                self.path_for_model(cwd)
            ))),
        }
    }

    /// Runs `request` to its end here or on the server; with the server's verdict on a
    /// sandbox denial for a remote run.
    pub async fn run_to_completion(
        &self,
        request: ExecRequest,
        expiration: ExecExpiration,
        sink: Option<OutputSink>,
        launch: &Launch<'_>,
    ) -> Result<(ExecOutcome, Option<String>), String> {
        match self {
            Self::Local => {
                osprey_process::run_to_completion(request, expiration, OutputCaps::default(), sink)
                    .await
                    .map(|outcome| (outcome, None))
                    .map_err(|e| e.to_string())
            }
            Self::Remote(remote) => {
                let command = launch.remote_command(request, false);
                let run = remote_process::run_to_completion(
                    remote,
                    &command,
                    expiration,
                    OutputCaps::default(),
                    sink,
                )
                .await
                .map_err(|e| e.to_string())?;
                let denial = remote_sandbox::server_denial(remote.id(), run.sandbox_denied);
                Ok((run.outcome, denial))
            }
        }
    }

    /// Starts an `exec_command` session here or on the server.
    pub async fn spawn_session(
        &self,
        request: ExecRequest,
        tty: bool,
        launch: &Launch<'_>,
    ) -> Result<SessionProcess, String> {
        match self {
            Self::Local => InteractiveProcess::spawn(request, tty)
                .map(SessionProcess::Local)
                .map_err(|e| e.to_string()),
            Self::Remote(remote) => {
                let command = launch.remote_command(request, tty);
                RemoteSession::spawn(Arc::clone(remote), &command)
                    .await
                    .map(SessionProcess::Remote)
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// The working directory the thread starts in: the remote side's for a remote one.
    pub fn initial_cwd(&self, local: &Path) -> PathBuf {
        match self {
            Self::Local => local.to_path_buf(),
            Self::Remote(remote) => remote.cwd().clone(),
        }
    }
}

/// The environment a transport program (`ssh`, `docker`, `kubectl`, `wine`) starts with:
/// Osprey's own, less whatever looks like a credential (`*KEY*`, `*TOKEN*`, `*SECRET*`,
/// `*PASSWORD*`, `*CREDENTIAL*`, the model providers' keys), which a server started
/// here would otherwise pass on to every command it runs. An entry's own `env` can still
/// set such a variable on purpose; `SSH_AUTH_SOCK` and the like stay, so agents and
/// configs keep working.
pub fn transport_env(env: &HashMap<String, String>) -> HashMap<String, String> {
    const SECRET_PARTS: [&str; 6] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"];
    env.iter()
        .filter(|(name, _)| {
            let upper = name.to_ascii_uppercase();
            !SECRET_PARTS.iter().any(|part| upper.contains(part))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What a remote start needs beside the request: the shell policy and the ids sent as
/// the process's `metadata`.
pub struct Launch<'a> {
    pub policy: &'a ShellEnvironmentPolicy,
    pub thread_id: String,
    pub call_id: &'a str,
}

impl Launch<'_> {
    fn remote_command(&self, request: ExecRequest, tty: bool) -> RemoteCommand {
        let mut argv = Vec::with_capacity(request.args.len() + 1);
        argv.push(request.program);
        argv.extend(request.args);
        RemoteCommand {
            argv,
            cwd: request.cwd,
            env: request.env.into_iter().collect(),
            env_policy: env_policy(self.policy),
            tty,
            metadata: serde_json::json!({
                "threadId": self.thread_id,
                "toolCallId": self.call_id,
            }),
        }
    }
}

/// The variables a remote command gets on top of what the server passes on under
/// `policy`: the non-interactive defaults and the policy's `set` table (this machine's
/// own environment never crosses over).
pub fn remote_command_env(policy: &ShellEnvironmentPolicy, tty: bool) -> BTreeMap<String, String> {
    let none = ShellEnvironmentPolicy {
        inherit: ShellEnvironmentInherit::None,
        ..policy.clone()
    };
    crate::tools::exec_env::command_env(&HashMap::new(), &none, tty)
        .into_iter()
        .collect()
}

/// `shell_environment_policy` as the exec server's `envPolicy`: which of the server's own
/// variables a command inherits.
pub fn env_policy(policy: &ShellEnvironmentPolicy) -> EnvPolicy {
    EnvPolicy {
        inherit: Some(
            match policy.inherit {
                ShellEnvironmentInherit::All => "all",
                ShellEnvironmentInherit::Core => "core",
                ShellEnvironmentInherit::None => "none",
            }
            .to_owned(),
        ),
        ignore_default_excludes: policy.ignore_default_excludes,
        exclude: policy.exclude.clone(),
        set: BTreeMap::new(),
        include_only: policy.include_only.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_local_environment_never_crosses_over() {
        let mut policy = ShellEnvironmentPolicy::default();
        policy.set.insert("FROM_SET".into(), "1".into());
        let env = remote_command_env(&policy, false);
        assert_eq!(env.get("FROM_SET").map(String::as_str), Some("1"));
        assert_eq!(env.get("TERM").map(String::as_str), Some("dumb"));
        assert!(!env.contains_key("PATH"), "{env:?}");
        assert!(!env.contains_key("HOME"), "{env:?}");
        let wire = env_policy(&policy);
        assert_eq!(wire.inherit.as_deref(), Some("all"));
    }

    #[test]
    fn credentials_stay_out_of_a_transport_programs_environment() {
        let env: HashMap<String, String> = [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "db_password",
            "PATH",
            "HOME",
            "SSH_AUTH_SOCK",
            "KUBECONFIG",
        ]
        .into_iter()
        .map(|k| (k.to_owned(), "v".to_owned()))
        .collect();
        let mut kept: Vec<String> = transport_env(&env).into_keys().collect();
        kept.sort();
        assert_eq!(kept, ["HOME", "KUBECONFIG", "PATH", "SSH_AUTH_SOCK"]);
    }
}
