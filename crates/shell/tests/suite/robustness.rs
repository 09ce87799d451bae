//! Hostile input must never panic or exhaust the stack; it is analysed or refused.

use osprey_shell::{
    ParsedCommand, parse_command, parse_script, script_dangerous_reason, script_is_known_safe,
};
use proptest::prelude::*;

fn classify(parsed: &ParsedCommand) {
    let _ = script_is_known_safe(parsed);
    let _ = script_dangerous_reason(parsed);
}

#[test]
fn deep_nesting_is_refused_not_overflowed() {
    for (open, close) in [("(", ")"), ("$(", ")"), ("{ ", "; }"), ("\"$(", ")\"")] {
        let script = format!("{}ls{}", open.repeat(5_000), close.repeat(5_000));
        let parsed = parse_script(&script);
        assert!(
            matches!(parsed, ParsedCommand::NotAnalysable { .. }),
            "{open}…{close}: {parsed:?}"
        );
    }
}

#[test]
fn deeply_nested_evals_are_refused() {
    let script = format!("{}rm x", "eval ".repeat(20));
    assert!(matches!(
        parse_script(&script),
        ParsedCommand::NotAnalysable { .. }
    ));
    let shallow = format!("{}rm x", "eval ".repeat(3));
    assert_eq!(
        parse_script(&shallow),
        ParsedCommand::Commands(vec![osprey_shell::PlainCommand::new(["rm", "x"])])
    );
}

#[test]
fn oversized_scripts_are_refused() {
    let script = "echo hi; ".repeat(40_000);
    assert!(matches!(
        parse_script(&script),
        ParsedCommand::NotAnalysable { .. }
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn shellish_text_never_panics(script in r#"[a-z $(){}\[\]'"`\\|&;<>=*?!#~\n\t-]{0,80}"#) {
        let bare = parse_script(&script);
        classify(&bare);
        // bash reads a script starting with `-` or `+` as more options, so only compare the
        // others.
        if !script.starts_with(['-', '+']) {
            let wrapped = parse_command(&["bash".to_string(), "-lc".to_string(), script]);
            prop_assert_eq!(bare, wrapped);
        }
    }

    #[test]
    fn arbitrary_unicode_never_panics(script in any::<String>()) {
        classify(&parse_script(&script));
    }

    #[test]
    fn arbitrary_argv_never_panics(argv in proptest::collection::vec(any::<String>(), 0..6)) {
        classify(&parse_command(&argv));
    }
}

/// tree-sitter-bash's scanner crashed the process (SIGSEGV) on `{` followed by a code point
/// from plane 14 on; such scripts are refused instead of parsed.
#[test]
fn high_plane_code_points_after_a_brace_are_refused_not_crashed_on() {
    for c in ['\u{E0100}', '\u{E01B9}', '\u{F0000}', '\u{10FFFF}'] {
        let script = format!("{{{c}");
        classify(&parse_script(&script));
        classify(&parse_script(&format!("echo hi; {script}")));
    }
    // Ordinary text outside the basic plane is still parsed.
    classify(&parse_script("echo '🎉 done' {a,b}"));
}
