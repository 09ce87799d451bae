//! One connection to one MCP server: starting it, and stopping it.
//!
//! A stdio server is launched here rather than through rmcp's child-process transport, so
//! this module owns the child: it leads its own process group (so `npx`-style launchers and
//! whatever they start are stopped together), its stderr is read continuously (logged at debug
//! level, with the last lines kept for error messages), and shutdown can be bounded — close
//! stdin, give the server a moment, `SIGTERM` the group, then `SIGKILL` it.
//!
//! The child's environment is not the agent's whole environment: it gets a short list of
//! variables programs need to run ([`INHERITED_ENV_VARS`]) from the environment the manager was
//! given, plus the server's own `env` table.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use osprey_config::{McpServerConfig, McpTransport};
use process_wrap::tokio::ChildWrapper;
use rmcp::ServiceExt;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;
use tokio::sync::Mutex;

use crate::error::seconds;

/// Variables a launched server inherits from the environment given to the manager.
pub const INHERITED_ENV_VARS: &[&str] = &[
    "HOME", "LOGNAME", "USER", "PATH", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
];

/// How long a stdio server gets to exit after its stdin closes, and again after `SIGTERM`.
const EXIT_GRACE: Duration = Duration::from_millis(500);
/// How long to wait for the rest of a failed server's stderr.
const STDERR_DRAIN: Duration = Duration::from_millis(300);
/// Stderr lines kept for error messages.
const STDERR_TAIL_LINES: usize = 12;
/// Longest stderr line kept (bytes).
const STDERR_LINE_MAX: usize = 400;

/// A started server.
pub(crate) struct Connection {
    pub peer: Peer<RoleClient>,
    /// The server's `instructions` from `initialize`.
    pub instructions: Option<String>,
    /// Whether it advertised the resources capability.
    pub has_resources: bool,
    /// Its tools as listed at startup (raw `Tool` JSON).
    pub tools: Vec<Value>,
    service: Mutex<Option<RunningService<RoleClient, ClientConfig>>>,
    child: Mutex<Option<Box<dyn ChildWrapper>>>,
}

impl Connection {
    /// Stops the session and, for stdio servers, the process group. Idempotent.
    pub async fn shutdown(&self) {
        if let Some(mut service) = self.service.lock().await.take() {
            // Cancelling the service closes the transport: for stdio, the server's stdin.
            let _ = service.close_with_timeout(EXIT_GRACE).await;
        }
        if let Some(mut child) = self.child.lock().await.take() {
            stop_child(child.as_mut()).await;
        }
    }
}

/// Waits briefly for `child` to exit on its own, then `SIGTERM`s and finally kills its group.
async fn stop_child(child: &mut dyn ChildWrapper) {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return;
    }
    if tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_ok() {
        return;
    }
    let _ = child.signal(libc::SIGTERM);
    if tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_ok() {
        return;
    }
    let _ = Box::into_pin(child.kill()).await;
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("osprey", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Starts `config` and lists its tools within its startup timeout. The error is the reason
/// for a [`StartupFailure`](crate::StartupFailure).
pub(crate) async fn connect(
    config: &McpServerConfig,
    env: &HashMap<String, String>,
) -> Result<Connection, String> {
    match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env: server_env,
            cwd,
        } => {
            connect_stdio(
                command,
                args,
                server_env,
                cwd.as_deref(),
                env,
                config.startup_timeout,
            )
            .await
        }
        McpTransport::StreamableHttp {
            url,
            bearer_token_env_var,
            http_headers,
        } => {
            let started = Instant::now();
            let attempt = connect_http(url, bearer_token_env_var.as_deref(), http_headers, env);
            match tokio::time::timeout(config.startup_timeout, attempt).await {
                Ok(result) => result,
                Err(_) => Err(format!(
                    "{url} did not answer within {} (initialize + tools/list; waited {})",
                    seconds(config.startup_timeout),
                    seconds(started.elapsed())
                )),
            }
        }
    }
}

