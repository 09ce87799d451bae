//! One client connection: the `initialize` → `initialized` handshake, then requests
//! dispatched by method. Lifecycle checks happen in arrival order; the work itself runs on
//! tasks limited to `concurrent_requests` at a time (FIFO). When the client goes, every
//! process it started is killed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use osprey_app_server_protocol::jsonrpc::{
    JsonRpcErrorBody, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::fs;
use super::processes::ProcessTable;
use super::{RpcError, ServerConfig, parse_params};
use crate::protocol::{
    CopyParams, CreateDirectoryParams, DiscoverV2Params, DiscoverV2Response, EnvironmentStatus,
    InitializeParams, InitializeResponse, PathParams, ProcessIdParams, ProcessReadParams,
    ProcessSignalParams, ProcessStartParams, ProcessTerminateResponse, ProcessWriteParams,
    ProcessWriteResponse, RemoveParams, WalkParams, WriteFileParams, method,
};

/// Outgoing messages a connection may have queued before its tasks wait for the client.
pub const OUTGOING_QUEUE: usize = 1024;
/// Requests waiting for a worker before the server stops reading from the client.
const JOB_QUEUE: usize = 256;

/// Serves one connection: `incoming` yields the client's messages (one JSON text each),
/// `outgoing` takes the server's (bounded: a client that stops reading slows its own
/// processes down, nothing else). Returns when the client closes its side — or when the
/// future is dropped — and the connection's processes are killed then.
pub async fn serve_lines(
    config: Arc<ServerConfig>,
    mut incoming: mpsc::Receiver<String>,
    outgoing: mpsc::Sender<String>,
) {
    let (jobs, queue) = mpsc::channel::<Job>(JOB_QUEUE);
    let workers = config.concurrent_requests.max(1);
    let connection = Arc::new(Connection {
        jobs,
        config,
        outgoing,
        session_id: uuid::Uuid::now_v7().to_string(),
        initialize_requested: AtomicBool::new(false),
        initialized: AtomicBool::new(false),
        processes: Arc::new(ProcessTable::default()),
    });
    // Workers take requests in arrival order; with one worker (the default) a request
    // starts only when the one before it has been answered.
    let queue = Arc::new(tokio::sync::Mutex::new(queue));
    let _cleanup = Cleanup {
        processes: Arc::clone(&connection.processes),
        workers: (0..workers)
            .map(|_| tokio::spawn(work(Arc::clone(&connection), Arc::clone(&queue))))
            .collect(),
    };
    while let Some(text) = incoming.recv().await {
        match JsonRpcMessage::parse(&text) {
            Ok(JsonRpcMessage::Request(request)) => connection.on_request(request).await,
            Ok(JsonRpcMessage::Notification(note)) => connection.on_notification(&note),
            Ok(JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)) => {
                tracing::debug!("ignoring a reply: this server sends no requests");
            }
            Err(err) => tracing::warn!("ignoring a message that is not JSON-RPC: {err}"),
        }
    }
    tracing::debug!("client closed the connection; stopping its processes");
}

/// Stops a connection's work when it ends, however it ends (the client left, or the
/// server is shutting down and drops the connection's future): no worker may start a
/// process after this, and every process group is killed.
struct Cleanup {
    processes: Arc<ProcessTable>,
    workers: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for worker in &self.workers {
            worker.abort();
        }
        // Marks the table closed first, so a worker between its last check and the insert
        // is refused; then kills what is there.
        self.processes.kill_all();
    }
}

/// One request that passed the lifecycle checks.
struct Job {
    id: RequestId,
    method: String,
    params: Option<Value>,
}

async fn work(connection: Arc<Connection>, queue: Arc<tokio::sync::Mutex<mpsc::Receiver<Job>>>) {
    loop {
        let next = queue.lock().await.recv().await;
        let Some(Job { id, method, params }) = next else {
            return;
        };
        if method == method::PROCESS_START {
            connection.start_process(id, params).await;
            continue;
        }
        let result = connection.dispatch(&method, params).await;
        connection.reply(id, result).await;
    }
}

struct Connection {
    config: Arc<ServerConfig>,
    outgoing: mpsc::Sender<String>,
    session_id: String,
    initialize_requested: AtomicBool,
    initialized: AtomicBool,
    processes: Arc<ProcessTable>,
    jobs: mpsc::Sender<Job>,
}

