//! Data-driven corpora under `tests/corpus/`: every case is checked and every mismatch is
//! reported together, so one run shows the whole picture.

use std::path::PathBuf;

use osprey_shell::{
    ParsedCommand, command_basename, parse_command, parse_script, script_is_known_safe,
};
use serde::Deserialize;

fn corpus_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name)
}

fn load<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = corpus_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    toml::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// A case gives either a script (run as `bash -lc SCRIPT`, and as a bare script) or an argv.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    script: Option<String>,
    argv: Option<Vec<String>>,
}

impl Input {
    fn label(&self) -> String {
        match (&self.script, &self.argv) {
            (Some(script), _) => format!("script {script:?}"),
            (None, Some(argv)) => format!("argv {argv:?}"),
            (None, None) => "a case with neither script nor argv".to_string(),
        }
    }

    /// Parses the input; for scripts, also checks that `bash -lc SCRIPT` agrees with the bare
    /// script parse.
    fn parse(&self) -> Result<ParsedCommand, String> {
        match (&self.script, &self.argv) {
            (Some(script), None) => {
                let bare = parse_script(script);
                let wrapped =
                    parse_command(&["bash".to_string(), "-lc".to_string(), script.clone()]);
                if bare != wrapped {
                    return Err(format!(
                        "bare parse {bare:?} differs from bash -lc parse {wrapped:?}"
                    ));
                }
                Ok(bare)
            }
            (None, Some(argv)) => Ok(parse_command(argv)),
            _ => Err("give exactly one of `script` or `argv`".to_string()),
        }
    }
}

#[derive(Deserialize)]
struct Corpus<C> {
    case: Vec<C>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptCase {
    #[serde(flatten)]
    input: Input,
    commands: Option<Vec<Vec<String>>>,
    /// Indices of commands that redirect output to a file.
    #[serde(default)]
    redirected: Vec<usize>,
    #[serde(default)]
    not_analysable: bool,
    safe: Option<bool>,
}

fn report(kind: &str, total: usize, failures: &[String]) {
    if !failures.is_empty() {
        panic!(
            "{} of {total} {kind} cases failed:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn script_corpus_matches_expected_commands() {
    let corpus: Corpus<ScriptCase> = load("scripts.toml");
    assert!(
        corpus.case.len() >= 200,
        "the corpus has {} cases",
        corpus.case.len()
    );
    let mut failures = Vec::new();
    for case in &corpus.case {
        let label = case.input.label();
        let parsed = match case.input.parse() {
            Ok(parsed) => parsed,
            Err(err) => {
                failures.push(format!("- {label}: {err}"));
                continue;
            }
        };
        match (&parsed, case.not_analysable, &case.commands) {
            (ParsedCommand::NotAnalysable { .. }, true, None) => {}
            (ParsedCommand::Commands(found), false, Some(expected)) => {
                let argvs: Vec<&Vec<String>> = found.iter().map(|c| &c.argv).collect();
                let expected_refs: Vec<&Vec<String>> = expected.iter().collect();
                if argvs != expected_refs {
                    failures.push(format!("- {label}: expected {expected:?}, got {argvs:?}"));
                }
                let redirected: Vec<usize> = found
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.redirects_to_file)
                    .map(|(i, _)| i)
                    .collect();
                if redirected != case.redirected {
                    failures.push(format!(
                        "- {label}: expected redirected {:?}, got {redirected:?}",
                        case.redirected
                    ));
                }
            }
            (_, true, Some(_)) | (_, false, None) => {
                failures.push(format!(
                    "- {label}: give either `commands` or `not_analysable = true`"
                ));
            }
            (other, _, _) => failures.push(format!("- {label}: got {other:?}")),
        }
        if let Some(safe) = case.safe
            && script_is_known_safe(&parsed) != safe
        {
            failures.push(format!("- {label}: expected known-safe = {safe}"));
        }
    }
    report("script corpus", corpus.case.len(), &failures);
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BypassCase {
    #[serde(flatten)]
    input: Input,
    /// The command that is hidden: its name (compared by basename) must be in the list…
    hidden: String,
    /// …unless the line is refused. `surface` requires the command to be listed, `refuse`
    /// requires a refusal; absent means either is acceptable.
    expect: Option<String>,
}

#[test]
fn bypass_corpus_never_hides_a_command() {
    let corpus: Corpus<BypassCase> = load("bypass.toml");
    let mut failures = Vec::new();
    for case in &corpus.case {
        let label = case.input.label();
        let parsed = match case.input.parse() {
            Ok(parsed) => parsed,
            Err(err) => {
                failures.push(format!("- {label}: {err}"));
                continue;
            }
        };
        let surfaced = parsed.commands().map(|commands| {
            commands.iter().any(|c| {
                c.argv
                    .first()
                    .is_some_and(|a| command_basename(a) == case.hidden)
            })
        });
        let ok = matches!(
            (case.expect.as_deref(), surfaced),
            (Some("surface"), Some(true)) | (Some("refuse"), None) | (None, Some(true) | None)
        );
        if !ok {
            failures.push(format!(
                "- {label}: `{}` is hidden (expect {:?}); got {parsed:?}",
                case.hidden, case.expect
            ));
        }
    }
    report("bypass", corpus.case.len(), &failures);
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LegitCase {
    script: String,
    /// The program names expected, in order, compared by basename.
    names: Option<Vec<String>>,
}

#[test]
fn legit_corpus_parses_to_commands() {
    let corpus: Corpus<LegitCase> = load("legit.toml");
    let mut failures = Vec::new();
    for case in &corpus.case {
        match parse_script(&case.script) {
            ParsedCommand::Commands(commands) if !commands.is_empty() => {
                if let Some(names) = &case.names {
                    let found: Vec<&str> = commands.iter().map(|c| c.basename()).collect();
                    if &found != names {
                        failures.push(format!(
                            "- {:?}: expected names {names:?}, got {found:?}",
                            case.script
                        ));
                    }
                }
            }
            other => failures.push(format!("- {:?}: got {other:?}", case.script)),
        }
    }
    report("legit", corpus.case.len(), &failures);
}
