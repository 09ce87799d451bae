//! Starting the server under test and talking to it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use osprey_exec_server::client::{ConnectOptions, ExecServerClient, ProcessEvent};
use osprey_exec_server::protocol::{ProcessStartResponse, method};
use osprey_exec_server::uri;
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub fn osprey() -> PathBuf {
    osprey_test_support::workspace_binary("osprey")
}

pub fn base_env() -> HashMap<String, String> {
    ["PATH", "HOME", "TMPDIR"]
        .iter()
        .filter_map(|k| Some(((*k).to_owned(), std::env::var(k).ok()?)))
        .collect()
}

/// `osprey exec-server --listen stdio` in `root` (its one writable root), connected.
pub async fn connect(root: &Path, extra: &[&str]) -> ExecServerClient {
    let mut args: Vec<String> = ["exec-server", "--listen", "stdio"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let program = osprey();
    ExecServerClient::connect_program(
        &program.to_string_lossy(),
        &args,
        base_env(),
        root,
        ConnectOptions::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("cannot start the exec server: {e}"))
}

/// Everything a process reported, up to its close (or the loss of the connection).
pub struct Finished {
    pub stdout: String,
    pub stderr: String,
    pub pty: String,
    pub exit_code: Option<i32>,
    pub sandbox_denied: bool,
    pub seqs: Vec<u64>,
    pub lost: bool,
}

pub async fn collect(mut events: mpsc::UnboundedReceiver<ProcessEvent>) -> Finished {
    let mut out = Finished {
        stdout: String::new(),
        stderr: String::new(),
        pty: String::new(),
        exit_code: None,
        sandbox_denied: false,
        seqs: Vec::new(),
        lost: false,
    };
    let deadline = Duration::from_secs(30);
    loop {
        let event = tokio::time::timeout(deadline, events.recv())
            .await
            .expect("the process reported nothing for 30 s");
        match event {
            Some(ProcessEvent::Output(o)) => {
                out.seqs.push(o.seq);
                let text = String::from_utf8_lossy(&BASE64.decode(&o.chunk).unwrap()).into_owned();
                match serde_json::to_value(o.stream).unwrap().as_str() {
                    Some("stdout") => out.stdout.push_str(&text),
                    Some("stderr") => out.stderr.push_str(&text),
                    _ => out.pty.push_str(&text),
                }
            }
            Some(ProcessEvent::Exited(e)) => {
                out.seqs.push(e.seq);
                out.exit_code = Some(e.exit_code);
                out.sandbox_denied = e.sandbox_denied;
            }
            Some(ProcessEvent::Closed(c)) => {
                out.seqs.push(c.seq);
                return out;
            }
            Some(ProcessEvent::Lost) | None => {
                out.lost = true;
                return out;
            }
        }
    }
}

/// Starts `bash -c script` in `cwd` and waits for it to close.
pub async fn run(client: &ExecServerClient, id: &str, script: &str, cwd: &Path) -> Finished {
    let events = client.watch_process(id);
    let started: ProcessStartResponse = client
        .call(method::PROCESS_START, start_params(id, script, cwd, false))
        .await
        .unwrap_or_else(|e| panic!("process/start {id}: {e}"));
    assert_eq!(started.process_id, id);
    collect(events).await
}

pub fn start_params(id: &str, script: &str, cwd: &Path, tty: bool) -> Value {
    json!({
        "processId": id,
        "argv": ["bash", "-c", script],
        "cwd": uri::from_path(cwd),
        "env": {"PATH": "/usr/bin:/bin"},
        "tty": tty,
        "arg0": null,
    })
}

/// The server over raw JSON lines, for wire-level checks.
pub struct RawServer {
    pub child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl RawServer {
    #[expect(
        clippy::disallowed_methods,
        reason = "the test starts the server itself"
    )]
    pub fn start(program: &Path, args: &[&str], cwd: &Path) -> Self {
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(base_env())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        use tokio::io::AsyncBufReadExt;
        Self {
            child,
            stdin,
            lines: tokio::io::BufReader::new(stdout).lines(),
        }
    }

    pub async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message that is not a notification about a process.
    pub async fn reply(&mut self) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
                .await
                .expect("no reply within 20 s")
                .unwrap()
                .expect("the server closed its output");
            let value: Value = serde_json::from_str(&line).unwrap();
            if value.get("id").is_some() {
                return value;
            }
        }
    }

    pub async fn request(&mut self, id: i64, name: &str, params: Value) -> Value {
        self.send(json!({"id": id, "method": name, "params": params}))
            .await;
        let reply = self.reply().await;
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    pub async fn handshake(&mut self) -> Value {
        let init = self
            .request(1, "initialize", json!({"clientName": "test"}))
            .await;
        self.send(json!({"method": "initialized", "params": {}}))
            .await;
        init
    }
}

/// The error code and message of a reply, or a panic naming what came instead.
pub fn error_of(reply: &Value) -> (i64, String) {
    let code = reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {reply}"));
    (
        code,
        reply["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// Starts a background `sleep 300` through the server and returns its pid once the shell
/// has written it to `pid_file`.
pub async fn start_sleeper(client: &ExecServerClient, id: &str, dir: &Path) -> String {
    let pid_file = dir.join(format!("{id}.pid"));
    let script = format!("sleep 300 & echo $! > {}; wait", pid_file.display());
    client
        .call::<Value>(method::PROCESS_START, start_params(id, &script, dir, false))
        .await
        .unwrap_or_else(|e| panic!("process/start {id}: {e}"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && !text.trim().is_empty()
        {
            return text.trim().to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "{id} never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits up to 10 s for process `pid` to be gone (or a zombie), else fails naming `what`.
pub async fn wait_until_gone(pid: &str, what: &str) {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while proc_dir.exists() && !is_zombie(&proc_dir) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} ({pid}) still runs after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn is_zombie(proc_dir: &Path) -> bool {
    std::fs::read_to_string(proc_dir.join("stat"))
        .map(|s| s.split_whitespace().nth(2) == Some("Z"))
        .unwrap_or(true)
}

/// Writes `path` through `fs/writeFile` and returns the error's text (the write must fail).
pub async fn refused_write(client: &ExecServerClient, path: &Path) -> String {
    client
        .call::<Value>(
            method::FS_WRITE_FILE,
            json!({"path": uri::from_path(path), "dataBase64": "eA=="}),
        )
        .await
        .expect_err("the write was allowed")
        .to_string()
}

/// A scratch folder that is not under `/tmp` (nor `$TMPDIR`): `/var/tmp`, or the home.
pub fn outside_tmp() -> tempfile::TempDir {
    let tmp = std::env::temp_dir();
    let candidates = [
        PathBuf::from("/var/tmp"),
        PathBuf::from(std::env::var("HOME").unwrap_or_default()),
    ];
    for base in candidates {
        if base.is_dir()
            && !base.starts_with("/tmp")
            && !base.starts_with(&tmp)
            && let Ok(dir) = tempfile::tempdir_in(&base)
        {
            return dir;
        }
    }
    panic!("no writable folder outside /tmp for the sandbox test (tried /var/tmp and $HOME)");
}
