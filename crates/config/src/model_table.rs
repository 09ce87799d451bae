//! What Osprey knows about models by name: their context windows, so compaction can start
//! before a request is refused even when `model_context_window` is not configured.
//!
//! Names match by prefix (`gpt-5.1-codex-max` is a `gpt-5.1-codex`); the longest prefix wins.
//! Numbers are the providers' published input windows, in tokens.

use crate::{Config, LOCAL_PROVIDER_ID};

/// (model name prefix, context window in tokens).
const CONTEXT_WINDOWS: &[(&str, u64)] = &[
    ("gpt-5.1-codex", 272_000),
    ("gpt-5-codex", 272_000),
    ("gpt-5", 272_000),
    ("codex-mini", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gpt-oss", 128_000),
];

/// The context window of a model by name, when the table knows it.
pub fn known_context_window(model: &str) -> Option<u64> {
    CONTEXT_WINDOWS
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, window)| *window)
}

impl Config {
    /// The context window threads use, in tokens: `model_context_window` when set, the
    /// embedded model's `[local_model] context_tokens`, or the model table's entry.
    pub fn context_window(&self) -> Option<u64> {
        if let Some(window) = self.model_context_window {
            return Some(window);
        }
        if self.model_provider_id == LOCAL_PROVIDER_ID {
            return Some(u64::from(self.local_model.context_tokens));
        }
        known_context_window(&self.model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins_and_unknown_models_have_none() {
        assert_eq!(known_context_window("gpt-5.1-codex-max"), Some(272_000));
        assert_eq!(known_context_window("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(known_context_window("qwen2.5-coder:7b"), None);
    }

    #[test]
    fn configured_windows_beat_the_table_and_the_local_model_uses_its_own() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "model = \"gpt-5.1-codex\"\nmodel_context_window = 1000\n",
        )
        .unwrap();
        let config = Config::for_tests(dir.path(), dir.path()).unwrap();
        assert_eq!(config.context_window(), Some(1000));
        std::fs::write(
            dir.path().join("config.toml"),
            "model_provider = \"local\"\n[local_model]\ncontext_tokens = 4096\n",
        )
        .unwrap();
        let config = Config::for_tests(dir.path(), dir.path()).unwrap();
        assert_eq!(config.context_window(), Some(4096));
    }
}
