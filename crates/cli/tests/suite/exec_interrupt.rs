//! Ctrl-C in `osprey exec`, with real SIGINTs to the child: the first interrupts the turn
//! (which then shuts down), a second one quits at once with exit code 130, even while the
//! shutdown is still waiting for something slow.

use osprey_test_support::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// An MCP server (stdio) that answers the handshake with no tools, then ignores the end of
/// its input and SIGTERM: shutting it down takes the client's whole grace period.
const STUBBORN_MCP_SERVER: &str = r#"
import json, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "stubborn", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": []}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
while True:
    time.sleep(1)
"#;

#[expect(
    clippy::disallowed_methods,
    reason = "the test signals a running child, which assert_cmd cannot do"
)]
fn spawn(home: &TempHome, cwd: &std::path::Path, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("osprey"))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SHELL", "/bin/bash")
        .envs(home.env())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("osprey starts")
}

#[expect(
    clippy::disallowed_methods,
    reason = "sends a real SIGINT with kill(1)"
)]
fn sigint(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Stdout lines as they come.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn wait_for_line(lines: &mpsc::Receiver<String>, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(what) => return line,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("no stdout line with {what:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_ctrl_c_quits_while_the_first_is_still_winding_down() {
    let server = MockModelServer::start(vec![MockResponse::Hang(vec![])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.set_provider_option("stream_idle_timeout_ms", "60000");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("stubborn_mcp.py");
    std::fs::write(&script, STUBBORN_MCP_SERVER).unwrap();
    home.write_config(&format!(
        "[mcp_servers.stubborn]\ncommand = \"python3\"\nargs = [\"{}\"]\nstartup_timeout_sec = 30\n",
        script.display()
    ));
    let repo = temp_git_repo();
    let mut child = spawn(&home, repo.path(), &["exec", "--json", "wait for it"]);
    let lines = lines_of(&mut child);
    wait_for_line(&lines, "turn.started");
    // The request is open at the model: the turn is running.
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.requests().is_empty() {
        assert!(Instant::now() < deadline, "the model was never asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    sigint(&child);
    let failed = wait_for_line(&lines, "turn.failed");
    assert!(failed.contains("interrupted"), "{failed}");
    // The turn is over; the shutdown now waits out the stubborn MCP server (a second or
    // more). A second Ctrl-C does not wait for it.
    sigint(&child);
    let status = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
                return (status, err);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("osprey exec did not exit after the second Ctrl-C");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    })
    .await
    .unwrap();
    let (status, err) = status;
    assert_eq!(status.code(), Some(130), "stderr: {err}");
    assert!(err.contains("press Ctrl-C again to quit"), "{err}");
    assert!(err.contains("Quitting"), "{err}");
}
