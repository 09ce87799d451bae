//! Work a request asks to be done in the child between `fork` and `exec`.
//!
//! The sandbox uses this to confine a command in the process that becomes it, instead of
//! starting a helper program that confines itself and then execs the command: the helper
//! is the `osprey` binary, and starting it a second time costs more than the confinement.
//!
//! The step runs in a child forked from a multi-threaded process, so it must only make
//! system calls: everything it needs (paths as C strings, compiled filters, descriptors)
//! is prepared before the fork by whoever builds the [`ChildSetup`]. A step may end in an
//! `execve` of its own and never return; if it returns an error, the spawn fails with
//! that error number (all the standard library passes back from a pre-exec step).

use std::fmt;
use std::io;
use std::sync::Arc;

/// The step itself. It runs in the forked child and must only make system calls.
pub type ChildStep = dyn Fn() -> io::Result<()> + Send + Sync;

/// A step to run in the child just before `exec`, after the child has its own session,
/// its working directory and its standard streams.
#[derive(Clone)]
pub struct ChildSetup {
    name: &'static str,
    step: Arc<ChildStep>,
}

impl ChildSetup {
    /// A step called `name` (shown in debug output).
    ///
    /// # Safety
    ///
    /// `step` runs between `fork` and `exec` in a copy of a multi-threaded process: it
    /// must not allocate, take locks, or touch state shared with other threads; only
    /// async-signal-safe system calls on data prepared beforehand.
    pub unsafe fn new(name: &'static str, step: Arc<ChildStep>) -> Self {
        Self { name, step }
    }

    /// Adds the step to a standard-library command (for a spawner outside this crate,
    /// such as a test driver), after the steps already there. Unix only.
    #[cfg(unix)]
    pub fn install_std(&self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt as _;
        let step = Arc::clone(&self.step);
        // SAFETY: the constructor's contract: the step only makes system calls on data
        // prepared before the fork.
        unsafe {
            cmd.pre_exec(move || step());
        }
    }

    /// The name given at construction.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Adds the step to `cmd`, after the steps already there.
    #[cfg(unix)]
    pub(crate) fn install(&self, cmd: &mut tokio::process::Command) {
        let step = Arc::clone(&self.step);
        // SAFETY: the constructor's contract: the step only makes system calls on data
        // prepared before the fork.
        unsafe {
            cmd.pre_exec(move || step());
        }
    }
}

impl fmt::Debug for ChildSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildSetup")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Two setups are equal when they share one step: requests compare equal only when they
/// would do the same work in the child.
impl PartialEq for ChildSetup {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.step, &other.step)
    }
}

impl Eq for ChildSetup {}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::{ExecExpiration, ExecRequest, OutputCaps, SpawnError, run_to_completion};

    fn caps() -> OutputCaps {
        OutputCaps {
            head_bytes: 4096,
            tail_bytes: 4096,
        }
    }

    /// The step runs in the child after it became a session leader (the order the sandbox
    /// relies on), and a step that fails keeps the program from starting.
    #[tokio::test]
    async fn the_step_runs_in_the_session_leader_and_its_failure_stops_the_spawn() {
        // SAFETY: getsid/getpid are async-signal-safe and the step touches nothing else.
        let leader = unsafe {
            ChildSetup::new(
                "test",
                Arc::new(|| {
                    if libc::getsid(0) == libc::getpid() {
                        Ok(())
                    } else {
                        Err(io::Error::from_raw_os_error(libc::EPERM))
                    }
                }),
            )
        };
        let request = ExecRequest::new("sh", "/")
            .env("PATH", "/usr/bin:/bin")
            .args(["-c", "echo started"])
            .child_setup(leader);
        let outcome = run_to_completion(request, ExecExpiration::never(), caps(), None)
            .await
            .unwrap();
        assert_eq!(outcome.exit_code, Some(0));

        // SAFETY: the step makes no call at all.
        let refuse = unsafe {
            ChildSetup::new(
                "test",
                Arc::new(|| Err(io::Error::from_raw_os_error(libc::EACCES))),
            )
        };
        let request = ExecRequest::new("sh", "/")
            .env("PATH", "/usr/bin:/bin")
            .args(["-c", "echo started"])
            .child_setup(refuse);
        let err = run_to_completion(request, ExecExpiration::never(), caps(), None)
            .await
            .err()
            .unwrap();
        assert!(matches!(err, SpawnError::Os { .. }), "{err}");
        assert!(err.to_string().contains("Permission denied"), "{err}");
    }
}
