//! The embedded model as a provider the agent can plug in: [`LocalModelProvider`]
//! implements `osprey_model::ModelProviderFactory` for `model_provider = "local"`, so the
//! front end registers it and the agent's core never links the inference engine itself.

use async_trait::async_trait;
use osprey_config::{Config, LocalToolProfile};
use osprey_model::{ModelClient, ModelError, ModelProviderFactory};
use std::sync::Arc;

use crate::{LocalModelAdapter, LocalModelOptions, PromptStyle, model_path};

/// Opens the embedded model for a thread: loads the weights installed under
/// `$OSPREY_HOME/models` with the `[local_model]` settings, on a blocking thread.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalModelProvider;

impl LocalModelProvider {
    /// The factory, ready for `ThreadManager::with_provider`.
    pub fn shared() -> Arc<dyn ModelProviderFactory> {
        Arc::new(Self)
    }
}

#[async_trait]
impl ModelProviderFactory for LocalModelProvider {
    fn provider_id(&self) -> &str {
        osprey_config::LOCAL_PROVIDER_ID
    }

    async fn open(&self, config: &Config) -> Result<ModelClient, ModelError> {
        let path = model_path(&config.osprey_home);
        let options = options_for(config);
        let provider = config.model_provider.name.clone();
        let loaded =
            tokio::task::spawn_blocking(move || LocalModelAdapter::new(&path, options)).await;
        let adapter = match loaded {
            Ok(Ok(adapter)) => adapter,
            Ok(Err(error)) => {
                return Err(ModelError::Unavailable {
                    provider,
                    reason: error.to_string(),
                });
            }
            Err(join) => {
                return Err(ModelError::Unavailable {
                    provider,
                    reason: format!("loading the model stopped unexpectedly: {join}"),
                });
            }
        };
        Ok(ModelClient::from_adapter(Arc::new(adapter)))
    }
}

/// The engine's options from `[local_model]`.
pub fn options_for(config: &Config) -> LocalModelOptions {
    let settings = &config.local_model;
    LocalModelOptions {
        context_tokens: settings.context_tokens,
        threads: settings.threads,
        max_output_tokens: settings.max_output_tokens,
        prefix_cache_dir: settings
            .prefix_cache
            .then(|| config.osprey_home.join("models")),
        constrained: settings.constrained_decoding,
        prompt_style: match settings.tool_profile {
            LocalToolProfile::Local => PromptStyle::Compact,
            LocalToolProfile::Standard => PromptStyle::Client,
        },
        // The agent's loop guard (a turn inspector of the local tool profile) covers repeats
        // across the whole turn; the engine's "same as the previous call" check would only
        // pre-empt it.
        loop_guard: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_in(home: &std::path::Path, toml: &str) -> Config {
        std::fs::write(home.join("config.toml"), toml).unwrap();
        let env = osprey_config::EnvSnapshot::from_pairs([(
            osprey_config::env_vars::OSPREY_HOME,
            home.to_string_lossy().into_owned(),
        )]);
        osprey_config::ConfigBuilder::new(env)
            .process_cwd(home)
            .build()
            .unwrap()
            .config
    }

    #[tokio::test]
    async fn a_missing_model_is_a_provider_error_that_says_how_to_fetch_it() {
        let home = tempfile::tempdir().unwrap();
        let config = config_in(home.path(), "model_provider = \"local\"\n");
        let Err(error) = LocalModelProvider.open(&config).await else {
            panic!("no model is installed in a fresh home");
        };
        let message = error.to_string();
        assert!(message.contains("osprey model fetch"), "{message}");
    }

    #[test]
    fn options_follow_the_local_model_table() {
        let home = tempfile::tempdir().unwrap();
        let config = config_in(
            home.path(),
            "model_provider = \"local\"\n[local_model]\ncontext_tokens = 4096\nprefix_cache = false\ntool_profile = \"standard\"\n",
        );
        let options = options_for(&config);
        assert_eq!(options.context_tokens, 4096);
        assert_eq!(options.prefix_cache_dir, None);
        assert_eq!(options.prompt_style, PromptStyle::Client);
        assert!(!options.loop_guard);
    }
}
