//! The processes one connection started: each is spawned through `osprey-process` under
//! the server's sandbox, its output forwarded as `process/output` notifications and kept
//! (bounded) for `process/read`, its exit and close announced. Dropping the table — the
//! connection closed — kills every process group it holds.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use osprey_process::{
    ExecRequest, OutputStream, ProcessExit, StreamEvent, StreamingOptions, StreamingProcess,
    WriteOutcome,
};
use osprey_sandboxing::DenialContext;
use tokio::sync::{Notify, mpsc, oneshot};

use super::env::child_environment;
use super::{RpcError, ServerConfig};
use crate::protocol::{
    OutputChunk, ProcessClosed, ProcessExited, ProcessOutput, ProcessReadParams,
    ProcessReadResponse, ProcessStartParams, ProcessStartResponse, StreamName, method,
};
use crate::uri;

/// Output kept per process for `process/read`; older chunks are dropped first.
const KEPT_OUTPUT_BYTES: usize = 4 * 1024 * 1024;
/// The end of the output kept for judging a sandbox denial at exit.
const DENIAL_TAIL_BYTES: usize = 64 * 1024;
/// Finished processes remembered for `process/read` beyond which the oldest are forgotten.
const KEPT_FINISHED: usize = 256;
/// The output all remembered finished processes of a connection may keep together.
const KEPT_FINISHED_BYTES: usize = 64 * 1024 * 1024;
/// The longest `process/read` wait honoured.
const MAX_READ_WAIT: Duration = Duration::from_secs(30);
/// `process/read` without `maxBytes`.
const DEFAULT_READ_BYTES: usize = 1024 * 1024;

/// The connection's outgoing messages (bounded: a client that does not read holds up the
/// process's output, not the server's memory).
pub(crate) type Outgoing = mpsc::Sender<String>;
/// Processes running at once on one connection.
const MAX_RUNNING: usize = 128;

#[derive(Default)]
struct Record {
    chunks: VecDeque<(u64, StreamName, Vec<u8>)>,
    kept_bytes: usize,
    next_seq: u64,
    exit_code: Option<i32>,
    closed: bool,
    sandbox_denied: bool,
    tail: VecDeque<u8>,
}

struct Managed {
    handle: StreamingProcess,
    record: Mutex<Record>,
    changed: Notify,
}

impl Managed {
    fn record(&self) -> MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The processes of one connection, by client-chosen id.
#[derive(Default)]
pub(crate) struct ProcessTable {
    processes: Mutex<HashMap<String, Arc<Managed>>>,
    finished_order: Mutex<VecDeque<String>>,
    /// Set when the connection closes: no process may start after that.
    closed: std::sync::atomic::AtomicBool,
}

impl ProcessTable {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Managed>>> {
        self.processes.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: &str) -> Option<Arc<Managed>> {
        self.lock().get(id).cloned()
    }

