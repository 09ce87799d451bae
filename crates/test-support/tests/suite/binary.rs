//! The `osprey-mock-model` binary serving a JSON script.

use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;

use osprey_test_support::*;
use pretty_assertions::assert_eq;

use super::support::*;

/// The running binary; killed on drop so a failing test leaves nothing behind.
struct Running {
    child: Child,
    base_url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "the test runs the binary under test"
)]
fn start_binary(script: &[MockResponse], extra_args: &[&str]) -> (Running, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, serde_json::to_string_pretty(script).unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_osprey-mock-model"))
        .arg("--script")
        .arg(&path)
        .args(extra_args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base_url = line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    assert!(base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/v1"));
    (Running { child, base_url }, dir)
}

#[expect(
    clippy::disallowed_methods,
    reason = "sends SIGTERM to the binary under test"
)]
fn terminate(running: &mut Running) -> (Option<i32>, String) {
    let status = Command::new("kill")
        .args(["-TERM", &running.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = running.child.wait().unwrap();
    let mut stderr = String::new();
    running
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (exit.code(), stderr)
}

#[tokio::test]
async fn repeat_serves_the_script_again_and_exits_cleanly() {
    let script = vec![sse_turn(vec![ev_assistant_message("m1", "from a file")])];
    let (mut running, _dir) = start_binary(&script, &["--repeat"]);
    for _ in 0..3 {
        let response = post(&running.base_url, "/responses", &responses_body("x")).await;
        assert_eq!(response.status(), 200);
        let frames = parse_responses_frames(&response.text().await.unwrap());
        assert_eq!(frames[1].1["item"]["content"][0]["text"], "from a file");
    }
    let (code, stderr) = terminate(&mut running);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
}

#[tokio::test]
async fn failures_are_listed_on_exit() {
    let script = vec![MockResponse::ChatSse(chat_text_chunks("one"))];
    let (mut running, _dir) = start_binary(&script, &[]);
    let first = post(&running.base_url, "/chat/completions", &chat_body("1")).await;
    assert_eq!(first.status(), 200);
    let second = post(&running.base_url, "/chat/completions", &chat_body("2")).await;
    assert_eq!(second.status(), 500);
    let (code, stderr) = terminate(&mut running);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("1 failure(s)"), "{stderr}");
    assert!(stderr.contains("used up"), "{stderr}");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test runs the binary under test"
)]
fn bad_script_file_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, r#"[{"sse_typo": []}]"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_osprey-mock-model"))
        .arg("--script")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.json"), "{stderr}");
    assert!(
        stderr.contains("not a JSON array of mock responses"),
        "{stderr}"
    );
}
