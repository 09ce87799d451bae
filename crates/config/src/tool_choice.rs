//! Which tool profile a thread gets — the one place that knows the embedded local model
//! wants a different one.
//!
//! The profiles themselves (lists of tools and turn aids) live in `osprey-tools`; this module
//! only decides, from the provider and `[local_model]`, which one applies and how.

use crate::{Config, LOCAL_PROVIDER_ID, LocalToolProfile};

/// The family of tool profile a thread is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolProfileKind {
    /// The `[tools]` settings, as a hosted model gets them.
    Standard,
    /// The embedded model's small tool set with its turn aids.
    Local,
}

/// The resolved choice: the profile and the provider facts that shape it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolProfileChoice {
    pub kind: ToolProfileKind,
    /// The model can call freeform (grammar) tools; when not, `apply_patch` is offered as a
    /// JSON function.
    pub freeform_tools: bool,
    /// End a turn when the model repeats a call (`[local_model] loop_guard`; only for the
    /// embedded model, since hosted models rerun commands on purpose).
    pub loop_guard: bool,
}

impl Config {
    /// The tool profile for threads started with this configuration.
    pub fn tool_profile(&self) -> ToolProfileChoice {
        let local = self.model_provider_id == LOCAL_PROVIDER_ID;
        ToolProfileChoice {
            kind: if local && self.local_model.tool_profile == LocalToolProfile::Local {
                ToolProfileKind::Local
            } else {
                ToolProfileKind::Standard
            },
            // The embedded model reads calls as JSON; a freeform tool could not be called.
            freeform_tools: !local,
            loop_guard: local && self.local_model.loop_guard,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml: &str) -> Config {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), toml).unwrap();
        Config::for_tests(dir.path(), dir.path()).unwrap()
    }

    #[test]
    fn hosted_providers_get_the_standard_profile_with_freeform_tools() {
        let choice = config("model_provider = \"ollama\"\n").tool_profile();
        assert_eq!(choice.kind, ToolProfileKind::Standard);
        assert!(choice.freeform_tools);
        assert!(!choice.loop_guard);
    }

    #[test]
    fn the_local_model_gets_its_profile_unless_asked_for_the_standard_one() {
        let local = config("model_provider = \"local\"\n").tool_profile();
        assert_eq!(local.kind, ToolProfileKind::Local);
        assert!(local.loop_guard);
        let standard = config(
            "model_provider = \"local\"\n[local_model]\ntool_profile = \"standard\"\nloop_guard = false\n",
        )
        .tool_profile();
        assert_eq!(standard.kind, ToolProfileKind::Standard);
        assert!(!standard.freeform_tools);
        assert!(!standard.loop_guard);
    }
}
