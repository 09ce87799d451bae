//! Temporary Osprey homes wired to a mock server, and temporary git repositories.
//!
//! These are test helpers: when the file system fails they panic with a message naming the
//! path, which is how a test should fail.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use tempfile::TempDir;

use crate::script::WireApi;
use crate::server::MockModelServer;

/// Every generated provider key starts with this.
const PROVIDER_PREFIX: &str = "model_providers.mock.";

/// The API key [`TempHome::env`] exports, under [`TempHome::API_KEY_ENV`].
pub const TEST_API_KEY: &str = "test-key";

/// A temporary `OSPREY_HOME` whose `config.toml` points the `mock` provider at a mock server.
///
/// The provider is written with dotted keys (`model_providers.mock.base_url = …`) rather
/// than a `[model_providers.mock]` table, so that text appended by
/// [`TempHome::write_config`] lands at the top level: both plain keys
/// (`approval_policy = "never"`) and new `[tables]` work. Retries are off and the idle
/// timeout short, so failure tests fail fast. The directory is deleted on drop.
#[derive(Debug)]
pub struct TempHome {
    dir: TempDir,
}

impl TempHome {
    /// The environment variable holding the mock provider's API key.
    pub const API_KEY_ENV: &'static str = "OSPREY_TEST_API_KEY";

    /// A home whose provider talks to `server` with the given wire API.
    pub fn for_server(server: &MockModelServer, wire_api: WireApi) -> Self {
        Self::for_base_url(&server.base_url(), wire_api)
    }

    /// A home whose provider talks to `base_url` (e.g. a server in another process).
    pub fn for_base_url(base_url: &str, wire_api: WireApi) -> Self {
        let dir = match tempfile::Builder::new().prefix("osprey-home-").tempdir() {
            Ok(dir) => dir,
            Err(err) => panic!("could not create a temporary OSPREY_HOME: {err}"),
        };
        let home = Self { dir };
        let wire = match wire_api {
            WireApi::Responses => "responses",
            WireApi::Chat => "chat",
        };
        let config = format!(
            "model = \"mock-model\"\n\
             model_provider = \"mock\"\n\
             model_providers.mock.name = \"Mock\"\n\
             model_providers.mock.base_url = {}\n\
             model_providers.mock.env_key = \"{}\"\n\
             model_providers.mock.wire_api = \"{wire}\"\n\
             model_providers.mock.request_max_retries = 0\n\
             model_providers.mock.stream_max_retries = 0\n\
             model_providers.mock.stream_idle_timeout_ms = 5000\n",
            toml::Value::String(base_url.to_owned()),
            Self::API_KEY_ENV,
        );
        let path = home.config_path();
        if let Err(err) = std::fs::write(&path, config) {
            panic!("could not write {}: {err}", path.display());
        }
        home
    }

    /// The home directory (the value of `OSPREY_HOME`).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `<home>/config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    /// Appends `extra_toml` to `config.toml`, then checks the whole file still parses as
    /// TOML (a repeated key such as a second `model = …` does not).
    pub fn write_config(&self, extra_toml: &str) {
        let path = self.config_path();
        let appended = OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut file| write!(file, "\n{extra_toml}\n"));
        if let Err(err) = appended {
            panic!("could not append to {}: {err}", path.display());
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) => panic!("could not read back {}: {err}", path.display()),
        };
        if let Err(err) = text.parse::<toml::Table>() {
            panic!(
                "{} is no longer valid TOML after appending {extra_toml:?}: {err}",
                path.display()
            );
        }
    }

    /// Sets one key of the `mock` provider, replacing the generated value if there is one:
    /// `home.set_provider_option("stream_idle_timeout_ms", "300")`. `toml_value` is TOML
    /// source (quote strings). Use this rather than [`TempHome::write_config`] for provider
    /// keys, which would repeat them.
    pub fn set_provider_option(&self, key: &str, toml_value: &str) {
        let path = self.config_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) => panic!("could not read {}: {err}", path.display()),
        };
        let prefix = format!("{PROVIDER_PREFIX}{key} =");
        let new_line = format!("{PROVIDER_PREFIX}{key} = {toml_value}");
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        if let Some(line) = lines.iter_mut().find(|line| line.starts_with(&prefix)) {
            *line = new_line;
        } else {
            // Provider keys are generated first, before any appended table header, so a new
            // one goes right after them to stay at the top level.
            let at = lines
                .iter()
                .rposition(|line| line.starts_with(PROVIDER_PREFIX))
                .map_or(lines.len(), |index| index + 1);
            lines.insert(at, new_line);
        }
        let mut updated = lines.join("\n");
        updated.push('\n');
        if let Err(err) = updated.parse::<toml::Table>() {
            panic!(
                "setting provider option {key} = {toml_value} would make {} invalid TOML: {err}",
                path.display()
            );
        }
        if let Err(err) = std::fs::write(&path, updated) {
            panic!("could not write {}: {err}", path.display());
        }
    }

    /// Environment for an `osprey` child process: `OSPREY_HOME`, the mock provider's API
    /// key and `NO_COLOR=1`. Pass to `Command::envs`.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        vec![
            ("OSPREY_HOME", self.dir.path().as_os_str().to_owned()),
            (Self::API_KEY_ENV, OsString::from(TEST_API_KEY)),
            ("NO_COLOR", OsString::from("1")),
        ]
    }
}

