//! The agent's side of the protocol: connect to an exec server through a program's stdio
//! (`ssh host osprey exec-server --listen stdio`, `docker exec -i …`) or a WebSocket URL,
//! run the handshake, call methods, and receive each process's notifications on a channel
//! of its own. When the connection drops, every pending call fails with
//! [`ClientError::Closed`] and every process channel gets [`ProcessEvent::Lost`]: nothing
//! waits forever.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use osprey_app_server_protocol::jsonrpc::{JsonRpcMessage, RequestId};
use osprey_process::{ExecRequest, PipedChild};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::protocol::{
    EnvironmentInfo, InitializeParams, InitializeResponse, ProcessClosed, ProcessExited,
    ProcessOutput, method,
};
use crate::version_gate::{Discovery, choose_discovery};

/// Why a call failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ClientError {
    /// The server answered with an error.
    #[error("exec-server rejected request ({code}): {message}")]
    Rejected { code: i64, message: String },
    /// The connection is gone (the server exited, the network dropped).
    #[error("the exec server closed the connection{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Closed { detail: Option<String> },
    /// The server did not answer in time.
    #[error("the exec server did not answer `{method}` within {seconds} s")]
    Timeout { method: String, seconds: u64 },
    /// The connection could not be made.
    #[error("could not connect to the exec server: {0}")]
    Connect(String),
    /// The server's answer did not have the expected shape.
    #[error("the exec server's answer to `{method}` is malformed: {reason}")]
    Malformed { method: String, reason: String },
}

/// One notification about a process, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum ProcessEvent {
    Output(ProcessOutput),
    Exited(ProcessExited),
    Closed(ProcessClosed),
    /// The connection dropped before the process was closed: its fate is unknown.
    Lost,
}

type Pending = HashMap<RequestId, oneshot::Sender<Result<Value, ClientError>>>;

#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    processes: Mutex<HashMap<String, mpsc::UnboundedSender<ProcessEvent>>>,
    /// Set (with the reason) once the connection is gone; checked under the locks above,
    /// so nothing registered afterwards waits for an answer that cannot come.
    lost: Mutex<Option<Option<String>>>,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn processes(&self) -> MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<ProcessEvent>>> {
        self.processes.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn on_message(&self, text: &str) {
        match JsonRpcMessage::parse(text) {
            Ok(JsonRpcMessage::Response(reply)) => {
                if let Some(waiter) = self.pending().remove(&reply.id) {
                    let _ = waiter.send(Ok(reply.result));
                }
            }
            Ok(JsonRpcMessage::Error(reply)) => {
                if let Some(waiter) = self.pending().remove(&reply.id) {
                    let _ = waiter.send(Err(ClientError::Rejected {
                        code: reply.error.code,
                        message: reply.error.message,
                    }));
                }
            }
            Ok(JsonRpcMessage::Notification(note)) => {
                self.on_notification(&note.method, note.params.unwrap_or(Value::Null));
            }
            Ok(JsonRpcMessage::Request(request)) => {
                tracing::debug!(method = %request.method, "ignoring a request from the exec server");
            }
            Err(err) => tracing::warn!("ignoring a malformed message from the exec server: {err}"),
        }
    }

    fn on_notification(&self, name: &str, params: Value) {
        let event = match name {
            method::PROCESS_OUTPUT => serde_json::from_value(params).map(ProcessEvent::Output),
            method::PROCESS_EXITED => serde_json::from_value(params).map(ProcessEvent::Exited),
            method::PROCESS_CLOSED => serde_json::from_value(params).map(ProcessEvent::Closed),
            _ => return,
        };
        let Ok(event) = event else {
            tracing::warn!(method = name, "malformed process notification");
            return;
        };
        let id = match &event {
            ProcessEvent::Output(o) => o.process_id.clone(),
            ProcessEvent::Exited(e) => e.process_id.clone(),
            ProcessEvent::Closed(c) => c.process_id.clone(),
            ProcessEvent::Lost => return,
        };
        let closed = matches!(event, ProcessEvent::Closed(_));
        let mut processes = self.processes();
        if let Some(sender) = processes.get(&id) {
            let _ = sender.send(event);
        }
        if closed {
            processes.remove(&id);
        }
    }

    fn lost(&self) -> Option<Option<String>> {
        self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn connection_lost(&self, detail: Option<String>) {
        *self.lost.lock().unwrap_or_else(|p| p.into_inner()) = Some(detail.clone());
        for (_, waiter) in self.pending().drain() {
            let _ = waiter.send(Err(ClientError::Closed {
                detail: detail.clone(),
            }));
        }
        for (_, sender) in self.processes().drain() {
            let _ = sender.send(ProcessEvent::Lost);
        }
    }
}

/// A connected, initialized exec-server session.
pub struct ExecServerClient {
    outgoing: mpsc::UnboundedSender<String>,
    shared: Arc<Shared>,
    next_id: AtomicI64,
    response: InitializeResponse,
    call_timeout: Duration,
    child: Option<PipedChild>,
}

/// How long a server started by [`ExecServerClient::connect_program`] gets to exit by
/// itself after its stdin closes (it stops its processes then) before it is killed.
const CHILD_EXIT_GRACE: Duration = Duration::from_secs(3);

impl Drop for ExecServerClient {
    /// Closing the connection (the writer ends with this value, closing the server's
    /// stdin) lets the server clean up its processes; it is killed only if it lingers.
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if tokio::time::timeout(CHILD_EXIT_GRACE, child.wait())
                        .await
                        .is_err()
                    {
                        // Still there: ask it to stop cleanly (it kills its processes on
                        // SIGTERM) before the drop's SIGKILL.
                        #[cfg(unix)]
                        let _ = child.signal(libc_sigterm());
                        let _ = tokio::time::timeout(CHILD_EXIT_GRACE, child.wait()).await;
                    }
                    drop(child);
                });
            }
            Err(_) => {
                // No runtime to wait on: SIGTERM lets the server clean up; the handle is
                // left to the OS instead of SIGKILLing the server at once.
                #[cfg(unix)]
                let _ = child.signal(libc_sigterm());
                std::mem::forget(child);
            }
        }
    }
}