async fn connect_stdio(
    command: &str,
    args: &[String],
    server_env: &std::collections::BTreeMap<String, String>,
    cwd: Option<&std::path::Path>,
    env: &HashMap<String, String>,
    startup_timeout: Duration,
) -> Result<Connection, String> {
    let shown = display_command(command, args);
    let mut child =
        spawn_child(command, args, server_env, cwd, env).map_err(|err| err.to_string())?;
    let (Some(stdout), Some(stdin)) = (child.stdout().take(), child.stdin().take()) else {
        stop_child(child.as_mut()).await;
        return Err(format!(
            "could not start `{shown}`: its stdio pipes were not set up"
        ));
    };
    let tail = Arc::new(StdMutex::new(VecDeque::new()));
    let pump = child
        .stderr()
        .take()
        .map(|stderr| tokio::spawn(pump_stderr(stderr, Arc::clone(&tail))));

    let handshake = async {
        let service = client_config()
            .serve((stdout, stdin))
            .await
            .map_err(|err| init_error_text(&err))?;
        let tools = list_tools(&service).await?;
        Ok::<_, String>((service, tools))
    };
    let failure = match tokio::time::timeout(startup_timeout, handshake).await {
        Ok(Ok((service, tools))) => {
            return Ok(connection(service, tools, Some(child)));
        }
        Ok(Err(message)) => {
            // The server most likely exited; give it a moment to be reaped and its stderr to
            // drain, so the message can say how and why.
            let status = match tokio::time::timeout(STDERR_DRAIN, child.wait()).await {
                Ok(Ok(status)) => Some(status),
                _ => None,
            };
            match status {
                // The exit status and stderr say more than the broken pipe that revealed it.
                Some(status) => {
                    tracing::debug!("`{shown}` handshake error: {message}");
                    format!("`{shown}` {}", describe_exit(status))
                }
                None => format!("`{shown}` failed the MCP handshake: {message}"),
            }
        }
        Err(_) => format!(
            "`{shown}` did not answer within {} (initialize + tools/list)",
            seconds(startup_timeout)
        ),
    };
    stop_child(child.as_mut()).await;
    if let Some(pump) = pump {
        let _ = tokio::time::timeout(STDERR_DRAIN, pump).await;
    }
    Err(with_stderr_tail(failure, &tail))
}

/// Starts a stdio server through the process crate: piped stdio, its own process group,
/// a cleared environment plus the allowlisted variables and its own `env` table.
fn spawn_child(
    command: &str,
    args: &[String],
    server_env: &std::collections::BTreeMap<String, String>,
    cwd: Option<&std::path::Path>,
    env: &HashMap<String, String>,
) -> Result<Box<dyn ChildWrapper>, osprey_process::SpawnError> {
    let cwd = cwd
        .map(std::path::Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| std::path::PathBuf::from("/"));
    let mut child_env: HashMap<String, String> = INHERITED_ENV_VARS
        .iter()
        .filter_map(|name| env.get(*name).map(|v| ((*name).to_string(), v.clone())))
        .collect();
    child_env.extend(server_env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let request = osprey_process::ExecRequest::new(command, cwd)
        .args(args.iter().cloned())
        .envs(child_env);
    osprey_process::spawn_piped(&request)
}

async fn connect_http(
    url: &str,
    bearer_token_env_var: Option<&str>,
    http_headers: &std::collections::BTreeMap<String, String>,
    env: &HashMap<String, String>,
) -> Result<Connection, String> {
    install_crypto_provider();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(var) = bearer_token_env_var {
        match env.get(var).filter(|value| !value.is_empty()) {
            Some(token) => config = config.auth_header(token.clone()),
            None => {
                return Err(format!(
                    "{url}: the environment variable `{var}` named by bearer_token_env_var is \
                     not set; export it before starting"
                ));
            }
        }
    }
    let mut headers = HashMap::new();
    for (name, value) in http_headers {
        let header_name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{url}: `{name}` in http_headers is not a valid header name"))?;
        let header_value = http::HeaderValue::from_str(value)
            .map_err(|_| format!("{url}: the value of header `{name}` is not valid"))?;
        headers.insert(header_name, header_value);
    }
    config = config.custom_headers(headers);
    // Built here rather than by rmcp so a failure is an error, not a panic. Idle connections
    // are not pooled (rmcp's advice: avoids delayed-ACK stalls), and redirects are not
    // followed: a redirected POST would lose its JSON-RPC body.
    let client = reqwest_rmcp::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest_rmcp::redirect::Policy::none())
        .build()
        .map_err(|err| {
            format!(
                "{url}: could not set up an HTTP client: {}",
                error_chain(&err)
            )
        })?;
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let service = client_config()
        .serve(transport)
        .await
        .map_err(|err| format!("{url}: {}", init_error_text(&err)))?;
    let tools = list_tools(&service)
        .await
        .map_err(|message| format!("{url}: {message}"))?;
    Ok(connection(service, tools, None))
}

