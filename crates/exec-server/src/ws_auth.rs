//! Who may open a WebSocket to a server that runs commands (the exec server and the app
//! server share this): never a web page — a browser always sends `Origin`, agents and
//! editors' clients do not — and, when a capability token is set, only a client presenting
//! it as `Authorization: Bearer <token>`. A listener other machines can reach must have a
//! token. Tokens are compared as SHA-256 digests, so the time taken does not depend on where
//! a wrong token differs.

use std::net::SocketAddr;
use std::path::Path;

use sha2::{Digest, Sha256};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http;

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

/// The admission check for one listener.
#[derive(Debug, Clone)]
pub struct Gate {
    token_digest: Option<[u8; 32]>,
}

impl Gate {
    /// A gate requiring `token` when given.
    pub fn new(token: Option<&str>) -> Self {
        Self {
            token_digest: token.map(digest),
        }
    }

    /// Lets the upgrade through, or refuses it (403 for a web page, 401 for a missing or
    /// wrong token) and logs why, naming `peer`.
    #[allow(
        clippy::result_large_err,
        reason = "tungstenite's callback fixes the type"
    )]
    pub fn admit(
        &self,
        request: &Request,
        response: Response,
        peer: SocketAddr,
    ) -> Result<Response, ErrorResponse> {
        if request.headers().contains_key(http::header::ORIGIN) {
            tracing::warn!(
                "refused a WebSocket connection from {peer}: it came from a web page (Origin header)"
            );
            return Err(refusal(http::StatusCode::FORBIDDEN, "forbidden"));
        }
        if self.authorised(request) {
            return Ok(response);
        }
        tracing::warn!(
            "refused a WebSocket connection from {peer}: missing or wrong capability token"
        );
        Err(refusal(http::StatusCode::UNAUTHORIZED, "unauthorized"))
    }

    fn authorised(&self, request: &Request) -> bool {
        let Some(expected) = &self.token_digest else {
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
        digest(given.trim()) == *expected
    }
}

fn refusal(status: http::StatusCode, body: &str) -> ErrorResponse {
    let mut refusal = ErrorResponse::new(Some(body.to_owned()));
    *refusal.status_mut() = status;
    refusal
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_listener_needs_a_token() {
        let open: SocketAddr = "0.0.0.0:1".parse().unwrap();
        assert!(check_ws_security(&open, None).is_err());
        assert!(check_ws_security(&open, Some("0123456789abcdef")).is_ok());
        let local: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(check_ws_security(&local, None).is_ok());
    }

    fn request(headers: &[(&str, &str)]) -> Request {
        let mut builder = http::Request::builder().uri("ws://127.0.0.1/");
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn pages_are_refused_and_tokens_checked() {
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let gate = Gate::new(Some("right-token-0123456789"));
        let status = |r: Result<Response, ErrorResponse>| match r {
            Ok(_) => 101,
            Err(e) => e.status().as_u16(),
        };
        let ok = request(&[("authorization", "Bearer right-token-0123456789")]);
        assert_eq!(status(gate.admit(&ok, Response::new(()), peer)), 101);
        let wrong = request(&[("authorization", "Bearer wrong")]);
        assert_eq!(status(gate.admit(&wrong, Response::new(()), peer)), 401);
        let none = request(&[]);
        assert_eq!(status(gate.admit(&none, Response::new(()), peer)), 401);
        let page = request(&[
            ("origin", "http://evil.example"),
            ("authorization", "Bearer right-token-0123456789"),
        ]);
        assert_eq!(status(gate.admit(&page, Response::new(()), peer)), 403);
        let open = Gate::new(None);
        assert_eq!(status(open.admit(&none, Response::new(()), peer)), 101);
        assert_eq!(status(open.admit(&page, Response::new(()), peer)), 403);
    }
}
