//! The [`Sandbox`] of a thread whose commands run on an exec server: the server confines
//! every process with its own sandbox whatever the agent asks, so nothing is wrapped here,
//! nothing can be run outside it, and denials are the server's verdict (`sandboxDenied`,
//! carried by each attempt). What a patch may write without asking is still judged here,
//! by the thread's own policy and permission profile (the same rules as locally); the
//! server's roots then refuse anything outside them.

use crate::sandbox::PlatformSandbox;
use crate::tools::orchestrator::Sandbox;
use osprey_process::ExecRequest;
use osprey_protocol::SandboxPolicy;
use osprey_sandboxing::FileSystemPolicy;
use std::collections::HashMap;
use std::path::Path;

pub struct RemoteSandbox {
    /// The thread's own sandbox settings, for [`Sandbox::filesystem`] only.
    pub rules: PlatformSandbox,
}

impl Sandbox for RemoteSandbox {
    fn filesystem(
        &self,
        policy: &SandboxPolicy,
        cwd: &Path,
        env: &HashMap<String, String>,
    ) -> Result<FileSystemPolicy, String> {
        self.rules.filesystem(policy, cwd, env)
    }

    fn is_active(&self, _policy: &SandboxPolicy) -> bool {
        true
    }

    fn confine(
        &self,
        request: ExecRequest,
        _policy: &SandboxPolicy,
        _cwd: &Path,
    ) -> Result<ExecRequest, String> {
        Ok(request)
    }

    fn allows_unsandboxed(&self) -> bool {
        false
    }

    fn denial(&self, _: &SandboxPolicy, _: &Path, _: Option<i32>, _: &str) -> Option<String> {
        None
    }
}

/// The denial note for a remote attempt the server judged blocked.
pub fn server_denial(environment: &str, denied: bool) -> Option<String> {
    denied.then(|| format!("the sandbox of the exec server of environment `{environment}`"))
}
