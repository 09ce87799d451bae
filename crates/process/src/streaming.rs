//! [`StreamingProcess`]: a process whose output is delivered chunk by chunk, each chunk
//! tagged with the stream it came from, followed by its exit and the end of its output.
//!
//! The exec server forwards every chunk to its client as it arrives, so unlike
//! [`InteractiveProcess`](crate::InteractiveProcess) nothing is buffered here: the reader
//! tasks send into a bounded channel the caller drains. A consumer that falls behind makes
//! the readers wait, the pipe fill and the child block on its next write — backpressure
//! instead of memory. `Exited` comes once the streams are drained (or the drain deadline
//! passed), so everything the process printed precedes it.

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::interactive::ProcessExit;
use crate::pty::{self, PtyMaster, TerminalSize};
use crate::request::{self, ExecRequest, SpawnError, Stdin};
use crate::tree::ProcessTree;

const READ_CHUNK: usize = 16 * 1024;
/// Chunks in flight between the readers and the consumer (at most 1 MiB).
const CHANNEL_CHUNKS: usize = 64;
/// How long a write to the child's input may block (a child that does not read).
pub const WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Which of the child's streams a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    /// Standard output (pipes only).
    Stdout,
    /// Standard error (pipes only).
    Stderr,
    /// The terminal (stdout and stderr together) of a process on a pseudo-terminal.
    Pty,
}

/// What a [`StreamingProcess`] reports, in order: chunks, then `Exited` once the process
/// has exited and every stream has reached its end (or the drain deadline passed), then
/// `Closed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Bytes the child wrote.
    Output {
        /// The stream.
        stream: OutputStream,
        /// The bytes, at most 16 KiB.
        bytes: Vec<u8>,
    },
    /// The child exited and its output was drained.
    Exited(ProcessExit),
    /// Every stream is closed: nothing more will be reported.
    Closed,
}

/// How to start a [`StreamingProcess`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamingOptions {
    /// Run on a pseudo-terminal.
    pub tty: bool,
    /// Give the child a stdin pipe the caller can write to; otherwise stdin is
    /// `/dev/null`. A terminal always has input.
    pub pipe_stdin: bool,
    /// The terminal size when `tty` is set.
    pub size: TerminalSize,
}

/// Where writes to the child go.
enum Input {
    None,
    Pipe(tokio::sync::Mutex<Option<ChildStdin>>),
    Pty(Arc<PtyMaster>),
}

/// Writing to a streaming process failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The bytes were written.
    Accepted,
    /// The process was started without a stdin pipe, or its input is closed.
    StdinClosed,
    /// The child did not take the bytes within [`WRITE_TIMEOUT`].
    TimedOut,
}

/// A running child reporting its output through a channel. Dropping it kills the
/// process group.
pub struct StreamingProcess {
    tree: ProcessTree,
    input: Input,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for StreamingProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamingProcess")
            .field("pid", &self.tree.pid())
            .finish_non_exhaustive()
    }
}

