//! [`InteractiveProcess`]: a long-running command the model can write to and poll, on
//! pipes or on a pseudo-terminal.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::output::{HeadTailBuffer, OutputCaps};
use crate::pty::{self, PtyMaster, TerminalSize};
use crate::request::{self, ExecRequest, SpawnError, Stdin};
use crate::tree::{self, ProcessTree};

/// After the process exits, how long [`InteractiveProcess::collect_output`] keeps waiting
/// for output still in flight. Pipes and terminals normally report end-of-file at once;
/// this bounds the wait when a background process it started still holds them.
pub const SESSION_DRAIN_AFTER_EXIT: Duration = Duration::from_millis(250);

/// How long a write to the process's stdin may block before it is abandoned.
pub const STDIN_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

const READ_CHUNK: usize = 8 * 1024;

/// How an interactive session is set up. The default: pipes, 24 × 80 should a terminal
/// be asked for, default buffer caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionOptions {
    /// Run on a pseudo-terminal (stdin, stdout and stderr all the terminal) instead of
    /// pipes (stdin piped; stdout and stderr combined).
    pub tty: bool,
    /// The terminal's size when `tty` is set.
    pub size: TerminalSize,
    /// Bounds on output kept between two collects.
    pub buffer_caps: OutputCaps,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessExit {
    /// The exit code, if it exited by itself.
    pub code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
}

impl From<std::process::ExitStatus> for ProcessExit {
    fn from(status: std::process::ExitStatus) -> Self {
        Self {
            code: status.code(),
            signal: tree::signal_of(status),
        }
    }
}

/// What one [`InteractiveProcess::collect_output`] call gathered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectResult {
    /// Output produced since the previous collect. When more than fit, its start and end
    /// with an omission marker between them.
    pub output: Vec<u8>,
    /// Bytes of new output that were dropped (buffer caps and `max_bytes` together).
    pub omitted_bytes: u64,
    /// Set once the process has exited.
    pub exited: Option<ProcessExit>,
}

/// Writing to a session's stdin failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StdinError {
    /// The process no longer accepts input.
    #[error("cannot write to process {pid}: its input is closed (it exited or closed stdin)")]
    Closed {
        /// The process id (0 if unknown).
        pid: u32,
    },
    /// The process did not take the input in time.
    #[error(
        "writing to process {pid} timed out after {}s: it is not reading its input; poll its \
         output or kill it",
        after.as_secs()
    )]
    TimedOut {
        /// The process id (0 if unknown).
        pid: u32,
        /// How long the write waited.
        after: Duration,
    },
    /// Any other write failure.
    #[error("cannot write to process {pid}: {reason}")]
    Io {
        /// The process id (0 if unknown).
        pid: u32,
        /// The OS error in words.
        reason: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

enum Input {
    Pipe(tokio::sync::Mutex<Option<ChildStdin>>),
    Pty(Arc<PtyMaster>),
}

struct State {
    pending: HeadTailBuffer,
    open_readers: usize,
    exit: Option<ProcessExit>,
    exited_at: Option<Instant>,
}

struct Shared {
    state: Mutex<State>,
    changed: watch::Sender<()>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Each update is a small self-contained change; a panic elsewhere cannot leave
        // the state half-written.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.changed.send_replace(());
    }
}

/// A running command that accepts input and is polled for output.
///
/// Output is read continuously by background tasks into a bounded buffer, so a chatty
/// process never blocks on a full pipe and never grows memory without bound. Dropping
/// the value kills the whole process group and stops the tasks.
pub struct InteractiveProcess {
    pid: Option<u32>,
    tree: ProcessTree,
    tty: bool,
    shared: Arc<Shared>,
    input: Input,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for InteractiveProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteractiveProcess")
            .field("pid", &self.pid)
            .field("tty", &self.tty)
            .field("exit", &self.exit_status())
            .finish_non_exhaustive()
    }
}

impl InteractiveProcess {
    /// Starts `req` on a terminal (`tty`) or on pipes, with default options. Must be
    /// called from within a Tokio runtime.
    pub fn spawn(req: ExecRequest, tty: bool) -> Result<Self, SpawnError> {
        Self::spawn_with(
            req,
            SessionOptions {
                tty,
                ..SessionOptions::default()
            },
        )
    }

