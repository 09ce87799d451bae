//! Commands run through an exec server: one-shot runs (`shell_command`, `shell`) and
//! interactive sessions (`exec_command` / `write_stdin`), in the same result types as
//! local processes so the handlers format both alike.
//!
//! A process is watched before `process/start` is sent, so no notification is missed;
//! its output arrives as `process/output`, its end as `process/exited` (with the server's
//! `sandboxDenied`) and `process/closed`. A dropped connection ends the wait with
//! [`ProcessEvent::Lost`]: the command's fate is unknown and the caller says so.

use super::remote::{RemoteEnvironment, RemoteError};
use base64::Engine;
use osprey_exec_server::client::{ExecServerClient, ProcessEvent};
use osprey_exec_server::protocol::{
    EnvPolicy, ProcessIdParams, ProcessStartParams, ProcessStartResponse, ProcessTerminateResponse,
    ProcessWriteParams, ProcessWriteResponse, method,
};
use osprey_process::{
    CollectResult, ExecExpiration, ExecOutcome, Expiry, HeadTailBuffer, OutputCaps, OutputSink,
    ProcessExit,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// What to start on the remote side.
#[derive(Debug, Clone)]
pub struct RemoteCommand {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// Variables set on top of what the server's environment policy passes on.
    pub env: BTreeMap<String, String>,
    /// Which of the server's own variables the command inherits.
    pub env_policy: EnvPolicy,
    pub tty: bool,
    /// Sent as `metadata` (thread and tool call ids, as Codex does).
    pub metadata: serde_json::Value,
}

/// How long to wait for a killed process's end before giving up on it.
const KILL_GRACE: Duration = Duration::from_secs(2);

fn decode(chunk: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(chunk)
        .unwrap_or_else(|_| chunk.as_bytes().to_vec())
}

/// Terminates a started process when dropped while armed: an interrupted turn drops the
/// run's future, and the command must not go on running on the server.
struct TerminateOnDrop {
    client: Arc<ExecServerClient>,
    process_id: String,
    armed: bool,
}

impl Drop for TerminateOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (client, id) = (Arc::clone(&self.client), self.process_id.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { terminate(&client, &id).await });
        }
    }
}

async fn start(
    env: &RemoteEnvironment,
    command: &RemoteCommand,
) -> Result<
    (
        Arc<ExecServerClient>,
        String,
        mpsc::UnboundedReceiver<ProcessEvent>,
    ),
    RemoteError,
> {
    let client = env.client().await.map_err(RemoteError::Unreachable)?;
    if let Some(refusal) = env.unconfined_refusal() {
        return Err(RemoteError::Rejected {
            code: osprey_exec_server::protocol::code::INVALID_REQUEST,
            message: refusal,
        });
    }
    let process_id = format!("osprey-{}", uuid::Uuid::now_v7());
    let events = client.watch_process(&process_id);
    let params = ProcessStartParams {
        process_id: process_id.clone(),
        argv: command.argv.clone(),
        cwd: osprey_exec_server::uri::from_path(&command.cwd),
        env: command.env.clone(),
        env_policy: Some(command.env_policy.clone()),
        tty: command.tty,
        pipe_stdin: !command.tty,
        arg0: None,
        sandbox: None,
        metadata: Some(command.metadata.clone()),
    };
    let started: ProcessStartResponse = client
        .call(method::PROCESS_START, params)
        .await
        .map_err(|e| env.describe(method::PROCESS_START, e))?;
    // The probe at connection time said the server confines; a server that changed its
    // mind (restarted with other flags) is caught here, and the command stopped at once.
    if started.sandbox_type == "none" && env.requires_confinement() {
        terminate(&client, &process_id).await;
        env.note_unconfined();
        return Err(RemoteError::Rejected {
            code: osprey_exec_server::protocol::code::INVALID_REQUEST,
            message: env.unconfined_refusal().unwrap_or_default(),
        });
    }
    Ok((client, process_id, events))
}

/// The outcome of a one-shot remote run.
pub struct RemoteOutcome {
    pub outcome: ExecOutcome,
    /// The server judged the failure to be its sandbox's doing.
    pub sandbox_denied: bool,
}

