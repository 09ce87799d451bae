//! The TUI's connection to the app server, spoken in the same JSON-RPC messages an editor
//! sends: by default an in-process [`Server`] served over a pair of `tokio::io::duplex`
//! pipes (one message a line), with `--remote ws://HOST:PORT` an `osprey app-server
//! --listen ws://…` elsewhere (one message a WebSocket text frame). The TUI has no other
//! way into the agent, so whatever it can do an editor can do too.
//!
//! [`AppClient`] sends requests and answers the server's approval requests; everything the
//! server sends unprompted arrives as [`ServerEvent`]s on a channel the UI loop reads. Both
//! transports feed the same router, so nothing above this file knows which one is in use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use osprey_app_server::{Server, ServerOptions};
use osprey_app_server_protocol::{
    ClientInfo, ClientRequest, InitializeParams, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, JsonRpcResponse, RequestId, ServerNotification, ServerRequest, ServerResponse,
    method,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest, http};

/// Bytes buffered in each direction of the in-process pipe.
const PIPE_BYTES: usize = 1 << 20;

/// What the server sent that the UI must react to.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    Notification(Box<ServerNotification>),
    /// A server → client request (an approval) the person must answer.
    Request {
        id: RequestId,
        request: Box<ServerRequest>,
    },
    /// A line the client could not understand: shown as a warning, never fatal.
    Unreadable(String),
    /// The connection ended; the reason is a sentence for the person, saying what to do.
    Closed {
        reason: String,
    },
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("the app server refused {method}: {message}")]
    Refused { method: String, message: String },
    #[error("the app server's reply to {method} did not parse: {source}")]
    BadReply {
        method: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("the connection to the app server closed while waiting for {method}")]
    Closed { method: String },
    #[error("could not send {method} to the app server: the connection is closed")]
    Write { method: String },
    #[error("could not start the app server: {0}")]
    Start(String),
    #[error("{0}")]
    Connect(String),
}

type Waiters = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, String>>>>>;

/// A cheap handle (clone it into tasks) on the connection.
#[derive(Clone)]
pub struct AppClient {
    /// Messages to send, one JSON text each; a task per transport writes them.
    outgoing: mpsc::UnboundedSender<String>,
    waiters: Waiters,
    next_id: Arc<Mutex<i64>>,
}

