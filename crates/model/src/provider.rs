//! The provider seam: how a front end teaches the agent about providers that are not plain
//! HTTP endpoints.
//!
//! Most providers are HTTP servers speaking the Responses API or Chat Completions; for them
//! [`ModelClient::new`] is all there is. Some run in-process — the embedded local model —
//! and need code the agent's core must not depend on (a C++ inference engine). Such a
//! provider implements [`ModelProviderFactory`]; the front end registers it in a
//! [`ProviderRegistry`], which the core asks for a client whenever a thread starts. Ids
//! with no factory are HTTP providers.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use osprey_config::Config;

use crate::{ModelClient, ModelError};

/// Builds model clients for one provider id.
#[async_trait]
pub trait ModelProviderFactory: Send + Sync {
    /// The `model_provider` id this factory serves.
    fn provider_id(&self) -> &str;

    /// A client for a thread with this configuration. May take seconds (loading weights);
    /// implementations move blocking work off the async runtime themselves.
    async fn open(&self, config: &Config) -> Result<ModelClient, ModelError>;
}

impl std::fmt::Debug for dyn ModelProviderFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelProviderFactory({})", self.provider_id())
    }
}

/// Provider id → factory. Cheap to clone; clones share the factories.
#[derive(Clone, Default)]
pub struct ProviderRegistry {
    factories: BTreeMap<String, Arc<dyn ModelProviderFactory>>,
}

impl ProviderRegistry {
    /// Adds (or replaces) the factory for its provider id.
    pub fn register(&mut self, factory: Arc<dyn ModelProviderFactory>) {
        self.factories
            .insert(factory.provider_id().to_string(), factory);
    }

    /// The ids served by registered factories, in order.
    pub fn ids(&self) -> Vec<String> {
        self.factories.keys().cloned().collect()
    }

    /// A client for the configured provider: its factory when one is registered, otherwise
    /// an HTTP client (with the API key looked up through `env`).
    ///
    /// A provider that only exists in-process (see
    /// [`osprey_config::IN_PROCESS_PROVIDER_IDS`]) but was not registered by this program is
    /// an error, never a silent fallback to the default HTTP endpoint.
    pub async fn client(
        &self,
        config: &Config,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<ModelClient, ModelError> {
        let id = config.model_provider_id.as_str();
        if let Some(factory) = self.factories.get(id) {
            return factory.open(config).await;
        }
        if osprey_config::IN_PROCESS_PROVIDER_IDS.contains(&id) {
            return Err(ModelError::Unavailable {
                provider: config.model_provider.name.clone(),
                reason: format!(
                    "provider `{id}` runs inside Osprey, but this program was built without it; use the `osprey` binary, or choose another model_provider"
                ),
            });
        }
        ModelClient::new(config.model_provider.clone(), env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str);

    #[async_trait]
    impl ModelProviderFactory for Named {
        fn provider_id(&self) -> &str {
            self.0
        }
        async fn open(&self, _config: &Config) -> Result<ModelClient, ModelError> {
            Err(ModelError::Config {
                provider: self.0.to_string(),
                reason: "opened by the factory".to_string(),
            })
        }
    }

    fn config_for(provider: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        let env = osprey_config::EnvSnapshot::from_pairs([(
            osprey_config::env_vars::OSPREY_HOME,
            dir.path().to_string_lossy().into_owned(),
        )]);
        let overrides = osprey_config::ConfigOverrides {
            model_provider: Some(provider.to_string()),
            ..Default::default()
        };
        osprey_config::ConfigBuilder::new(env)
            .process_cwd(dir.path())
            .overrides(overrides)
            .build()
            .unwrap()
            .config
    }

    #[tokio::test]
    async fn a_registered_factory_builds_the_client_for_its_id() {
        let mut registry = ProviderRegistry::default();
        registry.register(Arc::new(Named("local")));
        let Err(error) = registry.client(&config_for("local"), &|_| None).await else {
            panic!("the factory's error was expected");
        };
        assert!(
            error.to_string().contains("opened by the factory"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn an_in_process_provider_without_its_factory_is_refused_in_plain_words() {
        let registry = ProviderRegistry::default();
        let Err(error) = registry.client(&config_for("local"), &|_| None).await else {
            panic!("an unregistered in-process provider must not fall back to HTTP");
        };
        assert!(error.to_string().contains("built without it"), "{error}");
    }

    #[tokio::test]
    async fn other_ids_are_http_providers() {
        let registry = ProviderRegistry::default();
        let client = registry
            .client(&config_for("ollama"), &|_| None)
            .await
            .unwrap();
        assert_eq!(client.provider().map(|p| p.id.as_str()), Some("ollama"));
    }
}
