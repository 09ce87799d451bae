//! The Linux implementation: one function that confines the current process and execs.

mod exec;
mod failure;
mod guard;
mod in_child;
mod mounts;
mod notify;
mod ruleset;
mod seccomp;
mod supervisor;

use std::convert::Infallible;
use std::path::PathBuf;

use osprey_sandboxing::helper_args::{HelperInvocation, HelperMode};
use osprey_sandboxing::{bwrap_args, bwrap_supports_argv0, landlock_plan};

use crate::EXIT_SANDBOX_FAILED;
use guard::Roots;

pub(crate) use in_child::confine_in_child;

/// Why the helper could not confine or start the command. Nothing here ever falls back
/// to running the command unconfined.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HelperError {
    #[error(
        "this policy needs bubblewrap ({reason} at {}) but the helper was started for \
         Landlock; start it through confine_linux so the backend is chosen for the policy",
        path.display()
    )]
    NeedsBubblewrap { path: PathBuf, reason: String },
    #[error("could not set no_new_privs: {0}")]
    NoNewPrivs(std::io::Error),
    #[error(
        "could not set up the sandbox's read-only mounts at {} ({step}: {source}); the \
         sandbox needs a private mount namespace, which requires user namespaces when not \
         root (check `sysctl kernel.unprivileged_userns_clone` and \
         `user.max_user_namespaces`), and Linux 5.12 or later",
        path.display()
    )]
    ReadOnlyMount {
        path: PathBuf,
        step: &'static str,
        source: std::io::Error,
    },
    #[error(
        "Landlock is not available on this kernel ({status}), so the filesystem policy \
         cannot be enforced and the command was not run. Use Linux 5.13 or later with \
         `landlock` in the `lsm=` boot list, or the bubblewrap backend (install `bwrap`, \
         then `osprey sandbox --backend bubblewrap`)"
    )]
    LandlockUnavailable { status: String },
    #[error("could not apply the Landlock rules: {0}")]
    Landlock(String),
    #[error("could not install the seccomp filter: {0}")]
    Seccomp(String),
    #[error(
        "could not start the guard that keeps .git and .osprey from being created in the \
         writable roots ({0}); the command was not run. The guard needs seccomp user \
         notifications (Linux 5.9 or later)"
    )]
    Guard(String),
    #[error(
        "user namespaces are disabled ({setting}), so bubblewrap cannot build the sandbox; \
         the command was not run. Enable them, or use a policy Landlock can express"
    )]
    NoUserNamespaces { setting: String },
    #[error("could not find the helper's own executable to run inside bubblewrap: {0}")]
    CurrentExe(std::io::Error),
    #[error("cannot run `{program}`: {source}")]
    Exec {
        program: String,
        source: std::io::Error,
    },
    #[error("argument `{0}` contains a NUL byte")]
    NulByte(String),
}

impl HelperError {
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            Self::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
            Self::Exec { .. } => 126,
            _ => EXIT_SANDBOX_FAILED,
        }
    }
}

/// Confines this process as `invocation` says and execs its command. Returns only on
/// failure.
pub(crate) fn confine_and_exec(invocation: HelperInvocation) -> HelperError {
    match try_confine_and_exec(invocation) {
        Ok(never) => match never {},
        Err(e) => e,
    }
}

fn try_confine_and_exec(invocation: HelperInvocation) -> Result<Infallible, HelperError> {
    let HelperInvocation {
        mode,
        confinement,
        command,
    } = invocation;
    match mode {
        HelperMode::Landlock => {
            let plan = landlock_plan(&confinement.filesystem).map_err(|why| {
                HelperError::NeedsBubblewrap {
                    path: why.path,
                    reason: why.reason,
                }
            })?;
            exec::set_no_new_privs()?;
            mounts::build_view(&plan.write, &plan.readonly_mounts)?;
            // The policy's Landlock layer comes before the fork, so the supervisor that
            // creates names for the command is bound by it too (a magic link such as
            // `/proc/<pid>/cwd` of an outside process must not take it anywhere the
            // command could not go). The fork happens when a root lacks `.git` or
            // `.osprey`; the parent supervises.
            ruleset::apply(&plan, confinement.network)?;
            let guard = Roots::of(&confinement.filesystem)
                .map(guard::start)
                .transpose()?;
            if let Some(command_side) = guard {
                command_side.hand_over(ruleset::deny_creation()?)?;
            }
            seccomp::apply(confinement.network)?;
            exec::exec(&command)
        }
        HelperMode::Inner => {
            exec::set_no_new_privs()?;
            let guard = Roots::of(&confinement.filesystem)
                .map(guard::start)
                .transpose()?;
            if let Some(command_side) = guard {
                command_side.hand_over(ruleset::deny_creation()?)?;
            }
            seccomp::apply(confinement.network)?;
            exec::exec(&command)
        }
        HelperMode::BubblewrapOuter { bwrap } => {
            mounts::check_user_namespaces(&bwrap)?;
            let helper = std::env::current_exe().map_err(HelperError::CurrentExe)?;
            let cwd = std::env::current_dir().map_err(HelperError::CurrentExe)?;
            let args = bwrap_args(
                &confinement,
                &cwd,
                &helper,
                bwrap_supports_argv0(&bwrap),
                &command,
            );
            let mut argv = vec![bwrap.clone().into_os_string()];
            argv.extend(args);
            exec::exec_path(&bwrap, &argv)
        }
    }
}
