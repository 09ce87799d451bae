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
//! (or the `gitdir:` target of a `.git` file) and `.osprey` stay read-only, and missing
//! ones cannot be created. Configuration adds [`SandboxSettings`]: the Linux backend and a
//! named [`PermissionProfile`] (Codex's `[permissions.<name>]`) that replaces the coarse
//! policy's filesystem view, resolved per command.
//!
//! # Backends
//!
//! - **Linux, Landlock** ([`confine_linux`]): the request becomes a call of the `osprey`
//!   binary under the name `osprey-linux-sandbox` (see [`helper_args`] for its command
//!   line). The helper sets `no_new_privs`, builds a private mount namespace in which
//!   everything but the writable paths is read-only (so metadata changes fail too) and the
//!   carve-outs are read-only again, applies Landlock rules planned by [`landlock_plan`],
//!   guards the creation of `.git`/`.osprey`, installs a seccomp filter, and execs the
//!   command.
//! - **Linux, bubblewrap**: policies Landlock cannot express (a `none` path under a
//!   readable one), or every policy on a kernel without Landlock under the `auto` backend
//!   ([`landlock_abi`]), are enforced with mounts by `bwrap` ([`bwrap_args`]); the helper
//!   runs again inside it for the guard and seccomp.
//! - **macOS** ([`confine_macos`]): a Seatbelt profile ([`seatbelt_profile`]) run by
//!   `/usr/bin/sandbox-exec`.
//!
//! Every backend fails closed: if a policy cannot be enforced, the command does not run.
//!
//! # Denials
//!
//! [`detect_denial_in`] reads a failed command's output and returns a short note for the
//! model only when the failure is the sandbox's doing: a path it names is outside the
//! policy and the machine itself would allow the access, the helper said so, or the
//! network is off and a network call failed. Otherwise it is an ordinary failure.

mod bwrap;
mod command;
mod denial;
mod error;
mod fs_policy;
pub mod helper_args;
mod linux;
mod probe;
mod seatbelt;
mod settings;

use std::path::Path;

pub use bwrap::{bwrap_args, bwrap_supports_argv0};
pub use command::SandboxCommand;
pub use denial::{DenialContext, GUARD_REFUSAL, SIGSYS_EXIT, detect_denial, detect_denial_in};
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
pub use probe::{landlock_abi, platform_problems, platform_problems_for};
pub use seatbelt::{
    SANDBOX_EXEC, confine_macos, confine_macos_with, seatbelt_profile, seatbelt_profile_for,
};
pub use settings::{
    MINIMAL_PATHS, PermissionPath, PermissionProfile, PermissionRule, SandboxSettings,
};

/// Confines `request` with this platform's sandbox under a coarse policy. `helper_exe` is
/// the `osprey` binary (used on Linux only); `backend` chooses the Linux mechanism. With a
/// permission profile, use [`SandboxSettings::confine`].
pub fn confine(
    request: ExecRequest,
    policy: &SandboxPolicy,
    cwd: &Path,
    helper_exe: &Path,
    backend: LinuxBackend,
) -> Result<ExecRequest, SandboxError> {
    SandboxSettings {
        linux_backend: backend,
        permissions: None,
    }
    .confine(request, policy, cwd, helper_exe)
}
