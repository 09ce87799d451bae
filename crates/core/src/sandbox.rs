//! The platform sandbox behind the orchestrator's [`Sandbox`] seam.
//!
//! Commands under `read-only` and `workspace-write` are rewritten by `osprey-sandboxing` to run
//! through the `osprey-linux-sandbox` helper (Landlock + seccomp, or bubblewrap for split
//! policies) — the `osprey` binary re-entered under another name — or through Seatbelt on
//! macOS. Without a known helper executable nothing sandboxed can run, and the command is
//! refused with the reason: the sandbox fails closed.

use crate::tools::orchestrator::Sandbox;
use osprey_process::ExecRequest;
use osprey_protocol::SandboxPolicy;
use osprey_sandboxing::LinuxBackend;
use std::path::{Path, PathBuf};

pub struct PlatformSandbox {
    helper_exe: Option<PathBuf>,
}

impl PlatformSandbox {
    pub fn new(helper_exe: Option<PathBuf>) -> Self {
        Self { helper_exe }
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
        osprey_sandboxing::confine(request, policy, cwd, helper, LinuxBackend::Auto)
            .map_err(|e| e.to_string())
    }

    fn denial(
        &self,
        policy: &SandboxPolicy,
        exit_code: Option<i32>,
        output: &str,
    ) -> Option<String> {
        osprey_sandboxing::detect_denial(policy, exit_code, output)
    }
}
