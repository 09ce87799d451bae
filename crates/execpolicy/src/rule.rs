//! Prefix rules: the pattern a command's leading arguments must fit, and what a fit means.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::decision::Decision;

/// One position of a pattern: a literal argument or a set of accepted alternatives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternToken {
    /// The argument must equal this string exactly.
    Literal(String),
    /// The argument must equal one of these strings (at least two; a one-element list
    /// in a rules file is read as a literal).
    AnyOf(Vec<String>),
}

impl PatternToken {
    /// Whether `arg` fits this position. Comparison is exact: no globbing, no case folding.
    pub fn accepts(&self, arg: &str) -> bool {
        match self {
            PatternToken::Literal(expected) => expected == arg,
            PatternToken::AnyOf(choices) => choices.iter().any(|choice| choice == arg),
        }
    }

    /// Every string this position accepts.
    pub fn choices(&self) -> &[String] {
        match self {
            PatternToken::Literal(expected) => std::slice::from_ref(expected),
            PatternToken::AnyOf(choices) => choices,
        }
    }
}

/// Where a rule was written: the file it came from and the 1-based position of its call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleOrigin {
    /// The rules file, as it was given to the loader.
    pub file: Arc<Path>,
    /// 1-based line of the `prefix_rule(` call.
    pub line: usize,
    /// 1-based column of the `prefix_rule(` call.
    pub column: usize,
}

impl fmt::Display for RuleOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// A `prefix_rule(...)` from a rules file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixRule {
    /// Never empty; position `i` constrains argument `i` of the command.
    pub pattern: Vec<PatternToken>,
    /// What a match means; `allow` when the file did not say.
    pub decision: Decision,
    /// The author's reason, shown to people when the rule fires.
    pub justification: Option<String>,
    /// Codex's `canonical_matching=` flag. It is accepted and kept so Codex files load; it
    /// does not change how argv prefixes are compared here.
    pub canonical_matching: bool,
    /// Where the rule was written.
    pub origin: RuleOrigin,
}

impl PrefixRule {
    /// Matches the rule against `cmd`, reading the program name as `program` (which is
    /// `cmd[0]` for ordinary matching and a path's basename for host-executable matching).
    /// Returns the matched prefix, with `program` in first place.
    pub(crate) fn match_with_program(&self, program: &str, cmd: &[String]) -> Option<Vec<String>> {
        let (first, rest) = self.pattern.split_first()?;
        if cmd.len() < self.pattern.len() || !first.accepts(program) {
            return None;
        }
        let args = cmd.get(1..self.pattern.len())?;
        if !rest.iter().zip(args).all(|(token, arg)| token.accepts(arg)) {
            return None;
        }
        let mut prefix = Vec::with_capacity(self.pattern.len());
        prefix.push(program.to_owned());
        prefix.extend(args.iter().cloned());
        Some(prefix)
    }

    /// The pattern written back in rules-file syntax, e.g. `["git", ["status", "log"]]`.
    pub fn pattern_source(&self) -> String {
        let tokens: Vec<String> = self
            .pattern
            .iter()
            .map(|token| match token {
                PatternToken::Literal(value) => starlark_string(value),
                PatternToken::AnyOf(choices) => {
                    let inner: Vec<String> = choices.iter().map(|c| starlark_string(c)).collect();
                    format!("[{}]", inner.join(", "))
                }
            })
            .collect();
        format!("[{}]", tokens.join(", "))
    }
}

/// One rule that matched a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleMatch {
    /// The leading arguments the rule matched (the program name first).
    pub matched_prefix: Vec<String>,
    /// The rule's decision.
    pub decision: Decision,
    /// Set when an absolute program path matched a rule written for its basename.
    pub resolved_program: Option<String>,
    /// The rule's justification, if it has one.
    pub justification: Option<String>,
    /// Index of the rule in [`crate::Policy::rules`].
    pub rule_index: usize,
}

/// Serializes in Codex's shape: `{"prefixRuleMatch": {"matchedPrefix": …, "decision": …,
/// "resolvedProgram"?: …, "justification"?: …}}`.
impl Serialize for RuleMatch {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body<'a> {
            matched_prefix: &'a [String],
            decision: Decision,
            #[serde(skip_serializing_if = "Option::is_none")]
            resolved_program: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            justification: Option<&'a str>,
        }
        let body = Body {
            matched_prefix: &self.matched_prefix,
            decision: self.decision,
            resolved_program: self.resolved_program.as_deref(),
            justification: self.justification.as_deref(),
        };
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry("prefixRuleMatch", &body)?;
        map.end()
    }
}

/// Renders `value` as a double-quoted Starlark string literal that reads back as `value`.
pub fn starlark_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for ch in value.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn rule(pattern: Vec<PatternToken>) -> PrefixRule {
        PrefixRule {
            pattern,
            decision: Decision::Allow,
            justification: None,
            canonical_matching: false,
            origin: RuleOrigin {
                file: Arc::from(Path::new("t.rules")),
                line: 1,
                column: 1,
            },
        }
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn prefix_needs_every_position_and_ignores_the_rest() {
        let r = rule(vec![
            PatternToken::Literal("git".into()),
            PatternToken::AnyOf(vec!["status".into(), "log".into()]),
        ]);
        let cmd = argv(&["git", "log", "-1"]);
        assert_eq!(
            r.match_with_program("git", &cmd),
            Some(argv(&["git", "log"]))
        );
        assert_eq!(r.match_with_program("git", &argv(&["git"])), None);
        assert_eq!(r.match_with_program("git", &argv(&["git", "push"])), None);
        assert_eq!(r.match_with_program("git", &argv(&["git", "Status"])), None);
        assert_eq!(r.match_with_program("hg", &argv(&["hg", "log"])), None);
    }

    #[test]
    fn basename_program_replaces_the_first_argument() {
        let r = rule(vec![PatternToken::Literal("git".into())]);
        let cmd = argv(&["/usr/bin/git", "status"]);
        assert_eq!(r.match_with_program("git", &cmd), Some(argv(&["git"])));
    }

    #[test]
    fn serializes_like_codex_and_omits_absent_fields() {
        let m = RuleMatch {
            matched_prefix: argv(&["git"]),
            decision: Decision::Prompt,
            resolved_program: None,
            justification: None,
            rule_index: 0,
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt"}}"#
        );
        let m = RuleMatch {
            resolved_program: Some("/usr/bin/git".into()),
            justification: Some("why".into()),
            ..m
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"prefixRuleMatch":{"matchedPrefix":["git"],"decision":"prompt","resolvedProgram":"/usr/bin/git","justification":"why"}}"#
        );
    }

    #[test]
    fn pattern_source_quotes_like_starlark() {
        let r = rule(vec![
            PatternToken::Literal("a\"b\\c\n".into()),
            PatternToken::AnyOf(vec!["x".into(), "\u{1}".into()]),
        ]);
        assert_eq!(r.pattern_source(), r#"["a\"b\\c\n", ["x", "\u0001"]]"#);
    }
}
