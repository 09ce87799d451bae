//! `osprey exec "task"` with a standard input nobody writes to (an idle pipe under ssh or a
//! CI wrapper) does not wait forever: it says it is reading stdin, gives up on it after a
//! few seconds and runs the task; input that does come is still appended.

use super::common::*;
use osprey_test_support::*;
use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

#[expect(
    clippy::disallowed_methods,
    reason = "the test needs the child's stdin pipe open and unwritten, which assert_cmd cannot do"
)]
fn spawn_with_open_stdin(home: &TempHome, cwd: &std::path::Path, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("osprey"))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SHELL", "/bin/bash")
        .envs(home.env())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("osprey starts")
}

/// Waits for the child on a blocking thread (the mock server keeps serving meanwhile); a
/// child still running after `limit` is killed and the test fails: that is the hang.
async fn finish_within(mut child: Child, limit: Duration) -> (Output, Duration) {
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                return (child.wait_with_output().unwrap(), started.elapsed());
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let output = child.wait_with_output().unwrap();
                panic!(
                    "osprey exec still waited after {limit:?}; stderr:\n{}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_stdin_pipe_does_not_block_a_prompt_argument() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let mut child = spawn_with_open_stdin(&home, repo.path(), &["exec", "--json", "the task"]);
    // Hold the write end open and never write: an idle pipe.
    let idle = child.stdin.take();
    let (out, took) = finish_within(child, Duration::from_secs(30)).await;
    drop(idle);
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(err.contains("Reading additional input from stdin"), "{err}");
    assert!(err.contains("</dev/null"), "the opt-out is named: {err}");
    assert!(err.contains("going on with the prompt alone"), "{err}");
    let texts = server.single_request().user_texts();
    assert_eq!(texts.last().map(String::as_str), Some("the task"));
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_that_arrives_after_a_pause_is_still_appended() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let mut child = spawn_with_open_stdin(&home, repo.path(), &["exec", "--json", "explain"]);
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        input.write_all(b"error: boom\n").unwrap();
        // Closing the pipe ends the input.
    });
    let (out, _) = finish_within(child, Duration::from_secs(30)).await;
    writer.join().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert!(err.contains("Reading additional input from stdin"), "{err}");
    assert!(!err.contains("prompt alone"), "{err}");
    let texts = server.single_request().user_texts();
    assert_eq!(
        texts.last().map(String::as_str),
        Some("explain\n\n<stdin>\nerror: boom\n</stdin>")
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_that_is_already_closed_is_read_without_a_notice() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    // An empty, closed stdin is what `</dev/null` gives.
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "the task"], "").await;
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert!(!err.contains("stdin"), "{err}");
    server.verify();
}
