//! Routes `osprey exec` through an exec server: an `environments.toml` naming one, and
//! `--environment dev` on the command line. The server gets the run's working directory as
//! its one root and the sandbox the run's `config.toml` asks for (`osprey exec`'s
//! read-only when it names none), as a user running the server beside the code would set
//! it up; commands and files then act through the server, with the effects the suite
//! checks in the same directory.

#[path = "../suite/common.rs"]
#[allow(
    dead_code,
    reason = "the shared helpers; this harness uses only some of them"
)]
mod base;

pub use base::{jsonl, stderr};
use osprey_test_support::{TempHome, workspace_binary};
use std::path::Path;
use std::process::Output;

#[derive(Debug, Clone, Copy)]
pub enum Transport {
    Stdio,
    WebSocket,
}

/// The sandbox mode the home's `config.toml` names, else `osprey exec`'s default.
fn sandbox_mode(home: &TempHome) -> String {
    let text = std::fs::read_to_string(home.config_path()).unwrap_or_default();
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("sandbox_mode"))
        .filter_map(|rest| rest.trim().strip_prefix('='))
        .map(|value| value.trim().trim_matches('"').to_owned())
        .next_back()
        .unwrap_or_else(|| "read-only".to_owned())
}

fn server_args(cwd: &Path, sandbox: &str, listen: &str) -> Vec<String> {
    [
        "exec-server",
        "--listen",
        listen,
        "--root",
        &cwd.display().to_string(),
        // Where the suite's other temporary folders live (writable roots of permission
        // profiles, $TMPDIR): the agent's policy decides what needs asking, the server's
        // roots what it lets through at all.
        "--root",
        &std::env::temp_dir().display().to_string(),
        "--sandbox",
        sandbox,
        // The agent runs read-only calls side by side; the server's default of one request
        // at a time (Codex's) would serialize them.
        "--concurrent-requests",
        "4",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A WebSocket server for one run; killed when dropped.
struct WsServer {
    child: std::process::Child,
    url: String,
}

impl Drop for WsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "the test starts the server it talks to"
)]
fn start_ws_server(home: &TempHome, cwd: &Path, sandbox: &str) -> WsServer {
    use std::io::BufRead;
    let mut child = std::process::Command::new(workspace_binary("osprey"))
        .args(server_args(cwd, sandbox, "ws://127.0.0.1:0"))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SHELL", "/bin/bash")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("the exec server starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the server prints its URL");
    let url = line.trim().to_owned();
    assert!(url.starts_with("ws://127.0.0.1:"), "printed: {url:?}");
    WsServer { child, url }
}

/// Runs `osprey <args>` in `cwd` with its tools on an exec server reached over `transport`.
pub async fn osprey_via(
    transport: Transport,
    home: &TempHome,
    cwd: &Path,
    args: &[&str],
    stdin: &str,
) -> Output {
    let cwd = cwd.canonicalize().unwrap();
    let sandbox = sandbox_mode(home);
    let (entry, server) = match transport {
        Transport::Stdio => {
            let args = server_args(&cwd, &sandbox, "stdio");
            let entry = format!(
                "program = {}\nargs = {}\ncwd = {}\n",
                toml_string(&workspace_binary("osprey").display().to_string()),
                serde_json::to_string(&args).unwrap(),
                toml_string(&cwd.display().to_string()),
            );
            (entry, None)
        }
        Transport::WebSocket => {
            let server = start_ws_server(home, &cwd, &sandbox);
            (
                format!("url = {}\n", toml_string(&server.url)),
                Some(server),
            )
        }
    };
    std::fs::write(
        home.path().join("environments.toml"),
        format!("[[environments]]\nid = \"dev\"\n{entry}"),
    )
    .unwrap();
    let mut routed: Vec<&str> = Vec::with_capacity(args.len() + 2);
    for arg in args {
        routed.push(arg);
        if *arg == "exec" && routed.len() == 1 {
            routed.extend(["--environment", "dev"]);
        }
    }
    let out = base::osprey_async(home, &cwd, &routed, stdin).await;
    drop(server);
    out
}