/// reqwest is built without a bundled TLS provider; use ring, which the workspace already
/// compiles, as the process default. Installing twice is harmless (the second call fails).
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

async fn list_tools(
    service: &RunningService<RoleClient, ClientConfig>,
) -> Result<Vec<Value>, String> {
    let tools = service
        .peer()
        .list_all_tools()
        .await
        .map_err(|err| format!("tools/list failed: {}", error_chain(&err)))?;
    Ok(tools
        .iter()
        .filter_map(|tool| serde_json::to_value(tool).ok())
        .collect())
}

fn connection(
    service: RunningService<RoleClient, ClientConfig>,
    tools: Vec<Value>,
    child: Option<Box<dyn ChildWrapper>>,
) -> Connection {
    let info = service.peer().peer_info();
    let instructions = info
        .as_ref()
        .and_then(|info| info.instructions.as_deref().map(str::trim))
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    let has_resources = info
        .as_ref()
        .is_some_and(|info| info.capabilities.resources.is_some());
    Connection {
        peer: service.peer().clone(),
        instructions,
        has_resources,
        tools,
        service: Mutex::new(Some(service)),
        child: Mutex::new(child),
    }
}

/// Reads stderr until EOF, logging each line and keeping the last few.
async fn pump_stderr(mut stderr: ChildStderr, tail: Arc<StdMutex<VecDeque<String>>>) {
    let mut buf = [0u8; 4096];
    let mut line: Vec<u8> = Vec::new();
    let push = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line).trim_end().to_owned();
        line.clear();
        if text.is_empty() {
            return;
        }
        tracing::debug!(target: "osprey_mcp::stderr", "{text}");
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(text);
        }
    };
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for byte in &buf[..n] {
                    if *byte == b'\n' {
                        push(&mut line);
                    } else if line.len() < STDERR_LINE_MAX {
                        line.push(*byte);
                    }
                }
            }
        }
    }
    push(&mut line);
}

fn with_stderr_tail(reason: String, tail: &StdMutex<VecDeque<String>>) -> String {
    let lines: Vec<String> = tail
        .lock()
        .map(|tail| tail.iter().cloned().collect())
        .unwrap_or_default();
    if lines.is_empty() {
        reason
    } else {
        format!("{reason}; stderr:\n  {}", lines.join("\n  "))
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code} before completing the MCP handshake"),
        (None, Some(signal)) => {
            format!("was killed by signal {signal} before completing the MCP handshake")
        }
        _ => "exited before completing the MCP handshake".to_owned(),
    }
}

/// `cmd arg 'arg with space'`, for messages.
pub(crate) fn display_command(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(|word| {
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
            {
                word.to_owned()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words for a failed handshake: for transport errors, what was being sent and the transport's
/// own error chain (which rmcp does not expose as a source).
fn init_error_text(err: &rmcp::service::ClientInitializeError) -> String {
    match err {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            format!("could not {context}: {}", error_chain(error.error.as_ref()))
        }
        other => error_chain(other),
    }
}

/// An error and its sources, joined with `: `, without repeating a source the message already
/// contains.
pub(crate) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = next_cause(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = next_cause(cause);
    }
    text
}

/// The source of `err`; for rmcp's HTTP client errors, which do not declare one, the
/// wrapped reqwest error (whose own chain says "connection refused" and the like).
fn next_cause<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    type HttpError =
        rmcp::transport::streamable_http_client::StreamableHttpError<reqwest_rmcp::Error>;
    if let Some(HttpError::Client(inner)) = err.downcast_ref::<HttpError>() {
        return Some(inner);
    }
    err.source()
}

/// Stops a set of connections concurrently.
pub(crate) async fn shutdown_all<'a>(connections: impl Iterator<Item = &'a Connection>) {
    futures::future::join_all(connections.map(Connection::shutdown)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shown_shell_quoted() {
        assert_eq!(
            display_command("sh", &["-c".into(), "exit 3".into()]),
            "sh -c 'exit 3'"
        );
        assert_eq!(display_command("node", &["a/b.js".into()]), "node a/b.js");
        assert_eq!(display_command("x", &["it's".into()]), "x 'it'\\''s'");
    }
}
