//! How clients reach the exec server: JSON lines on stdin/stdout (what `ssh host osprey
//! exec-server --listen stdio`, `docker exec -i` and `kubectl exec -i` carry), or one JSON
//! message per WebSocket frame. WebSocket listens on loopback unless a capability token is
//! given (stricter than Codex, which binds anywhere without one); a missing or wrong
//! `Authorization: Bearer` token gets `401 Unauthorized` and nothing else.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};

use crate::server::{ServerConfig, serve_lines};

/// The longest message accepted on a line; a longer one closes the connection.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// stdin / stdout.
    Stdio,
    /// A WebSocket listener (port 0 picks a free one; the bound URL is printed).
    WebSocket(SocketAddr),
}

impl Listen {
    /// Parses `stdio`, `stdio://` or `ws://IP:PORT`.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text == "stdio" || text == "stdio://" {
            return Ok(Self::Stdio);
        }
        if let Some(addr) = text.strip_prefix("ws://") {
            let addr = addr.trim_end_matches('/');
            return addr.parse().map(Self::WebSocket).map_err(|_| {
                format!(
                    "--listen {text}: expected ws://IP:PORT with a numeric address, e.g. ws://127.0.0.1:8765"
                )
            });
        }
        Err(format!(
            "--listen {text}: use `stdio` or `ws://IP:PORT` (e.g. ws://127.0.0.1:0)"
        ))
    }
}

/// Serves one connection over a byte stream until the client closes its side.
pub async fn serve_stream<R, W>(config: Arc<ServerConfig>, reader: R, mut writer: W)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (in_tx, in_rx) = mpsc::channel::<String>(64);
    let (out_tx, mut out_rx) = mpsc::channel::<String>(crate::server::OUTGOING_QUEUE);
    let reading = tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let mut line = Vec::new();
        loop {
            line.clear();
            // At most one byte over the limit is read, so a line without an end cannot
            // grow the buffer without bound.
            let mut limited = (&mut reader).take(MAX_MESSAGE_BYTES as u64 + 1);
            match limited.read_until(b'\n', &mut line).await {
                Ok(0) => break,
                Ok(_) if line.len() > MAX_MESSAGE_BYTES => {
                    tracing::warn!(
                        "a message of {} bytes is over the {MAX_MESSAGE_BYTES}-byte limit; closing the connection",
                        line.len()
                    );
                    break;
                }
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line).trim().to_owned();
                    if !text.is_empty() && in_tx.send(text).await.is_err() {
                        break;
                    }
                }
                Err(err) => {
                    tracing::warn!("reading from the client failed: {err}");
                    break;
                }
            }
        }
    });
    let writing = tokio::spawn(async move {
        while let Some(line) = out_rx.recv().await {
            let ok = writer.write_all(line.as_bytes()).await.is_ok()
                && writer.write_all(b"\n").await.is_ok()
                && writer.flush().await.is_ok();
            if !ok {
                break;
            }
        }
    });
    serve_lines(config, in_rx, out_tx).await;
    reading.abort();
    finish_writing(writing).await;
}

/// Lets replies already queued reach the client, then gives up on the rest.
async fn finish_writing(writing: tokio::task::JoinHandle<()>) {
    let abort = writing.abort_handle();
    if tokio::time::timeout(std::time::Duration::from_secs(1), writing)
        .await
        .is_err()
    {
        abort.abort();
    }
}

pub use crate::ws_auth::{check_ws_security, read_token};

/// Accepts WebSocket connections on `listener` until the task is dropped.
pub async fn serve_websocket(
    config: Arc<ServerConfig>,
    listener: tokio::net::TcpListener,
    token: Option<String>,
) {
    let gate = crate::ws_auth::Gate::new(token.as_deref());
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                tracing::warn!("accepting a connection failed: {err}");
                continue;
            }
        };
        // Replies are small and each is awaited: do not let Nagle's algorithm hold them.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!("could not set TCP_NODELAY for {peer}: {err}");
        }
        let config = Arc::clone(&config);
        let gate = gate.clone();
        tokio::spawn(async move {
            #[allow(clippy::result_large_err)]
            let check = |request: &Request, response: Response| gate.admit(request, response, peer);
            match tokio_tungstenite::accept_hdr_async(stream, check).await {
                Ok(socket) => serve_socket(config, socket).await,
                Err(err) => tracing::debug!("WebSocket handshake with {peer} failed: {err}"),
            }
        });
    }
}

async fn serve_socket<S>(config: Arc<ServerConfig>, socket: tokio_tungstenite::WebSocketStream<S>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sink, mut stream) = socket.split();
    let (in_tx, in_rx) = mpsc::channel::<String>(64);
    let (out_tx, mut out_rx) = mpsc::channel::<String>(crate::server::OUTGOING_QUEUE);
    let reading = tokio::spawn(async move {
        while let Some(message) = stream.next().await {
            let text = match message {
                Ok(Message::Text(text)) => text.to_string(),
                Ok(Message::Binary(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(_) => continue,
            };
            if in_tx.send(text).await.is_err() {
                break;
            }
        }
    });
    let writing = tokio::spawn(async move {
        while let Some(line) = out_rx.recv().await {
            if sink.send(Message::text(line)).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    serve_lines(config, in_rx, out_tx).await;
    reading.abort();
    finish_writing(writing).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_forms() {
        assert_eq!(Listen::parse("stdio").unwrap(), Listen::Stdio);
        assert_eq!(Listen::parse("stdio://").unwrap(), Listen::Stdio);
        assert!(matches!(
            Listen::parse("ws://127.0.0.1:0").unwrap(),
            Listen::WebSocket(_)
        ));
        assert!(
            Listen::parse("ws://localhost:1")
                .unwrap_err()
                .contains("numeric")
        );
        assert!(Listen::parse("tcp://x").unwrap_err().contains("stdio"));
    }
}
