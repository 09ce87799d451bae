//! The exec server: configuration shared by every connection, the error type handlers
//! return, and what `initialize` / `environment/info` report.

mod connection;
mod env;
pub(crate) mod fs;
mod platform;
mod processes;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use osprey_protocol::SandboxPolicy;
use osprey_sandboxing::{ExecRequest, LinuxBackend};
use serde_json::Value;

pub use connection::{OUTGOING_QUEUE, serve_lines};
pub use fs::Roots;
pub(crate) use platform::home_dir;

use crate::protocol::{EnvironmentInfo, code};
use crate::uri;

/// Everything the server decides for itself, whatever a client asks.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Reported as `executorVersion`: Osprey's real version.
    pub version: String,
    /// The server's working directory, reported as `cwd`.
    pub cwd: PathBuf,
    /// The user's home, reported as `userHomeDir`.
    pub home: Option<PathBuf>,
    /// Where fs calls may write (and read, when restricted).
    pub roots: Roots,
    /// The sandbox every process runs under.
    pub sandbox: SandboxPolicy,
    /// The Linux sandbox mechanism.
    pub backend: LinuxBackend,
    /// The `osprey` binary, re-entered as the Linux sandbox helper.
    pub helper_exe: PathBuf,
    /// The server's own environment, what `envPolicy.inherit` draws from.
    pub base_env: HashMap<String, String>,
    /// Requests of one connection handled at once (Codex's default: 1).
    pub concurrent_requests: usize,
}

impl ServerConfig {
    /// The request confined by the server's sandbox, and the `sandboxType` to report.
    pub(crate) fn confine(
        &self,
        request: ExecRequest,
        cwd: &Path,
    ) -> Result<(ExecRequest, &'static str), RpcError> {
        platform::refuse_unconfinable(&self.sandbox)?;
        if matches!(self.sandbox, SandboxPolicy::DangerFullAccess) {
            return Ok((request, "none"));
        }
        let sandbox_type = if cfg!(target_os = "macos") {
            "macosSeatbelt"
        } else {
            "linuxSeccomp"
        };
        let policy = self.policy_for_roots();
        osprey_sandboxing::confine(request, &policy, cwd, &self.helper_exe, self.backend)
            .map(|confined| {
                (
                    osprey_linux_sandbox::confine_in_child(confined),
                    sandbox_type,
                )
            })
            .map_err(|e| {
                RpcError::invalid_request(format!(
                    "the exec server could not sandbox this process: {e}"
                ))
            })
    }

    /// The configured policy with the server's write roots as the writable roots.
    pub(crate) fn policy_for_roots(&self) -> SandboxPolicy {
        match &self.sandbox {
            SandboxPolicy::WorkspaceWrite {
                writable_roots,
                network_access,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
            } => {
                let mut roots = writable_roots.clone();
                roots.extend(self.roots.write.iter().cloned());
                SandboxPolicy::WorkspaceWrite {
                    writable_roots: roots,
                    network_access: *network_access,
                    exclude_tmpdir_env_var: *exclude_tmpdir_env_var,
                    exclude_slash_tmp: *exclude_slash_tmp,
                }
            }
            other => other.clone(),
        }
    }

    /// What `initialize` and `environment/info` report.
    pub fn environment_info(&self) -> EnvironmentInfo {
        let temp = std::env::temp_dir();
        EnvironmentInfo {
            shell: Some(platform::default_shell(&self.base_env)),
            executor_version: Some(self.version.clone()),
            cwd: Some(uri::from_path(&self.cwd)),
            user_home_dir: self.home.as_deref().map(uri::from_path),
            platform_os: Some(std::env::consts::OS.to_owned()),
            prepend_path_dirs: Vec::new(),
            temporary_directories: Vec::new(),
            temp_dir: Some(uri::from_path(&temp)),
            capabilities: capabilities(),
        }
    }
}

/// The capabilities Osprey's server really has. Discovery V2 is served (an empty
/// inventory: Osprey has no plugins or global skills to report).
fn capabilities() -> BTreeMap<String, bool> {
    [
        ("capabilityDiscoveryV2", true),
        ("capabilityDiscoverySandbox", false),
        ("fsWatchMissing", false),
        ("environmentConfigRead", false),
        ("networkProxyLaunch", false),
        ("credentialMasking", false),
        ("fileWriteStreaming", false),
        ("sandboxedFileStreaming", false),
        ("windowsMxc", false),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// An error reply: code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub(crate) fn invalid_request(message: impl Into<String>) -> Self {
        Self {
            code: code::INVALID_REQUEST,
            message: message.into(),
        }
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            code: code::INVALID_PARAMS,
            message: message.into(),
        }
    }

    pub(crate) fn fs(message: impl Into<String>) -> Self {
        Self {
            code: code::FS_ERROR,
            message: message.into(),
        }
    }

    pub(crate) fn method_not_found(method: &str) -> Self {
        Self {
            code: code::METHOD_NOT_FOUND,
            message: format!("osprey exec-server does not implement `{method}`"),
        }
    }
}

/// Params parsed as `T`, or -32602 with serde's words (``missing field `maxDepth` ``).
pub(crate) fn parse_params<T: serde::de::DeserializeOwned>(
    params: Option<Value>,
) -> Result<T, RpcError> {
    let value = params.unwrap_or(Value::Object(serde_json::Map::new()));
    serde_json::from_value(value).map_err(|e| {
        let text = e.to_string();
        // serde_json appends " at line 1 column N", meaningless for an already-parsed value.
        let text = text.split(" at line ").next().unwrap_or(&text).to_owned();
        RpcError::invalid_params(text)
    })
}
