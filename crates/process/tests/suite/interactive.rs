//! Interactive sessions on pipes and on a terminal.

use std::time::{Duration, Instant};

use osprey_process::{
    InteractiveProcess, OutputCaps, ProcessExit, SessionOptions, StdinError, TerminalSize,
};
use pretty_assertions::assert_eq;

use super::support::{PATH, assert_gone, collect_until, pid_in, sh};

const LONG: Duration = Duration::from_secs(30);

#[tokio::test]
async fn pipe_session_echoes_input_and_reports_exit_early() {
    let proc = InteractiveProcess::spawn(sh("cat"), false).unwrap();
    assert!(!proc.is_tty());
    proc.write_stdin(b"hello\n").await.unwrap();
    let seen = collect_until(&proc, "hello\n").await;
    assert_eq!(seen, "hello\n");

    proc.close_stdin().await.unwrap();
    let started = Instant::now();
    let rest = proc.collect_output(LONG, 1 << 20).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "returned when cat exited"
    );
    assert_eq!(
        rest.exited,
        Some(ProcessExit {
            code: Some(0),
            signal: None
        })
    );
    assert!(rest.output.is_empty());
    assert!(proc.has_exited());

    let err = proc.write_stdin(b"late\n").await.unwrap_err();
    assert!(matches!(err, StdinError::Closed { .. }), "{err}");
}

#[tokio::test]
async fn pipe_session_combines_stderr_and_drains_before_reporting_exit() {
    let proc = InteractiveProcess::spawn(
        sh("read x; echo \"out $x\"; echo \"err $x\" >&2; exit 4"),
        false,
    )
    .unwrap();
    proc.write_stdin(b"ping\n").await.unwrap();
    let mut seen = String::new();
    let exit = loop {
        let got = proc.collect_output(LONG, 1 << 20).await;
        seen.push_str(&String::from_utf8_lossy(&got.output));
        if let Some(exit) = got.exited {
            break exit;
        }
    };
    assert_eq!(exit.code, Some(4));
    assert_eq!(
        seen, "out ping\nerr ping\n",
        "all output arrives with or before the exit"
    );
}

#[tokio::test]
async fn collect_waits_for_the_yield_time_when_nothing_happens_and_kill_ends_it() {
    let proc = InteractiveProcess::spawn(sh("sleep 100"), false).unwrap();
    let started = Instant::now();
    let got = proc.collect_output(Duration::from_millis(200), 1024).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!((got.output.len(), got.exited), (0, None));

    proc.kill();
    let got = proc.collect_output(LONG, 1024).await;
    assert_eq!(
        got.exited,
        Some(ProcessExit {
            code: None,
            signal: Some(9)
        })
    );
}

#[tokio::test]
async fn output_between_polls_is_bounded() {
    let options = SessionOptions {
        buffer_caps: OutputCaps::new(1000, 1000),
        ..SessionOptions::default()
    };
    let proc = InteractiveProcess::spawn_with(sh("seq 1 100000"), options).unwrap();
    let mut total = 0u64;
    let mut omitted = 0u64;
    loop {
        let got = proc.collect_output(LONG, 500).await;
        total += got.output.len() as u64;
        omitted += got.omitted_bytes;
        if got.exited.is_some() {
            break;
        }
    }
    assert!(
        omitted > 500_000,
        "most of ~589 kB was dropped, not buffered: {omitted}"
    );
    assert!(total < 10_000, "{total}");
}

#[tokio::test]
async fn dropping_a_session_kills_its_group() {
    let proc = InteractiveProcess::spawn(sh("sleep 100 & echo pid=$!; sleep 100"), false).unwrap();
    let seen = collect_until(&proc, "\n").await;
    let bg = pid_in(&seen).unwrap();
    let leader = proc.pid().unwrap();
    drop(proc);
    assert_gone(bg).await;
    assert_gone(leader).await;
}

#[tokio::test]
async fn tty_session_has_a_terminal_and_echoes_typed_input() {
    let req = sh("tty; read line; echo \"got:$line\"").env("TERM", "dumb");
    let proc = InteractiveProcess::spawn(req, true).unwrap();
    assert!(proc.is_tty());
    let seen = collect_until(&proc, "\n").await;
    assert!(seen.starts_with("/dev/pts/"), "{seen:?}");

    proc.write_stdin(b"typed\n").await.unwrap();
    let seen = collect_until(&proc, "got:typed").await;
    assert!(
        seen.starts_with("typed\r\n"),
        "the terminal echoes input: {seen:?}"
    );

    let rest = proc.collect_output(LONG, 1 << 20).await;
    assert_eq!(rest.exited.map(|e| e.code), Some(Some(0)));
    let err = proc.write_stdin(b"late\n").await.unwrap_err();
    assert!(matches!(err, StdinError::Closed { .. }), "{err}");
}

#[tokio::test]
async fn tty_session_uses_the_requested_size_and_can_be_resized() {
    let options = SessionOptions {
        tty: true,
        size: TerminalSize {
            rows: 33,
            cols: 101,
        },
        ..SessionOptions::default()
    };
    let req = sh("stty size; read x; stty size").env("PATH", PATH);
    let proc = InteractiveProcess::spawn_with(req, options).unwrap();
    collect_until(&proc, "33 101").await;
    proc.resize(TerminalSize {
        rows: 40,
        cols: 120,
    })
    .unwrap();
    proc.write_stdin(b"\n").await.unwrap();
    collect_until(&proc, "40 120").await;
}

#[tokio::test]
async fn killing_a_tty_session_ends_its_group_and_its_reader() {
    let proc = InteractiveProcess::spawn(sh("sleep 100 & echo pid=$!; sleep 100"), true).unwrap();
    let seen = collect_until(&proc, "\n").await;
    let bg = pid_in(&seen).unwrap();
    proc.kill();
    let started = Instant::now();
    let got = proc.collect_output(LONG, 1024).await;
    // An early return means the exit was seen and the terminal reader finished (or the
    // drain deadline passed); either way nothing waits on the terminal any more.
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(got.exited.map(|e| e.signal), Some(Some(9)));
    assert_gone(bg).await;
}
