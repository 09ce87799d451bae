//! The environment and working directory a model command runs with.

use super::call::ToolError;
use osprey_config::ShellEnvironmentPolicy;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The command environment: the session's environment filtered by
/// `shell_environment_policy`, plus defaults that keep tools non-interactive.
pub fn command_env(
    base: &HashMap<String, String>,
    policy: &ShellEnvironmentPolicy,
    tty: bool,
) -> HashMap<String, String> {
    let mut env: HashMap<String, String> = policy.apply(base.clone()).into_iter().collect();
    let defaults: [(&str, &str); 3] = [("PAGER", "cat"), ("GIT_PAGER", "cat"), ("NO_COLOR", "1")];
    for (key, value) in defaults {
        env.insert(key.to_string(), value.to_string());
    }
    if tty {
        env.entry("TERM".to_string())
            .or_insert_with(|| "xterm-256color".to_string());
    } else {
        env.insert("TERM".to_string(), "dumb".to_string());
    }
    // Values from the policy's `set` table win over the defaults.
    for (key, value) in &policy.set {
        env.insert(key.clone(), value.clone());
    }
    env
}

/// Resolves the model's `workdir` against the turn's cwd and checks it is a directory.
pub fn resolve_workdir(cwd: &Path, workdir: Option<&str>) -> Result<PathBuf, ToolError> {
    let Some(workdir) = workdir.filter(|w| !w.trim().is_empty()) else {
        return Ok(cwd.to_path_buf());
    };
    let path = Path::new(workdir);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    if !path.is_dir() {
        return Err(ToolError::RespondToModel(format!(
            "workdir {} is not an existing directory; pass a directory that exists (absolute, or relative to {})",
            path.display(),
            cwd.display()
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_interactive_defaults_are_set() {
        let base = HashMap::from([("PATH".to_string(), "/bin".to_string())]);
        let env = command_env(&base, &ShellEnvironmentPolicy::default(), false);
        assert_eq!(env["PAGER"], "cat");
        assert_eq!(env["GIT_PAGER"], "cat");
        assert_eq!(env["TERM"], "dumb");
        assert_eq!(env["PATH"], "/bin");
    }

    #[test]
    fn missing_workdir_is_a_plain_error() {
        let err = resolve_workdir(Path::new("/"), Some("no/such/dir")).unwrap_err();
        assert!(err.to_string().contains("not an existing directory"));
    }
}
