//! What can go wrong talking to a model provider, with enough context to act on it.

use std::time::Duration;

use osprey_protocol::{ErrorKind, WireError};

/// An error from [`crate::ModelClient`]: before a request is sent (configuration), while
/// sending it (HTTP status, connection), or while reading its stream.
///
/// Every variant names the provider and, where one was involved, the URL, so the message is
/// complete on its own. [`ModelError::to_wire`] maps it to the error kind front ends see.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider needs an API key and its environment variable is unset or empty.
    #[error(
        "model provider `{provider_name}` needs an API key, but the environment variable \
         {env_var} is not set{}",
        match instructions {
            Some(hint) => format!(". {hint}"),
            None => format!("; set it (for example `export {env_var}=...`) and run again"),
        }
    )]
    MissingApiKey {
        provider_name: String,
        env_var: String,
        instructions: Option<String>,
    },

    /// The provider's configuration cannot produce a valid request (bad URL, header).
    #[error("model provider `{provider}` is misconfigured: {reason}")]
    Config { provider: String, reason: String },

    /// An in-process provider could not be started (its model is missing, or it is not
    /// part of this program). `reason` says what to do.
    #[error("model provider `{provider}` is not available: {reason}")]
    Unavailable { provider: String, reason: String },

    /// The server answered with an error status that is not worth retrying, or retries ran
    /// out. `message` is the server's own explanation.
    #[error(
        "model provider `{provider}` answered {status} for POST {url}: {message}{}",
        retry_note(*attempts)
    )]
    Http {
        provider: String,
        url: String,
        status: u16,
        /// The provider's error code (`error.code` in the JSON body), when it sent one.
        code: Option<String>,
        message: String,
        /// How many requests were sent in total.
        attempts: u64,
    },

    /// The server could not be reached (DNS, refused connection, TLS, no response headers).
    #[error(
        "could not reach model provider `{provider}` at {url}: {reason}{}; check that the \
         server is running and `base_url` is right",
        retry_note(*attempts)
    )]
    Connect {
        provider: String,
        url: String,
        reason: String,
        attempts: u64,
    },

    /// The provider reported that the conversation no longer fits the model's context.
    #[error(
        "the conversation is too long for the model's context window (provider `{provider}`): \
         {message}; compact the conversation or start a new one"
    )]
    ContextWindowExceeded { provider: String, message: String },

    /// The account has no quota or credit left.
    #[error(
        "model provider `{provider}` reports the account is out of quota: {message}; check \
         the plan and billing details"
    )]
    QuotaExceeded { provider: String, message: String },

    /// The provider rate-limited a stream and retries ran out.
    #[error("model provider `{provider}` is rate limiting requests: {message}{}", retry_note(*attempts))]
    RateLimited {
        provider: String,
        message: String,
        attempts: u64,
    },

    /// The provider failed the response with a code we do not retry.
    #[error("model provider `{provider}` failed the response ({}): {message}", code.as_deref().unwrap_or("no error code"))]
    ResponseFailed {
        provider: String,
        code: Option<String>,
        message: String,
    },

    /// The stream broke before the response completed, and stream retries ran out.
    #[error(
        "the response stream from model provider `{provider}` ({url}) failed: {fault}{}",
        retry_note(*attempts)
    )]
    Stream {
        provider: String,
        url: String,
        fault: StreamFault,
        attempts: u64,
    },
}

/// Why a response stream is unusable; each one makes the client retry the request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamFault {
    /// The connection broke mid-body.
    #[error("the connection closed mid-stream ({0})")]
    Dropped(String),
    /// The body ended cleanly but before the response was complete.
    #[error("the stream ended before the response completed")]
    EndedEarly,
    /// Nothing arrived for longer than the provider's `stream_idle_timeout_ms`.
    #[error(
        "no data arrived for {} ms (the provider's stream_idle_timeout_ms)",
        .0.as_millis()
    )]
    Idle(Duration),
    /// A frame was not valid SSE or its data was not the JSON the API promises.
    #[error("the server sent malformed stream data: {0}")]
    Malformed(String),
}

fn retry_note(attempts: u64) -> String {
    if attempts > 1 {
        format!(" (after {attempts} attempts)")
    } else {
        String::new()
    }
}

impl ModelError {
    /// The error as front ends see it: a kind they can branch on and this message.
    pub fn to_wire(&self) -> WireError {
        WireError::new(self.kind(), self.to_string())
    }

