//! A scripted app-server client: spawns `osprey app-server` with a temporary home, sends
//! requests, and waits for the responses, notifications and server requests a test expects.
//! Everything the server sent is kept in order (`log`), so tests can check sequences.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use osprey_test_support::TempHome;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

/// How long a test waits for any one message.
pub const WAIT: Duration = Duration::from_secs(30);

/// The `osprey` binary built next to this test.
pub fn osprey_bin() -> std::path::PathBuf {
    osprey_test_support::workspace_binary("osprey")
}

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: mpsc::UnboundedReceiver<Value>,
    /// Messages read but not yet taken by a wait.
    pending: Vec<Value>,
    /// Every message the server sent, in order.
    pub log: Vec<Value>,
    next_id: i64,
    pub stderr_path: PathBuf,
}

impl Client {
    /// Spawns the server in `cwd` with the home's environment (no initialize yet).
    pub fn spawn(home: &TempHome, cwd: &Path) -> Self {
        Self::spawn_with_args(home, cwd, &[])
    }

    pub fn spawn_with_args(home: &TempHome, cwd: &Path, args: &[&str]) -> Self {
        let stderr_path = home.path().join(format!(
            "server-{}.err",
            std::process::id() as u64 * 1000 + rand_suffix()
        ));
        let mut all_args = vec!["app-server"];
        all_args.extend_from_slice(args);
        let mut env: Vec<(&str, OsString)> = vec![
            ("HOME", home.path().as_os_str().to_owned()),
            ("SHELL", OsString::from("/bin/bash")),
        ];
        env.extend(home.env());
        Self::spawn_program(&osprey_bin(), &all_args, &env, cwd, stderr_path)
    }

    /// Spawns any app server (`program args…`, e.g. the reference `codex app-server`) in
    /// `cwd` with a cleared environment: `PATH` and `env` only. Its stderr goes to
    /// `stderr_path`.
    pub fn spawn_program(
        program: &Path,
        args: &[&str],
        env: &[(&str, OsString)],
        cwd: &Path,
        stderr_path: PathBuf,
    ) -> Self {
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        #[expect(
            clippy::disallowed_methods,
            reason = "the test runs an app-server binary"
        )]
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display()));
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let (tx, incoming) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the server wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            incoming,
            pending: Vec::new(),
            log: Vec::new(),
            next_id: 1,
            stderr_path,
        }
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Writes one raw line.
    pub async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    pub async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// Sends a request and returns its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// The result of a request; panics on an error reply.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        let reply = self.response(id).await;
        match reply.get("result") {
            Some(result) => result.clone(),
            None => panic!(
                "{method} failed: {reply}\nserver stderr:\n{}",
                self.stderr()
            ),
        }
    }

    /// The error message of a request that must fail.
    pub async fn request_error(&mut self, method: &str, params: Value) -> String {
        let id = self.send_request(method, params).await;
        let reply = self.response(id).await;
        assert_eq!(reply["error"]["code"], -32600, "{method}: {reply}");
        reply["error"]["message"]
            .as_str()
            .expect("message")
            .to_owned()
    }

    pub async fn response(&mut self, id: i64) -> Value {
        self.wait_for(&format!("response {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
        .await
    }

    /// The next message (pending first) that matches, waiting up to [`WAIT`].
    pub async fn wait_for(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        if let Some(index) = self.pending.iter().position(&matches) {
            return self.pending.remove(index);
        }
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let next = tokio::time::timeout_at(deadline, self.incoming.recv()).await;
            match next {
                Ok(Some(message)) => {
                    self.log.push(message.clone());
                    if matches(&message) {
                        return message;
                    }
                    self.pending.push(message);
                }
                Ok(None) => panic!(
                    "the server closed stdout while waiting for {what}; stderr:\n{}",
                    self.stderr()
                ),
                Err(_) => panic!(
                    "timed out waiting for {what}; unclaimed messages: {:#?}\nstderr:\n{}",
                    self.pending,
                    self.stderr()
                ),
            }
        }
    }

    pub async fn notification(&mut self, method: &str) -> Value {
        let method = method.to_owned();
        self.wait_for(&method.clone(), move |m| {
            m["method"] == method.as_str() && m.get("id").is_none()
        })
        .await
    }

    /// A server → client request of this method.
    pub async fn server_request(&mut self, method: &str) -> Value {
        let method = method.to_owned();
        self.wait_for(&method.clone(), move |m| {
            m["method"] == method.as_str() && m.get("id").is_some()
        })
        .await
    }

    pub async fn answer(&mut self, request: &Value, result: Value) {
        self.send(&json!({"id": request["id"], "result": result}))
            .await;
    }

    pub async fn initialize(&mut self) -> Value {
        let result = self
            .request(
                "initialize",
                json!({"clientInfo": {"name": "osprey-tests", "title": null, "version": "0.0.1"}}),
            )
            .await;
        self.send(&json!({"method": "initialized"})).await;
        result
    }

    /// `thread/start` in `cwd`; returns the thread id.
    pub async fn start_thread(&mut self, cwd: &Path, extra: Value) -> String {
        let mut params = json!({"cwd": cwd.display().to_string()});
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let result = self.request("thread/start", params).await;
        result["thread"]["id"]
            .as_str()
            .expect("thread id")
            .to_owned()
    }

    /// `turn/start` with one text; returns the turn id.
    pub async fn start_turn(&mut self, thread_id: &str, text: &str) -> String {
        let result = self
            .request(
                "turn/start",
                json!({"threadId": thread_id, "input": [{"type": "text", "text": text, "text_elements": []}]}),
            )
            .await;
        result["turn"]["id"].as_str().expect("turn id").to_owned()
    }

    /// Waits for the turn's `turn/completed` and returns its `turn`.
    pub async fn turn_completed(&mut self, thread_id: &str) -> Value {
        let thread_id = thread_id.to_owned();
        self.wait_for("turn/completed", move |m| {
            m["method"] == "turn/completed" && m["params"]["threadId"] == thread_id.as_str()
        })
        .await["params"]["turn"]
            .clone()
    }

    /// Methods of everything logged so far for this thread, in order.
    pub fn methods_for(&self, thread_id: &str) -> Vec<String> {
        self.log
            .iter()
            .filter(|m| {
                m["params"]["threadId"] == thread_id || m["params"]["thread"]["id"] == thread_id
            })
            .filter_map(|m| m["method"].as_str().map(str::to_owned))
            .collect()
    }

    /// Every message of this method logged so far, in order.
    pub fn log_of(&self, method: &str) -> Vec<Value> {
        self.log
            .iter()
            .filter(|m| m["method"] == method)
            .cloned()
            .collect()
    }

    /// Completed items of a thread, in order.
    pub fn completed_items(&self, thread_id: &str) -> Vec<Value> {
        self.log
            .iter()
            .filter(|m| m["method"] == "item/completed" && m["params"]["threadId"] == thread_id)
            .map(|m| m["params"]["item"].clone())
            .collect()
    }

    /// Closes stdin and waits for the process to exit.
    pub async fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("the server exits after its client closes stdin")
            .expect("exit status")
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