impl std::fmt::Debug for ExecServerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecServerClient")
            .field("session_id", &self.response.session_id)
            .finish_non_exhaustive()
    }
}

/// How to reach a server and how long to wait for it.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Sent as `clientName`.
    pub client_name: String,
    /// A session to reattach to after a disconnect.
    pub resume_session_id: Option<String>,
    /// How long `initialize` may take.
    pub initialize_timeout: Duration,
    /// How long any later call may take (a `process/read` wait adds its own).
    pub call_timeout: Duration,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        Self {
            client_name: "osprey".to_owned(),
            resume_session_id: None,
            initialize_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
        }
    }
}

impl ExecServerClient {
    /// Starts `program args` (its stdio is the connection) and initializes.
    pub async fn connect_program(
        program: &str,
        args: &[String],
        env: HashMap<String, String>,
        cwd: &Path,
        options: ConnectOptions,
    ) -> Result<Self, ClientError> {
        let request = ExecRequest::new(program, cwd)
            .args(args.iter().cloned())
            .envs(env);
        let mut child = osprey_process::spawn_piped(&request)
            .map_err(|e| ClientError::Connect(e.to_string()))?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
            return Err(ClientError::Connect(format!(
                "`{program}` started without pipes"
            )));
        };
        if let Some(stderr) = child.stderr().take() {
            tokio::spawn(log_stderr(program.to_owned(), stderr));
        }
        let shared = Arc::new(Shared::default());
        let (outgoing, mut out_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = out_rx.recv().await {
                let ok = stdin.write_all(line.as_bytes()).await.is_ok()
                    && stdin.write_all(b"\n").await.is_ok()
                    && stdin.flush().await.is_ok();
                if !ok {
                    break;
                }
            }
        });
        let reader_shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                reader_shared.on_message(&line);
            }
            reader_shared.connection_lost(Some("its output ended".to_owned()));
        });
        Self::initialize(outgoing, shared, Some(child), options).await
    }

    /// Connects to `ws://…` (with `Authorization: Bearer <token>` when given) and
    /// initializes.
    pub async fn connect_url(
        url: &str,
        token: Option<&str>,
        options: ConnectOptions,
    ) -> Result<Self, ClientError> {
        let mut request = url
            .into_client_request()
            .map_err(|e| ClientError::Connect(format!("{url}: {e}")))?;
        if let Some(token) = token {
            let value = format!("Bearer {token}")
                .parse()
                .map_err(|_| ClientError::Connect("the token is not a valid header".to_owned()))?;
            request.headers_mut().insert("authorization", value);
        }
        // Small messages, each awaited: Nagle's algorithm would hold every one back ~40 ms.
        let connecting = tokio_tungstenite::connect_async_with_config(request, None, true);
        let (socket, _) = tokio::time::timeout(options.initialize_timeout, connecting)
            .await
            .map_err(|_| ClientError::Connect(format!("{url}: timed out")))?
            .map_err(|e| ClientError::Connect(format!("{url}: {e}")))?;
        let (mut sink, mut stream) = socket.split();
        let shared = Arc::new(Shared::default());
        let (outgoing, mut out_rx) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = out_rx.recv().await {
                if sink.send(Message::text(line)).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        let reader_shared = Arc::clone(&shared);
        tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                match message {
                    Message::Text(text) => reader_shared.on_message(&text),
                    Message::Binary(bytes) => {
                        reader_shared.on_message(&String::from_utf8_lossy(&bytes));
                    }
                    Message::Close(_) => break,
                    _ => {}
                }
            }
            reader_shared.connection_lost(Some("the WebSocket closed".to_owned()));
        });
        Self::initialize(outgoing, shared, None, options).await
    }

    async fn initialize(
        outgoing: mpsc::UnboundedSender<String>,
        shared: Arc<Shared>,
        child: Option<PipedChild>,
        options: ConnectOptions,
    ) -> Result<Self, ClientError> {
        let mut client = Self {
            outgoing,
            shared,
            next_id: AtomicI64::new(1),
            response: InitializeResponse {
                session_id: String::new(),
                environment_info: EnvironmentInfo {
                    shell: None,
                    executor_version: None,
                    cwd: None,
                    user_home_dir: None,
                    platform_os: None,
                    prepend_path_dirs: Vec::new(),
                    temporary_directories: Vec::new(),
                    temp_dir: None,
                    capabilities: Default::default(),
                },
            },
            call_timeout: options.initialize_timeout,
            child,
        };
        let params = InitializeParams {
            client_name: options.client_name,
            resume_session_id: options.resume_session_id,
        };
        client.response = client.call(method::INITIALIZE, params).await?;
        client.notify(method::INITIALIZED, json!({}));
        client.call_timeout = options.call_timeout;
        Ok(client)
    }

    /// What the server said about itself.
    pub fn environment(&self) -> &EnvironmentInfo {
        &self.response.environment_info
    }

    /// The process id of a server started by [`connect_program`](Self::connect_program).
    pub fn server_pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    /// The server's session id (for `resumeSessionId` after a disconnect).
    pub fn session_id(&self) -> &str {
        &self.response.session_id
    }

    /// Whether the connection is still up (no loss seen yet).
    pub fn is_connected(&self) -> bool {
        self.shared.lost().is_none()
    }

    /// Which capability discovery to use with this server.
    pub fn discovery(&self, v2_enabled: bool) -> Discovery {
        choose_discovery(v2_enabled, self.environment())
    }

    /// Registers for the notifications of `process_id`. Call before `process/start`, so
    /// that none is missed.
    pub fn watch_process(&self, process_id: &str) -> mpsc::UnboundedReceiver<ProcessEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut processes = self.shared.processes();
        if self.shared.lost().is_some() {
            let _ = tx.send(ProcessEvent::Lost);
        } else {
            processes.insert(process_id.to_owned(), tx);
        }
        rx
    }

    fn notify(&self, name: &str, params: Value) {
        let _ = self
            .outgoing
            .send(json!({"method": name, "params": params}).to_string());
    }

    /// Calls `name` with `params` and decodes the result.
    pub async fn call<T: DeserializeOwned>(
        &self,
        name: &str,
        params: impl Serialize,
    ) -> Result<T, ClientError> {
        let value = self.call_value(name, params, Duration::ZERO).await?;
        serde_json::from_value(value).map_err(|e| ClientError::Malformed {
            method: name.to_owned(),
            reason: e.to_string(),
        })
    }

    /// Calls `name`, allowing `extra` beyond the usual timeout (for waits the call asks
    /// the server to make).
    pub async fn call_value(
        &self,
        name: &str,
        params: impl Serialize,
        extra: Duration,
    ) -> Result<Value, ClientError> {
        let id = RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed));
        let params = serde_json::to_value(params).map_err(|e| ClientError::Malformed {
            method: name.to_owned(),
            reason: e.to_string(),
        })?;
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.shared.pending();
            if let Some(detail) = self.shared.lost() {
                return Err(ClientError::Closed { detail });
            }
            pending.insert(id.clone(), tx);
        }
        let message = json!({"id": id, "method": name, "params": params}).to_string();
        if self.outgoing.send(message).is_err() {
            self.shared.pending().remove(&id);
            return Err(ClientError::Closed { detail: None });
        }
        let limit = self.call_timeout + extra;
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(ClientError::Closed { detail: None }),
            Err(_) => {
                self.shared.pending().remove(&id);
                // A server that does not answer within the limit is taken as gone (a network
                // that died without closing the socket looks exactly like this): every
                // pending call and watched process is told, and the owner can reconnect.
                self.shared.connection_lost(Some(format!(
                    "no answer to `{name}` within {} s",
                    limit.as_secs()
                )));
                Err(ClientError::Timeout {
                    method: name.to_owned(),
                    seconds: limit.as_secs(),
                })
            }
        }
    }
}

/// SIGTERM's number (15 on every Unix Osprey runs on).
#[cfg(unix)]
const fn libc_sigterm() -> i32 {
    15
}

async fn log_stderr(program: String, stderr: impl tokio::io::AsyncRead + Unpin) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(target: "osprey_exec_server::remote", "{program}: {line}");
    }
}