    /// The kind of failure, for front ends and for deciding what the user can do.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::MissingApiKey { .. } => ErrorKind::Unauthorized,
            Self::Config { .. } | Self::Unavailable { .. } => ErrorKind::Config,
            Self::Http {
                status,
                code,
                message,
                ..
            } => status_kind(*status, code.as_deref(), message),
            Self::Connect { .. } => ErrorKind::ConnectionFailed,
            Self::ContextWindowExceeded { .. } => ErrorKind::ContextWindowExceeded,
            Self::QuotaExceeded { .. } => ErrorKind::QuotaExceeded,
            Self::RateLimited { .. } => ErrorKind::RateLimited,
            Self::ResponseFailed { .. } => ErrorKind::Other,
            Self::Stream { .. } => ErrorKind::StreamFailed,
        }
    }
}

fn status_kind(status: u16, code: Option<&str>, message: &str) -> ErrorKind {
    match code {
        Some("context_length_exceeded") => return ErrorKind::ContextWindowExceeded,
        Some("insufficient_quota") => return ErrorKind::QuotaExceeded,
        _ => {}
    }
    if matches!(status, 400 | 413) && mentions_context_overflow(message) {
        return ErrorKind::ContextWindowExceeded;
    }
    match status {
        401 | 403 => ErrorKind::Unauthorized,
        429 => ErrorKind::RateLimited,
        400 | 404 | 413 | 422 => ErrorKind::BadRequest,
        500..=599 => ErrorKind::ServerError,
        _ => ErrorKind::Other,
    }
}

/// How servers without OpenAI's error code say the request is too long (llama.cpp, vLLM,
/// Ollama, LM Studio, Anthropic-style gateways).
fn mentions_context_overflow(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "context length",
        "context size",
        "context window",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "exceeds the available context",
    ]
    .iter()
    .any(|phrase| message.contains(phrase))
}

impl ModelError {
    /// Whether the provider refused the request as too long for the model's context window,
    /// by any of the ways providers say so.
    pub fn is_context_window_exceeded(&self) -> bool {
        self.kind() == ErrorKind::ContextWindowExceeded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn context_overflow_is_recognised_in_every_form() {
        let http = |status, code: Option<&str>, message: &str| ModelError::Http {
            provider: "p".into(),
            url: "u".into(),
            status,
            code: code.map(str::to_string),
            message: message.into(),
            attempts: 1,
        };
        assert!(http(400, Some("context_length_exceeded"), "x").is_context_window_exceeded());
        assert!(
            http(
                400,
                None,
                "the request exceeds the available context size, try increasing it"
            )
            .is_context_window_exceeded()
        );
        assert!(!http(400, None, "unknown parameter `foo`").is_context_window_exceeded());
        assert!(!http(500, None, "context length").is_context_window_exceeded());
        assert!(
            ModelError::ContextWindowExceeded {
                provider: "p".into(),
                message: "m".into()
            }
            .is_context_window_exceeded()
        );
    }

    #[test]
    fn missing_key_names_the_variable_and_the_provider() {
        let err = ModelError::MissingApiKey {
            provider_name: "OpenAI".into(),
            env_var: "OPENAI_API_KEY".into(),
            instructions: None,
        };
        let text = err.to_string();
        assert!(
            text.contains("OpenAI") && text.contains("export OPENAI_API_KEY="),
            "{text}"
        );
        assert_eq!(err.to_wire().kind, ErrorKind::Unauthorized);
    }

    #[test]
    fn http_errors_map_by_code_then_status() {
        let http = |status, code: Option<&str>| ModelError::Http {
            provider: "p".into(),
            url: "u".into(),
            status,
            code: code.map(str::to_owned),
            message: "m".into(),
            attempts: 1,
        };
        assert_eq!(http(401, None).kind(), ErrorKind::Unauthorized);
        assert_eq!(http(400, None).kind(), ErrorKind::BadRequest);
        assert_eq!(http(503, None).kind(), ErrorKind::ServerError);
        assert_eq!(http(429, None).kind(), ErrorKind::RateLimited);
        assert_eq!(
            http(429, Some("insufficient_quota")).kind(),
            ErrorKind::QuotaExceeded
        );
        assert_eq!(
            http(400, Some("context_length_exceeded")).kind(),
            ErrorKind::ContextWindowExceeded
        );
        assert!(!http(400, None).to_string().contains("attempts"));
    }
}
