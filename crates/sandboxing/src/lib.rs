//! Confining the commands Osprey runs: a policy and a working directory turn an
//! [`ExecRequest`] into another request that runs the same command inside a sandbox, and
//! a failed command's output is checked for signs that the sandbox stopped it.
//!
//! This crate never starts a process. The `process` crate spawns whatever request comes
//! out of here, so the same timeout, output caps and process-group kill apply to
//! sandboxed and unsandboxed commands alike.
//!
//! # Policies
//!
//! A coarse [`SandboxPolicy`] (`read-only`, `workspace-write`, `danger-full-access`) and
//! the working directory convert into a [`FileSystemPolicy`]: absolute paths, each
//! `none`, `read` or `write`, where the most specific path wins. With the network switch
//! it forms a [`Confinement`], the one value every backend enforces. Split policies
//! (`/repo` write, `/repo/secrets` none, `/repo/secrets/public` write) are expressed
//! directly as a [`FileSystemPolicy`]. Inside every writable root an existing `.git`
//! (or the `gitdir:` target of a `.git` file) and `.osprey` stay read-only.
//!
//! # Backends
//!
//! - **Linux, Landlock** ([`confine_linux`]): the request becomes a call of the `osprey`
//!   binary under the name `osprey-linux-sandbox` (see [`helper_args`] for its command
//!   line). The helper sets `no_new_privs`, makes read-only carve-outs read-only bind
//!   mounts in a private mount namespace, applies Landlock rules planned by
//!   [`landlock_plan`] and a seccomp filter, and execs the command.
//! - **Linux, bubblewrap**: policies Landlock cannot express (a `none` path under a
//!   readable one) are enforced with mounts by `bwrap` ([`bwrap_args`]); the helper runs
//!   again inside it for seccomp.
//! - **macOS** ([`confine_macos`]): a Seatbelt profile ([`seatbelt_profile`]) run by
//!   `/usr/bin/sandbox-exec`.
//!
//! Every backend fails closed: if a policy cannot be enforced, the command does not run.
//!
//! # Denials
//!
//! [`detect_denial`] reads a failed command's output and returns a short note for the
//! model when the failure looks like the sandbox's doing.

mod bwrap;
mod command;
mod denial;
mod error;
mod fs_policy;
pub mod helper_args;
mod linux;
mod probe;
mod seatbelt;

use std::path::Path;

pub use bwrap::{bwrap_args, bwrap_supports_argv0};
pub use command::SandboxCommand;
pub use denial::{SIGSYS_EXIT, detect_denial};
pub use error::SandboxError;
pub use fs_policy::{
    Confinement, FileSystemPolicy, FsAccess, FsEntry, PROTECTED_NAMES, WRITABLE_DEVICES,
    protected_subpaths,
};
pub use linux::{
    LandlockPlan, LinuxBackend, NeedsBubblewrap, confine_linux, confine_linux_with, find_bwrap,
    landlock_plan,
};
pub use osprey_process::ExecRequest;
pub use osprey_protocol::{SandboxMode, SandboxPolicy};
pub use probe::platform_problems;
pub use seatbelt::{SANDBOX_EXEC, confine_macos, seatbelt_profile, seatbelt_profile_for};

/// Confines `request` with this platform's sandbox. `helper_exe` is the `osprey` binary
/// (used on Linux only); `backend` chooses the Linux mechanism.
pub fn confine(
    request: ExecRequest,
    policy: &SandboxPolicy,
    cwd: &Path,
    helper_exe: &Path,
    backend: LinuxBackend,
) -> Result<ExecRequest, SandboxError> {
    if matches!(policy, SandboxPolicy::DangerFullAccess) {
        return Ok(request);
    }
    if cfg!(target_os = "linux") {
        match Confinement::from_sandbox_policy(policy, cwd, &request.env) {
            None => Ok(request),
            Some(c) => confine_linux_with(request, &c, helper_exe, backend),
        }
    } else if cfg!(target_os = "macos") {
        confine_macos(request, policy, cwd)
    } else {
        Err(SandboxError::UnsupportedPlatform {
            os: std::env::consts::OS,
        })
    }
}
