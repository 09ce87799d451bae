//! osprey-config (being built): `config.toml`, layers, providers, requirements.

mod provider;

pub use provider::{ModelProviderInfo, WireApi};
