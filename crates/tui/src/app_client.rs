//! The TUI's connection to the app server: an in-process [`Server`] served over a pair of
//! `tokio::io::duplex` pipes, spoken to in the same JSON-RPC lines an editor sends. The TUI
//! has no other way into the agent, so whatever it can do an editor can do too.
//!
//! [`AppClient`] sends requests and answers the server's approval requests; everything the
//! server sends unprompted arrives as [`ServerEvent`]s on a channel the UI loop reads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use osprey_app_server::{Server, ServerOptions};
use osprey_app_server_protocol::{
    ClientInfo, ClientRequest, InitializeParams, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, JsonRpcResponse, RequestId, ServerNotification, ServerRequest, ServerResponse,
    method,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::{mpsc, oneshot};

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
    /// The server closed the connection.
    Closed,
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
    #[error("could not write to the app server: {0}")]
    Write(#[source] std::io::Error),
    #[error("could not start the app server: {0}")]
    Start(String),
}

type Waiters = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, String>>>>>;

/// A cheap handle (clone it into tasks) on the connection.
#[derive(Clone)]
pub struct AppClient {
    writer: Arc<tokio::sync::Mutex<WriteHalf<DuplexStream>>>,
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
        let (client_read, client_write) = tokio::io::split(client_end);
        let waiters: Waiters = Arc::default();
        tokio::spawn(read_loop(client_read, Arc::clone(&waiters), events));
        let client = Self {
            writer: Arc::new(tokio::sync::Mutex::new(client_write)),
            waiters,
            next_id: Arc::new(Mutex::new(1)),
        };
        Ok((client, server))
    }

    async fn write(&self, message: &JsonRpcMessage) -> Result<(), ClientError> {
        let mut line = message.to_value().to_string();
        line.push('\n');
        let mut writer = self.writer.lock().await;
        writer
            .write_all(line.as_bytes())
            .await
            .map_err(ClientError::Write)?;
        writer.flush().await.map_err(ClientError::Write)
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
        self.write(&JsonRpcMessage::Request(JsonRpcRequest {
            id: RequestId::Integer(id),
            method: method.clone(),
            params: Some(request.to_value()),
        }))
        .await?;
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
        self.write(&JsonRpcMessage::Notification(JsonRpcNotification {
            method: method::INITIALIZED.to_owned(),
            params: None,
            emitted_at_ms: None,
        }))
        .await
    }

    /// Answers a server → client request.
    pub async fn respond(
        &self,
        id: RequestId,
        response: ServerResponse,
    ) -> Result<(), ClientError> {
        self.write(&JsonRpcMessage::Response(JsonRpcResponse {
            id,
            result: response.to_value(),
        }))
        .await
    }
}

async fn read_loop(
    reader: tokio::io::ReadHalf<DuplexStream>,
    waiters: Waiters,
    events: mpsc::UnboundedSender<ServerEvent>,
) {
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(event) = classify(&line, &waiters)
            && events.send(event).is_err()
        {
            return;
        }
    }
    if let Ok(mut waiters) = waiters.lock() {
        waiters.clear();
    }
    let _ = events.send(ServerEvent::Closed);
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
