//! [`run_to_completion`]: start a command (optionally feeding it stdin), stream and cap its
//! combined output, stop it (and everything it started) when its expiration fires.

use std::process::ExitStatus;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::expiration::{ExecExpiration, Expiry};
use crate::output::{CappedOutput, HeadTailBuffer, OutputCaps, OutputSink};
use crate::request::{self, ExecRequest, SpawnError, Stdin};
use crate::tree::ProcessTree;

/// How long to keep reading after the command exited by itself. Pipes normally close at
/// once; a background process that inherited them may keep them open forever, and it is
/// left running (the user may have meant to start it), but we stop waiting for it.
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// How long to keep reading after the process group was killed. Everything in the group
/// is dead by then; only a process that left the group (a daemon) could still hold a pipe.
pub const DRAIN_AFTER_KILL: Duration = Duration::from_millis(500);

/// How long to wait for the killed leader to be reaped before giving up on its status.
const REAP_AFTER_KILL: Duration = Duration::from_secs(5);

const READ_CHUNK: usize = 16 * 1024;

/// How a finished command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    /// The exit code, when the command exited rather than being killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that ended the command, if one did.
    pub signal: Option<i32>,
    /// The timeout fired and the process group was killed.
    pub timed_out: bool,
    /// The cancellation token fired and the process group was killed.
    pub cancelled: bool,
    /// Wall-clock time from spawn to the end of output collection (suspended time
    /// included).
    pub duration: Duration,
    /// Stdout and stderr combined in the order they arrived, capped.
    pub output: CappedOutput,
}

impl ExecOutcome {
    /// Exit code 0 and neither timed out nor cancelled.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled
    }

    /// The combined output as text (lossy UTF-8, omission marker where bytes were dropped).
    pub fn output_lossy(&self) -> String {
        self.output.to_lossy_string()
    }
}

/// Runs `req` to the end and returns its combined, capped output.
///
/// The child gets a null stdin and a session (and process group) of its own. Stdout and
/// stderr are read concurrently; every chunk goes to `on_output` as it arrives and into a
/// head+tail buffer bounded by `caps`. When `expiration` fires, `SIGKILL` goes to the whole
/// process group, output is drained for at most [`DRAIN_AFTER_KILL`], and the outcome
/// says `timed_out` or `cancelled`. A token already cancelled before the call returns a
/// cancelled outcome without starting anything.
///
/// If the returned future is dropped before it completes, the process group is killed.
pub async fn run_to_completion(
    req: ExecRequest,
    expiration: ExecExpiration,
    caps: OutputCaps,
    on_output: Option<OutputSink>,
) -> Result<ExecOutcome, SpawnError> {
    run(req, None, expiration, caps, on_output).await
}

/// [`run_to_completion`] with `input` as the child's stdin: written while the output is
/// read (so neither side can block the other), then closed, so the child sees its end.
/// For data too large for an argument: Linux refuses a single argument over 128 KiB.
/// A child that exits or closes stdin without reading all of it is not an error; its exit
/// status says what it made of that.
pub async fn run_to_completion_with_stdin(
    req: ExecRequest,
    input: Vec<u8>,
    expiration: ExecExpiration,
    caps: OutputCaps,
    on_output: Option<OutputSink>,
) -> Result<ExecOutcome, SpawnError> {
    run(req, Some(input), expiration, caps, on_output).await
}

