//! The HTTP wire adapter: one provider, its endpoint and headers, request retries and the
//! task that reads (and, when it breaks, re-requests) a streamed response.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use bytes::Bytes;
use osprey_config::{ModelProviderInfo, WireApi};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio::sync::mpsc;
use tracing::{debug, warn};

use crate::chat::{self, ChatDecoder};
use crate::decode::{Decoder, Failure, Pumped, error_chain, pump};
use crate::prompt::{Prompt, ResponseEvent, ResponseStream};
use crate::responses::{self, ResponsesDecoder};
use crate::retry::{backoff, error_body_message, retry_after, try_again_hint};
use crate::{ModelError, WireAdapter};

/// Used when a provider has no `base_url`.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The default base of the exponential backoff between retries.
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(200);

/// How long connecting may take before it counts as a connection failure.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Events buffered between the reading task and the consumer.
const EVENT_BUFFER: usize = 256;

/// Provider error codes inside a stream that are worth sending the request again for.
const RETRYABLE_STREAM_CODES: &[&str] = &[
    "rate_limit_exceeded",
    "server_error",
    "server_is_overloaded",
    "slow_down",
];

/// Speaks one provider's HTTP API (Responses or Chat Completions).
#[derive(Debug, Clone)]
pub(crate) struct HttpAdapter {
    provider: ModelProviderInfo,
    http: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    pub(crate) backoff_base: Duration,
}

