//! Evaluating one `.rules` file with Starlark and collecting what its builtins declared.
//!
//! Each file is evaluated in a fresh module with three builtins: `prefix_rule`,
//! `host_executable` and `network_rule`. The builtins only record; the `match` / `not_match`
//! examples are checked after the whole file ran (so a `host_executable` declared later in
//! the file already counts), and nothing from a file reaches the policy unless the whole
//! file succeeded.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use starlark::codemap::FileSpan;
use starlark::environment::GlobalsBuilder;
use starlark::environment::Module;
use starlark::eval::Evaluator;
use starlark::starlark_module;
use starlark::syntax::AstModule;
use starlark::syntax::Dialect;
use starlark::values::Value;
use starlark::values::list::ListRef;
use starlark::values::list::UnpackList;
use starlark::values::none::NoneType;

use crate::decision::Decision;
use crate::error::LoadError;
use crate::error::TextPosition;
use crate::network::NetworkProtocol;
use crate::network::NetworkRule;
use crate::network::normalize_host;
use crate::policy::HostExecutables;
use crate::policy::normalize_absolute;
use crate::policy::rule_matches_example;
use crate::rule::PatternToken;
use crate::rule::PrefixRule;
use crate::rule::RuleOrigin;

/// Everything one file declared, before it is merged into a policy.
#[derive(Debug, Default)]
pub(crate) struct FileRules {
    pub(crate) rules: Vec<PrefixRule>,
    pub(crate) host_executables: Vec<(String, Vec<PathBuf>)>,
    pub(crate) network_rules: Vec<NetworkRule>,
}

/// A rule with the examples still to be checked.
#[derive(Debug)]
struct PendingRule {
    rule: PrefixRule,
    matches: Vec<Vec<String>>,
    not_matches: Vec<Vec<String>>,
}

mod collector {
    //! The per-file state the builtins write into, reached through `Evaluator::extra`.
    // SAFETY: `derive(ProvidesStaticType)` expands to an `unsafe impl` asserting that the
    // type's `'static` form is itself; `Collector` has no lifetime parameters, so that holds
    // trivially. No other unsafe code lives in this module.
    #![expect(
        unsafe_code,
        reason = "derive(ProvidesStaticType) emits an unsafe impl"
    )]

    use std::path::Path;
    use std::path::PathBuf;
    use std::sync::Arc;

    use starlark::any::ProvidesStaticType;

    use super::PendingRule;
    use crate::network::NetworkRule;

    #[derive(Debug, ProvidesStaticType)]
    pub(super) struct Collector {
        pub(super) file: Arc<Path>,
        pub(super) rules: Vec<PendingRule>,
        pub(super) host_executables: Vec<(String, Vec<PathBuf>)>,
        pub(super) network_rules: Vec<NetworkRule>,
    }
}
use collector::Collector;

/// A problem found by a builtin; Starlark attaches the call's position to it.
#[derive(Debug, thiserror::Error)]
enum RuleProblem {
    #[error("invalid decision {0:?}: use \"allow\", \"prompt\" or \"forbidden\"")]
    Decision(String),
    #[error("invalid pattern: {0}")]
    Pattern(String),
    #[error("invalid example: {0}")]
    Example(String),
    #[error("invalid rule: {0}")]
    Rule(String),
    #[error("internal error: the rules collector is missing from the evaluator")]
    NoCollector,
}

fn problem(p: RuleProblem) -> starlark::Error {
    starlark::Error::new_other(p)
}

/// Evaluates `source` (read from `path`) and checks its examples. `known_hosts` are the
/// `host_executable` entries of files loaded before this one.
pub(crate) fn parse_file(
    path: &Path,
    source: &str,
    known_hosts: &HostExecutables,
) -> Result<FileRules, LoadError> {
    let file: Arc<Path> = Arc::from(path);
    let identifier = path.to_string_lossy().into_owned();
    let mut dialect = Dialect::Extended.clone();
    dialect.enable_f_strings = true;
    let ast = AstModule::parse(&identifier, source.to_owned(), &dialect)
        .map_err(|err| invalid(path, &err))?;
    let globals = GlobalsBuilder::standard().with(rules_builtins).build();
    let module = Module::new();
    let collector = RefCell::new(Collector {
        file,
        rules: Vec::new(),
        host_executables: Vec::new(),
        network_rules: Vec::new(),
    });
    {
        let mut eval = Evaluator::new(&module);
        eval.extra = Some(&collector);
        eval.eval_module(ast, &globals)
            .map_err(|err| invalid(path, &err))?;
    }
    let collector = collector.into_inner();

    let mut hosts = known_hosts.clone();
    for (name, paths) in &collector.host_executables {
        hosts.insert(name.clone(), paths.clone());
    }
    let mut rules = Vec::with_capacity(collector.rules.len());
    for pending in collector.rules {
        check_examples(path, &pending, &hosts)?;
        rules.push(pending.rule);
    }
    Ok(FileRules {
        rules,
        host_executables: collector.host_executables,
        network_rules: collector.network_rules,
    })
}

