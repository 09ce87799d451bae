//! `$OSPREY_HOME/environments.toml`, in Codex's format: which exec servers an agent can run
//! its tools on, how to reach each (a program whose stdio is the connection, or a
//! WebSocket URL), and which one is the default.
//!
//! ```toml
//! default = "devbox"          # or "none"; omitted: "local" (none when include_local = false)
//! include_local = true        # the id "local" (this machine) is reserved, as is "none"
//!
//! [[environments]]
//! id = "devbox"               # ASCII letters, digits, '-' and '_', at most 64
//! program = "ssh"             # stdio: program + args (+ env, cwd)
//! args = ["devbox", "osprey exec-server --listen stdio"]
//! initialize_timeout_sec = 30
//!
//! [[environments]]
//! id = "pod"
//! url = "ws://127.0.0.1:8765" # or a WebSocket (ws:// or wss://), + connect_timeout_sec
//! token_env_var = "POD_TOKEN" # Osprey only: the variable holding the capability token
//! ```
//!
//! Every mistake is an error naming the environment and what to change; unknown keys are
//! refused, as Codex refuses them.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::client::{ClientError, ConnectOptions, ExecServerClient};

/// The file's name inside the Osprey home.
pub const FILE_NAME: &str = "environments.toml";
/// The id of this machine.
pub const LOCAL_ID: &str = "local";
const MAX_ID_LEN: usize = 64;
/// How long a WebSocket connection may take when the file sets no `connect_timeout_sec`.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `initialize` may take when the file sets no `initialize_timeout_sec`.
pub const DEFAULT_INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    default: Option<String>,
    include_local: Option<bool>,
    #[serde(default)]
    environments: Vec<EntryToml>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryToml {
    id: String,
    url: Option<String>,
    program: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<PathBuf>,
    connect_timeout_sec: Option<f64>,
    initialize_timeout_sec: Option<f64>,
    token_env_var: Option<String>,
}

/// How to reach one exec server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// Start `program args…` (in `cwd`, with `env` added); its stdio is the connection.
    Program {
        program: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Connect to a WebSocket.
    WebSocket {
        url: String,
        connect_timeout: Duration,
        /// The environment variable holding the bearer token (Osprey's servers require one
        /// beyond loopback).
        token_env_var: Option<String>,
    },
}

/// One configured environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Environment {
    pub id: String,
    pub transport: Transport,
    pub initialize_timeout: Duration,
}

/// The whole file, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Environments {
    /// Whether `local` (this machine) is one of the environments.
    pub include_local: bool,
    /// The environment tools use unless told otherwise; `None` = no default.
    pub default: Option<String>,
    /// The configured remote environments, in file order.
    pub remote: Vec<Environment>,
}

impl Default for Environments {
    /// What applies without a file: this machine only.
    fn default() -> Self {
        Self {
            include_local: true,
            default: Some(LOCAL_ID.to_owned()),
            remote: Vec::new(),
        }
    }
}