    /// Starts a process. The returned sender must be fired once the `process/start`
    /// response is on its way, so that no notification about the process overtakes it.
    pub(crate) fn start(
        self: &Arc<Self>,
        config: &ServerConfig,
        params: ProcessStartParams,
        outgoing: Outgoing,
    ) -> Result<(ProcessStartResponse, oneshot::Sender<()>), RpcError> {
        let id = params.process_id.clone();
        if self.lock().contains_key(&id) {
            return Err(RpcError::invalid_request(format!(
                "process {id} already exists"
            )));
        }
        let (program, args) = params
            .argv
            .split_first()
            .ok_or_else(|| RpcError::invalid_params("argv must not be empty"))?;
        let cwd = uri::to_path(&params.cwd).map_err(RpcError::invalid_params)?;
        // The sandbox makes the working directory writable: it must be inside a root.
        config.roots.check_write(&cwd).map_err(|e| {
            RpcError::invalid_request(format!("the process's working directory: {e}"))
        })?;
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(RpcError::invalid_request("the connection is closing"));
        }
        let running = self
            .lock()
            .values()
            .filter(|m| m.record().exit_code.is_none())
            .count();
        if running >= MAX_RUNNING {
            return Err(RpcError::invalid_request(format!(
                "{running} processes are already running on this connection (the limit is {MAX_RUNNING}); wait for some to finish or terminate them"
            )));
        }
        let env = child_environment(&config.base_env, params.env_policy.as_ref(), &params.env)?;
        let mut request = ExecRequest::new(program.clone(), &cwd)
            .args(args.iter().cloned())
            .envs(env);
        if let Some(arg0) = &params.arg0 {
            request = request.arg0(arg0.clone());
        }
        let (request, sandbox_type) = config.confine(request, &cwd)?;
        let options = StreamingOptions {
            tty: params.tty,
            pipe_stdin: params.pipe_stdin,
            ..StreamingOptions::default()
        };
        let (handle, events) = StreamingProcess::spawn(request, options)
            .map_err(|e| RpcError::invalid_request(e.to_string()))?;
        let managed = Arc::new(Managed {
            handle,
            record: Mutex::new(Record {
                next_seq: 1,
                ..Record::default()
            }),
            changed: Notify::new(),
        });
        {
            let mut processes = self.lock();
            if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(RpcError::invalid_request("the connection is closing"));
            }
            if processes.contains_key(&id) {
                return Err(RpcError::invalid_request(format!(
                    "process {id} already exists"
                )));
            }
            processes.insert(id.clone(), Arc::clone(&managed));
        }
        let (go, ready) = oneshot::channel();
        let judge = DenialJudge {
            policy: config.policy_for_roots(),
            cwd,
        };
        tokio::spawn(forward(
            Arc::clone(self),
            id.clone(),
            managed,
            events,
            ready,
            outgoing,
            judge,
        ));
        Ok((
            ProcessStartResponse {
                process_id: id,
                sandbox_type: sandbox_type.to_owned(),
            },
            go,
        ))
    }

    /// `process/read`: buffered output after `afterSeq`, waiting up to `waitMs` for some.
    pub(crate) async fn read(
        &self,
        params: ProcessReadParams,
    ) -> Result<ProcessReadResponse, RpcError> {
        let managed = self
            .get(&params.process_id)
            .ok_or_else(|| unknown(&params.process_id))?;
        let after = params.after_seq.unwrap_or(0);
        let wait = Duration::from_millis(params.wait_ms.unwrap_or(0)).min(MAX_READ_WAIT);
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let changed = managed.changed.notified();
            {
                let record = managed.record();
                let has_new = record.chunks.back().is_some_and(|(seq, ..)| *seq > after);
                if has_new || record.closed || tokio::time::Instant::now() >= deadline {
                    return Ok(read_from(&record, after, params.max_bytes));
                }
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                let record = managed.record();
                return Ok(read_from(&record, after, params.max_bytes));
            }
        }
    }

    /// `process/write`: `accepted`, `unknownProcess` or `stdinClosed`; an error when the
    /// process does not read within the write timeout.
    pub(crate) async fn write(&self, id: &str, bytes: &[u8]) -> Result<&'static str, RpcError> {
        let Some(managed) = self.get(id) else {
            return Ok("unknownProcess");
        };
        if managed.record().exit_code.is_some() {
            return Ok("stdinClosed");
        }
        match managed.handle.write(bytes).await {
            WriteOutcome::Accepted => Ok("accepted"),
            WriteOutcome::StdinClosed => Ok("stdinClosed"),
            WriteOutcome::TimedOut => Err(RpcError::invalid_request(format!(
                "process {id} did not read its input within {} s; the bytes were not all written",
                osprey_process::STREAM_WRITE_TIMEOUT.as_secs()
            ))),
        }
    }

    /// `process/signal`. An unknown or forgotten process is not an error (as in Codex):
    /// there is nothing left to signal.
    pub(crate) fn signal(&self, id: &str, signal: &str) -> Result<(), RpcError> {
        if !matches!(signal, "interrupt" | "kill" | "terminate") {
            return Err(RpcError::invalid_params(format!(
                "unknown signal `{signal}`; use interrupt, terminate or kill"
            )));
        }
        let Some(managed) = self.get(id) else {
            return Ok(());
        };
        match signal {
            "interrupt" => managed.handle.interrupt(),
            "terminate" => managed.handle.terminate(),
            _ => managed.handle.kill(),
        }
        Ok(())
    }

    /// `process/terminate`: kills the group; whether it was still running.
    pub(crate) fn terminate(&self, id: &str) -> bool {
        let Some(managed) = self.get(id) else {
            return false;
        };
        let running = managed.record().exit_code.is_none();
        if running {
            managed.handle.kill();
        }
        running
    }

    /// Kills every process group of the connection (it closed); later starts are refused.
    pub(crate) fn kill_all(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let processes: Vec<Arc<Managed>> = self.lock().drain().map(|(_, m)| m).collect();
        for managed in processes {
            managed.handle.kill();
        }
    }

    /// Remembers a closed process for later reads, forgetting the oldest ones beyond
    /// [`KEPT_FINISHED`] or once the output they keep passes [`KEPT_FINISHED_BYTES`].
    fn finished(&self, id: &str) {
        let mut order = self
            .finished_order
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        order.push_back(id.to_owned());
        let mut processes = self.lock();
        let kept = |processes: &HashMap<String, Arc<Managed>>, order: &VecDeque<String>| {
            order
                .iter()
                .filter_map(|id| processes.get(id))
                .map(|m| m.record().kept_bytes)
                .sum::<usize>()
        };
        while order.len() > KEPT_FINISHED
            || (order.len() > 1 && kept(&processes, &order) > KEPT_FINISHED_BYTES)
        {
            if let Some(old) = order.pop_front() {
                processes.remove(&old);
            }
        }
    }
}

