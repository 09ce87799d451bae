//! Model providers: where requests go, how they authenticate, how they retry.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// Which HTTP API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WireApi {
    /// `POST {base_url}/responses` (OpenAI Responses API, SSE).
    #[default]
    Responses,
    /// `POST {base_url}/chat/completions` (Chat Completions, SSE).
    Chat,
}

/// One `[model_providers.<id>]` entry, after defaults are applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelProviderInfo {
    /// The provider's key in `model_providers` (`openai`, `ollama`, …).
    #[serde(skip)]
    pub id: String,
    /// Human-readable name, used in messages.
    pub name: String,
    /// Base URL, e.g. `https://api.openai.com/v1`; the wire path is appended.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Environment variable holding the API key; `None` means no key is needed.
    #[serde(default)]
    pub env_key: Option<String>,
    /// Extra hint shown when the key is missing.
    #[serde(default)]
    pub env_key_instructions: Option<String>,
    #[serde(default)]
    pub wire_api: WireApi,
    /// Static headers added to every request.
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// Headers whose values come from environment variables (header → variable).
    #[serde(default)]
    pub env_http_headers: BTreeMap<String, String>,
    /// Query parameters appended to every request URL.
    #[serde(default)]
    pub query_params: BTreeMap<String, String>,
    /// Retries of a request that failed before streaming (429, 5xx, connect errors).
    #[serde(default)]
    pub request_max_retries: Option<u64>,
    /// Retries of a stream that dropped before `response.completed`.
    #[serde(default)]
    pub stream_max_retries: Option<u64>,
    /// How long a stream may stay silent before it counts as dropped.
    #[serde(default)]
    pub stream_idle_timeout_ms: Option<u64>,
}

impl ModelProviderInfo {
    pub const DEFAULT_REQUEST_MAX_RETRIES: u64 = 4;
    pub const DEFAULT_STREAM_MAX_RETRIES: u64 = 5;
    pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
    /// Upper bounds, so a typo cannot make a request retry for hours.
    pub const MAX_REQUEST_RETRIES: u64 = 100;
    pub const MAX_STREAM_RETRIES: u64 = 100;

    pub fn request_max_retries(&self) -> u64 {
        self.request_max_retries
            .unwrap_or(Self::DEFAULT_REQUEST_MAX_RETRIES)
            .min(Self::MAX_REQUEST_RETRIES)
    }

    pub fn stream_max_retries(&self) -> u64 {
        self.stream_max_retries
            .unwrap_or(Self::DEFAULT_STREAM_MAX_RETRIES)
            .min(Self::MAX_STREAM_RETRIES)
    }

    pub fn stream_idle_timeout(&self) -> Duration {
        Duration::from_millis(
            self.stream_idle_timeout_ms
                .unwrap_or(Self::DEFAULT_STREAM_IDLE_TIMEOUT_MS),
        )
    }
}