async fn run(
    req: ExecRequest,
    input: Option<Vec<u8>>,
    expiration: ExecExpiration,
    caps: OutputCaps,
    mut on_output: Option<OutputSink>,
) -> Result<ExecOutcome, SpawnError> {
    let start = Instant::now();
    if expiration.is_cancelled() {
        return Ok(ExecOutcome {
            exit_code: None,
            signal: None,
            timed_out: false,
            cancelled: true,
            duration: start.elapsed(),
            output: CappedOutput::default(),
        });
    }

    let stdin = if input.is_some() {
        Stdin::Piped
    } else {
        Stdin::Null
    };
    let mut cmd = request::command(&req, stdin);
    let (mut child, tree) = ProcessTree::spawn(&req, &mut cmd)?;
    drop(cmd);
    let mut feeding = input.is_some();
    let mut feed = std::pin::pin!(feed_stdin(child.stdin.take(), input.unwrap_or_default()));
    let mut group = GroupGuard { tree, armed: true };
    tracing::debug!(program = %req.program, pgid = ?group.tree.pid(), "spawned");

    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(SpawnError::Os {
            program: req.program.clone(),
            cwd: req.cwd.clone(),
            reason: "its output pipes were not set up".to_string(),
            source: std::io::Error::other("stdout or stderr missing after spawn"),
        });
    };

    let mut buffer = HeadTailBuffer::new(caps);
    let mut out_buf = vec![0u8; READ_CHUNK];
    let mut err_buf = vec![0u8; READ_CHUNK];
    let (mut out_open, mut err_open) = (true, true);
    let mut status: Option<ExitStatus> = None;
    let mut expired: Option<Expiry> = None;
    let mut drain_until: Option<tokio::time::Instant> = None;
    let mut expiry = std::pin::pin!(expiration.expired());

    let mut on_chunk = |chunk: &[u8]| {
        buffer.push(chunk);
        if let Some(sink) = on_output.as_mut() {
            sink.emit(chunk);
        }
    };

    while out_open || err_open || status.is_none() {
        let deadline = drain_until;
        tokio::select! {
            reason = &mut expiry, if expired.is_none() && status.is_none() => {
                expired = Some(reason);
                group.kill();
                drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_KILL);
            }
            () = sleep_until_opt(deadline), if deadline.is_some() => {
                break;
            }
            res = child.wait(), if status.is_none() => {
                match res {
                    Ok(st) => status = Some(st),
                    Err(err) => {
                        tracing::warn!(program = %req.program, %err, "could not wait for child");
                        group.kill();
                    }
                }
                // The leader is reaped: its pid may be reused, so never signal it again.
                group.armed = false;
                if drain_until.is_none() {
                    drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
                }
                if status.is_none() {
                    break;
                }
            }
            () = &mut feed, if feeding => feeding = false,
            res = stdout.read(&mut out_buf), if out_open => match res {
                Ok(0) | Err(_) => out_open = false,
                Ok(n) => on_chunk(&out_buf[..n]),
            },
            res = stderr.read(&mut err_buf), if err_open => match res {
                Ok(0) | Err(_) => err_open = false,
                Ok(n) => on_chunk(&err_buf[..n]),
            },
        }
    }
    drop(stdout);
    drop(stderr);

    if status.is_none() && group.armed {
        // Only reached when the drain deadline passed after a kill and the leader has
        // still not been reaped (stuck in the kernel). Give it a little longer.
        if let Ok(Ok(st)) = tokio::time::timeout(REAP_AFTER_KILL, child.wait()).await {
            status = Some(st);
            group.armed = false;
        }
    }

    Ok(ExecOutcome {
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(crate::tree::signal_of),
        timed_out: expired == Some(Expiry::TimedOut),
        cancelled: expired == Some(Expiry::Cancelled),
        duration: start.elapsed(),
        output: buffer.finish(),
    })
}

/// Writes `input` to the child's stdin and closes it. A child that stops reading (it
/// exited, or closed its stdin) ends the write early; that is its choice, not an error.
async fn feed_stdin(pipe: Option<tokio::process::ChildStdin>, input: Vec<u8>) {
    let Some(mut pipe) = pipe else {
        return;
    };
    if let Err(err) = pipe.write_all(&input).await {
        tracing::debug!(%err, "the child stopped reading its stdin");
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Kills the child's process group when dropped while the leader is still unreaped, so
/// an abandoned future leaves nothing running.
struct GroupGuard {
    tree: ProcessTree,
    armed: bool,
}

impl GroupGuard {
    fn kill(&self) {
        if let Err(err) = self.tree.kill() {
            tracing::warn!(pgid = ?self.tree.pid(), %err, "could not kill process group");
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}
