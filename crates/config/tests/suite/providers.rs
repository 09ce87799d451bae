//! Built-in providers, user overrides, `OPENAI_BASE_URL` and `--oss`.

use osprey_config::{ConfigOverrides, DEFAULT_OSS_MODEL, ModelProviderInfo, WireApi};
use pretty_assertions::assert_eq;

use super::fixture::Fixture;

#[test]
fn built_in_providers_are_present() {
    let fx = Fixture::new();
    let c = fx.build().unwrap().config;
    let openai = &c.model_providers["openai"];
    assert_eq!(openai.name, "OpenAI");
    assert_eq!(
        openai.base_url.as_deref(),
        Some("https://api.openai.com/v1")
    );
    assert_eq!(openai.env_key.as_deref(), Some("OPENAI_API_KEY"));
    assert_eq!(openai.wire_api, WireApi::Responses);
    let ollama = &c.model_providers["ollama"];
    assert_eq!(
        ollama.base_url.as_deref(),
        Some("http://localhost:11434/v1")
    );
    assert_eq!(ollama.wire_api, WireApi::Chat);
    assert!(!ollama.requires_api_key());
    let lmstudio = &c.model_providers["lmstudio"];
    assert_eq!(
        lmstudio.base_url.as_deref(),
        Some("http://localhost:1234/v1")
    );
    assert_eq!(lmstudio.wire_api, WireApi::Chat);
    assert_eq!(c.model_provider, *openai);
}

#[test]
fn openai_base_url_env_is_honoured() {
    let mut fx = Fixture::new();
    fx.env = fx
        .env
        .clone()
        .with("OPENAI_BASE_URL", "http://proxy.local/v1");
    let c = fx.build().unwrap().config;
    assert_eq!(
        c.model_provider.base_url.as_deref(),
        Some("http://proxy.local/v1")
    );
}

#[test]
fn user_entry_overrides_built_in_field_by_field() {
    let fx = Fixture::new();
    fx.write_user(
        "[model_providers.openai]\nbase_url = \"http://gateway/v1\"\nrequest_max_retries = 1\n",
    );
    let c = fx.build().unwrap().config;
    let mut expected =
        ModelProviderInfo::new("openai", "OpenAI", "http://gateway/v1", WireApi::Responses);
    expected.env_key = Some("OPENAI_API_KEY".into());
    expected.env_key_instructions = c.model_provider.env_key_instructions.clone();
    expected.request_max_retries = Some(1);
    assert_eq!(c.model_provider, expected);
}

#[test]
fn custom_provider_with_id_filled_and_name_defaulted() {
    let fx = Fixture::new();
    fx.write_user(
        "model_provider = \"mock\"\n\
         model_providers.mock.base_url = \"http://127.0.0.1:9/v1\"\n\
         model_providers.mock.env_key = \"MOCK_KEY\"\n\
         model_providers.mock.wire_api = \"chat\"\n",
    );
    let c = fx.build().unwrap().config;
    assert_eq!(c.model_provider_id, "mock");
    assert_eq!(c.model_provider.id, "mock");
    assert_eq!(c.model_provider.name, "mock");
    assert_eq!(c.model_provider.env_key.as_deref(), Some("MOCK_KEY"));
    assert_eq!(c.model_provider.wire_api, WireApi::Chat);
}

#[test]
fn oss_selects_oss_provider_and_a_local_default_model() {
    let fx = Fixture::new();
    let overrides = ConfigOverrides {
        oss: true,
        ..Default::default()
    };
    let c = fx.build_with(&[], overrides.clone()).unwrap().config;
    assert_eq!(c.model_provider_id, "ollama");
    assert_eq!(c.model, DEFAULT_OSS_MODEL);

    fx.write_user("oss_provider = \"lmstudio\"\n");
    let c = fx.build_with(&[], overrides.clone()).unwrap().config;
    assert_eq!(c.model_provider_id, "lmstudio");
    assert_eq!(c.model, osprey_config::DEFAULT_LMSTUDIO_MODEL);

    // a configured model is kept
    fx.write_user("model = \"llama3.1\"\n");
    let c = fx.build_with(&[], overrides).unwrap().config;
    assert_eq!(c.model_provider_id, "ollama");
    assert_eq!(c.model, "llama3.1");
}

#[test]
fn explicit_provider_option_beats_oss() {
    let fx = Fixture::new();
    let overrides = ConfigOverrides {
        oss: true,
        model_provider: Some("lmstudio".into()),
        ..Default::default()
    };
    let c = fx.build_with(&[], overrides).unwrap().config;
    assert_eq!(c.model_provider_id, "lmstudio");
}

#[test]
fn without_a_provider_or_an_openai_key_the_local_model_is_used_and_said_so() {
    let mut fx = Fixture::new();
    fx.env = osprey_config::EnvSnapshot::from_pairs([("OSPREY_HOME", fx.home.to_str().unwrap())]);
    let loaded = fx.build().unwrap();
    assert_eq!(loaded.config.model_provider_id, "local");
    assert_eq!(loaded.config.model, osprey_config::LOCAL_MODEL_NAME);
    assert!(!loaded.config.model_provider.requires_api_key());
    let warning = loaded
        .warnings
        .iter()
        .find(|w| w.key == "model_provider")
        .expect("one line says the local model runs");
    assert!(warning.message.contains("OPENAI_API_KEY"), "{warning}");

    // A configured provider is used as configured, key or not.
    fx.write_user("model_provider = \"openai\"\n");
    let loaded = fx.build().unwrap();
    assert_eq!(loaded.config.model_provider_id, "openai");
    assert!(loaded.warnings.iter().all(|w| w.key != "model_provider"));
}

#[test]
fn a_configured_model_is_never_served_by_the_embedded_model() {
    let mut fx = Fixture::new();
    fx.env = osprey_config::EnvSnapshot::from_pairs([("OSPREY_HOME", fx.home.to_str().unwrap())]);
    fx.write_user("model = \"gpt-5.1\"\n");
    let loaded = fx.build().unwrap();
    assert_eq!(loaded.config.model_provider_id, "openai");
    assert_eq!(loaded.config.model, "gpt-5.1");
    assert!(loaded.config.model_provider.requires_api_key());
    assert!(loaded.warnings.iter().all(|w| w.key != "model_provider"));

    // `-m` is a layer like any other.
    fx.write_user("");
    let overrides = ConfigOverrides {
        model: Some("gpt-5.1".into()),
        ..Default::default()
    };
    let c = fx.build_with(&[], overrides).unwrap().config;
    assert_eq!(c.model_provider_id, "openai");
}
