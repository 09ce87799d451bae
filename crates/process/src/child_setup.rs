//! Work a request asks to be done in the child between `fork` and `exec`.
//!
//! The sandbox uses this to confine a command in the process that becomes it, instead of
//! starting a helper program that confines itself and then execs the command: the helper
//! is the `osprey` binary, and starting it a second time costs more than the confinement.
//!
//! The step runs in a child forked from a multi-threaded process, so it must only make
//! system calls: everything it needs (paths as C strings, compiled filters, descriptors)
//! is prepared before the fork by whoever builds the [`ChildSetup`]. When the step fails,
//! only an `i32` travels back to the parent (the standard library's spawn reports the
//! error number of a failed pre-exec step); [`ChildSetup::explain`] turns that number back
//! into words.

use std::fmt;
use std::io;
use std::sync::Arc;

/// The step itself. It runs in the forked child and must only make system calls.
pub type ChildStep = dyn Fn() -> io::Result<()> + Send + Sync;

/// Reads the error number a failed step reported as words, or `None` when the number is
/// an ordinary error of the spawn itself.
pub type ExplainFailure = dyn Fn(i32) -> Option<String> + Send + Sync;

/// A step to run in the child just before `exec`, after the child has its own session,
/// its working directory and its standard streams.
#[derive(Clone)]
pub struct ChildSetup {
    name: &'static str,
    step: Arc<ChildStep>,
    explain: Arc<ExplainFailure>,
}

impl ChildSetup {
    /// A step called `name` (shown in debug output), and how to read its failures.
    ///
    /// # Safety
    ///
    /// `step` runs between `fork` and `exec` in a copy of a multi-threaded process: it
    /// must not allocate, take locks, or touch state shared with other threads; only
    /// async-signal-safe system calls on data prepared beforehand.
    pub unsafe fn new(
        name: &'static str,
        step: Arc<ChildStep>,
        explain: Arc<ExplainFailure>,
    ) -> Self {
        Self {
            name,
            step,
            explain,
        }
    }

    /// What a failure reported as `errno` meant, when this step reported it.
    pub fn explain(&self, errno: i32) -> Option<String> {
        (self.explain)(errno)
    }

    /// The step, for a spawner outside this crate (a test driver using the standard
    /// library's `pre_exec`). Calling it anywhere but between `fork` and `exec` applies it
    /// to the calling process.
    pub fn step(&self) -> Arc<ChildStep> {
        Arc::clone(&self.step)
    }

    /// The name given at construction.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Adds the step to `cmd`, after the steps already there.
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
