//! A temporary home and git repository to build configurations in.
#![expect(
    clippy::unwrap_used,
    reason = "test fixture: a failing file operation should fail the test"
)]

use std::path::PathBuf;

use osprey_config::{ConfigBuilder, ConfigError, ConfigOverrides, EnvSnapshot, LoadedConfig};
use tempfile::TempDir;

pub struct Fixture {
    _dir: TempDir,
    /// `OSPREY_HOME`.
    pub home: PathBuf,
    /// A git repository root.
    pub repo: PathBuf,
    /// The working directory: `repo/sub`.
    pub cwd: PathBuf,
    pub env: EnvSnapshot,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let repo = dir.path().join("repo");
        let cwd = repo.join("sub");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        // An OpenAI key is present, so the default provider is `openai` (without one and
        // without a configured provider, the embedded local model is chosen; see
        // providers.rs).
        let env = EnvSnapshot::from_pairs([
            ("OSPREY_HOME", home.to_str().unwrap()),
            ("OPENAI_API_KEY", "sk-test"),
        ]);
        Self {
            _dir: dir,
            home,
            repo,
            cwd,
            env,
        }
    }

    pub fn user_path(&self) -> PathBuf {
        self.home.join("config.toml")
    }

    pub fn project_path(&self) -> PathBuf {
        self.repo.join(".osprey/config.toml")
    }

    pub fn write_user(&self, text: &str) {
        std::fs::write(self.user_path(), text).unwrap();
    }

    pub fn write_project(&self, text: &str) {
        std::fs::create_dir_all(self.repo.join(".osprey")).unwrap();
        std::fs::write(self.project_path(), text).unwrap();
    }

    /// The `[projects]` entry that trusts the repository.
    pub fn trust_entry(&self) -> String {
        format!(
            "[projects.{}]\ntrust_level = \"trusted\"\n",
            toml::Value::String(self.repo.to_str().unwrap().to_owned())
        )
    }

    /// Writes `$OSPREY_HOME/requirements.toml`, which applies as on a real machine.
    pub fn write_requirements(&mut self, text: &str) -> PathBuf {
        let path = self.home.join("requirements.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn builder(&self) -> ConfigBuilder {
        ConfigBuilder::new(self.env.clone()).process_cwd(&self.cwd)
    }

    pub fn build(&self) -> Result<LoadedConfig, ConfigError> {
        self.builder().build()
    }

    pub fn build_with(
        &self,
        cli: &[&str],
        overrides: ConfigOverrides,
    ) -> Result<LoadedConfig, ConfigError> {
        self.builder()
            .cli_overrides(cli.iter().copied())
            .overrides(overrides)
            .build()
    }
}
