//! A thread's connection to an exec server: connected when the thread starts, replaced
//! (with backoff, asking the server to resume the old session) when it drops.
//!
//! Every call goes through [`RemoteEnvironment::call`], which turns the client's errors
//! into sentences the model can act on. A call cut off by a lost connection is never
//! retried by itself: whether it took effect is unknown, so the model is told so and
//! decides.

use osprey_exec_server::client::{ClientError, ExecServerClient};
use osprey_exec_server::environments::Environment;
use osprey_exec_server::protocol::{
    DiscoverV2Params, DiscoverV2Response, EnvironmentInfo, ProcessStartParams,
    ProcessStartResponse, method,
};
use osprey_exec_server::version_gate::Discovery;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How long to wait before each reconnection attempt; after the last one the call fails.
const RECONNECT_BACKOFF: [Duration; 4] = [
    Duration::from_millis(200),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// One remote environment of a thread.
pub struct RemoteEnvironment {
    id: String,
    spec: Environment,
    /// What a started transport program gets (`ssh …`, `docker exec …`).
    launch_env: HashMap<String, String>,
    launch_cwd: PathBuf,
    /// The live connection; replaced when it is found dropped.
    client: Mutex<Arc<ExecServerClient>>,
    /// What the server said about itself at the first connection.
    info: EnvironmentInfo,
    /// The working directory tools use there.
    cwd: PathBuf,
    /// Whether V2 capability discovery may be used (`features.exec_server_discovery_v2`).
    discovery_v2: bool,
    /// The thread's sandbox policy asks for confinement: a server that runs commands
    /// unconfined must not get them.
    require_confinement: bool,
    /// The server said (`sandboxType: "none"`) that it runs our processes unconfined.
    unconfined: std::sync::atomic::AtomicBool,
    /// When the last round of reconnection failed, and why: calls soon after fail at once
    /// instead of each waiting through its own round.
    last_failure: std::sync::Mutex<Option<(std::time::Instant, String)>>,
}

/// How long a failed round of reconnection answers later calls without trying again.
const FAILED_RECONNECT_HOLD: Duration = Duration::from_secs(10);

impl std::fmt::Debug for RemoteEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteEnvironment")
            .field("id", &self.id)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

impl RemoteEnvironment {
    /// Connects to `spec`'s exec server. `cwd` is the working directory on the remote side
    /// (the server's own when `None`).
    pub async fn connect(
        spec: Environment,
        launch_env: HashMap<String, String>,
        launch_cwd: PathBuf,
        cwd: Option<PathBuf>,
        discovery_v2: bool,
        require_confinement: bool,
    ) -> Result<Self, String> {
        let client = spec
            .connect(&launch_env, &launch_cwd)
            .await
            .map_err(|e| connect_error(&spec.id, &e))?;
        let info = client.environment().clone();
        let cwd = match cwd {
            Some(cwd) => cwd,
            None => server_cwd(&spec.id, &info)?,
        };
        let remote = Self {
            id: spec.id.clone(),
            spec,
            launch_env,
            launch_cwd,
            client: Mutex::new(Arc::new(client)),
            info,
            cwd,
            discovery_v2,
            require_confinement,
            unconfined: std::sync::atomic::AtomicBool::new(false),
            last_failure: std::sync::Mutex::new(None),
        };
        let client = Arc::clone(&*remote.client.lock().await);
        remote.discover(&client).await;
        remote.probe_confinement(&client).await;
        Ok(remote)
    }

    /// Starts a process that does nothing and reads the server's `sandboxType` for it:
    /// Codex's server, for one, runs processes unconfined unless the client sends a sandbox
    /// context (Osprey sends none; Osprey's server confines by its own policy). Done before
    /// any command of the model reaches the server.
    async fn probe_confinement(&self, client: &ExecServerClient) {
        let (shell, argv) = match self.shell() {
            Some((_, path)) => (
                path.to_owned(),
                osprey_shell::Shell::new(path).derive_exec_args("exit 0", false),
            ),
            None => (
                "/bin/sh".to_owned(),
                vec!["/bin/sh".to_owned(), "-c".to_owned(), "exit 0".to_owned()],
            ),
        };
        let process_id = format!("osprey-probe-{}", uuid::Uuid::now_v7());
        let params = ProcessStartParams {
            process_id: process_id.clone(),
            argv,
            cwd: osprey_exec_server::uri::from_path(&self.cwd),
            env: Default::default(),
            env_policy: None,
            tty: false,
            pipe_stdin: false,
            arg0: None,
            sandbox: None,
            metadata: None,
        };
        let unconfined = match client
            .call::<ProcessStartResponse>(method::PROCESS_START, params)
            .await
        {
            Ok(started) => started.sandbox_type == "none",
            Err(err) => {
                // Cannot tell: assume the worst (the per-command check stays as well).
                tracing::warn!(environment = %self.id, %err, shell, "could not probe the exec server's sandbox");
                true
            }
        };
        let _ = client
            .call::<serde_json::Value>(
                method::PROCESS_TERMINATE,
                serde_json::json!({ "processId": process_id }),
            )
            .await;
        self.unconfined
            .store(unconfined, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether this thread's policy needs the server to confine commands.
    pub fn requires_confinement(&self) -> bool {
        self.require_confinement
    }

    /// Remembers that the server ran a process unconfined.
    pub fn note_unconfined(&self) {
        self.unconfined
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Why no command may run there, when the thread needs a sandbox and the server gives
    /// none.
    pub fn unconfined_refusal(&self) -> Option<String> {
        (self.require_confinement && self.unconfined.load(std::sync::atomic::Ordering::SeqCst)).then(|| format!(
            "The command was not run: the exec server of environment `{}` runs commands without a sandbox (it answers sandboxType \"none\"), and this thread's sandbox policy asks for one. Tell the user: start that server with a sandbox, or, if the server is itself disposable and isolated (a throwaway container), run this thread with the danger-full-access sandbox.",
            self.id
        ))
    }

    /// Runs capability discovery on `client` as the shared gate decides: V2
    /// (`capabilities/discoverV2`) when enabled, advertised and 0.164.0 or newer, else V1 —
    /// the fs probes the thread makes anyway (`.git`, AGENTS.md). Osprey has no skills or
    /// plugins to load from a V2 inventory yet, so what it found is logged, not kept.
    async fn discover(&self, client: &ExecServerClient) {
        let discovery = client.discovery(self.discovery_v2);
        let v2 = match &discovery {
            Discovery::V2 => {
                let params = DiscoverV2Params {
                    cwd: osprey_exec_server::uri::from_path(&self.cwd),
                    sandbox: None,
                };
                match client
                    .call::<DiscoverV2Response>(method::DISCOVER_V2, params)
                    .await
                {
                    Ok(found) => Some(found),
                    Err(err) => {
                        tracing::warn!(environment = %self.id, %err, "capabilities/discoverV2 failed; using fs probes");
                        None
                    }
                }
            }
            Discovery::V1 { .. } => None,
        };
        match (&discovery, &v2) {
            (Discovery::V1 { reason }, _) => {
                tracing::info!(environment = %self.id, %reason, "capability discovery: V1 (fs probes)");
            }
            (Discovery::V2, Some(found)) => tracing::info!(
                environment = %self.id,
                skills = found.skills.len(),
                plugins = found.plugins.len(),
                "capability discovery: V2"
            ),
            (Discovery::V2, None) => {}
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The working directory on the remote side.
    pub fn cwd(&self) -> &PathBuf {
        &self.cwd
    }

    /// The server's shell: (name, path), e.g. ("bash", "/bin/bash").
    pub fn shell(&self) -> Option<(&str, &str)> {
        self.info
            .shell
            .as_ref()
            .map(|s| (s.name.as_str(), s.path.as_str()))
    }

    /// Whether the server is a Windows machine (its paths are `C:\…`).
    pub fn is_windows(&self) -> bool {
        self.info.platform_os.as_deref() == Some("windows")
    }

    /// The connection to use now: the current one while it is up, else a new one
    /// (after backoff, resuming the old session when the server can).
    pub async fn client(&self) -> Result<Arc<ExecServerClient>, String> {
        let mut current = self.client.lock().await;
        if current.is_connected() {
            return Ok(Arc::clone(&current));
        }
        if let Some((at, why)) = self
            .last_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            && at.elapsed() < FAILED_RECONNECT_HOLD
        {
            return Err(why.clone());
        }
        let resume = Some(current.session_id().to_owned());
        let mut last_error = String::new();
        for (attempt, wait) in RECONNECT_BACKOFF.iter().enumerate() {
            tokio::time::sleep(*wait).await;
            match self
                .spec
                .reconnect(&self.launch_env, &self.launch_cwd, resume.clone())
                .await
            {
                Ok(client) => {
                    tracing::info!(
                        environment = %self.id,
                        attempt = attempt + 1,
                        "reconnected to the exec server"
                    );
                    // The server may be another version now: discover and probe again.
                    self.discover(&client).await;
                    self.probe_confinement(&client).await;
                    *current = Arc::new(client);
                    *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    return Ok(Arc::clone(&current));
                }
                Err(err) => last_error = err.to_string(),
            }
        }
        let why = format!(
            "the exec server of environment `{}` is unreachable: {} attempts to reconnect failed (last: {last_error}); check that it is running and reachable, then try again",
            self.id,
            RECONNECT_BACKOFF.len()
        );
        *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((std::time::Instant::now(), why.clone()));
        Err(why)
    }

    /// Calls `method` and decodes its result; errors in plain words.
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        params: impl Serialize,
    ) -> Result<T, RemoteError> {
        let client = self.client().await.map_err(RemoteError::Unreachable)?;
        client
            .call(method, params)
            .await
            .map_err(|e| self.describe(method, e))
    }

    /// Turns a client error into what the model and the user read.
    pub fn describe(&self, method: &str, error: ClientError) -> RemoteError {
        match error {
            ClientError::Rejected { code, message } => RemoteError::Rejected { code, message },
            ClientError::Closed { detail } => RemoteError::Lost(format!(
                "the connection to the exec server of environment `{}` was lost during `{method}`{}; whether it took effect there is unknown. Osprey reconnects on the next call: check the state before doing it again",
                self.id,
                detail.map(|d| format!(" ({d})")).unwrap_or_default()
            )),
            other => RemoteError::Lost(format!(
                "environment `{}`: {other}; check the state before doing it again",
                self.id
            )),
        }
    }
}

/// Why a remote call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteError {
    /// The server answered with an error (a missing file, a refused path).
    Rejected { code: i64, message: String },
    /// The connection dropped during the call, or it timed out.
    Lost(String),
    /// No connection could be made.
    Unreachable(String),
}

impl RemoteError {
    /// The kind of I/O error a server's fs error stands for, read from its message (the
    /// server sends the operating system's words, e.g. "No such file or directory (os
    /// error 2)"); `Other` when it is not an fs error or says nothing known.
    pub fn io_kind(&self) -> std::io::ErrorKind {
        use std::io::ErrorKind;
        let Self::Rejected { code, message } = self else {
            return ErrorKind::Other;
        };
        if *code != osprey_exec_server::protocol::code::FS_ERROR {
            return ErrorKind::Other;
        }
        let known = [
            ("No such file", ErrorKind::NotFound),
            ("cannot find the", ErrorKind::NotFound),
            ("Not a directory", ErrorKind::NotADirectory),
            ("File exists", ErrorKind::AlreadyExists),
            ("already exists", ErrorKind::AlreadyExists),
            ("Is a directory", ErrorKind::IsADirectory),
            ("Directory not empty", ErrorKind::DirectoryNotEmpty),
            ("Permission denied", ErrorKind::PermissionDenied),
        ];
        known
            .iter()
            .find(|(words, _)| message.contains(words))
            .map_or(ErrorKind::Other, |(_, kind)| *kind)
    }

    /// As an I/O error, for code written against `std::io` (the file tools, the patch
    /// applier).
    pub fn into_io(self) -> std::io::Error {
        std::io::Error::new(self.io_kind(), self.to_string())
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rejected { message, .. } => f.write_str(message),
            Self::Lost(text) | Self::Unreachable(text) => f.write_str(text),
        }
    }
}

fn connect_error(id: &str, error: &ClientError) -> String {
    format!(
        "could not start a thread in environment `{id}`: {error}. Check the entry in environments.toml and that its exec server runs"
    )
}

fn server_cwd(id: &str, info: &EnvironmentInfo) -> Result<PathBuf, String> {
    let Some(uri) = info.cwd.as_deref() else {
        return Err(format!(
            "the exec server of environment `{id}` did not say its working directory; pass one (`osprey exec -C DIR --environment {id}`, or `cwd` in thread/start's environments)"
        ));
    };
    osprey_exec_server::uri::to_path(uri)
        .map_err(|e| format!("the exec server of environment `{id}` reported a working directory Osprey cannot use ({uri}): {e}"))
}
