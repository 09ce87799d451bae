//! Transports: stdio (the default), a Unix socket, and WebSocket. Each carries one JSON
//! message per line (stdio, Unix socket) or per text frame (WebSocket) into
//! [`serve_connection`], and writes the connection's outgoing queue back.
//!
//! WebSocket listens on loopback unless told otherwise. Listening on any other address
//! needs a capability token (`--ws-token-file`): the client sends it as
//! `Authorization: Bearer <token>` on the upgrade request; a missing or wrong token is
//! answered with 401 and logged, and nothing else is revealed. With a token file, loopback
//! connections need the token too. Any upgrade carrying an `Origin` header (a web page) is
//! refused with 403. The admission rules are the exec server's (`osprey_exec_server::ws_auth`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use osprey_exec_server::ws_auth::Gate;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};

use crate::connection::{Connection, serve_connection};
use crate::server::Server;

/// Where to listen (`--listen`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    Stdio,
    WebSocket(SocketAddr),
    Unix(PathBuf),
}

impl Listen {
    /// Parses `stdio://`, `ws://IP:PORT` or `unix://PATH`.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text == "stdio://" || text == "stdio" {
            return Ok(Listen::Stdio);
        }
        if let Some(addr) = text.strip_prefix("ws://") {
            let addr = addr.trim_end_matches('/');
            return addr.parse().map(Listen::WebSocket).map_err(|_| {
                format!("--listen {text}: expected ws://IP:PORT, for example ws://127.0.0.1:4500")
            });
        }
        if let Some(path) = text.strip_prefix("unix://") {
            if path.is_empty() {
                return Err(format!(
                    "--listen {text}: give the socket's path, for example unix:///tmp/osprey.sock"
                ));
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        Err(format!(
            "--listen {text}: unknown transport; use stdio://, ws://IP:PORT or unix://PATH"
        ))
    }
}

/// Most bytes in one message (a line or a frame); longer ones end the connection.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Serves one connection over a byte stream (stdio, a Unix socket, test pipes) until the
/// client closes its side.
pub async fn serve_stream<R, W>(server: Arc<Server>, reader: R, mut writer: W)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let connection = Connection::new();
    let (tx, rx) = mpsc::channel::<String>(64);
    let reading = tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) => break,
                Ok(_) if line.len() > MAX_MESSAGE_BYTES => {
                    tracing::warn!(
                        "a message of {} bytes is over the {MAX_MESSAGE_BYTES}-byte limit; closing the connection",
                        line.len()
                    );
                    break;
                }
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                    if tx.send(text).await.is_err() {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!("reading from the client failed: {e}");
                    break;
                }
            }
        }
    });
    let writing = {
        let connection = Arc::clone(&connection);
        tokio::spawn(async move {
            while let Some(line) = connection.outgoing().next().await {
                let ok = writer.write_all(line.as_bytes()).await.is_ok()
                    && writer.write_all(b"\n").await.is_ok()
                    && writer.flush().await.is_ok();
                if !ok {
                    connection.close();
                    break;
                }
            }
        })
    };
    serve_connection(server, connection, rx).await;
    reading.abort();
    let _ = writing.await;
}

pub use osprey_exec_server::ws_auth::{check_ws_security, read_token};

/// Accepts WebSocket connections on `listener` forever.
pub async fn serve_websocket(
    server: Arc<Server>,
    listener: tokio::net::TcpListener,
    token: Option<String>,
) {
    let gate = Gate::new(token.as_deref());
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!("accepting a connection failed: {e}");
                continue;
            }
        };
        // Notifications are small and a client waits on each: without TCP_NODELAY, Nagle's
        // algorithm holds a write while the previous one is unacknowledged (~40 ms).
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("could not set TCP_NODELAY for {peer}: {e}");
        }
        let server = Arc::clone(&server);
        let gate = gate.clone();
        tokio::spawn(async move {
            // tungstenite's callback type fixes the (large) error type.
            #[allow(clippy::result_large_err)]
            let check = |request: &Request, response: Response| gate.admit(request, response, peer);
            match tokio_tungstenite::accept_hdr_async(stream, check).await {
                Ok(socket) => serve_socket(server, socket).await,
                Err(e) => tracing::debug!("WebSocket handshake with {peer} failed: {e}"),
            }
        });
    }
}

async fn serve_socket<S>(server: Arc<Server>, socket: tokio_tungstenite::WebSocketStream<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = socket.split();
    let connection = Connection::new();
    let (tx, rx) = mpsc::channel::<String>(64);
    let reading = tokio::spawn(async move {
        while let Some(message) = stream.next().await {
            match message {
                Ok(Message::Text(text)) => {
                    if tx.send(text.to_string()).await.is_err() {
                        break;
                    }
                }
                Ok(Message::Binary(bytes)) => {
                    if tx
                        .send(String::from_utf8_lossy(&bytes).into_owned())
                        .await
                        .is_err()
                    {
                        break;
                    }
                }
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
    });
    let writing = {
        let connection = Arc::clone(&connection);
        tokio::spawn(async move {
            while let Some(line) = connection.outgoing().next().await {
                if sink.send(Message::text(line)).await.is_err() {
                    connection.close();
                    break;
                }
            }
            let _ = sink.close().await;
        })
    };
    serve_connection(server, connection, rx).await;
    reading.abort();
    let _ = writing.await;
}

/// Accepts Unix-socket connections forever (one JSON message per line).
pub async fn serve_unix(server: Arc<Server>, listener: tokio::net::UnixListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let server = Arc::clone(&server);
                let (reader, writer) = stream.into_split();
                tokio::spawn(serve_stream(server, reader, writer));
            }
            Err(e) => tracing::warn!("accepting a connection failed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_urls_parse_or_say_what_is_expected() {
        assert_eq!(Listen::parse("stdio://").unwrap(), Listen::Stdio);
        assert_eq!(
            Listen::parse("ws://127.0.0.1:4500").unwrap(),
            Listen::WebSocket("127.0.0.1:4500".parse().unwrap())
        );
        assert_eq!(
            Listen::parse("unix:///tmp/a.sock").unwrap(),
            Listen::Unix("/tmp/a.sock".into())
        );
        assert!(
            Listen::parse("ws://localhost")
                .unwrap_err()
                .contains("ws://IP:PORT")
        );
        assert!(
            Listen::parse("http://x")
                .unwrap_err()
                .contains("unknown transport")
        );
    }

    #[test]
    fn only_loopback_may_listen_without_a_token() {
        let local: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let open: SocketAddr = "0.0.0.0:1".parse().unwrap();
        assert!(check_ws_security(&local, None).is_ok());
        assert!(
            check_ws_security(&open, None)
                .unwrap_err()
                .contains("--ws-token-file")
        );
        assert!(check_ws_security(&open, Some("a-long-enough-token")).is_ok());
    }
}
