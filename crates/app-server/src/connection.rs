//! One client connection: its handshake state, its outgoing queue, the server → client
//! requests waiting for an answer, and the loop that reads what the client sends.
//!
//! Requests are handled one at a time in the order they arrive (a client may send
//! `thread/start` and `turn/start` without waiting in between); answers to the server's own
//! requests (approvals) are routed as soon as they are read, so an approval never waits
//! behind a request. Malformed JSON gets no reply — it is logged on stderr and the
//! connection keeps serving, as Codex does.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use osprey_app_server_protocol::{
    ClientInfo, ClientNotification, ClientRequest, JsonRpcError, JsonRpcErrorBody, JsonRpcMessage,
    JsonRpcRequest, RequestId, ServerNotification, method,
};
use serde::Serialize;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::outgoing::{Delta, Outgoing};
use crate::server::Server;

/// What the client said about itself in `initialize`.
#[derive(Debug, Clone)]
pub struct ClientIdentity {
    pub info: ClientInfo,
    /// Notification methods the client asked not to get.
    pub opt_out: HashSet<String>,
}

/// The answer to a server → client request: the `result`, or the client's error.
pub type ClientAnswer = Result<Value, JsonRpcErrorBody>;

/// One client connection, shared by the reader, the request worker and the threads it
/// subscribed to.
pub struct Connection {
    pub id: u64,
    outgoing: Outgoing,
    identity: OnceLock<ClientIdentity>,
    next_request_id: AtomicI64,
    pending: Mutex<HashMap<i64, oneshot::Sender<ClientAnswer>>>,
}

static NEXT_CONNECTION: AtomicU64 = AtomicU64::new(1);

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Connection {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            id: NEXT_CONNECTION.fetch_add(1, Ordering::Relaxed),
            outgoing: Outgoing::new(),
            identity: OnceLock::new(),
            next_request_id: AtomicI64::new(0),
            pending: Mutex::new(HashMap::new()),
        })
    }

    pub fn outgoing(&self) -> &Outgoing {
        &self.outgoing
    }

    pub fn identity(&self) -> Option<&ClientIdentity> {
        self.identity.get()
    }

    pub fn is_open(&self) -> bool {
        !self.outgoing.is_closed()
    }

    fn wants(&self, method: &str) -> bool {
        self.identity
            .get()
            .is_none_or(|id| !id.opt_out.contains(method))
    }

    pub fn respond(&self, id: RequestId, result: Value) {
        self.outgoing
            .push(json!({"id": id, "result": result}).to_string());
    }

    pub fn respond_with<T: Serialize>(&self, id: RequestId, result: &T) {
        self.respond(id, to_value(result));
    }

    pub fn error(&self, id: RequestId, message: impl Into<String>) {
        let error = JsonRpcError::invalid_request(id, message);
        self.outgoing
            .push(JsonRpcMessage::Error(error).to_value().to_string());
    }

    /// Sends a notification stamped with `emittedAtMs`.
    pub fn notify(&self, notification: &ServerNotification) {
        let method = notification.method();
        if !self.wants(method) {
            return;
        }
        self.outgoing.push(
            json!({
                "method": method,
                "params": notification.to_value(),
                "emittedAtMs": now_ms(),
            })
            .to_string(),
        );
    }

    /// Sends a delta notification (which the queue may merge with the next one).
    pub fn notify_delta(&self, method: &'static str, params: Map<String, Value>, delta: String) {
        if !self.wants(method) {
            return;
        }
        self.outgoing.push_delta(Delta {
            method,
            params,
            delta,
            emitted_at_ms: now_ms(),
        });
    }

    /// Sends a request to the client; the receiver gets its answer (or is dropped when the
    /// connection ends).
    pub fn request(&self, method: &str, params: Value) -> (i64, oneshot::Receiver<ClientAnswer>) {
        let id = self.next_request_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        self.outgoing
            .push(json!({"method": method, "id": id, "params": params}).to_string());
        (id, rx)
    }

    /// Forgets a request nobody waits for any more.
    pub fn forget_request(&self, id: i64) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(&id);
        }
    }

    fn answer(&self, id: &RequestId, answer: ClientAnswer) {
        let RequestId::Integer(n) = id else {
            tracing::warn!("the client answered request {id}, which this server never sent");
            return;
        };
        let waiter = self.pending.lock().ok().and_then(|mut p| p.remove(n));
        match waiter {
            Some(tx) => {
                let _ = tx.send(answer);
            }
            None => tracing::warn!(
                "the client answered request {n}, which is not pending (already answered or resolved)"
            ),
        }
    }

    /// Ends the connection: the writer stops, pending requests are dropped.
    pub fn close(&self) {
        self.outgoing.close();
        if let Ok(mut pending) = self.pending.lock() {
            pending.clear();
        }
    }
}

pub(crate) fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Reads the client's lines until they end, handling each; then unsubscribes the connection
/// from every thread. `lines` yields one JSON text per message.
pub async fn serve_connection(
    server: Arc<Server>,
    connection: Arc<Connection>,
    mut lines: mpsc::Receiver<String>,
) {
    let (work_tx, mut work_rx) = mpsc::unbounded_channel::<JsonRpcRequest>();
    let worker = {
        let server = Arc::clone(&server);
        let connection = Arc::clone(&connection);
        tokio::spawn(async move {
            while let Some(request) = work_rx.recv().await {
                crate::handlers::dispatch(&server, &connection, request).await;
            }
        })
    };
    while let Some(line) = lines.recv().await {
        if !connection.is_open() {
            // The writer gave up (the client fell too far behind or its side broke).
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let message = match JsonRpcMessage::parse(&line) {
            Ok(message) => message,
            Err(e) => {
                tracing::warn!("ignoring a message that is not JSON-RPC: {e}");
                continue;
            }
        };
        match message {
            JsonRpcMessage::Request(request) => {
                if request.method == method::INITIALIZE {
                    initialize(&server, &connection, request);
                } else if connection.identity().is_none() {
                    connection.error(request.id, "Not initialized");
                } else if work_tx.send(request).is_err() {
                    break;
                }
            }
            JsonRpcMessage::Response(response) => {
                connection.answer(&response.id, Ok(response.result));
            }
            JsonRpcMessage::Error(error) => connection.answer(&error.id, Err(error.error)),
            JsonRpcMessage::Notification(note) => {
                if let Err(e) = ClientNotification::from_method(&note.method) {
                    tracing::warn!("ignoring client notification: {e}");
                }
            }
        }
    }
    drop(work_tx);
    let _ = worker.await;
    server.connection_closed(&connection);
    connection.close();
}

/// `initialize`: answered at once (not behind other requests), exactly once.
fn initialize(server: &Server, connection: &Connection, request: JsonRpcRequest) {
    let params = match ClientRequest::from_parts(&request.method, request.params) {
        Ok(ClientRequest::Initialize(params)) => params,
        Ok(_) => return connection.error(request.id, "Invalid request: not an initialize"),
        Err(e) => return connection.error(request.id, e.to_string()),
    };
    let opt_out = params
        .capabilities
        .as_ref()
        .and_then(|c| c.opt_out_notification_methods.clone())
        .unwrap_or_default()
        .into_iter()
        .collect();
    let identity = ClientIdentity {
        info: params.client_info,
        opt_out,
    };
    let response = server.initialize_response(&identity.info);
    if connection.identity.set(identity).is_err() {
        return connection.error(request.id, "Already initialized");
    }
    connection.respond_with(request.id, &response);
}
