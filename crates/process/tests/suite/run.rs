//! run_to_completion: exit statuses, combined output, caps, environment, leftovers.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use osprey_process::{
    DRAIN_AFTER_EXIT, ExecExpiration, ExecRequest, OutputCaps, OutputSink, run_to_completion,
};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::support::{assert_gone, is_gone, kill_leftover, pid_in, run, run_with_sink, sh, sh_in};

#[tokio::test]
async fn exit_codes_and_signals_are_reported() {
    let ok = run(sh("true"), ExecExpiration::never()).await;
    assert_eq!((ok.exit_code, ok.signal), (Some(0), None));
    assert!(ok.success());

    let three = run(sh("exit 3"), ExecExpiration::never()).await;
    assert_eq!((three.exit_code, three.signal), (Some(3), None));
    assert!(!three.success());

    let killed = run(sh("kill -9 $$"), ExecExpiration::never()).await;
    assert_eq!((killed.exit_code, killed.signal), (None, Some(9)));
    assert!(!killed.timed_out && !killed.cancelled);
}

/// The script waits on a FIFO before each switch of stream, and the test opens that FIFO
/// only after seeing the previous line arrive: arrival order is forced, not hoped for.
#[tokio::test]
async fn stdout_and_stderr_are_combined_in_arrival_order() {
    let dir = tempfile::tempdir().unwrap();
    let mk = run(sh_in(dir.path(), "mkfifo a b"), ExecExpiration::never()).await;
    assert_eq!(mk.exit_code, Some(0), "{}", mk.output_lossy());

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let req = sh_in(
        dir.path(),
        "echo one; read x < a; echo two >&2; read x < b; echo three",
    );
    let running = tokio::spawn(run_to_completion(
        req,
        ExecExpiration::timeout(Duration::from_secs(30)),
        OutputCaps::default(),
        Some(OutputSink::channel(tx)),
    ));

    let mut seen = String::new();
    let mut released = 0;
    while let Some(chunk) = rx.recv().await {
        seen.push_str(&String::from_utf8_lossy(&chunk));
        let fifo = match (released, seen.as_str()) {
            (0, s) if s.contains("one\n") => "a",
            (1, s) if s.contains("two\n") => "b",
            _ => continue,
        };
        tokio::fs::write(dir.path().join(fifo), "go\n")
            .await
            .unwrap();
        released += 1;
    }

    let outcome = running.await.unwrap().unwrap();
    assert_eq!(outcome.output_lossy(), "one\ntwo\nthree\n");
    assert_eq!(
        seen, "one\ntwo\nthree\n",
        "the sink saw the same bytes in the same order"
    );
    assert_eq!(outcome.output.total_lines, 3);
    assert_eq!(outcome.exit_code, Some(0));
}

#[tokio::test]
async fn thirty_thousand_lines_keep_head_tail_and_exact_totals() {
    let streamed = Arc::new(Mutex::new(0u64));
    let counter = Arc::clone(&streamed);
    let sink = OutputSink::callback(move |chunk| *counter.lock().unwrap() += chunk.len() as u64);
    let outcome = run_to_completion(
        sh("seq 1 30000"),
        ExecExpiration::never(),
        OutputCaps::new(1000, 1000),
        Some(sink),
    )
    .await
    .unwrap();

    let expected_bytes: u64 = (1..=30000u64).map(|n| n.to_string().len() as u64 + 1).sum();
    let out = &outcome.output;
    assert_eq!(out.total_bytes, expected_bytes);
    assert_eq!(out.total_lines, 30000);
    assert!(out.truncated);
    assert_eq!((out.head.len(), out.tail.len()), (1000, 1000));
    assert!(String::from_utf8_lossy(&out.head).starts_with("1\n2\n3\n4\n"));
    assert!(String::from_utf8_lossy(&out.tail).ends_with("29998\n29999\n30000\n"));
    assert_eq!(out.omitted_bytes(), expected_bytes - 2000);
    assert!(
        outcome
            .output_lossy()
            .contains(&format!("[… {} bytes omitted …]", expected_bytes - 2000))
    );
    assert_eq!(
        *streamed.lock().unwrap(),
        expected_bytes,
        "the sink sees every byte"
    );
}

#[tokio::test]
async fn a_hundred_megabytes_of_output_is_counted_not_kept() {
    let outcome = run_to_completion(
        sh("head -c 100000000 /dev/zero"),
        ExecExpiration::timeout(Duration::from_secs(60)),
        OutputCaps::new(4096, 4096),
        None,
    )
    .await
    .unwrap();
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(outcome.output.total_bytes, 100_000_000);
    assert_eq!(outcome.output.head.len() + outcome.output.tail.len(), 8192);
}

#[tokio::test]
async fn the_environment_is_exactly_the_requested_one() {
    let req = ExecRequest::new("/usr/bin/env", std::env::temp_dir()).env("ONLY_THIS", "yes");
    let outcome = run(req, ExecExpiration::never()).await;
    assert_eq!(outcome.output_lossy(), "ONLY_THIS=yes\n");
}