impl StreamingProcess {
    /// Starts `req`. Must be called within a Tokio runtime. The receiver gets every
    /// [`StreamEvent`] of the child, ending with `Closed`.
    pub fn spawn(
        req: ExecRequest,
        options: StreamingOptions,
    ) -> Result<(Self, mpsc::Receiver<StreamEvent>), SpawnError> {
        tokio::runtime::Handle::try_current().map_err(|_| SpawnError::NoRuntime {
            program: req.program.clone(),
        })?;
        let (events, receiver) = mpsc::channel(CHANNEL_CHUNKS);
        let mut readers: Vec<JoinHandle<()>> = Vec::with_capacity(2);
        let (mut child, tree, input) = if options.tty {
            let (child, master) = pty::spawn_on_pty(&req, options.size)?;
            let (child, tree) = ProcessTree::adopt(&req, child)?;
            let master = Arc::new(master);
            readers.push(tokio::spawn(read_pty(events.clone(), Arc::clone(&master))));
            (child, tree, Input::Pty(master))
        } else {
            let stdin = if options.pipe_stdin {
                Stdin::Piped
            } else {
                Stdin::Null
            };
            let mut cmd = request::command(&req, stdin);
            let (mut child, tree) = ProcessTree::spawn(&req, &mut cmd)?;
            drop(cmd);
            if let Some(out) = child.stdout.take() {
                readers.push(tokio::spawn(read_pipe(
                    events.clone(),
                    OutputStream::Stdout,
                    out,
                )));
            }
            if let Some(err) = child.stderr.take() {
                readers.push(tokio::spawn(read_pipe(
                    events.clone(),
                    OutputStream::Stderr,
                    err,
                )));
            }
            let input = match child.stdin.take() {
                Some(stdin) => Input::Pipe(tokio::sync::Mutex::new(Some(stdin))),
                None => Input::None,
            };
            (child, tree, input)
        };
        let supervisor = tokio::spawn(async move {
            let exit = match child.wait().await {
                Ok(status) => ProcessExit::from(status),
                Err(err) => {
                    tracing::warn!(%err, "could not wait for a streaming process");
                    ProcessExit {
                        code: None,
                        signal: None,
                    }
                }
            };
            // A grandchild that left the group may keep a pipe open: stop waiting for
            // end-of-file after the drain deadline, as one-shot commands do.
            let drain = async {
                for reader in readers {
                    let _ = reader.await;
                }
            };
            if tokio::time::timeout(crate::DRAIN_AFTER_EXIT, drain)
                .await
                .is_err()
            {
                tracing::debug!("streams still open after exit; closing them");
            }
            let _ = events.send(StreamEvent::Exited(exit)).await;
            let _ = events.send(StreamEvent::Closed).await;
        });
        Ok((
            Self {
                tree,
                input,
                tasks: vec![supervisor],
            },
            receiver,
        ))
    }

    /// The process id, which is also its process group id on Unix.
    pub fn pid(&self) -> Option<u32> {
        self.tree.pid()
    }

    /// Writes `bytes` to the child's stdin (or terminal), giving up after
    /// [`WRITE_TIMEOUT`] when the child does not read.
    pub async fn write(&self, bytes: &[u8]) -> WriteOutcome {
        match tokio::time::timeout(WRITE_TIMEOUT, self.write_now(bytes)).await {
            Ok(outcome) => outcome,
            Err(_) => WriteOutcome::TimedOut,
        }
    }

    async fn write_now(&self, bytes: &[u8]) -> WriteOutcome {
        match &self.input {
            Input::None => WriteOutcome::StdinClosed,
            Input::Pty(master) => match master.write_all(bytes).await {
                Ok(()) => WriteOutcome::Accepted,
                Err(_) => WriteOutcome::StdinClosed,
            },
            Input::Pipe(stdin) => {
                let mut guard = stdin.lock().await;
                let Some(pipe) = guard.as_mut() else {
                    return WriteOutcome::StdinClosed;
                };
                let written = async {
                    pipe.write_all(bytes).await?;
                    pipe.flush().await
                };
                match written.await {
                    Ok(()) => WriteOutcome::Accepted,
                    Err(_) => {
                        *guard = None;
                        WriteOutcome::StdinClosed
                    }
                }
            }
        }
    }

    /// Sends `SIGINT` to the process group (Ctrl-C). On Windows: kills the job.
    pub fn interrupt(&self) {
        self.report("interrupt", self.tree.interrupt());
    }

    /// Asks the process group to stop (`SIGTERM`). On Windows: kills the job.
    pub fn terminate(&self) {
        self.report("terminate", self.tree.terminate());
    }

    /// Kills the whole process group (`SIGKILL`), or on Windows the whole job.
    pub fn kill(&self) {
        self.report("kill", self.tree.kill());
    }

    fn report(&self, what: &str, result: std::io::Result<()>) {
        if let Err(err) = result {
            tracing::warn!(pid = ?self.tree.pid(), what, %err, "could not signal a process tree");
        }
    }
}