/// The method family named in lifecycle errors, or `None` for a method not served.
fn family(name: &str) -> Option<&'static str> {
    match name {
        method::ENVIRONMENT_INFO | method::ENVIRONMENT_STATUS => Some("environment info"),
        method::PROCESS_START
        | method::PROCESS_READ
        | method::PROCESS_WRITE
        | method::PROCESS_SIGNAL
        | method::PROCESS_TERMINATE => Some("exec"),
        method::FS_READ_FILE
        | method::FS_WRITE_FILE
        | method::FS_GET_METADATA
        | method::FS_READ_DIRECTORY
        | method::FS_CANONICALIZE
        | method::FS_WALK
        | method::FS_CREATE_DIRECTORY
        | method::FS_REMOVE
        | method::FS_COPY => Some("filesystem"),
        method::DISCOVER_V2 => Some("capability discovery"),
        _ => None,
    }
}

impl Connection {
    async fn send(&self, message: Value) {
        let _ = self.outgoing.send(message.to_string()).await;
    }

    async fn reply(&self, id: RequestId, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => json!({"id": id, "result": result}),
            Err(err) => {
                let body = JsonRpcErrorBody {
                    code: err.code,
                    message: err.message,
                    data: None,
                };
                json!({"error": body, "id": id})
            }
        };
        self.send(message).await;
    }

    fn on_notification(&self, note: &JsonRpcNotification) {
        if note.method == method::INITIALIZED {
            if self.initialize_requested.load(Ordering::SeqCst) {
                self.initialized.store(true, Ordering::SeqCst);
            } else {
                tracing::warn!("`initialized` before `initialize`; ignored");
            }
        } else {
            tracing::warn!(method = %note.method, "ignoring an unknown notification");
        }
    }

    async fn on_request(&self, request: JsonRpcRequest) {
        let JsonRpcRequest { id, method, params } = request;
        if method == method::INITIALIZE {
            let result = self.initialize(params);
            self.reply(id, result).await;
            return;
        }
        let Some(family) = family(&method) else {
            self.reply(id, Err(RpcError::method_not_found(&method)))
                .await;
            return;
        };
        if !self.initialize_requested.load(Ordering::SeqCst) {
            let message = format!("client must call initialize before using {family} methods");
            self.reply(id, Err(RpcError::invalid_request(message)))
                .await;
            return;
        }
        if !self.initialized.load(Ordering::SeqCst) {
            let message = format!("client must send initialized before using {family} methods");
            self.reply(id, Err(RpcError::invalid_request(message)))
                .await;
            return;
        }
        let _ = self.jobs.send(Job { id, method, params }).await;
    }

    fn initialize(&self, params: Option<Value>) -> Result<Value, RpcError> {
        let params: InitializeParams = parse_params(params)?;
        if self.initialize_requested.swap(true, Ordering::SeqCst) {
            return Err(RpcError::invalid_request(
                "initialize may only be sent once per connection",
            ));
        }
        tracing::debug!(client = %params.client_name, "exec-server client initialized");
        to_value(InitializeResponse {
            session_id: self.session_id.clone(),
            environment_info: self.config.environment_info(),
        })
    }

    /// `process/start` answers before the process's first notification can go out.
    async fn start_process(&self, id: RequestId, params: Option<Value>) {
        let started = parse_params::<ProcessStartParams>(params).and_then(|params| {
            self.processes
                .start(&self.config, params, self.outgoing.clone())
        });
        match started {
            Ok((response, go)) => {
                self.reply(id, to_value(response)).await;
                let _ = go.send(());
            }
            Err(err) => self.reply(id, Err(err)).await,
        }
    }

    async fn dispatch(&self, name: &str, params: Option<Value>) -> Result<Value, RpcError> {
        if name.starts_with("fs/") || name == method::DISCOVER_V2 {
            // Filesystem calls block (a FIFO, a slow disk): keep them off the runtime's
            // threads.
            let config = Arc::clone(&self.config);
            let name = name.to_owned();
            return tokio::task::spawn_blocking(move || fs_call(&config.roots, &name, params))
                .await
                .unwrap_or_else(|e| {
                    Err(RpcError {
                        code: crate::protocol::code::INTERNAL,
                        message: format!("the filesystem call failed inside the server: {e}"),
                    })
                });
        }
        match name {
            method::ENVIRONMENT_INFO => to_value(self.config.environment_info()),
            method::ENVIRONMENT_STATUS => to_value(EnvironmentStatus {
                status: "ready".to_owned(),
            }),
            method::PROCESS_READ => {
                let params: ProcessReadParams = parse_params(params)?;
                to_value(self.processes.read(params).await?)
            }
            method::PROCESS_WRITE => {
                let params: ProcessWriteParams = parse_params(params)?;
                let bytes = BASE64
                    .decode(&params.chunk)
                    .map_err(|e| RpcError::invalid_params(format!("chunk is not base64: {e}")))?;
                let status = self.processes.write(&params.process_id, &bytes).await?;
                to_value(ProcessWriteResponse {
                    status: status.to_owned(),
                })
            }
            method::PROCESS_SIGNAL => {
                let params: ProcessSignalParams = parse_params(params)?;
                self.processes.signal(&params.process_id, &params.signal)?;
                Ok(json!({}))
            }
            method::PROCESS_TERMINATE => {
                let params: ProcessIdParams = parse_params(params)?;
                let running = self.processes.terminate(&params.process_id);
                to_value(ProcessTerminateResponse { running })
            }
            other => Err(RpcError::method_not_found(other)),
        }
    }
}