    /// Starts `req` as described by `options`. Must be called from within a Tokio runtime
    /// with I/O and time enabled.
    ///
    /// The request's environment is the child's complete environment, on a terminal too:
    /// set `TERM` (and anything else a terminal program expects) in it.
    pub fn spawn_with(req: ExecRequest, options: SessionOptions) -> Result<Self, SpawnError> {
        tokio::runtime::Handle::try_current().map_err(|_| SpawnError::NoRuntime {
            program: req.program.clone(),
        })?;
        let (changed, _) = watch::channel(());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                pending: HeadTailBuffer::new(options.buffer_caps),
                open_readers: 0,
                exit: None,
                exited_at: None,
            }),
            changed,
        });
        let mut tasks = Vec::with_capacity(3);

        let (mut child, tree, input) = if options.tty {
            let (child, master) = pty::spawn_on_pty(&req, options.size)?;
            let (child, tree) = ProcessTree::adopt(&req, child)?;
            let master = Arc::new(master);
            shared.lock().open_readers = 1;
            tasks.push(tokio::spawn(read_pty(
                Arc::clone(&shared),
                Arc::clone(&master),
            )));
            (child, tree, Input::Pty(master))
        } else {
            let mut cmd = request::command(&req, Stdin::Piped);
            let (mut child, tree) = ProcessTree::spawn(&req, &mut cmd)?;
            drop(cmd);
            let stdin = child.stdin.take();
            let readers: Vec<Box<dyn AsyncRead + Send + Unpin>> = [
                child
                    .stdout
                    .take()
                    .map(|s| Box::new(s) as Box<dyn AsyncRead + Send + Unpin>),
                child
                    .stderr
                    .take()
                    .map(|s| Box::new(s) as Box<dyn AsyncRead + Send + Unpin>),
            ]
            .into_iter()
            .flatten()
            .collect();
            shared.lock().open_readers = readers.len();
            for reader in readers {
                tasks.push(tokio::spawn(read_pipe(Arc::clone(&shared), reader)));
            }
            (child, tree, Input::Pipe(tokio::sync::Mutex::new(stdin)))
        };

        let pid = tree.pid();
        tracing::debug!(program = %req.program, ?pid, tty = options.tty, "interactive session started");
        let waiter_shared = Arc::clone(&shared);
        tasks.push(tokio::spawn(async move {
            let exit = match child.wait().await {
                Ok(status) => ProcessExit::from(status),
                Err(err) => {
                    tracing::warn!(%err, "could not wait for interactive process");
                    ProcessExit {
                        code: None,
                        signal: None,
                    }
                }
            };
            waiter_shared.update(|state| {
                state.exit = Some(exit);
                state.exited_at = Some(Instant::now());
            });
        }));

        Ok(Self {
            pid,
            tree,
            tty: options.tty,
            shared,
            input,
            tasks,
        })
    }

    /// The process id, which is also its process group id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the session runs on a terminal.
    pub fn is_tty(&self) -> bool {
        self.tty
    }

    /// Whether the process has exited (it may still have output to collect).
    pub fn has_exited(&self) -> bool {
        self.shared.lock().exit.is_some()
    }

    /// How the process ended, once it has.
    pub fn exit_status(&self) -> Option<ProcessExit> {
        self.shared.lock().exit
    }

    /// Sends `bytes` to the process's stdin (on a terminal, as if typed: the terminal
    /// echoes them and turns `\r` into a line end per its settings).
    pub async fn write_stdin(&self, bytes: &[u8]) -> Result<(), StdinError> {
        let pid = self.pid.unwrap_or(0);
        if self.has_exited() {
            // A terminal would buffer the bytes with nobody to read them; a pipe might be
            // held by a leftover background job. Either way the session is over.
            return Err(StdinError::Closed { pid });
        }
        let write = async {
            match &self.input {
                Input::Pipe(stdin) => {
                    let mut stdin = stdin.lock().await;
                    let Some(pipe) = stdin.as_mut() else {
                        return Err(StdinError::Closed { pid });
                    };
                    let res = match pipe.write_all(bytes).await {
                        Ok(()) => pipe.flush().await,
                        Err(err) => Err(err),
                    };
                    res.map_err(|err| classify_write_error(pid, err))
                }
                Input::Pty(master) => master
                    .write_all(bytes)
                    .await
                    .map_err(|err| classify_write_error(pid, err)),
            }
        };
        match tokio::time::timeout(STDIN_WRITE_TIMEOUT, write).await {
            Ok(res) => res,
            Err(_) => Err(StdinError::TimedOut {
                pid,
                after: STDIN_WRITE_TIMEOUT,
            }),
        }
    }

    /// Signals end of input: closes the stdin pipe, or on a terminal sends the end-of-file
    /// character (Ctrl-D), which a line-reading program sees as end of input at the start
    /// of a line.
    pub async fn close_stdin(&self) -> Result<(), StdinError> {
        match &self.input {
            Input::Pipe(stdin) => {
                stdin.lock().await.take();
                Ok(())
            }
            Input::Pty(_) => self.write_stdin(b"\x04").await,
        }
    }

    /// Changes the terminal's size (the process receives `SIGWINCH`). Does nothing for a
    /// pipe session.
    pub fn resize(&self, size: TerminalSize) -> std::io::Result<()> {
        match &self.input {
            Input::Pty(master) => master.resize(size),
            Input::Pipe(_) => Ok(()),
        }
    }

    /// Waits up to `yield_for` and returns the output produced since the previous call,
    /// at most `max_bytes` of it (start and end kept). Returns early once the process has
    /// exited and its remaining output has been read (waiting at most
    /// [`SESSION_DRAIN_AFTER_EXIT`] for that output).
    pub async fn collect_output(&self, yield_for: Duration, max_bytes: usize) -> CollectResult {
        let deadline = Instant::now() + yield_for;
        let mut changes = self.shared.changed.subscribe();
        loop {
            changes.borrow_and_update();
            let wake_at = {
                let state = self.shared.lock();
                match state.exited_at {
                    Some(_) if state.open_readers == 0 => break,
                    Some(at) => deadline.min(at + SESSION_DRAIN_AFTER_EXIT),
                    None => deadline,
                }
            };
            if Instant::now() >= wake_at {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep_until(wake_at) => {}
                res = changes.changed() => {
                    if res.is_err() {
                        break;
                    }
                }
            }
        }
        let (taken, exited) = {
            let mut state = self.shared.lock();
            (state.pending.take(), state.exit)
        };
        let (output, omitted_bytes) = taken.into_bounded_bytes(max_bytes);
        CollectResult {
            output,
            omitted_bytes,
            exited,
        }
    }

    /// Sends `SIGKILL` to the whole process group, including background jobs that
    /// outlived the leader. Output already produced can still be collected; the exit shows
    /// up as signal 9.
    pub fn kill(&self) {
        if let Err(err) = self.tree.kill() {
            tracing::warn!(pid = ?self.pid, %err, "could not kill interactive process group");
        }
    }
}

impl Drop for InteractiveProcess {
    fn drop(&mut self) {
        self.kill();
        for task in &self.tasks {
            task.abort();
        }
    }
}

fn classify_write_error(pid: u32, err: std::io::Error) -> StdinError {
    match err.kind() {
        std::io::ErrorKind::BrokenPipe => StdinError::Closed { pid },
        _ if err.raw_os_error() == Some(libc::EIO) => StdinError::Closed { pid },
        _ => StdinError::Io {
            pid,
            reason: request::plain_os_message(&err),
            source: err,
        },
    }
}

async fn read_pipe(shared: Arc<Shared>, mut reader: Box<dyn AsyncRead + Send + Unpin>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => shared.update(|state| state.pending.push(&buf[..n])),
        }
    }
    shared.update(|state| state.open_readers = state.open_readers.saturating_sub(1));
}

async fn read_pty(shared: Arc<Shared>, master: Arc<PtyMaster>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match master.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => shared.update(|state| state.pending.push(&buf[..n])),
        }
    }
    shared.update(|state| state.open_readers = state.open_readers.saturating_sub(1));
}