/// Runs `command` to its end (or its expiration), streaming output into `sink`.
pub async fn run_to_completion(
    env: &RemoteEnvironment,
    command: &RemoteCommand,
    expiration: ExecExpiration,
    caps: OutputCaps,
    mut sink: Option<OutputSink>,
) -> Result<RemoteOutcome, RemoteError> {
    let started = Instant::now();
    let (client, process_id, mut events) = start(env, command).await?;
    let mut guard = TerminateOnDrop {
        client: Arc::clone(&client),
        process_id: process_id.clone(),
        armed: true,
    };
    let mut buffer = HeadTailBuffer::new(caps);
    let mut exit: Option<(i32, bool)> = None;
    let mut expiry: Option<Expiry> = None;
    let expired = expiration.expired();
    tokio::pin!(expired);
    // Set when the process was killed, or exited with its output still open (a
    // background job holding the pipe): how long to wait for the rest.
    let mut give_up_at: Option<tokio::time::Instant> = None;
    let mut closed = false;
    loop {
        let grace = async {
            match give_up_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = events.recv() => match event {
                Some(ProcessEvent::Output(output)) => {
                    let bytes = decode(&output.chunk);
                    buffer.push(&bytes);
                    if let Some(sink) = sink.as_mut() {
                        sink.emit(&bytes);
                    }
                }
                Some(ProcessEvent::Exited(exited)) => {
                    exit = Some((exited.exit_code, exited.sandbox_denied));
                    give_up_at.get_or_insert(tokio::time::Instant::now() + osprey_process::DRAIN_AFTER_EXIT);
                }
                Some(ProcessEvent::Closed(_)) => {
                    closed = true;
                    break;
                }
                Some(ProcessEvent::Lost) | None => {
                    guard.armed = false;
                    return Err(RemoteError::Lost(format!(
                        "the connection to the exec server of environment `{}` dropped while the command ran; whether it finished there is unknown. Osprey reconnects on the next call: check the state before running it again",
                        env.id()
                    )));
                }
            },
            why = &mut expired, if expiry.is_none() && exit.is_none() => {
                expiry = Some(why);
                terminate(&client, &process_id).await;
                give_up_at = Some(tokio::time::Instant::now() + KILL_GRACE);
            }
            () = grace => break,
        }
    }
    if !closed {
        // Given up on (killed, or exited with a background job holding its output): what
        // is left of it is terminated.
        terminate(&client, &process_id).await;
    }
    guard.armed = false;
    let (exit_code, sandbox_denied) = match exit {
        Some((code, denied)) => (Some(code), denied),
        None => (None, false),
    };
    // An exit seen first stands (the expiry is not armed after it); a killed process has
    // no code of its own.
    let killed = expiry.is_some();
    Ok(RemoteOutcome {
        outcome: ExecOutcome {
            exit_code: if killed { None } else { exit_code },
            signal: killed.then_some(9),
            timed_out: expiry == Some(Expiry::TimedOut),
            cancelled: expiry == Some(Expiry::Cancelled),
            duration: started.elapsed(),
            output: buffer.finish(),
        },
        sandbox_denied,
    })
}

async fn terminate(client: &ExecServerClient, process_id: &str) {
    let params = ProcessIdParams {
        process_id: process_id.to_owned(),
    };
    if let Err(err) = client
        .call::<ProcessTerminateResponse>(method::PROCESS_TERMINATE, params)
        .await
    {
        tracing::warn!(process_id, %err, "could not terminate a remote process");
    }
}

/// What a remote session has produced and how it stands.
#[derive(Default)]
struct SessionState {
    pending: Option<HeadTailBuffer>,
    exit: Option<ProcessExit>,
    sandbox_denied: bool,
    closed: bool,
    /// The connection dropped while it ran.
    lost: bool,
}

/// An `exec_command` session whose process runs on an exec server.
pub struct RemoteSession {
    env: Arc<RemoteEnvironment>,
    client: Arc<ExecServerClient>,
    process_id: String,
    state: Arc<Mutex<SessionState>>,
    changed: watch::Receiver<u64>,
    pump: tokio::task::JoinHandle<()>,
    next_write: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for RemoteSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSession")
            .field("process_id", &self.process_id)
            .finish_non_exhaustive()
    }
}

/// Output kept between two collects of a remote session.
const SESSION_BUFFER: OutputCaps = OutputCaps::new(512 * 1024, 512 * 1024);

