//! The environment variables Osprey reads, in one table, and a snapshot to read them from.
//!
//! Code that needs a variable takes an [`EnvSnapshot`] instead of calling `std::env::var`, so
//! tests pass their own environment and never mutate the process's. Add a row to
//! [`ENV_VARS`] whenever a crate starts reading a new variable; `docs/config.md` mirrors it.

use std::collections::BTreeMap;

/// Who reads a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvScope {
    /// The `osprey` program itself.
    Program,
    /// Only the test suites and scripts.
    Tests,
}

/// One variable Osprey reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvVar {
    pub name: &'static str,
    pub scope: EnvScope,
    /// Who reads it and what it changes.
    pub meaning: &'static str,
}

pub const OSPREY_HOME: &str = "OSPREY_HOME";
pub const HOME: &str = "HOME";
pub const USERPROFILE: &str = "USERPROFILE";
pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
pub const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
pub const NO_COLOR: &str = "NO_COLOR";
pub const RUST_LOG: &str = "RUST_LOG";
pub const SHELL: &str = "SHELL";
pub const PATH: &str = "PATH";
pub const OSPREY_CODEX_BIN: &str = "OSPREY_CODEX_BIN";
pub const OSPREY_REQUIRE_REFERENCE: &str = "OSPREY_REQUIRE_REFERENCE";
pub const OSPREY_NPM_DIR: &str = "OSPREY_NPM_DIR";
pub const OSPREY_BLESS_CORPUS: &str = "OSPREY_BLESS_CORPUS";
pub const OSPREY_APPLY_PATCH_ROOTS: &str = "OSPREY_APPLY_PATCH_ROOTS";
pub const OSPREY_MCP_EVERYTHING: &str = "OSPREY_MCP_EVERYTHING";
pub const OSPREY_PY_MCP: &str = "OSPREY_PY_MCP";

/// Every environment variable Osprey (or its test suite) reads. Provider `env_key`s and MCP
/// `bearer_token_env_var`s named in `config.toml` are read too, but are the user's choice.
pub const ENV_VARS: &[EnvVar] = &[
    EnvVar {
        name: OSPREY_HOME,
        scope: EnvScope::Program,
        meaning: "Directory holding config.toml, requirements.toml, rules/, sessions/ and \
                  log/. Defaults to ~/.osprey.",
    },
    EnvVar {
        name: HOME,
        scope: EnvScope::Program,
        meaning: "The user's home directory; ~/.osprey is used when OSPREY_HOME is unset.",
    },
    EnvVar {
        name: USERPROFILE,
        scope: EnvScope::Program,
        meaning: "The user's home directory on Windows, when HOME is unset.",
    },
    EnvVar {
        name: OPENAI_API_KEY,
        scope: EnvScope::Program,
        meaning: "API key of the built-in `openai` provider (its env_key).",
    },
    EnvVar {
        name: OPENAI_BASE_URL,
        scope: EnvScope::Program,
        meaning: "Replaces the built-in `openai` provider's base URL \
                  (https://api.openai.com/v1) when set and non-empty.",
    },
    EnvVar {
        name: NO_COLOR,
        scope: EnvScope::Program,
        meaning: "When set to any non-empty value, front ends print without colour.",
    },
    EnvVar {
        name: RUST_LOG,
        scope: EnvScope::Program,
        meaning: "Log filter for tracing output (for example `osprey_core=debug`).",
    },
    EnvVar {
        name: SHELL,
        scope: EnvScope::Program,
        meaning: "The user's shell, used to run commands when it is a supported one.",
    },
    EnvVar {
        name: PATH,
        scope: EnvScope::Program,
        meaning: "Searched for the user's shell and for commands.",
    },
    EnvVar {
        name: OSPREY_CODEX_BIN,
        scope: EnvScope::Tests,
        meaning: "Path of the reference Codex CLI used by differential tests.",
    },
    EnvVar {
        name: OSPREY_REQUIRE_REFERENCE,
        scope: EnvScope::Tests,
        meaning: "When `1`, differential tests fail instead of skipping if the reference \
                  binaries are missing.",
    },
    EnvVar {
        name: OSPREY_NPM_DIR,
        scope: EnvScope::Tests,
        meaning: "Where scripts/install-test-deps.sh put the reference npm packages (the \
                  Codex TypeScript SDK).",
    },
    EnvVar {
        name: OSPREY_BLESS_CORPUS,
        scope: EnvScope::Tests,
        meaning: "When set, apply-patch corpus tests rewrite their expected outputs.",
    },
    EnvVar {
        name: OSPREY_APPLY_PATCH_ROOTS,
        scope: EnvScope::Program,
        meaning: "Set by the agent for the `apply_patch` virtual command it runs inside the \
                  sandbox: the directories (PATH-style list) the patch may write. Without it \
                  the command only writes under the current directory.",
    },
    EnvVar {
        name: OSPREY_MCP_EVERYTHING,
        scope: EnvScope::Tests,
        meaning: "Entry script of the reference MCP server `server-everything`, for MCP tests.",
    },
    EnvVar {
        name: OSPREY_PY_MCP,
        scope: EnvScope::Tests,
        meaning: "A Python interpreter with the `mcp` SDK, for MCP client and server tests.",
    },
];

/// A read-only copy of (part of) the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvSnapshot {
    vars: BTreeMap<String, String>,
}

impl EnvSnapshot {
    /// The current process environment; variables that are not valid UTF-8 are skipped.
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    /// An environment made of exactly these pairs (for tests and embedders).
    pub fn from_pairs<K, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The value of `name`, if set and not empty or blank.
    pub fn get_non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.trim().is_empty())
    }

    /// A copy with one variable set (builder style, for tests).
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_unique_and_documented() {
        let mut names: Vec<_> = ENV_VARS.iter().map(|v| v.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate row in ENV_VARS");
        assert!(ENV_VARS.iter().all(|v| !v.meaning.trim().is_empty()));
    }

    #[test]
    fn blank_values_count_as_unset() {
        let env = EnvSnapshot::from_pairs([("A", " "), ("B", "x")]);
        assert_eq!(env.get("A"), Some(" "));
        assert_eq!(env.get_non_empty("A"), None);
        assert_eq!(env.get_non_empty("B"), Some("x"));
    }
}
