//! The [`Sandbox`] of a thread whose commands run on an exec server: the server confines
//! every process with its own sandbox whatever the agent asks, so nothing is wrapped here,
//! nothing can be run outside it, and denials are the server's verdict (`sandboxDenied`,
//! carried by each attempt).

use crate::tools::orchestrator::Sandbox;
use osprey_process::ExecRequest;
use osprey_protocol::SandboxPolicy;
use std::path::Path;

pub struct RemoteSandbox;

impl Sandbox for RemoteSandbox {
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