impl RemoteSession {
    /// Starts `command` on `env`'s server.
    pub async fn spawn(
        env: Arc<RemoteEnvironment>,
        command: &RemoteCommand,
    ) -> Result<Self, RemoteError> {
        let (client, process_id, mut events) = start(&env, command).await?;
        let state = Arc::new(Mutex::new(SessionState::default()));
        let (tx, changed) = watch::channel(0u64);
        let pump_state = Arc::clone(&state);
        let pump = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let mut state = pump_state.lock().unwrap_or_else(|p| p.into_inner());
                let done = match event {
                    ProcessEvent::Output(output) => {
                        state
                            .pending
                            .get_or_insert_with(|| HeadTailBuffer::new(SESSION_BUFFER))
                            .push(&decode(&output.chunk));
                        false
                    }
                    ProcessEvent::Exited(exited) => {
                        state.exit = Some(exit_of(exited.exit_code));
                        state.sandbox_denied = exited.sandbox_denied;
                        false
                    }
                    ProcessEvent::Closed(_) => {
                        state.closed = true;
                        true
                    }
                    ProcessEvent::Lost => {
                        state.lost = true;
                        true
                    }
                };
                drop(state);
                tx.send_modify(|n| *n += 1);
                if done {
                    return;
                }
            }
        });
        Ok(Self {
            env,
            client,
            process_id,
            state,
            changed,
            pump,
            next_write: std::sync::atomic::AtomicU64::new(1),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn has_exited(&self) -> bool {
        let state = self.state();
        state.exit.is_some() || state.lost
    }

    /// The connection dropped while the process ran: what became of it is unknown.
    pub fn is_lost(&self) -> bool {
        self.state().lost
    }

    pub fn sandbox_denied(&self) -> bool {
        self.state().sandbox_denied
    }

    pub async fn write_stdin(&self, bytes: &[u8]) -> Result<(), String> {
        if self.is_lost() {
            return Err(self.lost_text());
        }
        let n = self
            .next_write
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let params = ProcessWriteParams {
            process_id: self.process_id.clone(),
            chunk: base64::engine::general_purpose::STANDARD.encode(bytes),
            write_id: format!("{}-{n}", self.process_id),
        };
        let reply: ProcessWriteResponse = self
            .client
            .call(method::PROCESS_WRITE, params)
            .await
            .map_err(|e| self.env.describe(method::PROCESS_WRITE, e).to_string())?;
        match reply.status.as_str() {
            "accepted" => Ok(()),
            "stdinClosed" => Err("its input is closed (it exited or closed stdin)".to_owned()),
            other => Err(format!("the exec server answered `{other}`")),
        }
    }

    /// As [`osprey_process::InteractiveProcess::collect_output`]: waits up to `yield_for`,
    /// returning early once the process has closed.
    pub async fn collect_output(&self, yield_for: Duration, max_bytes: usize) -> CollectResult {
        let deadline = tokio::time::Instant::now() + yield_for;
        let mut changed = self.changed.clone();
        loop {
            changed.borrow_and_update();
            {
                let state = self.state();
                if state.closed || state.lost {
                    break;
                }
            }
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => break,
                res = changed.changed() => if res.is_err() { break },
            }
        }
        let mut state = self.state();
        let taken = state.pending.take().map(HeadTailBuffer::finish);
        let (mut output, omitted_bytes) = match taken {
            Some(out) => out.into_bounded_bytes(max_bytes),
            None => (Vec::new(), 0),
        };
        let exited = if state.lost && state.exit.is_none() {
            output.extend_from_slice(format!("\n[{}]\n", self.lost_text()).as_bytes());
            Some(ProcessExit {
                code: None,
                signal: None,
            })
        } else {
            state.exit
        };
        CollectResult {
            output,
            omitted_bytes,
            exited,
        }
    }

    fn lost_text(&self) -> String {
        format!(
            "session lost: the connection to the exec server of environment `{}` dropped while the command ran; whether it is still running there is unknown (the server normally stops a connection's processes when it closes)",
            self.env.id()
        )
    }

    /// Kills the process on the server (in the background; nothing waits for it).
    pub fn kill(&self) {
        if self.has_exited() {
            return;
        }
        let client = Arc::clone(&self.client);
        let id = self.process_id.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { terminate(&client, &id).await });
        }
    }
}

impl Drop for RemoteSession {
    fn drop(&mut self) {
        self.kill();
        self.pump.abort();
    }
}

/// The server reports a code (128 + n for a signal, as shells do); it is kept as a code.
fn exit_of(code: i32) -> ProcessExit {
    ProcessExit {
        code: Some(code),
        signal: None,
    }
}