impl HttpAdapter {
    pub(crate) fn new(
        provider: ModelProviderInfo,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ModelError> {
        let config_error = |reason: String| ModelError::Config {
            provider: provider.name.clone(),
            reason,
        };
        let non_empty = |var: &str| env(var).filter(|value| !value.trim().is_empty());

        let api_key = match &provider.env_key {
            Some(var) => Some(non_empty(var).ok_or_else(|| ModelError::MissingApiKey {
                provider_name: provider.name.clone(),
                env_var: var.clone(),
                instructions: provider.env_key_instructions.clone(),
            })?),
            None => None,
        };

        let base = provider.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let path = match provider.wire_api {
            WireApi::Responses => "responses",
            WireApi::Chat => "chat/completions",
        };
        let joined = format!("{}/{path}", base.trim_end_matches('/'));
        let mut url = reqwest::Url::parse(&joined)
            .map_err(|err| config_error(format!("base_url `{base}` is not a valid URL ({err})")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(config_error(format!(
                "base_url `{base}` must start with http:// or https://"
            )));
        }
        if !provider.query_params.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (key, value) in &provider.query_params {
                pairs.append_pair(key, value);
            }
        }

        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let mut add = |name: &str, value: &str, what: &str| -> Result<(), ModelError> {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| config_error(format!("{what} `{name}` is not a valid header name")))?;
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                config_error(format!(
                    "the value of {what} `{name}` is not a valid header value"
                ))
            })?;
            value.set_sensitive(name == AUTHORIZATION);
            headers.insert(name, value);
            Ok(())
        };
        for (name, value) in &provider.http_headers {
            add(name, value, "http_headers entry")?;
        }
        for (name, var) in &provider.env_http_headers {
            if let Some(value) = non_empty(var) {
                add(name, value.trim(), "env_http_headers entry")?;
            }
        }
        if let Some(key) = api_key {
            add("authorization", &format!("Bearer {}", key.trim()), "header")?;
        }

        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|err| config_error(format!("could not build the HTTP client ({err})")))?;
        Ok(Self {
            provider,
            http,
            url,
            headers,
            backoff_base: DEFAULT_BACKOFF_BASE,
        })
    }

    pub(crate) fn provider(&self) -> &ModelProviderInfo {
        &self.provider
    }

    /// The endpoint URL with query parameters.
    pub(crate) fn url(&self) -> &str {
        self.url.as_str()
    }

    /// Sends `body`, retrying 408/429/5xx answers and connection failures up to the
    /// provider's `request_max_retries`. Returns the response once it has a success status.
    async fn send(&self, body: &Bytes) -> Result<reqwest::Response, ModelError> {
        let max_retries = self.provider.request_max_retries();
        let header_timeout = self.provider.stream_idle_timeout();
        let mut retries = 0u64;
        loop {
            let attempts = retries + 1;
            let request = self
                .http
                .post(self.url.clone())
                .headers(self.headers.clone())
                .body(body.clone())
                .send();
            let (hint, error) = match tokio::time::timeout(header_timeout, request).await {
                Ok(Ok(response)) if response.status().is_success() => return Ok(response),
                Ok(Ok(response)) => {
                    let status = response.status();
                    let hint = retry_after(response.headers(), SystemTime::now());
                    let text = match tokio::time::timeout(header_timeout, response.text()).await {
                        Ok(Ok(text)) => text,
                        Ok(Err(err)) => format!("(could not read the body: {})", error_chain(&err)),
                        Err(_) => "(the error body did not arrive in time)".to_owned(),
                    };
                    let (message, code) = error_body_message(&text);
                    let retryable = matches!(status, StatusCode::REQUEST_TIMEOUT)
                        || (status == StatusCode::TOO_MANY_REQUESTS
                            && code.as_deref() != Some("insufficient_quota"))
                        || status.is_server_error();
                    let error = ModelError::Http {
                        provider: self.provider.name.clone(),
                        url: self.url.to_string(),
                        status: status.as_u16(),
                        code,
                        message,
                        attempts,
                    };
                    if !retryable {
                        return Err(error);
                    }
                    (hint, error)
                }
                Ok(Err(err)) if err.is_builder() => {
                    return Err(ModelError::Config {
                        provider: self.provider.name.clone(),
                        reason: format!("could not build the request ({})", error_chain(&err)),
                    });
                }
                Ok(Err(err)) => (None, self.connect_error(error_chain(&err), attempts)),
                Err(_elapsed) => (
                    None,
                    self.connect_error(
                        format!(
                            "no response headers within {} ms (stream_idle_timeout_ms)",
                            header_timeout.as_millis()
                        ),
                        attempts,
                    ),
                ),
            };
            if retries >= max_retries {
                return Err(error);
            }
            retries += 1;
            let wait = hint.unwrap_or_else(|| backoff(self.backoff_base, retries));
            debug!(%error, retry = retries, max_retries, wait_ms = wait.as_millis(), "retrying model request");
            tokio::time::sleep(wait).await;
        }
    }

    fn connect_error(&self, reason: String, attempts: u64) -> ModelError {
        ModelError::Connect {
            provider: self.provider.name.clone(),
            url: self.url.to_string(),
            reason,
            attempts,
        }
    }

    /// Reads `response`; when its stream breaks, tells the consumer and sends the request
    /// again, up to the provider's `stream_max_retries`.
    async fn drive(
        self: Arc<Self>,
        mut response: reqwest::Response,
        body: Bytes,
        make_decoder: impl Fn() -> Box<dyn Decoder> + Send + Sync,
        tx: mpsc::Sender<Result<ResponseEvent, ModelError>>,
    ) {
        let max = self.provider.stream_max_retries();
        let idle = self.provider.stream_idle_timeout();
        let mut retries = 0u64;
        loop {
            let mut decoder = make_decoder();
            let failure = match pump(response, decoder.as_mut(), &tx, idle).await {
                Pumped::Completed | Pumped::ConsumerGone => return,
                Pumped::Failed(failure) => failure,
            };
            let (retryable, hint, reason, error) = self.classify(failure, retries + 1);
            if !retryable || retries >= max {
                let _ = tx.send(Err(error)).await;
                return;
            }
            retries += 1;
            warn!(provider = %self.provider.name, %reason, retry = retries, max, "model stream failed; sending the request again");
            let notice = ResponseEvent::RetryingStream {
                attempt: retries,
                max,
                reason,
            };
            if tx.send(Ok(notice)).await.is_err() {
                return;
            }
            let wait = hint.unwrap_or_else(|| backoff(self.backoff_base, retries));
            tokio::select! {
                () = tx.closed() => return,
                () = tokio::time::sleep(wait) => {}
            }
            response = tokio::select! {
                () = tx.closed() => return,
                sent = self.send(&body) => match sent {
                    Ok(response) => response,
                    Err(err) => {
                        let _ = tx.send(Err(err)).await;
                        return;
                    }
                },
            };
        }
    }

    /// Whether a failed attempt is worth retrying, how long the provider asked us to wait,
    /// a one-line reason for the consumer, and the error to report if it is final.
    fn classify(
        &self,
        failure: Failure,
        attempts: u64,
    ) -> (bool, Option<Duration>, String, ModelError) {
        let provider = self.provider.name.clone();
        match failure {
            Failure::Broken(fault) => (
                true,
                None,
                fault.to_string(),
                ModelError::Stream {
                    provider,
                    url: self.url.to_string(),
                    fault,
                    attempts,
                },
            ),
            Failure::Provider { code, message } => {
                let reason = format!(
                    "{} ({})",
                    message,
                    code.as_deref().unwrap_or("no error code")
                );
                match code.as_deref() {
                    Some("context_length_exceeded") => (
                        false,
                        None,
                        reason,
                        ModelError::ContextWindowExceeded { provider, message },
                    ),
                    Some("insufficient_quota") => (
                        false,
                        None,
                        reason,
                        ModelError::QuotaExceeded { provider, message },
                    ),
                    Some("rate_limit_exceeded") => (
                        true,
                        try_again_hint(&message),
                        reason,
                        ModelError::RateLimited {
                            provider,
                            message,
                            attempts,
                        },
                    ),
                    other => (
                        other.is_none_or(|code| RETRYABLE_STREAM_CODES.contains(&code)),
                        None,
                        reason,
                        ModelError::ResponseFailed {
                            provider,
                            code,
                            message,
                        },
                    ),
                }
            }
        }
    }
}

#[async_trait]
impl WireAdapter for Arc<HttpAdapter> {
    async fn stream(&self, prompt: &Prompt) -> Result<ResponseStream, ModelError> {
        let body = match self.provider.wire_api {
            WireApi::Responses => responses::request_body(prompt),
            WireApi::Chat => chat::request_body(prompt),
        }
        .map_err(|err| ModelError::Config {
            provider: self.provider.name.clone(),
            reason: format!("could not serialise the request ({err})"),
        })?;
        let body = Bytes::from(body);
        let response = self.send(&body).await?;
        let (tx, rx) = mpsc::channel(EVENT_BUFFER);
        let custom_tools = chat::custom_tool_names(&prompt.tools);
        let wire = self.provider.wire_api;
        let make_decoder = move || -> Box<dyn Decoder> {
            match wire {
                WireApi::Responses => Box::new(ResponsesDecoder),
                WireApi::Chat => Box::new(ChatDecoder::new(custom_tools.clone())),
            }
        };
        tokio::spawn(Arc::clone(self).drive(response, body, make_decoder, tx));
        Ok(ResponseStream::new(rx))
    }
}