fn unknown(id: &str) -> RpcError {
    RpcError::invalid_request(format!("unknown process id {id}"))
}

fn read_from(record: &Record, after: u64, max_bytes: Option<usize>) -> ProcessReadResponse {
    let budget = max_bytes.unwrap_or(DEFAULT_READ_BYTES).max(1);
    let mut used = 0;
    let mut chunks = Vec::new();
    for (seq, stream, bytes) in record.chunks.iter().filter(|(seq, ..)| *seq > after) {
        if !chunks.is_empty() && used + bytes.len() > budget {
            break;
        }
        used += bytes.len();
        chunks.push(OutputChunk {
            seq: *seq,
            stream: *stream,
            chunk: BASE64.encode(bytes),
        });
    }
    let next_seq = chunks.last().map_or(after + 1, |c| c.seq + 1);
    ProcessReadResponse {
        chunks,
        next_seq,
        exited: record.exit_code.is_some(),
        exit_code: record.exit_code,
        closed: record.closed,
        failure: None,
        sandbox_denied: record.sandbox_denied,
    }
}

struct DenialJudge {
    policy: osprey_protocol::SandboxPolicy,
    cwd: PathBuf,
}

impl DenialJudge {
    fn denied(&self, exit: &ProcessExit, tail: &VecDeque<u8>) -> bool {
        let (front, back) = tail.as_slices();
        let text = String::from_utf8_lossy(&[front, back].concat()).into_owned();
        let ctx = DenialContext {
            policy: &self.policy,
            filesystem: None,
            cwd: Some(&self.cwd),
        };
        osprey_sandboxing::detect_denial_in(&ctx, exit.code, &text).is_some()
    }
}

/// The shell's convention: the code, or 128 + the signal that killed it.
fn exit_code_of(exit: &ProcessExit) -> i32 {
    match (exit.code, exit.signal) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => -1,
    }
}

fn stream_name(stream: OutputStream) -> StreamName {
    match stream {
        OutputStream::Stdout => StreamName::Stdout,
        OutputStream::Stderr => StreamName::Stderr,
        OutputStream::Pty => StreamName::Pty,
    }
}

async fn forward(
    table: Arc<ProcessTable>,
    id: String,
    managed: Arc<Managed>,
    mut events: mpsc::Receiver<StreamEvent>,
    ready: oneshot::Receiver<()>,
    outgoing: Outgoing,
    judge: DenialJudge,
) {
    // The start response goes first; if it was never sent the client knows nothing of
    // this process, and it is still recorded for a later process/read.
    let _ = ready.await;
    while let Some(event) = events.recv().await {
        let (name, params) = {
            let mut record = managed.record();
            let seq = record.next_seq;
            record.next_seq += 1;
            match event {
                StreamEvent::Output { stream, bytes } => {
                    let stream = stream_name(stream);
                    let chunk = BASE64.encode(&bytes);
                    keep(&mut record, seq, stream, bytes);
                    let params = ProcessOutput {
                        process_id: id.clone(),
                        seq,
                        stream,
                        chunk,
                    };
                    (method::PROCESS_OUTPUT, serde_json::to_value(params))
                }
                StreamEvent::Exited(exit) => {
                    let code = exit_code_of(&exit);
                    record.exit_code = Some(code);
                    record.sandbox_denied = code != 0 && judge.denied(&exit, &record.tail);
                    let params = ProcessExited {
                        process_id: id.clone(),
                        seq,
                        exit_code: code,
                        sandbox_denied: record.sandbox_denied,
                    };
                    (method::PROCESS_EXITED, serde_json::to_value(params))
                }
                StreamEvent::Closed => {
                    record.closed = true;
                    let params = ProcessClosed {
                        process_id: id.clone(),
                        seq,
                    };
                    (method::PROCESS_CLOSED, serde_json::to_value(params))
                }
            }
        };
        managed.changed.notify_waiters();
        if let Ok(params) = params {
            let note = serde_json::json!({"method": name, "params": params});
            // A closed connection: keep recording for nobody; the process is being killed.
            let _ = outgoing.send(note.to_string()).await;
        }
        if managed.record().closed {
            break;
        }
    }
    table.finished(&id);
}

fn keep(record: &mut Record, seq: u64, stream: StreamName, bytes: Vec<u8>) {
    record.tail.extend(bytes.iter().copied());
    let excess = record.tail.len().saturating_sub(DENIAL_TAIL_BYTES);
    record.tail.drain(..excess);
    record.kept_bytes += bytes.len();
    record.chunks.push_back((seq, stream, bytes));
    while record.kept_bytes > KEPT_OUTPUT_BYTES && record.chunks.len() > 1 {
        if let Some((_, _, old)) = record.chunks.pop_front() {
            record.kept_bytes -= old.len();
        }
    }
}