impl AppClient {
    /// Starts an in-process server and connects to it. Server events go to `events`; the
    /// server is returned so the caller can shut its threads down (saving them) at exit.
    pub fn start_in_process(
        options: ServerOptions,
        events: mpsc::UnboundedSender<ServerEvent>,
    ) -> Result<(Self, Arc<Server>), ClientError> {
        let server = Server::new(options).map_err(|e| ClientError::Start(e.to_string()))?;
        let (client_end, server_end) = tokio::io::duplex(PIPE_BYTES);
        let (server_read, server_write) = tokio::io::split(server_end);
        tokio::spawn(osprey_app_server::transport::serve_stream(
            Arc::clone(&server),
            server_read,
            server_write,
        ));
        let (client_read, mut client_write) = tokio::io::split(client_end);
        let waiters: Waiters = Arc::default();
        let (outgoing, mut lines) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(mut line) = lines.recv().await {
                line.push('\n');
                if client_write.write_all(line.as_bytes()).await.is_err()
                    || client_write.flush().await.is_err()
                {
                    break;
                }
            }
        });
        {
            let waiters = Arc::clone(&waiters);
            tokio::spawn(async move {
                let mut lines = BufReader::new(client_read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if !route(&line, &waiters, &events) {
                        return;
                    }
                }
                closed(
                    &waiters,
                    &events,
                    "the app server closed the connection; restart osprey to go on".to_owned(),
                );
            });
        }
        let client = Self {
            outgoing,
            waiters,
            next_id: Arc::new(Mutex::new(1)),
        };
        Ok((client, server))
    }

    /// Connects to an `osprey app-server --listen ws://…` at `url`, sending `token` (if
    /// any) as `Authorization: Bearer <token>`. Fails in plain words when the address is
    /// not a `ws://` one, nothing listens there, or the server refuses the token.
    pub async fn connect_remote(
        url: &str,
        token: Option<&str>,
        events: mpsc::UnboundedSender<ServerEvent>,
    ) -> Result<Self, ClientError> {
        let request = remote_request(url, token)?;
        let (socket, _) = tokio_tungstenite::connect_async(request)
            .await
            .map_err(|e| ClientError::Connect(connect_failure(url, &e)))?;
        let (mut sink, mut stream) = socket.split();
        let waiters: Waiters = Arc::default();
        let (outgoing, mut lines) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = lines.recv().await {
                if sink.send(Message::text(line)).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        {
            let waiters = Arc::clone(&waiters);
            let url = url.to_owned();
            tokio::spawn(async move {
                let why = loop {
                    let text = match stream.next().await {
                        Some(Ok(Message::Text(text))) => text.to_string(),
                        Some(Ok(Message::Binary(bytes))) => {
                            String::from_utf8_lossy(&bytes).into_owned()
                        }
                        Some(Ok(Message::Close(frame))) => {
                            break match frame.filter(|f| !f.reason.is_empty()) {
                                Some(f) => format!("the server closed it: {}", f.reason),
                                None => "the server closed it".to_owned(),
                            };
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(e)) => break e.to_string(),
                        None => break "the server went away".to_owned(),
                    };
                    if !route(&text, &waiters, &events) {
                        return;
                    }
                };
                closed(
                    &waiters,
                    &events,
                    format!(
                        "lost the connection to the app server at {url} ({why}); once it runs \
                         again, start `osprey --remote {url}` and `/resume` the session"
                    ),
                );
            });
        }
        Ok(Self {
            outgoing,
            waiters,
            next_id: Arc::new(Mutex::new(1)),
        })
    }

    fn write(&self, message: &JsonRpcMessage, method: &str) -> Result<(), ClientError> {
        self.outgoing
            .send(message.to_value().to_string())
            .map_err(|_| ClientError::Write {
                method: method.to_owned(),
            })
    }

    /// Sends `request` and waits for its typed result.
    pub async fn request<T: DeserializeOwned>(
        &self,
        request: ClientRequest,
    ) -> Result<T, ClientError> {
        let method = request.method().to_owned();
        let id = {
            let mut next = self.next_id.lock().map_err(|_| ClientError::Closed {
                method: method.clone(),
            })?;
            let id = *next;
            *next += 1;
            id
        };
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiters) = self.waiters.lock() {
            waiters.insert(id, tx);
        }
        self.write(
            &JsonRpcMessage::Request(JsonRpcRequest {
                id: RequestId::Integer(id),
                method: method.clone(),
                params: Some(request.to_value()),
            }),
            &method,
        )?;
        match rx.await {
            Ok(Ok(value)) => serde_json::from_value(value)
                .map_err(|source| ClientError::BadReply { method, source }),
            Ok(Err(message)) => Err(ClientError::Refused { method, message }),
            Err(_) => Err(ClientError::Closed { method }),
        }
    }

    /// The `initialize` handshake, then `initialized`.
    pub async fn initialize(&self, version: &str) -> Result<(), ClientError> {
        let _: Value = self
            .request(ClientRequest::Initialize(InitializeParams {
                client_info: ClientInfo {
                    name: "osprey_tui".to_owned(),
                    title: Some("Osprey TUI".to_owned()),
                    version: version.to_owned(),
                },
                capabilities: None,
            }))
            .await?;
        self.write(
            &JsonRpcMessage::Notification(JsonRpcNotification {
                method: method::INITIALIZED.to_owned(),
                params: None,
                emitted_at_ms: None,
            }),
            method::INITIALIZED,
        )
    }

    /// Answers a server → client request.
    pub async fn respond(
        &self,
        id: RequestId,
        response: ServerResponse,
    ) -> Result<(), ClientError> {
        let method = response.method();
        self.write(
            &JsonRpcMessage::Response(JsonRpcResponse {
                id,
                result: response.to_value(),
            }),
            method,
        )
    }
}

/// Routes one received message; false when the UI is gone and reading should stop.
fn route(line: &str, waiters: &Waiters, events: &mpsc::UnboundedSender<ServerEvent>) -> bool {
    match classify(line, waiters) {
        Some(event) => events.send(event).is_ok(),
        None => true,
    }
}

/// The connection ended: requests still waiting fail, and the UI is told why.
fn closed(waiters: &Waiters, events: &mpsc::UnboundedSender<ServerEvent>, reason: String) {
    if let Ok(mut waiters) = waiters.lock() {
        waiters.clear();
    }
    let _ = events.send(ServerEvent::Closed { reason });
}