impl Environments {
    /// Reads `home/environments.toml`; without the file, the local machine only.
    pub fn load(home: &Path) -> Result<Self, String> {
        let path = home.join(FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(err) => return Err(format!("cannot read {}: {err}", path.display())),
        };
        Self::parse(&text, home).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the file's text; relative `cwd`s are taken from `home`.
    pub fn parse(text: &str, home: &Path) -> Result<Self, String> {
        let file: FileToml = toml::from_str(text).map_err(|e| e.to_string())?;
        let include_local = file.include_local.unwrap_or(true);
        let mut ids: HashSet<String> = HashSet::new();
        if include_local {
            ids.insert(LOCAL_ID.to_owned());
        }
        let mut remote = Vec::with_capacity(file.environments.len());
        for entry in file.environments {
            let environment = parse_entry(entry, home)?;
            if !ids.insert(environment.id.clone()) {
                return Err(format!(
                    "environment id `{}` appears twice; give each environment its own id",
                    environment.id
                ));
            }
            remote.push(environment);
        }
        let default = choose_default(file.default.as_deref(), include_local, &ids)?;
        Ok(Self {
            include_local,
            default,
            remote,
        })
    }

    /// The environment named `id`, or an error listing the ones there are.
    pub fn get(&self, id: &str) -> Result<Option<&Environment>, String> {
        if id == LOCAL_ID && self.include_local {
            return Ok(None);
        }
        self.remote
            .iter()
            .find(|e| e.id == id)
            .map(Some)
            .ok_or_else(|| {
                let mut known: Vec<&str> = self.remote.iter().map(|e| e.id.as_str()).collect();
                if self.include_local {
                    known.insert(0, LOCAL_ID);
                }
                format!(
                    "no environment `{id}` in {FILE_NAME}; configured: {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                )
            })
    }
}

impl Environment {
    /// Connects to this environment's exec server and runs the handshake. `env` is the
    /// environment a started program gets (the entry's `env` on top); `cwd` is where it
    /// starts unless the entry names one.
    pub async fn connect(
        &self,
        env: &std::collections::HashMap<String, String>,
        cwd: &Path,
    ) -> Result<ExecServerClient, ClientError> {
        self.reconnect(env, cwd, None).await
    }

    /// As [`connect`](Self::connect), asking the server to reattach the session
    /// `resume_session_id` (a server that cannot gives a new session).
    pub async fn reconnect(
        &self,
        env: &std::collections::HashMap<String, String>,
        cwd: &Path,
        resume_session_id: Option<String>,
    ) -> Result<ExecServerClient, ClientError> {
        let options = ConnectOptions {
            initialize_timeout: self.initialize_timeout,
            resume_session_id,
            ..ConnectOptions::default()
        };
        match &self.transport {
            Transport::Program {
                program,
                args,
                env: extra,
                cwd: own_cwd,
            } => {
                let mut env = env.clone();
                env.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                let cwd = own_cwd.as_deref().unwrap_or(cwd);
                ExecServerClient::connect_program(program, args, env, cwd, options).await
            }
            Transport::WebSocket {
                url,
                connect_timeout,
                token_env_var,
            } => {
                let token = match token_env_var {
                    Some(var) => Some(env.get(var).cloned().ok_or_else(|| {
                        ClientError::Connect(format!(
                            "environment `{}` takes its token from ${var}, which is not set",
                            self.id
                        ))
                    })?),
                    None => None,
                };
                let options = ConnectOptions {
                    initialize_timeout: (*connect_timeout).max(self.initialize_timeout),
                    ..options
                };
                ExecServerClient::connect_url(url, token.as_deref(), options).await
            }
        }
    }
}

fn choose_default(
    default: Option<&str>,
    include_local: bool,
    ids: &HashSet<String>,
) -> Result<Option<String>, String> {
    let Some(default) = default.map(str::trim) else {
        return Ok(include_local.then(|| LOCAL_ID.to_owned()));
    };
    if default.is_empty() {
        return Err("`default` is empty; name an environment, or write \"none\"".to_owned());
    }
    if default.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    if !ids.contains(default) {
        return Err(format!(
            "default environment `{default}` is not configured{}",
            if default == LOCAL_ID {
                " (include_local is false)"
            } else {
                ""
            }
        ));
    }
    Ok(Some(default.to_owned()))
}

fn seconds(
    id: &str,
    key: &str,
    value: Option<f64>,
    fallback: Duration,
) -> Result<Duration, String> {
    match value {
        None => Ok(fallback),
        Some(secs) => Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("environment `{id}`: {key} must be a positive number of seconds")),
    }
}

fn parse_entry(entry: EntryToml, home: &Path) -> Result<Environment, String> {
    let id = entry.id;
    check_id(&id)?;
    if entry.program.is_none()
        && (entry.args.is_some() || entry.env.is_some() || entry.cwd.is_some())
    {
        return Err(format!(
            "environment `{id}`: args, env and cwd belong to a program; add `program` or remove them"
        ));
    }
    if entry.url.is_none() && (entry.connect_timeout_sec.is_some() || entry.token_env_var.is_some())
    {
        return Err(format!(
            "environment `{id}`: connect_timeout_sec and token_env_var only apply to a `url`"
        ));
    }
    let initialize_timeout = seconds(
        &id,
        "initialize_timeout_sec",
        entry.initialize_timeout_sec,
        DEFAULT_INITIALIZE_TIMEOUT,
    )?;
    let transport = match (entry.url, entry.program) {
        (Some(url), None) => Transport::WebSocket {
            url: check_url(&id, &url)?,
            connect_timeout: seconds(
                &id,
                "connect_timeout_sec",
                entry.connect_timeout_sec,
                DEFAULT_CONNECT_TIMEOUT,
            )?,
            token_env_var: entry.token_env_var,
        },
        (None, Some(program)) => {
            let program = program.trim().to_owned();
            if program.is_empty() {
                return Err(format!("environment `{id}`: program is empty"));
            }
            Transport::Program {
                program,
                args: entry.args.unwrap_or_default(),
                env: entry.env.unwrap_or_default(),
                cwd: entry.cwd.map(|cwd| home.join(cwd)),
            }
        }
        _ => {
            return Err(format!(
                "environment `{id}` must set exactly one of `url` (a WebSocket) or `program` (stdio)"
            ));
        }
    };
    Ok(Environment {
        id,
        transport,
        initialize_timeout,
    })
}

fn check_id(id: &str) -> Result<(), String> {
    if id.trim().is_empty() {
        return Err("an environment has an empty id".to_owned());
    }
    if id.trim() != id {
        return Err(format!(
            "environment id `{id}` has spaces around it; remove them"
        ));
    }
    if id == LOCAL_ID || id.eq_ignore_ascii_case("none") {
        return Err(format!(
            "environment id `{id}` is reserved (\"local\" is this machine, \"none\" means no environment); choose another"
        ));
    }
    if id.len() > MAX_ID_LEN {
        return Err(format!(
            "environment id `{id}` is longer than {MAX_ID_LEN} characters"
        ));
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "environment id `{id}` may contain only ASCII letters, digits, '-' and '_'"
        ));
    }
    Ok(())
}