/// The `fs/*` methods and discovery, run on a blocking thread.
fn fs_call(roots: &fs::Roots, name: &str, params: Option<Value>) -> Result<Value, RpcError> {
    match name {
        method::FS_READ_FILE => {
            let params: PathParams = parse_params(params)?;
            to_value(fs::read_file(&fs::readable(roots, &params.path)?)?)
        }
        method::FS_WRITE_FILE => {
            let params: WriteFileParams = parse_params(params)?;
            fs::write_file(&fs::writable(roots, &params.path)?, &params.data_base64)?;
            Ok(json!({}))
        }
        method::FS_GET_METADATA => {
            let params: PathParams = parse_params(params)?;
            to_value(fs::metadata(&fs::readable(roots, &params.path)?)?)
        }
        method::FS_READ_DIRECTORY => {
            let params: PathParams = parse_params(params)?;
            to_value(fs::read_directory(&fs::readable(roots, &params.path)?)?)
        }
        method::FS_CANONICALIZE => {
            let params: PathParams = parse_params(params)?;
            to_value(fs::canonicalize(&fs::readable(roots, &params.path)?)?)
        }
        method::FS_WALK => {
            let params: WalkParams = parse_params(params)?;
            let root = fs::readable(roots, &params.path)?;
            to_value(fs::walk(roots, &root, &params.options)?)
        }
        method::FS_CREATE_DIRECTORY => {
            let params: CreateDirectoryParams = parse_params(params)?;
            fs::create_directory(&fs::writable(roots, &params.path)?, &params)?;
            Ok(json!({}))
        }
        method::FS_REMOVE => {
            let params: RemoveParams = parse_params(params)?;
            let path = fs::writable(roots, &params.path)?;
            if roots.is_root(&path) {
                return Err(RpcError::fs(format!(
                    "{} is one of this exec server's roots and cannot be removed",
                    path.display()
                )));
            }
            fs::remove(&path, &params)?;
            Ok(json!({}))
        }
        method::FS_COPY => {
            let params: CopyParams = parse_params(params)?;
            let source = fs::readable(roots, &params.source_path)?;
            let destination = fs::writable(roots, &params.destination_path)?;
            fs::copy(roots, &source, &destination, &params)?;
            Ok(json!({}))
        }
        method::DISCOVER_V2 => {
            let params: DiscoverV2Params = parse_params(params)?;
            fs::readable(roots, &params.cwd)?;
            to_value(DiscoverV2Response {
                plugins: Vec::new(),
                skills: Vec::new(),
                warnings: Vec::new(),
            })
        }
        other => Err(RpcError::method_not_found(other)),
    }
}

fn to_value(value: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError {
        code: crate::protocol::code::INTERNAL,
        message: format!("could not encode the result: {e}"),
    })
}