fn invalid(path: &Path, err: &starlark::Error) -> LoadError {
    LoadError::Invalid {
        path: path.to_path_buf(),
        position: err.span().map(begin_position),
        message: err.without_diagnostic().to_string(),
    }
}

fn begin_position(span: &FileSpan) -> TextPosition {
    let resolved = span.resolve_span();
    TextPosition {
        line: resolved.begin.line + 1,
        column: resolved.begin.column + 1,
    }
}

fn check_examples(
    path: &Path,
    pending: &PendingRule,
    hosts: &HostExecutables,
) -> Result<(), LoadError> {
    let rule = &pending.rule;
    let position = Some(TextPosition {
        line: rule.origin.line,
        column: rule.origin.column,
    });
    for example in &pending.not_matches {
        if rule_matches_example(rule, example, hosts) {
            return Err(LoadError::ExampleMatched {
                path: path.to_path_buf(),
                position,
                rule: rule.pattern_source(),
                example: shell_join(example),
            });
        }
    }
    for example in &pending.matches {
        if !rule_matches_example(rule, example, hosts) {
            return Err(LoadError::ExampleNotMatched {
                path: path.to_path_buf(),
                position,
                rule: rule.pattern_source(),
                example: shell_join(example),
            });
        }
    }
    Ok(())
}

fn shell_join(words: &[String]) -> String {
    shlex::try_join(words.iter().map(String::as_str)).unwrap_or_else(|_| format!("{words:?}"))
}

fn parse_pattern(pattern: UnpackList<Value<'_>>) -> Result<Vec<PatternToken>, RuleProblem> {
    if pattern.items.is_empty() {
        return Err(RuleProblem::Pattern("the pattern cannot be empty".into()));
    }
    pattern.items.into_iter().map(parse_pattern_token).collect()
}

fn parse_pattern_token(value: Value<'_>) -> Result<PatternToken, RuleProblem> {
    if let Some(s) = value.unpack_str() {
        return Ok(PatternToken::Literal(s.to_owned()));
    }
    let Some(list) = ListRef::from_value(value) else {
        return Err(RuleProblem::Pattern(format!(
            "each element must be a string or a list of strings, got {}",
            value.get_type()
        )));
    };
    let mut choices = strings_of(list, |ty| {
        RuleProblem::Pattern(format!("alternatives must be strings, got {ty}"))
    })?;
    match choices.len() {
        0 => Err(RuleProblem::Pattern(
            "a list of alternatives cannot be empty".into(),
        )),
        1 => Ok(PatternToken::Literal(choices.remove(0))),
        _ => Ok(PatternToken::AnyOf(choices)),
    }
}

fn strings_of(
    list: &ListRef<'_>,
    wrong: impl Fn(&str) -> RuleProblem,
) -> Result<Vec<String>, RuleProblem> {
    list.content()
        .iter()
        .map(|v| {
            v.unpack_str()
                .map(str::to_owned)
                .ok_or_else(|| wrong(v.get_type()))
        })
        .collect()
}

fn parse_examples(
    examples: Option<UnpackList<Value<'_>>>,
) -> Result<Vec<Vec<String>>, RuleProblem> {
    let Some(examples) = examples else {
        return Ok(Vec::new());
    };
    examples.items.into_iter().map(parse_example).collect()
}

fn parse_example(value: Value<'_>) -> Result<Vec<String>, RuleProblem> {
    let words = if let Some(raw) = value.unpack_str() {
        shlex::split(raw).ok_or_else(|| {
            RuleProblem::Example(format!(
                "{raw:?} is not valid shell syntax (unbalanced quotes?)"
            ))
        })?
    } else if let Some(list) = ListRef::from_value(value) {
        strings_of(list, |ty| {
            RuleProblem::Example(format!("argument lists must hold strings, got {ty}"))
        })?
    } else {
        return Err(RuleProblem::Example(format!(
            "an example must be a string or a list of strings, got {}",
            value.get_type()
        )));
    };
    if words.is_empty() {
        return Err(RuleProblem::Example("an example cannot be empty".into()));
    }
    Ok(words)
}

fn parse_justification(raw: Option<&str>) -> Result<Option<String>, RuleProblem> {
    match raw {
        Some(text) if text.trim().is_empty() => Err(RuleProblem::Rule(
            "justification cannot be empty; omit it or say why the rule exists".into(),
        )),
        other => Ok(other.map(str::to_owned)),
    }
}

