mod amend;
mod broken;
mod check_cli;
mod differential;
mod examples;
mod grammar;
mod load_dirs;

use std::path::Path;

use osprey_execpolicy::Decision;
use osprey_execpolicy::Policy;

pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

pub fn policy(source: &str) -> Policy {
    match Policy::from_source(Path::new("test.rules"), source) {
        Ok(policy) => policy,
        Err(err) => panic!("rules should load: {err}"),
    }
}

/// The decision and the matched prefixes for `cmd`.
pub fn outcome(policy: &Policy, cmd: &[&str]) -> (Option<Decision>, Vec<Vec<String>>) {
    let evaluation = policy.check(&argv(cmd));
    let prefixes = evaluation
        .matched_rules
        .iter()
        .map(|m| m.matched_prefix.clone())
        .collect();
    (evaluation.decision, prefixes)
}