/// A temporary directory holding a fresh git repository (branch `main`, a local user name
/// and email so commits work, no signing).
#[expect(
    clippy::disallowed_methods,
    reason = "test helper runs git in a temp dir"
)]
pub fn temp_git_repo() -> TempDir {
    let dir = match tempfile::Builder::new().prefix("osprey-repo-").tempdir() {
        Ok(dir) => dir,
        Err(err) => panic!("could not create a temporary directory for a git repo: {err}"),
    };
    let steps: [&[&str]; 4] = [
        &["-c", "init.defaultBranch=main", "init", "-q"],
        &["config", "user.name", "Osprey Test"],
        &["config", "user.email", "osprey-test@example.invalid"],
        &["config", "commit.gpgsign", "false"],
    ];
    for args in steps {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output();
        match status {
            Ok(output) if output.status.success() => {}
            Ok(output) => panic!(
                "`git {}` failed in {}: {}",
                args.join(" "),
                dir.path().display(),
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(err) => panic!("could not run git (is it installed?): {err}"),
        }
    }
    dir
}

/// A binary of this workspace built next to the running test (`target/debug/<name>`), for
/// tests that run the real program. Panics with what to do when it has not been built.
pub fn workspace_binary(name: &str) -> PathBuf {
    let test_exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => panic!("cannot find the running test's own path: {err}"),
    };
    let Some(dir) = test_exe.parent().and_then(Path::parent) else {
        panic!("{} is not inside a target directory", test_exe.display());
    };
    let bin = dir.join(name);
    if !bin.is_file() {
        panic!(
            "{} is missing: build the binaries first (cargo build --workspace --bins)",
            bin.display()
        );
    }
    bin
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn config_points_at_the_server_and_accepts_appended_keys() {
        let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Chat);
        home.write_config("approval_policy = \"never\"\n[profiles.fast]\nmodel = \"m2\"");
        let text = std::fs::read_to_string(home.config_path()).unwrap();
        let table: toml::Table = text.parse().unwrap();
        let provider = &table["model_providers"]["mock"];
        assert_eq!(provider["base_url"].as_str(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(provider["wire_api"].as_str(), Some("chat"));
        assert_eq!(provider["env_key"].as_str(), Some("OSPREY_TEST_API_KEY"));
        assert_eq!(provider["stream_idle_timeout_ms"].as_integer(), Some(5000));
        assert_eq!(table["model"].as_str(), Some("mock-model"));
        assert_eq!(table["approval_policy"].as_str(), Some("never"));
        assert_eq!(table["profiles"]["fast"]["model"].as_str(), Some("m2"));
    }

    #[test]
    #[should_panic(expected = "no longer valid TOML")]
    fn repeated_key_is_caught_when_appended() {
        let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
        home.write_config("model = \"other\"");
    }

    #[test]
    fn provider_options_are_replaced_or_added_at_the_top_level() {
        let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
        home.write_config("[profiles.p]\nmodel = \"x\"");
        home.set_provider_option("stream_idle_timeout_ms", "300");
        home.set_provider_option("query_params", "{ api-version = \"1\" }");
        let text = std::fs::read_to_string(home.config_path()).unwrap();
        let table: toml::Table = text.parse().unwrap();
        let provider = &table["model_providers"]["mock"];
        assert_eq!(provider["stream_idle_timeout_ms"].as_integer(), Some(300));
        assert_eq!(provider["query_params"]["api-version"].as_str(), Some("1"));
        assert!(table["profiles"]["p"].get("query_params").is_none());
        assert_eq!(text.matches("stream_idle_timeout_ms").count(), 1);
    }

    #[test]
    fn env_names_the_home_and_key() {
        let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
        let env = home.env();
        assert_eq!(env[0], ("OSPREY_HOME", home.path().as_os_str().to_owned()));
        assert_eq!(env[1], ("OSPREY_TEST_API_KEY", OsString::from("test-key")));
        assert_eq!(env[2], ("NO_COLOR", OsString::from("1")));
    }

    #[test]
    fn git_repo_is_initialised() {
        let repo = temp_git_repo();
        assert!(repo.path().join(".git").is_dir());
    }
}
