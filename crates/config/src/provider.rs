//! Model providers: where requests go, how they authenticate, how they retry.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

use crate::env_vars::{self, EnvSnapshot};
use crate::schema::ProviderToml;

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

/// Id of the embedded local model (crate `osprey-local-model`): no URL, no key.
pub const LOCAL_PROVIDER_ID: &str = "local";
/// Providers that run inside the Osprey process rather than behind an HTTP endpoint; a
/// program must register a factory for them (`osprey_model::ProviderRegistry`).
pub const IN_PROCESS_PROVIDER_IDS: &[&str] = &[LOCAL_PROVIDER_ID];
/// The model name of the embedded local model.
pub const LOCAL_MODEL_NAME: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m";

/// Id of the built-in OpenAI provider (the default `model_provider`).
pub const OPENAI_PROVIDER_ID: &str = "openai";
/// Id of the built-in Ollama provider (the default `oss_provider`).
pub const OLLAMA_PROVIDER_ID: &str = "ollama";
/// Id of the built-in LM Studio provider.
pub const LMSTUDIO_PROVIDER_ID: &str = "lmstudio";
/// Base URL of the built-in `openai` provider unless `OPENAI_BASE_URL` is set.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

impl ModelProviderInfo {
    /// A provider with only an id, name and base URL set.
    pub fn new(id: &str, name: &str, base_url: &str, wire_api: WireApi) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            base_url: Some(base_url.to_owned()),
            env_key: None,
            env_key_instructions: None,
            wire_api,
            http_headers: BTreeMap::new(),
            env_http_headers: BTreeMap::new(),
            query_params: BTreeMap::new(),
            request_max_retries: None,
            stream_max_retries: None,
            stream_idle_timeout_ms: None,
        }
    }

    /// Whether requests need an API key from the environment.
    pub fn requires_api_key(&self) -> bool {
        self.env_key.is_some()
    }
}

/// The providers every configuration starts with; `[model_providers.<id>]` entries with the
/// same id are merged over them field by field.
pub fn built_in_providers(env: &EnvSnapshot) -> BTreeMap<String, ModelProviderInfo> {
    let openai_url = env
        .get_non_empty(env_vars::OPENAI_BASE_URL)
        .unwrap_or(OPENAI_DEFAULT_BASE_URL);
    let mut openai =
        ModelProviderInfo::new(OPENAI_PROVIDER_ID, "OpenAI", openai_url, WireApi::Responses);
    openai.env_key = Some(env_vars::OPENAI_API_KEY.to_owned());
    openai.env_key_instructions =
        Some("Create a key at https://platform.openai.com/api-keys and export it.".to_owned());
    let ollama = ModelProviderInfo::new(
        OLLAMA_PROVIDER_ID,
        "Ollama",
        "http://localhost:11434/v1",
        WireApi::Chat,
    );
    let lmstudio = ModelProviderInfo::new(
        LMSTUDIO_PROVIDER_ID,
        "LM Studio",
        "http://localhost:1234/v1",
        WireApi::Chat,
    );
    let local = ModelProviderInfo {
        id: LOCAL_PROVIDER_ID.to_owned(),
        name: "Osprey local model (Qwen2.5-Coder-1.5B on the CPU)".to_owned(),
        base_url: None,
        env_key: None,
        env_key_instructions: None,
        wire_api: WireApi::Responses,
        http_headers: BTreeMap::new(),
        env_http_headers: BTreeMap::new(),
        query_params: BTreeMap::new(),
        request_max_retries: Some(0),
        stream_max_retries: Some(0),
        stream_idle_timeout_ms: None,
    };
    [openai, ollama, lmstudio, local]
        .into_iter()
        .map(|p| (p.id.clone(), p))
        .collect()
}

impl ProviderToml {
    /// The provider this merged table describes; `name` defaults to the id.
    pub(crate) fn into_info(self, id: &str) -> ModelProviderInfo {
        ModelProviderInfo {
            id: id.to_owned(),
            name: self.name.unwrap_or_else(|| id.to_owned()),
            base_url: self.base_url,
            env_key: self.env_key,
            env_key_instructions: self.env_key_instructions,
            wire_api: self.wire_api.unwrap_or_default(),
            http_headers: self.http_headers.unwrap_or_default(),
            env_http_headers: self.env_http_headers.unwrap_or_default(),
            query_params: self.query_params.unwrap_or_default(),
            request_max_retries: self.request_max_retries,
            stream_max_retries: self.stream_max_retries,
            stream_idle_timeout_ms: self.stream_idle_timeout_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_base_url_comes_from_env_when_set() {
        let default = built_in_providers(&EnvSnapshot::default());
        assert_eq!(
            default["openai"].base_url.as_deref(),
            Some(OPENAI_DEFAULT_BASE_URL)
        );
        let env = EnvSnapshot::from_pairs([("OPENAI_BASE_URL", "http://proxy/v1")]);
        assert_eq!(
            built_in_providers(&env)["openai"].base_url.as_deref(),
            Some("http://proxy/v1")
        );
        let blank = EnvSnapshot::from_pairs([("OPENAI_BASE_URL", "")]);
        assert_eq!(
            built_in_providers(&blank)["openai"].base_url.as_deref(),
            Some(OPENAI_DEFAULT_BASE_URL)
        );
    }
}
