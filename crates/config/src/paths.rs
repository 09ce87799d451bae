//! The home directory, the working directory and the project root.

use std::path::{Component, Path, PathBuf};

use crate::env_vars::{self, EnvSnapshot};
use crate::error::ConfigError;

/// Name of the main configuration file in the home and in a project's `.osprey/`.
pub const CONFIG_FILE_NAME: &str = "config.toml";
/// Name of the managed requirements file in the home.
pub const REQUIREMENTS_FILE_NAME: &str = "requirements.toml";
/// Folder under a project root that holds the project's `config.toml`.
pub const PROJECT_CONFIG_DIR: &str = ".osprey";

/// `$OSPREY_HOME` (made absolute against `cwd`), else `~/.osprey`.
pub fn find_osprey_home(env: &EnvSnapshot, cwd: &Path) -> Result<PathBuf, ConfigError> {
    if let Some(home) = env.get_non_empty(env_vars::OSPREY_HOME) {
        return Ok(absolute(cwd, Path::new(home)));
    }
    let user_home = env
        .get_non_empty(env_vars::HOME)
        .or_else(|| env.get_non_empty(env_vars::USERPROFILE))
        .ok_or(ConfigError::NoHome)?;
    Ok(absolute(cwd, Path::new(user_home)).join(".osprey"))
}

/// `path` joined onto `base` when relative, with `.` and `..` removed lexically.
pub fn absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The nearest ancestor of `cwd` (itself included) containing `.git`, else `cwd`.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn home_from_env_or_user_home() {
        let cwd = Path::new("/work");
        let env = EnvSnapshot::from_pairs([("OSPREY_HOME", "rel/home"), ("HOME", "/u")]);
        assert_eq!(
            find_osprey_home(&env, cwd).unwrap(),
            PathBuf::from("/work/rel/home")
        );
        let env = EnvSnapshot::from_pairs([("OSPREY_HOME", ""), ("HOME", "/u")]);
        assert_eq!(
            find_osprey_home(&env, cwd).unwrap(),
            PathBuf::from("/u/.osprey")
        );
        assert!(matches!(
            find_osprey_home(&EnvSnapshot::default(), cwd),
            Err(ConfigError::NoHome)
        ));
    }

    #[test]
    fn absolute_normalizes() {
        assert_eq!(
            absolute(Path::new("/a/b"), Path::new("../c/./d")),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(
            absolute(Path::new("/a"), Path::new("/x/../y")),
            PathBuf::from("/y")
        );
    }

    #[test]
    fn project_root_is_nearest_git_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let sub = repo.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(project_root(&sub), sub);
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(project_root(&sub), repo);
    }
}