impl Drop for StreamingProcess {
    fn drop(&mut self) {
        self.kill();
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn read_pipe(
    events: mpsc::Sender<StreamEvent>,
    stream: OutputStream,
    mut reader: impl AsyncRead + Unpin,
) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let chunk = StreamEvent::Output {
                    stream,
                    bytes: buf[..n].to_vec(),
                };
                if events.send(chunk).await.is_err() {
                    break;
                }
            }
        }
    }
}

async fn read_pty(events: mpsc::Sender<StreamEvent>, master: Arc<PtyMaster>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match master.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let chunk = StreamEvent::Output {
                    stream: OutputStream::Pty,
                    bytes: buf[..n].to_vec(),
                };
                if events.send(chunk).await.is_err() {
                    break;
                }
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> ExecRequest {
        ExecRequest::new("/bin/sh", "/tmp")
            .args(["-c", script])
            .env("PATH", "/usr/bin:/bin")
    }

    async fn drain(mut rx: mpsc::Receiver<StreamEvent>) -> Vec<StreamEvent> {
        let mut all = Vec::new();
        while let Some(event) = rx.recv().await {
            let closed = event == StreamEvent::Closed;
            all.push(event);
            if closed {
                break;
            }
        }
        all
    }

    fn text_of(events: &[StreamEvent], want: OutputStream) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Output { stream, bytes } if *stream == want => {
                    Some(String::from_utf8_lossy(bytes).into_owned())
                }
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn streams_are_told_apart_and_exit_comes_before_close() {
        let (process, rx) = StreamingProcess::spawn(
            sh("echo out; echo err >&2; exit 3"),
            StreamingOptions::default(),
        )
        .unwrap();
        let events = drain(rx).await;
        drop(process);
        assert_eq!(text_of(&events, OutputStream::Stdout), "out\n");
        assert_eq!(text_of(&events, OutputStream::Stderr), "err\n");
        let n = events.len();
        assert_eq!(events[n - 1], StreamEvent::Closed);
        assert!(events.contains(&StreamEvent::Exited(ProcessExit {
            code: Some(3),
            signal: None
        })));
    }

    #[tokio::test]
    async fn stdin_is_closed_unless_piped() {
        let (process, rx) =
            StreamingProcess::spawn(sh("cat; echo done"), StreamingOptions::default()).unwrap();
        assert_eq!(process.write(b"x").await, WriteOutcome::StdinClosed);
        let events = drain(rx).await;
        assert_eq!(text_of(&events, OutputStream::Stdout), "done\n");
    }

    #[tokio::test]
    async fn a_piped_stdin_reaches_the_child() {
        let options = StreamingOptions {
            pipe_stdin: true,
            ..StreamingOptions::default()
        };
        let (process, rx) = StreamingProcess::spawn(sh("read x; echo got:$x"), options).unwrap();
        assert_eq!(process.write(b"hello\n").await, WriteOutcome::Accepted);
        let events = drain(rx).await;
        assert_eq!(text_of(&events, OutputStream::Stdout), "got:hello\n");
    }

    #[tokio::test]
    async fn a_terminal_echoes_what_is_typed() {
        let options = StreamingOptions {
            tty: true,
            ..StreamingOptions::default()
        };
        let (process, rx) = StreamingProcess::spawn(sh("read x; echo got:$x"), options).unwrap();
        assert_eq!(process.write(b"hello\n").await, WriteOutcome::Accepted);
        let events = drain(rx).await;
        let text = text_of(&events, OutputStream::Pty);
        assert!(text.contains("hello\r\n"), "{text:?}");
        assert!(text.contains("got:hello"), "{text:?}");
    }

    #[tokio::test]
    async fn kill_ends_the_group_with_signal_nine() {
        let (process, rx) =
            StreamingProcess::spawn(sh("sleep 30 & wait"), StreamingOptions::default()).unwrap();
        process.kill();
        let events = drain(rx).await;
        assert!(events.contains(&StreamEvent::Exited(ProcessExit {
            code: None,
            signal: Some(9)
        })));
    }
}
