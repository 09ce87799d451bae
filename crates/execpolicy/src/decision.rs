//! The three outcomes a rule can give a command, ordered from most to least permissive.

use serde::Deserialize;
use serde::Serialize;

/// What a matching rule says about a command.
///
/// The derived order is the strictness order used to combine several matches:
/// `Allow < Prompt < Forbidden`, so the strictest decision is the maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The command may run without asking anyone.
    Allow,
    /// A person must approve the command first.
    Prompt,
    /// The command must not run at all.
    Forbidden,
}

impl Decision {
    /// The spelling used in `.rules` files and in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Prompt => "prompt",
            Decision::Forbidden => "forbidden",
        }
    }

    /// Parses the spelling used in `.rules` files; `None` for anything else.
    pub fn from_rules_str(raw: &str) -> Option<Decision> {
        match raw {
            "allow" => Some(Decision::Allow),
            "prompt" => Some(Decision::Prompt),
            "forbidden" => Some(Decision::Forbidden),
            _ => None,
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn strictest_is_the_maximum() {
        let all = [Decision::Prompt, Decision::Forbidden, Decision::Allow];
        assert_eq!(all.iter().max(), Some(&Decision::Forbidden));
        assert_eq!(
            [Decision::Allow, Decision::Prompt].iter().max(),
            Some(&Decision::Prompt)
        );
    }

    #[test]
    fn spelling_round_trips_and_rejects_codex_network_words() {
        for decision in [Decision::Allow, Decision::Prompt, Decision::Forbidden] {
            assert_eq!(Decision::from_rules_str(decision.as_str()), Some(decision));
            assert_eq!(
                serde_json::to_string(&decision).unwrap(),
                format!("\"{decision}\"")
            );
        }
        assert_eq!(Decision::from_rules_str("deny"), None);
        assert_eq!(Decision::from_rules_str("Allow"), None);
    }
}
