//! Every form of the rules language, checked through `Policy::check`.

use std::path::Path;

use osprey_execpolicy::Decision;
use osprey_execpolicy::PatternToken;
use pretty_assertions::assert_eq;

use super::argv;
use super::outcome;
use super::policy;

#[test]
fn literal_pattern_is_an_argv_prefix() {
    let p = policy(r#"prefix_rule(pattern=["cargo", "test"])"#);
    assert_eq!(
        outcome(&p, &["cargo", "test"]),
        (Some(Decision::Allow), vec![argv(&["cargo", "test"])])
    );
    assert_eq!(
        outcome(&p, &["cargo", "test", "-p", "x"]),
        (Some(Decision::Allow), vec![argv(&["cargo", "test"])])
    );
    assert_eq!(outcome(&p, &["cargo"]), (None, vec![]));
    assert_eq!(outcome(&p, &["cargo", "build"]), (None, vec![]));
    assert_eq!(outcome(&p, &["xcargo", "test"]), (None, vec![]));
    assert_eq!(outcome(&p, &[]), (None, vec![]));
}

#[test]
fn decision_defaults_to_allow_and_accepts_all_three() {
    let p = policy(
        r#"
prefix_rule(pattern=["a"])
prefix_rule(pattern=["b"], decision="allow")
prefix_rule(pattern=["c"], decision="prompt")
prefix_rule(pattern=["d"], decision="forbidden")
"#,
    );
    assert_eq!(outcome(&p, &["a"]).0, Some(Decision::Allow));
    assert_eq!(outcome(&p, &["b"]).0, Some(Decision::Allow));
    assert_eq!(outcome(&p, &["c"]).0, Some(Decision::Prompt));
    assert_eq!(outcome(&p, &["d"]).0, Some(Decision::Forbidden));
}

#[test]
fn alternatives_in_any_position_including_the_program() {
    let p = policy(r#"prefix_rule(pattern=[["git", "hg"], "log", ["-1", "-2"]])"#);
    assert_eq!(
        outcome(&p, &["hg", "log", "-2"]).1,
        vec![argv(&["hg", "log", "-2"])]
    );
    assert_eq!(
        outcome(&p, &["git", "log", "-1", "x"]).1,
        vec![argv(&["git", "log", "-1"])]
    );
    assert_eq!(
        outcome(&p, &["git", "log", "-3"]).1,
        Vec::<Vec<String>>::new()
    );
    // One rule with program alternatives is still one rule, matched once.
    assert_eq!(p.rules().len(), 1);
}

#[test]
fn single_alternative_list_reads_as_a_literal() {
    let p = policy(r#"prefix_rule(pattern=["ls", ["-l"]])"#);
    assert_eq!(p.rules()[0].pattern[1], PatternToken::Literal("-l".into()));
}

#[test]
fn every_matching_rule_is_listed_in_file_order_and_the_strictest_wins() {
    let p = policy(
        r#"
prefix_rule(pattern=["git"], decision="prompt")
prefix_rule(pattern=["git", "push"], decision="forbidden", justification="no pushing")
prefix_rule(pattern=["git", ["push", "status"]], decision="allow")
prefix_rule(pattern=["hg"], decision="forbidden")
"#,
    );
    let evaluation = p.check(&argv(&["git", "push", "origin"]));
    assert_eq!(evaluation.decision, Some(Decision::Forbidden));
    let summary: Vec<(Vec<String>, Decision, Option<String>)> = evaluation
        .matched_rules
        .iter()
        .map(|m| {
            (
                m.matched_prefix.clone(),
                m.decision,
                m.justification.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (argv(&["git"]), Decision::Prompt, None),
            (
                argv(&["git", "push"]),
                Decision::Forbidden,
                Some("no pushing".into())
            ),
            (argv(&["git", "push"]), Decision::Allow, None),
        ]
    );
    assert_eq!(outcome(&p, &["git", "status"]).0, Some(Decision::Prompt));
}

#[test]
fn identical_rules_are_both_reported() {
    let p = policy("prefix_rule(pattern=[\"a\"])\nprefix_rule(pattern=[\"a\"])\n");
    assert_eq!(outcome(&p, &["a", "b"]).1.len(), 2);
}

#[test]
fn starlark_features_work_positional_args_functions_and_fstrings() {
    let p = policy(
        r#"
def ro(tool, subs):
    for sub in subs:
        prefix_rule(pattern=[tool, sub], justification=f"{tool} {sub} is read-only")

ro("git", ["status", "diff"])
prefix_rule(["make"], "prompt")
"#,
    );
    let evaluation = p.check(&argv(&["git", "diff"]));
    assert_eq!(
        evaluation.matched_rules[0].justification.as_deref(),
        Some("git diff is read-only")
    );
    assert_eq!(outcome(&p, &["make", "all"]).0, Some(Decision::Prompt));
}

#[test]
fn rules_remember_where_they_were_written() {
    let p = policy("\n\n_ = prefix_rule(pattern=[\"a\"])\n");
    let origin = &p.rules()[0].origin;
    assert_eq!((origin.line, origin.column), (3, 5));
    assert_eq!(&*origin.file, Path::new("test.rules"));
}

#[test]
fn matching_is_exact_no_globs_no_case_folding() {
    let p = policy(r#"prefix_rule(pattern=["rm", "*"], decision="forbidden")"#);
    assert_eq!(outcome(&p, &["rm", "-rf"]).0, None);
    assert_eq!(outcome(&p, &["RM", "*"]).0, None);
    assert_eq!(outcome(&p, &["rm", "*"]).0, Some(Decision::Forbidden));
}

#[test]
fn host_executable_limits_basename_resolution() {
    use osprey_execpolicy::MatchOptions;
    let p = policy(
        r#"
prefix_rule(pattern=["git", "status"])
host_executable(name="git", paths=["/usr/bin/git"])
prefix_rule(pattern=["ls"])
"#,
    );
    let resolve = MatchOptions {
        resolve_host_executables: true,
    };
    let check = |cmd: &[&str]| p.check_with_options(&argv(cmd), &resolve);
    let hit = check(&["/usr/bin/git", "status"]);
    assert_eq!(
        hit.matched_rules[0].matched_prefix,
        argv(&["git", "status"])
    );
    assert_eq!(
        hit.matched_rules[0].resolved_program.as_deref(),
        Some("/usr/bin/git")
    );
    assert_eq!(
        check(&["/usr/bin/../bin/git", "status"]).decision,
        Some(Decision::Allow)
    );
    assert_eq!(check(&["/opt/evil/git", "status"]).decision, None);
    // No host_executable entry for ls: any path with that basename may use its rules.
    assert_eq!(check(&["/bin/ls"]).decision, Some(Decision::Allow));
    // Without the option, paths are compared literally.
    assert_eq!(p.check(&argv(&["/usr/bin/git", "status"])).decision, None);
}

#[test]
fn network_rules_are_kept_but_do_not_affect_commands() {
    let p = policy(
        r#"network_rule(host="API.example.com:443", protocol="https", decision="deny", justification="no")"#,
    );
    assert_eq!(p.network_rules().len(), 1);
    assert_eq!(p.network_rules()[0].host, "api.example.com");
    assert_eq!(p.network_rules()[0].decision, Decision::Forbidden);
    assert_eq!(outcome(&p, &["curl", "https://api.example.com"]).0, None);
}

#[test]
fn canonical_matching_flag_is_accepted() {
    let p = policy(r#"prefix_rule(pattern=["a"], canonical_matching=True)"#);
    assert!(p.rules()[0].canonical_matching);
    assert_eq!(outcome(&p, &["a"]).0, Some(Decision::Allow));
}
