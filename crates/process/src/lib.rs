//! Starting and stopping other programs: the only crate in Osprey that spawns processes.
//!
//! Everything the agent runs, from the model's shell commands to helper binaries, goes
//! through here, so the rules for doing it safely live in one place:
//!
//! - **Nothing is inherited by accident.** An [`ExecRequest`] names the program, its
//!   arguments, working directory, optional `argv[0]`, and its *complete* environment;
//!   the child's environment is cleared before those variables are set.
//! - **Every child leads its own session**, and so its own process group whose id is its
//!   pid. It has no controlling terminal of ours (it cannot read the user's keystrokes
//!   or be stopped for trying), and one `SIGKILL` to the group stops it together with
//!   everything it started.
//! - **Output is bounded.** [`OutputCaps`] keeps the first `head_bytes` and the last
//!   `tail_bytes` of a stream and counts the rest ([`CappedOutput`]); a command printing a
//!   gigabyte costs a megabyte.
//! - **Nothing outlives its owner.** Dropping a running future or an
//!   [`InteractiveProcess`] kills the process group; readers stop after a short drain
//!   deadline even if a grandchild that escaped the group keeps a pipe open.
//!
//! # One-shot commands
//!
//! [`run_to_completion`] starts a command with stdin from `/dev/null` (or, with
//! [`run_to_completion_with_stdin`], fed from a buffer), reads stdout and
//! stderr concurrently, and combines them in arrival order (the "aggregated output"),
//! passing every chunk live to an optional [`OutputSink`]. An [`ExecExpiration`] decides
//! when it must stop early: a timeout, a [`CancellationToken`](tokio_util::sync::CancellationToken),
//! or both. The result is an [`ExecOutcome`] with the exit code or signal, whether it
//! timed out or was cancelled, the wall time, and the capped output.
//!
//! The timeout counts active time only. [`ExecExpiration::timeout_control`] returns a
//! [`TimeoutControl`] whose [`suspend`](TimeoutControl::suspend) hands out a guard; while
//! any guard lives the clock stands still. The orchestrator holds one while an approval
//! prompt waits for a person, so the command is not charged for that time.
//!
//! ```no_run
//! # async fn demo() -> Result<(), osprey_process::SpawnError> {
//! use std::time::Duration;
//! use osprey_process::{run_to_completion, ExecExpiration, ExecRequest, OutputCaps};
//!
//! let req = ExecRequest::new("/bin/sh", "/tmp").args(["-c", "echo hi; echo oops >&2"]);
//! let outcome = run_to_completion(
//!     req,
//!     ExecExpiration::timeout(Duration::from_secs(10)),
//!     OutputCaps::default(),
//!     None,
//! )
//! .await?;
//! assert_eq!(outcome.output_lossy(), "hi\noops\n");
//! # Ok(()) }
//! ```
//!
//! # Interactive sessions
//!
//! [`InteractiveProcess`] backs the model's "unified exec" tools: start a long-running
//! command, look at what it printed after a while, type into it, look again. It runs on
//! pipes or, with `tty`, on a pseudo-terminal (allocated with portable-pty, 24 × 80 by
//! default). Background tasks read output continuously into a bounded buffer;
//! [`collect_output`](InteractiveProcess::collect_output) returns what arrived since the
//! previous call, waiting up to a given time but returning as soon as the process has
//! exited and its output is drained. [`write_stdin`](InteractiveProcess::write_stdin)
//! types into it; [`kill`](InteractiveProcess::kill) and `Drop` kill the process group.
//! Terminal I/O goes through Tokio's reactor on a non-blocking descriptor, so no blocking
//! thread exists that could be left behind.
//!
//! # Streaming
//!
//! [`StreamingProcess`] reports a child's output chunk by chunk through a channel, each
//! chunk tagged stdout, stderr or terminal, then its exit, then the end of its streams.
//! The exec server forwards these to its client as they happen.
//!
//! # Errors
//!
//! A program that cannot be started gives a [`SpawnError`] naming the program, the working
//! directory and the reason in words: ``could not start `foo` in /x: No such file or
//! directory; check the program name, …``. A command that starts and then fails is not an
//! error: its exit code is in the outcome.
//!
//! A request may carry a [`ChildSetup`]: system calls to make in the child between fork and
//! exec (the sandbox confines commands this way, ending the step in its own `execve`).
//!
//! # Windows
//!
//! The crate builds for Windows too (the exec server runs there; see `docs/windows.md`).
//! A child is created suspended, put in a Job Object of its own, then resumed, so killing
//! the job ends the child and everything it started — the counterpart of the process
//! group; interrupt and terminate kill the job too, Windows having no signals. The job is
//! kill-on-close, so once its owner is done with it (a one-shot command returned, a session
//! was dropped) whatever is still in it is ended, also background processes that on Unix
//! would outlive a leader that had already been reaped. There is no
//! terminal yet (a `tty` request fails with [`SpawnError::Terminal`]), and a request with a
//! [`ChildSetup`] or an `arg0` other than the program is refused, never run without it.
//!
//! `unsafe` is confined to the `sys` module (Unix: session setup between fork and exec,
//! `killpg`, descriptor duplication), `job` (Windows: job objects, resuming the child) and
//! `child_setup` (adding the step), each use with its reasoning.

#[expect(
    unsafe_code,
    reason = "a step between fork and exec can only be added through an unsafe API"
)]
mod child_setup;
mod expiration;
mod foreground;
mod interactive;
#[cfg(windows)]
#[expect(
    unsafe_code,
    reason = "job objects and resuming a suspended child are only reachable through the Win32 API"
)]
mod job;
mod output;
mod piped;
mod pty;
mod request;
mod run;
mod streaming;
#[cfg(unix)]
#[expect(
    unsafe_code,
    reason = "setsid/TIOCSCTTY between fork and exec, killpg and fcntl have no safe API"
)]
mod sys;
mod tree;

pub use child_setup::{ChildSetup, ChildStep};
pub use expiration::{ExecExpiration, Expiry, TimeoutControl, TimeoutSuspension};
pub use foreground::run_in_foreground;
pub use interactive::{
    CollectResult, InteractiveProcess, ProcessExit, SESSION_DRAIN_AFTER_EXIT, STDIN_WRITE_TIMEOUT,
    SessionOptions, StdinError,
};
pub use output::{CappedOutput, HeadTailBuffer, OutputCaps, OutputSink, omission_marker};
pub use piped::{PipedChild, spawn_piped};
pub use pty::TerminalSize;
pub use request::{ExecRequest, SpawnError};
pub use run::{
    DRAIN_AFTER_EXIT, DRAIN_AFTER_KILL, ExecOutcome, run_to_completion,
    run_to_completion_with_stdin,
};
pub use streaming::{
    OutputStream, StreamEvent, StreamingOptions, StreamingProcess,
    WRITE_TIMEOUT as STREAM_WRITE_TIMEOUT, WriteOutcome,
};
