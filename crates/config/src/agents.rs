//! `[agents]`: the limits and defaults of multi-agent collaboration (Codex's keys).
//!
//! A thread may spawn sub-agents with the collaboration tools (`spawn_agent`, …) when the
//! `multi_agent` feature is on and the thread is not at `max_depth`. These settings bound how
//! many open children one session tree may have and how long `wait_agent` may wait.

use crate::schema::AgentsToml;

/// The resolved `[agents]` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentsConfig {
    /// Open sub-agents one session tree may have at once; the root thread does not count
    /// (`max_concurrent_threads_per_session`, legacy `max_threads`).
    pub max_concurrent_threads_per_session: usize,
    /// How deep sub-agents may nest: a thread at this depth gets no collaboration tools
    /// (the root is depth 0; the default 1 lets the root spawn children that cannot spawn).
    pub max_depth: u32,
    /// The model a sub-agent runs when `spawn_agent` names none (default: the parent's).
    pub default_subagent_model: Option<String>,
    /// `wait_agent`'s timeout when the call gives none.
    pub default_wait_timeout_ms: u64,
    /// The shortest timeout `wait_agent` honours (Codex: 10 s). Lower it only in tests.
    pub min_wait_timeout_ms: u64,
    /// The longest timeout `wait_agent` honours (1 h).
    pub max_wait_timeout_ms: u64,
}

impl AgentsConfig {
    pub const DEFAULT_MAX_THREADS: usize = 6;
    pub const DEFAULT_MAX_DEPTH: u32 = 1;
    pub const DEFAULT_WAIT_TIMEOUT_MS: u64 = 30_000;
    pub const MIN_WAIT_TIMEOUT_MS: u64 = 10_000;
    pub const MAX_WAIT_TIMEOUT_MS: u64 = 3_600_000;

    /// A `wait_agent` timeout as asked for (or the default), clamped to the allowed range.
    pub fn wait_timeout_ms(&self, asked: Option<u64>) -> u64 {
        let min = self.min_wait_timeout_ms.min(self.max_wait_timeout_ms);
        asked
            .unwrap_or(self.default_wait_timeout_ms)
            .clamp(min, self.max_wait_timeout_ms)
    }
}

impl Default for AgentsConfig {
    fn default() -> Self {
        Self {
            max_concurrent_threads_per_session: Self::DEFAULT_MAX_THREADS,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            default_subagent_model: None,
            default_wait_timeout_ms: Self::DEFAULT_WAIT_TIMEOUT_MS,
            min_wait_timeout_ms: Self::MIN_WAIT_TIMEOUT_MS,
            max_wait_timeout_ms: Self::MAX_WAIT_TIMEOUT_MS,
        }
    }
}

pub(crate) fn resolve_agents(raw: Option<&AgentsToml>) -> AgentsConfig {
    let default = AgentsConfig::default();
    let Some(raw) = raw else {
        return default;
    };
    AgentsConfig {
        max_concurrent_threads_per_session: raw
            .max_concurrent_threads_per_session
            .or(raw.max_threads)
            .unwrap_or(default.max_concurrent_threads_per_session),
        max_depth: raw.max_depth.unwrap_or(default.max_depth),
        default_subagent_model: raw.default_subagent_model.clone(),
        default_wait_timeout_ms: raw
            .default_wait_timeout_ms
            .unwrap_or(default.default_wait_timeout_ms),
        min_wait_timeout_ms: raw
            .min_wait_timeout_ms
            .unwrap_or(default.min_wait_timeout_ms),
        max_wait_timeout_ms: default.max_wait_timeout_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use pretty_assertions::assert_eq;

    fn config(toml: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), toml).unwrap();
        Config::for_tests(dir.path(), dir.path()).unwrap()
    }

    #[test]
    fn defaults_follow_codex() {
        let agents = config("").agents;
        assert_eq!(agents, AgentsConfig::default());
        assert_eq!(agents.wait_timeout_ms(None), 30_000);
        assert_eq!(agents.wait_timeout_ms(Some(1_000)), 10_000);
        assert_eq!(agents.wait_timeout_ms(Some(99_999_999)), 3_600_000);
        assert!(config("").features.multi_agent());
    }

    #[test]
    fn the_legacy_max_threads_name_still_counts_and_the_new_one_wins() {
        assert_eq!(
            config("[agents]\nmax_threads = 2\n")
                .agents
                .max_concurrent_threads_per_session,
            2
        );
        let both = config(
            "[agents]\nmax_threads = 2\nmax_concurrent_threads_per_session = 3\nmax_depth = 2\n\
             default_subagent_model = \"mini\"\nmin_wait_timeout_ms = 50\n",
        )
        .agents;
        assert_eq!(both.max_concurrent_threads_per_session, 3);
        assert_eq!(both.max_depth, 2);
        assert_eq!(both.default_subagent_model.as_deref(), Some("mini"));
        assert_eq!(both.wait_timeout_ms(Some(100)), 100);
    }
}
