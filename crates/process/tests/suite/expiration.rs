//! Timeouts, cancellation and suspended timeouts, each ending in a group kill.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use osprey_process::{ExecExpiration, OutputSink};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::support::{assert_gone, pid_in, run, run_with_sink, sh};

/// A sink that records output and calls `on_line` once for each complete line.
fn line_sink(
    seen: Arc<Mutex<String>>,
    mut on_line: impl FnMut(&str) + Send + 'static,
) -> OutputSink {
    let mut partial = String::new();
    OutputSink::callback(move |chunk| {
        let text = String::from_utf8_lossy(chunk);
        seen.lock().unwrap().push_str(&text);
        partial.push_str(&text);
        while let Some((line, rest)) = partial.split_once('\n') {
            let (line, rest) = (line.to_string(), rest.to_string());
            on_line(&line);
            partial = rest;
        }
    })
}

/// The timeout is suspended until the shell has printed its background child's pid, so
/// the pid is known however slow the machine is; then it runs out by itself.
#[tokio::test]
async fn timeout_kills_the_command_and_its_children() {
    let expiration = ExecExpiration::timeout(Duration::from_millis(200));
    let control = expiration.timeout_control().unwrap();
    let mut hold = Some(control.suspend());
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = line_sink(Arc::clone(&seen), move |line| {
        if line.starts_with("pid=") {
            hold.take();
        }
    });

    let outcome = run_with_sink(
        sh("sleep 100 & echo pid=$!; sleep 100; wait"),
        expiration,
        sink,
    )
    .await;

    assert!(outcome.timed_out);
    assert!(!outcome.cancelled);
    assert_eq!((outcome.exit_code, outcome.signal), (None, Some(9)));
    assert!(
        outcome.duration < Duration::from_secs(20),
        "{:?}",
        outcome.duration
    );
    assert!(control.used() >= Duration::from_millis(200));
    let pid = pid_in(&seen.lock().unwrap()).unwrap();
    assert_gone(pid).await;
}

#[tokio::test]
async fn cancellation_kills_the_group_and_says_so() {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = line_sink(Arc::clone(&seen), move |line| {
        if line.starts_with("pid=") {
            cancel.cancel();
        }
    });

    let outcome = run_with_sink(
        sh("sleep 100 & echo pid=$!; sleep 100"),
        ExecExpiration::timeout(Duration::from_secs(3600)).with_cancellation(token),
        sink,
    )
    .await;

    assert!(outcome.cancelled);
    assert!(!outcome.timed_out);
    assert_eq!(outcome.signal, Some(9));
    let pid = pid_in(&seen.lock().unwrap()).unwrap();
    assert_eq!(outcome.output_lossy(), format!("pid={pid}\n"));
    assert_gone(pid).await;
}

#[tokio::test]
async fn an_already_cancelled_token_starts_nothing() {
    let token = CancellationToken::new();
    token.cancel();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let outcome = run(
        sh(&format!("touch {}", marker.display())),
        ExecExpiration::cancellation(token),
    )
    .await;
    assert!(outcome.cancelled);
    assert!(!marker.exists());
}

/// The command sleeps 1 s (its own behaviour) before printing; the timeout is 300 ms
/// but suspended, as during an approval prompt. It must survive the sleep, and the
/// timeout must fire once resumed.
#[tokio::test]
async fn suspended_timeout_does_not_count_and_resumes() {
    let expiration = ExecExpiration::timeout(Duration::from_millis(300));
    let control = expiration.timeout_control().unwrap();
    let mut hold = Some(control.suspend());
    let seen = Arc::new(Mutex::new(String::new()));
    let sink = line_sink(Arc::clone(&seen), move |line| {
        if line == "first" {
            hold.take();
        }
    });

    let outcome = run_with_sink(sh("sleep 1; echo first; sleep 100"), expiration, sink).await;

    assert_eq!(
        outcome.output_lossy(),
        "first\n",
        "not killed while suspended"
    );
    assert!(outcome.timed_out, "killed after the suspension ended");
    assert!(outcome.duration >= Duration::from_secs(1));
    assert!(control.used() >= Duration::from_millis(300));
    assert!(
        control.used() < outcome.duration,
        "suspended time was not charged"
    );
}

/// The same command without suspension: the timeout fires before the first line.
#[tokio::test]
async fn unsuspended_timeout_fires_during_the_sleep() {
    let outcome = run(
        sh("sleep 1; echo first; sleep 100"),
        ExecExpiration::timeout(Duration::from_millis(300)),
    )
    .await;
    assert!(outcome.timed_out);
    assert_eq!(outcome.output_lossy(), "");
}