fn with_collector<T>(
    eval: &Evaluator<'_, '_, '_>,
    f: impl FnOnce(&mut Collector) -> T,
) -> starlark::Result<T> {
    let cell = eval
        .extra
        .and_then(|extra| extra.downcast_ref::<RefCell<Collector>>())
        .ok_or_else(|| problem(RuleProblem::NoCollector))?;
    let mut collector = cell
        .try_borrow_mut()
        .map_err(|_| problem(RuleProblem::NoCollector))?;
    Ok(f(&mut collector))
}

fn parse_host_path(name: &str, value: Value<'_>) -> Result<PathBuf, RuleProblem> {
    let raw = value.unpack_str().ok_or_else(|| {
        RuleProblem::Rule(format!(
            "host_executable paths must be strings, got {}",
            value.get_type()
        ))
    })?;
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(RuleProblem::Rule(format!(
            "host_executable paths must be absolute, got {raw:?}"
        )));
    }
    let normalized = normalize_absolute(path);
    if normalized.file_name().and_then(|n| n.to_str()) != Some(name) {
        return Err(RuleProblem::Rule(format!(
            "host_executable path {raw:?} must end in the executable name {name:?}"
        )));
    }
    Ok(normalized)
}

#[starlark_module]
fn rules_builtins(builder: &mut GlobalsBuilder) {
    /// Declares a rule matching commands whose leading arguments fit `pattern`.
    fn prefix_rule<'v>(
        pattern: UnpackList<Value<'v>>,
        decision: Option<&'v str>,
        r#match: Option<UnpackList<Value<'v>>>,
        not_match: Option<UnpackList<Value<'v>>>,
        justification: Option<&'v str>,
        canonical_matching: Option<bool>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneType> {
        let decision = match decision {
            None => Decision::Allow,
            Some(raw) => Decision::from_rules_str(raw)
                .ok_or_else(|| problem(RuleProblem::Decision(raw.to_owned())))?,
        };
        let justification = parse_justification(justification).map_err(problem)?;
        let pattern = parse_pattern(pattern).map_err(problem)?;
        let matches = parse_examples(r#match).map_err(problem)?;
        let not_matches = parse_examples(not_match).map_err(problem)?;
        let position = eval
            .call_stack_top_location()
            .map(|span| begin_position(&span));
        with_collector(eval, |collector| {
            let origin = RuleOrigin {
                file: collector.file.clone(),
                line: position.map_or(0, |p| p.line),
                column: position.map_or(0, |p| p.column),
            };
            collector.rules.push(PendingRule {
                rule: PrefixRule {
                    pattern,
                    decision,
                    justification,
                    canonical_matching: canonical_matching.unwrap_or(false),
                    origin,
                },
                matches,
                not_matches,
            });
        })?;
        Ok(NoneType)
    }

    /// Lists the absolute paths allowed to stand in for the basename `name`.
    fn host_executable<'v>(
        name: &'v str,
        paths: UnpackList<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneType> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(problem(RuleProblem::Rule(format!(
                "host_executable name must be a bare executable name, got {name:?}"
            ))));
        }
        let mut parsed: Vec<PathBuf> = Vec::new();
        for value in paths.items {
            let path = parse_host_path(name, value).map_err(problem)?;
            if !parsed.contains(&path) {
                parsed.push(path);
            }
        }
        with_collector(eval, |collector| {
            collector.host_executables.push((name.to_owned(), parsed));
        })?;
        Ok(NoneType)
    }

    /// Declares a network destination rule (kept for Codex compatibility).
    fn network_rule<'v>(
        host: &'v str,
        protocol: &'v str,
        decision: &'v str,
        justification: Option<&'v str>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> starlark::Result<NoneType> {
        let protocol = NetworkProtocol::from_rules_str(protocol).ok_or_else(|| {
            problem(RuleProblem::Rule(format!(
                "network_rule protocol must be one of http, https, socks5_tcp, socks5_udp, got {protocol:?}"
            )))
        })?;
        let decision = match decision {
            "deny" => Decision::Forbidden,
            other => Decision::from_rules_str(other)
                .ok_or_else(|| problem(RuleProblem::Decision(other.to_owned())))?,
        };
        let justification = parse_justification(justification).map_err(problem)?;
        let host = normalize_host(host).map_err(|m| problem(RuleProblem::Rule(m)))?;
        with_collector(eval, |collector| {
            collector.network_rules.push(NetworkRule {
                host,
                protocol,
                decision,
                justification,
            });
        })?;
        Ok(NoneType)
    }
}

/// Keeps later `host_executable` declarations for a name, replacing earlier ones, as Codex does.
pub(crate) fn merge_hosts(
    into: &mut HashMap<String, Vec<PathBuf>>,
    from: &[(String, Vec<PathBuf>)],
) {
    for (name, paths) in from {
        into.insert(name.clone(), paths.clone());
    }
}
