//! [`ModelClient`], the one entry point, and [`WireAdapter`], the seam behind it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use osprey_config::ModelProviderInfo;

use crate::ModelError;
use crate::http::HttpAdapter;
use crate::prompt::{Prompt, ResponseStream};

/// Something that turns a [`Prompt`] into a streamed response: the HTTP adapters here, or
/// an embedded local model elsewhere.
///
/// An adapter must open every attempt with `Created`, finish with `Completed` (or an
/// error), and announce a restart of the same request with `RetryingStream`.
#[async_trait]
pub trait WireAdapter: Send + Sync {
    async fn stream(&self, prompt: &Prompt) -> Result<ResponseStream, ModelError>;
}

/// Streams model responses from one provider. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct ModelClient {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    Http(Arc<HttpAdapter>),
    Adapter(Arc<dyn WireAdapter>),
}

impl ModelClient {
    /// A client for an HTTP provider (Responses or Chat Completions, per its `wire_api`).
    ///
    /// `env` looks up environment variables; pass a snapshot in tests, or use
    /// [`ModelClient::from_process_env`]. The API key (`env_key`) and `env_http_headers`
    /// are resolved here, once: a provider that needs a key fails with
    /// [`ModelError::MissingApiKey`] before any request can be sent.
    pub fn new(
        provider: ModelProviderInfo,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ModelError> {
        Ok(Self {
            inner: Inner::Http(Arc::new(HttpAdapter::new(provider, env)?)),
        })
    }

    /// [`ModelClient::new`] reading this process's environment.
    pub fn from_process_env(provider: ModelProviderInfo) -> Result<Self, ModelError> {
        Self::new(provider, &|name| std::env::var(name).ok())
    }

    /// A client backed by any other adapter (for example an embedded local model).
    pub fn from_adapter(adapter: Arc<dyn WireAdapter>) -> Self {
        Self {
            inner: Inner::Adapter(adapter),
        }
    }

    /// Sets the base of the exponential backoff between retries (default 200 ms); tests
    /// use a tiny one. `Retry-After` and "try again in" hints from the server still win.
    /// No effect on clients built with [`ModelClient::from_adapter`].
    #[must_use]
    pub fn with_backoff_base(self, base: Duration) -> Self {
        match self.inner {
            Inner::Http(adapter) => {
                let mut adapter = Arc::unwrap_or_clone(adapter);
                adapter.backoff_base = base;
                Self {
                    inner: Inner::Http(Arc::new(adapter)),
                }
            }
            Inner::Adapter(_) => self,
        }
    }

    /// The provider this client talks to, when it is an HTTP provider.
    pub fn provider(&self) -> Option<&ModelProviderInfo> {
        match &self.inner {
            Inner::Http(adapter) => Some(adapter.provider()),
            Inner::Adapter(_) => None,
        }
    }

    /// The full endpoint URL (with query parameters), when it is an HTTP provider.
    pub fn endpoint(&self) -> Option<&str> {
        match &self.inner {
            Inner::Http(adapter) => Some(adapter.url()),
            Inner::Adapter(_) => None,
        }
    }

    /// Sends `prompt` and returns its event stream once the provider has accepted it.
    ///
    /// Errors before streaming (bad status after retries, unreachable server) come back
    /// here; errors during streaming arrive as the stream's last item.
    pub async fn stream(&self, prompt: &Prompt) -> Result<ResponseStream, ModelError> {
        match &self.inner {
            Inner::Http(adapter) => adapter.stream(prompt).await,
            Inner::Adapter(adapter) => adapter.stream(prompt).await,
        }
    }
}

impl fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            Inner::Http(adapter) => f
                .debug_struct("ModelClient")
                .field("provider", &adapter.provider().name)
                .field("endpoint", &adapter.url())
                .finish(),
            Inner::Adapter(_) => f.debug_struct("ModelClient").finish_non_exhaustive(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ResponseEvent;
    use futures::StreamExt;
    use pretty_assertions::assert_eq;
    use tokio::sync::mpsc;

    /// Answers every prompt with its model name as the response id.
    struct EchoAdapter;

    #[async_trait]
    impl WireAdapter for EchoAdapter {
        async fn stream(&self, prompt: &Prompt) -> Result<ResponseStream, ModelError> {
            let (tx, rx) = mpsc::channel(4);
            let id = prompt.model.clone();
            tokio::spawn(async move {
                let _ = tx.send(Ok(ResponseEvent::Created)).await;
                let _ = tx
                    .send(Ok(ResponseEvent::Completed {
                        response_id: Some(id),
                        usage: None,
                    }))
                    .await;
            });
            Ok(ResponseStream::new(rx))
        }
    }

    #[tokio::test]
    async fn custom_adapters_plug_in_behind_the_same_client() {
        let client = ModelClient::from_adapter(Arc::new(EchoAdapter))
            .with_backoff_base(Duration::from_millis(1));
        assert!(client.provider().is_none() && client.endpoint().is_none());
        let prompt = Prompt {
            model: "local-gguf".into(),
            ..Prompt::default()
        };
        let events: Vec<_> = client.stream(&prompt).await.unwrap().collect().await;
        let events: Vec<ResponseEvent> = events.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            events,
            vec![
                ResponseEvent::Created,
                ResponseEvent::Completed {
                    response_id: Some("local-gguf".into()),
                    usage: None
                }
            ]
        );
    }
}