#[tokio::test]
async fn cwd_and_arg0_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let req = sh_in(dir.path(), "pwd; tr '\\0' ' ' < /proc/$$/cmdline").arg0("osprey-test-shell");
    let outcome = run(req, ExecExpiration::never()).await;
    let text = outcome.output_lossy();
    let (pwd, cmdline) = text.split_once('\n').unwrap();
    assert_eq!(
        std::fs::canonicalize(pwd).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
    assert!(cmdline.starts_with("osprey-test-shell -c "), "{cmdline:?}");
}

#[tokio::test]
async fn the_child_leads_its_own_session_without_a_terminal() {
    // Fields 5 and 6 of /proc/<pid>/stat are the process group and the session.
    let outcome = run(
        sh("cat /proc/$$/stat; echo; echo pid=$$; (: < /dev/tty) 2>/dev/null || echo no-tty"),
        ExecExpiration::never(),
    )
    .await;
    let text = outcome.output_lossy();
    let stat = text.lines().next().unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    let shell_pid = pid_in(&text).unwrap().to_string();
    assert_eq!(fields[2], shell_pid, "process group is the shell's pid");
    assert_eq!(fields[3], shell_pid, "session is the shell's pid");
    assert!(text.ends_with("no-tty\n"), "{text}");
}

#[tokio::test]
async fn exit_returns_even_if_a_background_child_keeps_the_pipes() {
    let outcome = run(sh("sleep 30 & echo pid=$!"), ExecExpiration::never()).await;
    let pid = pid_in(&outcome.output_lossy()).unwrap();
    assert_eq!(outcome.exit_code, Some(0));
    assert!(outcome.duration < DRAIN_AFTER_EXIT + Duration::from_secs(5));
    assert!(
        !is_gone(pid),
        "a command's deliberate background job is left running"
    );
    kill_leftover(pid).await;
}

#[tokio::test]
async fn dropping_the_future_kills_the_group() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let task = tokio::spawn(run_with_sink(
        sh("sleep 100 & echo pid=$!; sleep 100"),
        ExecExpiration::never(),
        OutputSink::channel(tx),
    ));
    let mut seen = String::new();
    let pid = loop {
        seen.push_str(&String::from_utf8_lossy(&rx.recv().await.unwrap()));
        if let Some(pid) = pid_in(&seen).filter(|_| seen.ends_with('\n')) {
            break pid;
        }
    };
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_gone(pid).await;
}

#[tokio::test]
async fn an_escaped_grandchild_holding_the_pipes_does_not_hang_us() {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let seen = Arc::new(Mutex::new(String::new()));
    let sink_seen = Arc::clone(&seen);
    let sink = OutputSink::callback(move |chunk| {
        let mut seen = sink_seen.lock().unwrap();
        seen.push_str(&String::from_utf8_lossy(chunk));
        if seen.ends_with('\n') && pid_in(&seen).is_some() {
            cancel.cancel();
        }
    });
    // `setsid` moves the inner shell out of our process group, so the group kill misses
    // it and it keeps stdout and stderr open. It prints its pid only once it has escaped.
    let outcome = run_with_sink(
        sh("setsid sh -c 'echo pid=$$; exec sleep 30' & sleep 100"),
        ExecExpiration::cancellation(token),
        sink,
    )
    .await;
    let pid = pid_in(&seen.lock().unwrap()).unwrap();
    assert!(outcome.cancelled);
    assert!(
        outcome.duration < Duration::from_secs(10),
        "{:?}",
        outcome.duration
    );
    kill_leftover(pid).await;
}

/// Stdin larger than any pipe buffer (and than Linux's 128 KiB limit on one argument) reaches
/// the child whole while its output is read, and its end is seen.
#[tokio::test]
async fn stdin_input_reaches_the_child_whole() {
    let input: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let outcome = osprey_process::run_to_completion_with_stdin(
        sh("cat; echo; echo end"),
        input.clone(),
        ExecExpiration::timeout(Duration::from_secs(30)),
        OutputCaps {
            head_bytes: 1 << 20,
            tail_bytes: 1 << 20,
        },
        None,
    )
    .await
    .unwrap();
    assert_eq!(outcome.exit_code, Some(0));
    let mut want = String::from_utf8(input).unwrap();
    want.push_str("\nend\n");
    assert_eq!(outcome.output_lossy(), want);
}

/// A child that never reads its stdin is not held up by it, and that is not an error.
#[tokio::test]
async fn unread_stdin_neither_blocks_nor_fails() {
    let outcome = osprey_process::run_to_completion_with_stdin(
        sh("exec 0<&-; echo done"),
        vec![b'x'; 4 << 20],
        ExecExpiration::timeout(Duration::from_secs(30)),
        OutputCaps::default(),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        (outcome.exit_code, outcome.output_lossy().as_str()),
        (Some(0), "done\n")
    );
}