fn check_url(id: &str, url: &str) -> Result<String, String> {
    let url = url.trim();
    if url.starts_with("wss://") {
        return Err(format!(
            "environment `{id}`: url `{url}`: wss:// (TLS) is not supported yet; use ws:// through an SSH tunnel, or a `program` such as ssh"
        ));
    }
    if !url.starts_with("ws://") {
        return Err(format!(
            "environment `{id}`: url `{url}` must start with ws://"
        ));
    }
    url::Url::parse(url)
        .map_err(|e| format!("environment `{id}`: url `{url}` is not valid: {e}"))?;
    Ok(url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(text: &str) -> Result<Environments, String> {
        Environments::parse(text, Path::new("/home/me/.osprey"))
    }

    #[test]
    fn codexs_example_file_loads() {
        let envs = parse(
            "default = \"ssh-dev\"\n\
             [[environments]]\nid = \"devbox\"\nurl = \" ws://127.0.0.1:8765 \"\n\
             [[environments]]\nid = \"ssh-dev\"\nprogram = \" ssh \"\n\
             args = [\"dev\", \"osprey exec-server --listen stdio\"]\nenv = { LOG = \"debug\" }\n\
             cwd = \"work\"\ninitialize_timeout_sec = 2.5\n",
        )
        .unwrap();
        assert!(envs.include_local);
        assert_eq!(envs.default.as_deref(), Some("ssh-dev"));
        assert_eq!(
            envs.remote[0].transport,
            Transport::WebSocket {
                url: "ws://127.0.0.1:8765".to_owned(),
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
                token_env_var: None,
            }
        );
        let Transport::Program { program, cwd, .. } = &envs.remote[1].transport else {
            panic!("ssh-dev is a program");
        };
        assert_eq!(program, "ssh");
        assert_eq!(cwd.as_deref(), Some(Path::new("/home/me/.osprey/work")));
        assert_eq!(
            envs.remote[1].initialize_timeout,
            Duration::from_millis(2500)
        );
        assert_eq!(envs.get("local").unwrap(), None);
        assert!(
            envs.get("nope")
                .unwrap_err()
                .contains("configured: local, devbox, ssh-dev")
        );
    }

    #[test]
    fn defaults_follow_include_local() {
        assert_eq!(parse("").unwrap(), Environments::default());
        assert_eq!(parse("default = \"none\"").unwrap().default, None);
        let no_local = parse("include_local = false").unwrap();
        assert_eq!(no_local.default, None);
        assert!(no_local.get("local").is_err());
        let err = parse("include_local = false\ndefault = \"local\"").unwrap_err();
        assert!(err.contains("`local` is not configured"), "{err}");
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (
                "[[environments]]\nid = \"local\"\nprogram = \"x\"",
                "is reserved",
            ),
            (
                "[[environments]]\nid = \"NONE\"\nprogram = \"x\"",
                "is reserved",
            ),
            (
                "[[environments]]\nid = \" a\"\nprogram = \"x\"",
                "spaces around it",
            ),
            (
                "[[environments]]\nid = \"a.b\"\nprogram = \"x\"",
                "only ASCII letters",
            ),
            ("[[environments]]\nid = \"a\"", "exactly one of"),
            (
                "[[environments]]\nid = \"a\"\nprogram = \"x\"\nurl = \"ws://h:1\"",
                "exactly one of",
            ),
            (
                "[[environments]]\nid = \"a\"\nargs = [\"x\"]\nurl = \"ws://h:1\"",
                "belong to a program",
            ),
            (
                "[[environments]]\nid = \"a\"\nprogram = \"x\"\nconnect_timeout_sec = 1",
                "only apply to a `url`",
            ),
            (
                "[[environments]]\nid = \"a\"\nurl = \"http://h:1\"",
                "must start with ws://",
            ),
            (
                "[[environments]]\nid = \"a\"\nprogram = \"  \"",
                "program is empty",
            ),
            (
                "[[environments]]\nid = \"a\"\nprogram = \"x\"\n[[environments]]\nid = \"a\"\nprogram = \"y\"",
                "appears twice",
            ),
            ("default = \"ghost\"", "`ghost` is not configured"),
            ("default = \"\"", "`default` is empty"),
            ("colour = \"blue\"", "unknown field"),
            (
                "[[environments]]\nid = \"a\"\nprogram = \"x\"\ninitialize_timeout_sec = -1",
                "positive number",
            ),
        ];
        for (text, want) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?} gave {err:?}, wanted {want:?}");
        }
        let long = format!(
            "[[environments]]\nid = \"{}\"\nprogram = \"x\"",
            "a".repeat(65)
        );
        assert!(parse(&long).unwrap_err().contains("longer than 64"));
    }

    #[test]
    fn a_missing_file_is_the_local_machine_and_a_bad_one_names_its_path() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Environments::load(dir.path()).unwrap(),
            Environments::default()
        );
        std::fs::write(dir.path().join(FILE_NAME), "default = 3").unwrap();
        let err = Environments::load(dir.path()).unwrap_err();
        assert!(err.contains("environments.toml"), "{err}");
    }
}
