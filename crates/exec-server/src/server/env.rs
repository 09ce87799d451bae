//! The environment a started process gets: exactly the request's `env` when it sends no
//! `envPolicy`; otherwise the server's own variables filtered by the policy (Codex's
//! `shell_environment_policy` rules), then `set`, then `env` on top.

use std::collections::{BTreeMap, HashMap};

use super::RpcError;
use crate::protocol::EnvPolicy;

/// Variables kept by `inherit: "core"`; on Windows also those its programs cannot do
/// without (`SystemRoot`, `COMSPEC`, `PATHEXT`, the profile folders), and names compare
/// without regard to case there (`Path` is `PATH`).
const CORE_VARIABLES: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG",
    "LC_ALL", "LC_CTYPE", "TERM",
];
#[cfg(windows)]
const WINDOWS_CORE_VARIABLES: &[&str] = &[
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "COMMONPROGRAMFILES",
    "HOMEDRIVE",
    "HOMEPATH",
    "USERDOMAIN",
    "COMPUTERNAME",
    "NUMBER_OF_PROCESSORS",
    "OS",
    "PROCESSOR_ARCHITECTURE",
    "PSMODULEPATH",
];

fn is_core(name: &str) -> bool {
    #[cfg(windows)]
    if WINDOWS_CORE_VARIABLES
        .iter()
        .any(|core| super::platform::same_env_name(core, name))
    {
        return true;
    }
    CORE_VARIABLES
        .iter()
        .any(|core| super::platform::same_env_name(core, name))
}

/// Dropped from the inherited set unless `ignoreDefaultExcludes`: names that look like
/// credentials (case-insensitive).
const DEFAULT_EXCLUDES: &[&str] = &["*KEY*", "*SECRET*", "*TOKEN*"];

pub(crate) fn child_environment(
    base: &HashMap<String, String>,
    policy: Option<&EnvPolicy>,
    env: &BTreeMap<String, String>,
) -> Result<HashMap<String, String>, RpcError> {
    let mut out = HashMap::new();
    if let Some(policy) = policy {
        if let Some(other) = policy
            .inherit
            .as_deref()
            .filter(|i| !matches!(*i, "all" | "core" | "none"))
        {
            return Err(RpcError::invalid_params(format!(
                "envPolicy.inherit `{other}` is not one of all, core, none"
            )));
        }
        let inherited = base
            .iter()
            .filter(|(name, _)| match policy.inherit.as_deref() {
                Some("none") => false,
                Some("core") => is_core(name),
                _ => true,
            });
        for (name, value) in inherited {
            let default_excluded = !policy.ignore_default_excludes
                && DEFAULT_EXCLUDES.iter().any(|p| matches(p, name));
            let excluded = policy.exclude.iter().any(|p| matches(p, name));
            let included = policy.include_only.is_empty()
                || policy.include_only.iter().any(|p| matches(p, name));
            if !default_excluded && !excluded && included {
                out.insert(name.clone(), value.clone());
            }
        }
        out.extend(policy.set.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    out.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(out)
}

/// A glob with `*` for any run of characters, matched without regard to case.
fn matches(pattern: &str, name: &str) -> bool {
    let pattern = pattern.to_ascii_uppercase();
    let name = name.to_ascii_uppercase();
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> HashMap<String, String> {
        [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("OPENAI_API_KEY", "sk"),
            ("EDITOR", "vi"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    #[test]
    fn without_a_policy_only_the_request_env_is_given() {
        let env = BTreeMap::from([("A".to_owned(), "1".to_owned())]);
        let got = child_environment(&base(), None, &env).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got["A"], "1");
    }

    #[test]
    fn inherit_all_drops_credentials_unless_told_not_to() {
        let policy = EnvPolicy {
            inherit: Some("all".to_owned()),
            exclude: vec!["EDIT*".to_owned()],
            ..EnvPolicy::default()
        };
        let got = child_environment(&base(), Some(&policy), &BTreeMap::new()).unwrap();
        assert!(got.contains_key("PATH") && got.contains_key("HOME"));
        assert!(!got.contains_key("OPENAI_API_KEY"), "{got:?}");
        assert!(!got.contains_key("EDITOR"), "{got:?}");
        let keep = EnvPolicy {
            ignore_default_excludes: true,
            ..policy
        };
        let got = child_environment(&base(), Some(&keep), &BTreeMap::new()).unwrap();
        assert!(got.contains_key("OPENAI_API_KEY"));
    }

    #[test]
    fn core_include_only_and_set() {
        let policy = EnvPolicy {
            inherit: Some("core".to_owned()),
            include_only: vec!["PATH".to_owned()],
            set: BTreeMap::from([("X".to_owned(), "y".to_owned())]),
            ..EnvPolicy::default()
        };
        let got = child_environment(&base(), Some(&policy), &BTreeMap::new()).unwrap();
        let mut names: Vec<_> = got.keys().cloned().collect();
        names.sort();
        assert_eq!(names, ["PATH", "X"]);
    }

    #[test]
    fn an_unknown_inherit_is_refused_not_taken_as_all() {
        let policy = EnvPolicy {
            inherit: Some("everything".to_owned()),
            ..EnvPolicy::default()
        };
        let err = child_environment(&base(), Some(&policy), &BTreeMap::new()).unwrap_err();
        assert!(err.message.contains("`everything`"), "{err:?}");
    }

    #[test]
    fn globs() {
        assert!(matches("*KEY*", "openai_api_key"));
        assert!(matches("A*B", "AXXB"));
        assert!(!matches("A*B", "AXXC"));
        assert!(matches("PATH", "path"));
        assert!(!matches("PATH", "PATHS"));
    }
}
