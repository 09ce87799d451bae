//! How clients reach the exec server: JSON lines on stdin/stdout (what `ssh host osprey
//! exec-server --listen stdio`, `docker exec -i` and `kubectl exec -i` carry), or one JSON
//! message per WebSocket frame. WebSocket listens on loopback unless a capability token is
//! given (stricter than Codex, which binds anywhere without one); a missing or wrong
//! `Authorization: Bearer` token gets `401 Unauthorized` and nothing else.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http;

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

/// The capability token from `--ws-token-file` (trimmed; at least 16 characters).
pub fn read_token(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--ws-token-file {}: {e}", path.display()))?;
    let token = text.trim().to_owned();
    if token.len() < 16 {
        return Err(format!(
            "--ws-token-file {}: the token must be at least 16 characters",
            path.display()
        ));
    }
    Ok(token)
}

/// Refuses a listener other machines can reach when no token guards it.
pub fn check_ws_security(addr: &SocketAddr, token: Option<&str>) -> Result<(), String> {
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(format!(
            "--listen ws://{addr} is reachable from other machines and would run their commands; give a capability token with --ws-token-file FILE (clients send `Authorization: Bearer <token>`), or listen on 127.0.0.1"
        ));
    }
    Ok(())
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

fn authorised(request: &Request, token_digest: Option<&[u8; 32]>) -> bool {
    let Some(expected) = token_digest else {
        return true;
    };
    let Some(given) = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    // Comparing digests keeps the time taken independent of where the strings differ.
    digest(given.trim()) == *expected
}

/// Accepts WebSocket connections on `listener` until the task is dropped.
pub async fn serve_websocket(
    config: Arc<ServerConfig>,
    listener: tokio::net::TcpListener,
    token: Option<String>,
) {
    let token_digest = token.as_deref().map(digest);
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
        tokio::spawn(async move {
            #[allow(clippy::result_large_err)]
            let check = |request: &Request, response: Response| {
                // Browsers always send Origin and agents never do: a web page must not
                // reach a loopback server that runs commands.
                if request.headers().contains_key(http::header::ORIGIN) {
                    tracing::warn!(
                        "refused a WebSocket connection from {peer}: it came from a web page (Origin header)"
                    );
                    let mut refusal = ErrorResponse::new(Some("forbidden".to_owned()));
                    *refusal.status_mut() = http::StatusCode::FORBIDDEN;
                    return Err(refusal);
                }
                if authorised(request, token_digest.as_ref()) {
                    Ok(response)
                } else {
                    tracing::warn!(
                        "refused a WebSocket connection from {peer}: missing or wrong capability token"
                    );
                    let mut refusal = ErrorResponse::new(Some("unauthorized".to_owned()));
                    *refusal.status_mut() = http::StatusCode::UNAUTHORIZED;
                    Err(refusal)
                }
            };
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

    #[test]
    fn an_open_listener_needs_a_token() {
        let open: SocketAddr = "0.0.0.0:1".parse().unwrap();
        assert!(check_ws_security(&open, None).is_err());
        assert!(check_ws_security(&open, Some("0123456789abcdef")).is_ok());
        let local: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(check_ws_security(&local, None).is_ok());
    }
}