/// The upgrade request for `url`, with the bearer token when there is one.
fn remote_request(url: &str, token: Option<&str>) -> Result<http::Request<()>, ClientError> {
    if url.starts_with("wss://") {
        return Err(ClientError::Connect(format!(
            "--remote {url}: wss:// (TLS) is not supported; connect with ws:// over a trusted \
             network or an SSH tunnel (ssh -L 4500:127.0.0.1:4500 HOST, then --remote \
             ws://127.0.0.1:4500)"
        )));
    }
    if !url.starts_with("ws://") {
        return Err(ClientError::Connect(format!(
            "--remote {url}: expected a WebSocket address such as ws://127.0.0.1:4500, where \
             `osprey app-server --listen ws://127.0.0.1:4500` runs"
        )));
    }
    let mut request = url.into_client_request().map_err(|e| {
        ClientError::Connect(format!(
            "--remote {url}: not a usable address ({e}); expected ws://HOST:PORT"
        ))
    })?;
    if let Some(token) = token {
        let value = http::HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            ClientError::Connect(
                "the remote token holds characters an HTTP header cannot carry; use the \
                 token of the server's --ws-token-file as it is"
                    .to_owned(),
            )
        })?;
        request
            .headers_mut()
            .insert(http::header::AUTHORIZATION, value);
    }
    Ok(request)
}

/// Why connecting to `url` failed, and what to do.
fn connect_failure(url: &str, error: &tungstenite::Error) -> String {
    match error {
        tungstenite::Error::Http(response)
            if response.status() == http::StatusCode::UNAUTHORIZED =>
        {
            format!(
                "the app server at {url} refused the connection (401 Unauthorized): it needs \
                 the token of its --ws-token-file; put it in a variable and pass \
                 --remote-auth-token-env VAR"
            )
        }
        tungstenite::Error::Http(response) => format!(
            "the app server at {url} refused the WebSocket upgrade (HTTP {}); is it an \
             `osprey app-server --listen ws://…`?",
            response.status()
        ),
        tungstenite::Error::Io(e) => format!(
            "could not connect to the app server at {url}: {e}; start it there with `osprey \
             app-server --listen {url}` (or check the host and port)"
        ),
        other => format!("could not connect to the app server at {url}: {other}"),
    }
}

/// Routes one line: replies wake their waiter; notifications and requests become events.
fn classify(line: &str, waiters: &Waiters) -> Option<ServerEvent> {
    let take = |id: &RequestId| match id {
        RequestId::Integer(n) => waiters.lock().ok().and_then(|mut w| w.remove(n)),
        RequestId::String(_) => None,
    };
    match JsonRpcMessage::parse(line) {
        Ok(JsonRpcMessage::Response(reply)) => {
            if let Some(waiter) = take(&reply.id) {
                let _ = waiter.send(Ok(reply.result));
            }
            None
        }
        Ok(JsonRpcMessage::Error(reply)) => {
            if let Some(waiter) = take(&reply.id) {
                let _ = waiter.send(Err(reply.error.message));
            }
            None
        }
        Ok(JsonRpcMessage::Notification(n)) => {
            match ServerNotification::from_parts(&n.method, n.params) {
                Ok(notification) => Some(ServerEvent::Notification(Box::new(notification))),
                // Notifications this client does not know yet are skipped quietly: the
                // protocol grows, and an unknown method is not an error for a client.
                Err(osprey_app_server_protocol::MethodError::UnknownMethod { .. }) => None,
                Err(e) => Some(ServerEvent::Unreadable(format!("{}: {e}", n.method))),
            }
        }
        Ok(JsonRpcMessage::Request(r)) => match ServerRequest::from_parts(&r.method, r.params) {
            Ok(request) => Some(ServerEvent::Request {
                id: r.id,
                request: Box::new(request),
            }),
            Err(e) => Some(ServerEvent::Unreadable(format!("{}: {e}", r.method))),
        },
        Err(e) => Some(ServerEvent::Unreadable(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn replies_wake_their_waiter_and_notifications_become_events() {
        let waiters: Waiters = Arc::default();
        let (tx, mut rx) = oneshot::channel();
        waiters.lock().unwrap().insert(7, tx);
        assert_eq!(classify(r#"{"id":7,"result":{"ok":true}}"#, &waiters), None);
        assert_eq!(rx.try_recv().unwrap(), Ok(serde_json::json!({"ok": true})));

        let event = classify(
            r#"{"method":"warning","params":{"threadId":null,"message":"careful"}}"#,
            &waiters,
        );
        assert!(
            matches!(&event, Some(ServerEvent::Notification(n)) if matches!(n.as_ref(), ServerNotification::Warning(w) if w.message == "careful")),
            "{event:?}"
        );
        assert_eq!(
            classify(r#"{"method":"some/future/thing","params":{}}"#, &waiters),
            None
        );
        assert!(matches!(
            classify("not json", &waiters),
            Some(ServerEvent::Unreadable(_))
        ));
    }
}
