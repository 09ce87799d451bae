//! The first launch in a project whose `.osprey/config.toml` is not trusted yet asks once
//! whether to trust it; the answer is saved as `[projects."<root>"] trust_level` in the
//! user's `config.toml`, which the config loader reads (an untrusted project file is not
//! loaded, and the loader says so).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A project to ask about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustQuestion {
    /// The project's root (the folder with `.git`, else the working directory).
    pub root: PathBuf,
    /// The user's config.toml, where the answer is saved.
    pub user_config: PathBuf,
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// The question to ask in `cwd`, or `None` when there is no project config or the user
/// already answered for this project.
pub fn question(env: &HashMap<String, String>, cwd: &Path) -> Option<TrustQuestion> {
    let root = osprey_config::project_root(cwd);
    let project_file = root
        .join(osprey_config::PROJECT_CONFIG_DIR)
        .join(osprey_config::CONFIG_FILE_NAME);
    let user_config = crate::settings::config_path(env)?;
    if !project_file.is_file() || same_path(&project_file, &user_config) {
        return None;
    }
    let answered = std::fs::read_to_string(&user_config)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|table| table.get("projects").and_then(|p| p.as_table()).cloned())
        .is_some_and(|projects| {
            projects.iter().any(|(key, value)| {
                let dir = Path::new(key);
                (same_path(dir, cwd) || same_path(dir, &root)) && value.get("trust_level").is_some()
            })
        });
    (!answered).then_some(TrustQuestion { root, user_config })
}

/// Saves the answer.
pub fn record(question: &TrustQuestion, trusted: bool) -> Result<(), String> {
    let root = question
        .root
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let level = if trusted { "trusted" } else { "untrusted" };
    osprey_config::edit::set_value(
        &question.user_config,
        &format!("projects.\"{root}\".trust_level"),
        toml_edit::value(level),
    )
    .map_err(|e| {
        format!(
            "could not save the trust decision in {}: {e}",
            question.user_config.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_config_is_asked_about_once_and_the_answer_is_saved() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let env = HashMap::from([("OSPREY_HOME".to_owned(), home.path().display().to_string())]);
        assert_eq!(question(&env, project.path()), None, "no project config");
        std::fs::create_dir(project.path().join(".osprey")).unwrap();
        std::fs::write(
            project.path().join(".osprey/config.toml"),
            "model = \"x\"\n",
        )
        .unwrap();
        let q = question(&env, project.path()).unwrap();
        assert_eq!(q.root, project.path());
        record(&q, true).unwrap();
        assert_eq!(question(&env, project.path()), None, "answered");
        let saved = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
        assert!(saved.contains("trust_level = \"trusted\""), "{saved}");
    }
}
