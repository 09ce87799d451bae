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
use super::processes::{Notifier, ProcessTable};
use super::{RpcError, ServerConfig, parse_params};
use crate::protocol::{
    CopyParams, CreateDirectoryParams, DiscoverV2Params, DiscoverV2Response, EnvironmentStatus,
    InitializeParams, InitializeResponse, PathParams, ProcessIdParams, ProcessReadParams,
    ProcessSignalParams, ProcessStartParams, ProcessTerminateResponse, ProcessWriteParams,
    ProcessWriteResponse, RemoveParams, WalkParams, WriteFileParams, method,
};

/// Serves one connection: `incoming` yields the client's messages (one JSON text each),
/// `outgoing` takes the server's. Returns when the client closes its side; the
/// connection's processes are killed then.
pub async fn serve_lines(
    config: Arc<ServerConfig>,
    mut incoming: mpsc::Receiver<String>,
    outgoing: mpsc::UnboundedSender<String>,
) {
    let (jobs, queue) = mpsc::unbounded_channel::<Job>();
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
    let worker_tasks: Vec<_> = (0..workers)
        .map(|_| tokio::spawn(work(Arc::clone(&connection), Arc::clone(&queue))))
        .collect();
    while let Some(text) = incoming.recv().await {
        match JsonRpcMessage::parse(&text) {
            Ok(JsonRpcMessage::Request(request)) => connection.on_request(request),
            Ok(JsonRpcMessage::Notification(note)) => connection.on_notification(&note),
            Ok(JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)) => {
                tracing::debug!("ignoring a reply: this server sends no requests");
            }
            Err(err) => tracing::warn!("ignoring a message that is not JSON-RPC: {err}"),
        }
    }
    tracing::debug!("client closed the connection; stopping its processes");
    connection.processes.kill_all();
    for task in worker_tasks {
        task.abort();
    }
}

/// One request that passed the lifecycle checks.
struct Job {
    id: RequestId,
    method: String,
    params: Option<Value>,
}

async fn work(
    connection: Arc<Connection>,
    queue: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Job>>>,
) {
    loop {
        let next = queue.lock().await.recv().await;
        let Some(Job { id, method, params }) = next else {
            return;
        };
        if method == method::PROCESS_START {
            connection.start_process(id, params);
            continue;
        }
        let result = connection.dispatch(&method, params).await;
        connection.reply(id, result);
    }
}

struct Connection {
    config: Arc<ServerConfig>,
    outgoing: mpsc::UnboundedSender<String>,
    session_id: String,
    initialize_requested: AtomicBool,
    initialized: AtomicBool,
    processes: Arc<ProcessTable>,
    jobs: mpsc::UnboundedSender<Job>,
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
    fn send(&self, message: Value) {
        let _ = self.outgoing.send(message.to_string());
    }

    fn reply(&self, id: RequestId, result: Result<Value, RpcError>) {
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
        self.send(message);
    }

    fn notifier(&self) -> Notifier {
        let outgoing = self.outgoing.clone();
        Arc::new(move |name: &str, params: Value| {
            let note = JsonRpcNotification {
                method: name.to_owned(),
                params: Some(params),
                emitted_at_ms: None,
            };
            if let Ok(text) = serde_json::to_string(&note) {
                let _ = outgoing.send(text);
            }
        })
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

    fn on_request(&self, request: JsonRpcRequest) {
        let JsonRpcRequest { id, method, params } = request;
        if method == method::INITIALIZE {
            let result = self.initialize(params);
            self.reply(id, result);
            return;
        }
        let Some(family) = family(&method) else {
            self.reply(id, Err(RpcError::method_not_found(&method)));
            return;
        };
        if !self.initialize_requested.load(Ordering::SeqCst) {
            let message = format!("client must call initialize before using {family} methods");
            self.reply(id, Err(RpcError::invalid_request(message)));
            return;
        }
        if !self.initialized.load(Ordering::SeqCst) {
            let message = format!("client must send initialized before using {family} methods");
            self.reply(id, Err(RpcError::invalid_request(message)));
            return;
        }
        let _ = self.jobs.send(Job { id, method, params });
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
    fn start_process(&self, id: RequestId, params: Option<Value>) {
        let started = parse_params::<ProcessStartParams>(params)
            .and_then(|params| self.processes.start(&self.config, params, self.notifier()));
        match started {
            Ok((response, go)) => {
                self.reply(id, to_value(response));
                let _ = go.send(());
            }
            Err(err) => self.reply(id, Err(err)),
        }
    }

    async fn dispatch(&self, name: &str, params: Option<Value>) -> Result<Value, RpcError> {
        let roots = &self.config.roots;
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
                let status = self.processes.write(&params.process_id, &bytes).await;
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
                to_value(fs::walk(&root, &params.options)?)
            }
            method::FS_CREATE_DIRECTORY => {
                let params: CreateDirectoryParams = parse_params(params)?;
                fs::create_directory(&fs::writable(roots, &params.path)?, &params)?;
                Ok(json!({}))
            }
            method::FS_REMOVE => {
                let params: RemoveParams = parse_params(params)?;
                fs::remove(&fs::writable(roots, &params.path)?, &params)?;
                Ok(json!({}))
            }
            method::FS_COPY => {
                let params: CopyParams = parse_params(params)?;
                let source = fs::readable(roots, &params.source_path)?;
                let destination = fs::writable(roots, &params.destination_path)?;
                fs::copy(&source, &destination, &params)?;
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
}

fn to_value(value: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError {
        code: crate::protocol::code::INTERNAL,
        message: format!("could not encode the result: {e}"),
    })
}
