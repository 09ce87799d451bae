//! Shared helpers: locating the reference servers, building configurations, running HTTP
//! servers for the length of a test.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::Duration;

use osprey_config::{McpServerConfig, McpTransport};

/// The value of `var`, or `None` (with a note) when it is unset. With
/// `OSPREY_REQUIRE_REFERENCE=1` a missing variable fails the test instead.
pub fn reference(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            let hint = "run `eval \"$(bash scripts/install-test-deps.sh)\"` first";
            if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") {
                panic!("{var} is not set and OSPREY_REQUIRE_REFERENCE=1; {hint}");
            }
            eprintln!("note: skipping, {var} is not set; {hint}");
            None
        }
    }
}

/// Path of server-everything's entry script, if installed.
pub fn everything() -> Option<String> {
    reference("OSPREY_MCP_EVERYTHING")
}

/// Python interpreter with the `mcp` SDK, if installed.
pub fn python() -> Option<String> {
    reference("OSPREY_PY_MCP")
}

pub fn py_server_script() -> String {
    format!("{}/tests/servers/py_server.py", env!("CARGO_MANIFEST_DIR"))
}

pub fn process_env() -> HashMap<String, String> {
    std::env::vars().collect()
}

pub fn stdio(command: &str, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        transport: McpTransport::Stdio {
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            cwd: None,
        },
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(30),
        enabled: true,
        enabled_tools: None,
        disabled_tools: Vec::new(),
        require_approval: false,
        default_tools_approval_mode: osprey_config::McpApprovalMode::Auto,
        tool_approval_modes: Default::default(),
    }
}

pub fn http(url: &str) -> McpServerConfig {
    McpServerConfig {
        transport: McpTransport::StreamableHttp {
            url: url.to_owned(),
            bearer_token_env_var: None,
            http_headers: BTreeMap::new(),
        },
        ..stdio("unused", &[])
    }
}

pub fn everything_stdio(js: &str) -> McpServerConfig {
    stdio("node", &[js, "stdio"])
}

pub fn servers(entries: Vec<(&str, McpServerConfig)>) -> BTreeMap<String, McpServerConfig> {
    entries
        .into_iter()
        .map(|(name, config)| (name.to_owned(), config))
        .collect()
}

/// A server process that is killed when the test ends.
pub struct ServerProcess {
    child: Child,
    pub url: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `py_server.py http` and waits for its `READY <port>` line.
#[expect(
    clippy::disallowed_methods,
    reason = "tests launch reference servers directly"
)]
pub fn start_py_http(python: &str) -> ServerProcess {
    let mut child = std::process::Command::new(python)
        .args([py_server_script().as_str(), "http"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start py_server.py");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read READY line");
    let port: u16 = line
        .trim()
        .strip_prefix("READY ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("py_server.py did not report READY: {line:?}"));
    ServerProcess {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// Starts server-everything in streamableHttp mode and waits for its "listening" line.
#[expect(
    clippy::disallowed_methods,
    reason = "tests launch reference servers directly"
)]
pub fn start_everything_http(js: &str) -> ServerProcess {
    let port = free_port();
    let mut child = std::process::Command::new("node")
        .args([js, "streamableHttp"])
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start server-everything");
    let stderr = child.stderr.take().expect("stderr");
    let mut reader = BufReader::new(stderr);
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        let read = reader.read_line(&mut line).expect("read stderr");
        assert!(
            read > 0,
            "server-everything exited before listening:\n{seen}"
        );
        if line.contains("listening on port") {
            break;
        }
        seen.push_str(&line);
    }
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in reader.lines() {});
    ServerProcess {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}
