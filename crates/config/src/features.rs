//! `[features]`: named on/off switches, with a registry of the names Osprey knows.
//!
//! Names follow Codex where Codex has the same switch, so a Codex `config.toml` keeps working.
//! Unknown names are kept out of [`Features`] and reported as warnings by the builder.

use std::collections::BTreeMap;

/// One known feature switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSpec {
    pub name: &'static str,
    pub default: bool,
    pub description: &'static str,
}

pub const SHELL_TOOL: &str = "shell_tool";
pub const UNIFIED_EXEC: &str = "unified_exec";
pub const APPLY_PATCH_FREEFORM: &str = "apply_patch_freeform";
pub const VIEW_IMAGE_TOOL: &str = "view_image_tool";
pub const WEB_SEARCH_REQUEST: &str = "web_search_request";
pub const EXEC_POLICY: &str = "exec_policy";
pub const MULTI_AGENT: &str = "multi_agent";
pub const EXEC_SERVER_DISCOVERY_V2: &str = "exec_server_discovery_v2";

/// Every feature Osprey knows, with its default.
pub const FEATURES: &[FeatureSpec] = &[
    FeatureSpec {
        name: SHELL_TOOL,
        default: true,
        description: "Offer a command-running tool at all.",
    },
    FeatureSpec {
        name: UNIFIED_EXEC,
        default: true,
        description: "When `tools.shell_type` is not set, use `exec_command` (PTY sessions); \
                      when off, use `shell_command`.",
    },
    FeatureSpec {
        name: APPLY_PATCH_FREEFORM,
        default: true,
        description: "When `tools.apply_patch` does not choose a kind, offer the freeform \
                      form; when off, the JSON function form.",
    },
    FeatureSpec {
        name: VIEW_IMAGE_TOOL,
        default: true,
        description: "Offer `view_image` (also needs `tools.view_image`).",
    },
    FeatureSpec {
        name: WEB_SEARCH_REQUEST,
        default: false,
        description: "Let the model request web searches (default for `tools.web_search`).",
    },
    FeatureSpec {
        name: EXEC_POLICY,
        default: true,
        description: "Consult `.rules` exec-policy files before running commands.",
    },
    FeatureSpec {
        name: MULTI_AGENT,
        default: true,
        description: "Offer the collaboration tools (`spawn_agent`, `send_input`, \
                      `wait_agent`, `close_agent`, `resume_agent`) in the standard tool \
                      profile (never in the local model's).",
    },
    FeatureSpec {
        name: EXEC_SERVER_DISCOVERY_V2,
        default: true,
        description: "With a remote environment, ask its exec server for its inventory with \
                      `capabilities/discoverV2` when it advertises it and is 0.164.0 or newer; \
                      when off, always probe with fs calls (V1).",
    },
];

/// Whether `name` is a feature Osprey knows.
pub fn is_known_feature(name: &str) -> bool {
    FEATURES.iter().any(|f| f.name == name)
}

/// The resolved state of every known feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    enabled: BTreeMap<&'static str, bool>,
}

impl Default for Features {
    fn default() -> Self {
        Self {
            enabled: FEATURES.iter().map(|f| (f.name, f.default)).collect(),
        }
    }
}

impl Features {
    /// Defaults, then the known names in `map`; unknown names are ignored.
    pub fn from_map(map: &BTreeMap<String, bool>) -> Self {
        let mut features = Self::default();
        for spec in FEATURES {
            if let Some(value) = map.get(spec.name) {
                features.enabled.insert(spec.name, *value);
            }
        }
        features
    }

    /// Whether a feature is on; unknown names are off.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.get(name).copied().unwrap_or(false)
    }

    /// Switches a known feature; returns false (and does nothing) for an unknown name.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        match FEATURES.iter().find(|f| f.name == name) {
            Some(spec) => {
                self.enabled.insert(spec.name, on);
                true
            }
            None => false,
        }
    }

    /// `(name, enabled)` for every known feature, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        self.enabled.iter().map(|(k, v)| (*k, *v))
    }

    pub fn shell_tool(&self) -> bool {
        self.is_enabled(SHELL_TOOL)
    }

    pub fn unified_exec(&self) -> bool {
        self.is_enabled(UNIFIED_EXEC)
    }

    pub fn apply_patch_freeform(&self) -> bool {
        self.is_enabled(APPLY_PATCH_FREEFORM)
    }

    pub fn view_image_tool(&self) -> bool {
        self.is_enabled(VIEW_IMAGE_TOOL)
    }

    pub fn web_search_request(&self) -> bool {
        self.is_enabled(WEB_SEARCH_REQUEST)
    }

    pub fn exec_policy(&self) -> bool {
        self.is_enabled(EXEC_POLICY)
    }

    pub fn multi_agent(&self) -> bool {
        self.is_enabled(MULTI_AGENT)
    }

    pub fn exec_server_discovery_v2(&self) -> bool {
        self.is_enabled(EXEC_SERVER_DISCOVERY_V2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_overrides_defaults_and_ignores_unknown() {
        let map = BTreeMap::from([
            ("web_search_request".to_owned(), true),
            ("unified_exec".to_owned(), false),
            ("warp_drive".to_owned(), true),
        ]);
        let f = Features::from_map(&map);
        assert!(f.web_search_request());
        assert!(!f.unified_exec());
        assert!(f.shell_tool());
        assert!(!f.is_enabled("warp_drive"));
        assert!(!is_known_feature("warp_drive"));
    }
}
