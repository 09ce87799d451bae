//! `OSPREY_TUI_FRAME_LOG`: the per-frame timing the TUI benchmark reads (bench/tui.sh).

use osprey_test_support::{
    MockModelServer, TempHome, WireApi, ev_assistant_message, ev_output_text_delta, sse_turn,
};

use super::pty::PtySession;

#[test]
fn every_key_and_streamed_delta_gets_a_timed_frame() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_output_text_delta("first part, "),
        ev_output_text_delta("second part."),
        ev_assistant_message("m1", "first part, second part."),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("frames.log");
    let log_var = log.to_string_lossy().into_owned();
    let mut tui = PtySession::spawn_with_env(
        &home,
        work.path(),
        &["stream something"],
        24,
        80,
        &[("OSPREY_TUI_FRAME_LOG", &log_var)],
    );
    tui.wait_text("first part, second part.");
    // Each key is drawn before the next one is typed, so each gets its own frame.
    for (i, key) in ["x", "y", "z"].into_iter().enumerate() {
        tui.send(key.as_bytes());
        tui.wait_text(&format!("› {}", &"xyz"[..=i]));
    }
    tui.send(b"\x03\x03\x03");
    assert!(tui.wait_exit(), "osprey exits with success");

    let text = std::fs::read_to_string(&log).expect("the frame log was written");
    let rows: Vec<(&str, u64, u64)> = text
        .lines()
        .map(|line| {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 3, "cause, wait and draw time: {line:?}");
            let micros = |s: &str| s.parse::<u64>().unwrap_or_else(|_| panic!("{line:?}"));
            (parts[0], micros(parts[1]), micros(parts[2]))
        })
        .collect();
    assert_eq!(rows.first().map(|r| r.0), Some("start"), "{text}");
    let keys = rows.iter().filter(|r| r.0 == "key").count();
    // Three letters plus the Ctrl+C presses that drew a hint before the quit.
    assert!(keys >= 4, "a frame per key: {text}");
    assert!(
        rows.iter().any(|r| r.0 == "server"),
        "streamed deltas: {text}"
    );
    for (cause, wait, draw) in &rows {
        assert!(
            draw <= wait,
            "{cause}: drawing is part of the wait ({draw} > {wait})"
        );
    }
}

#[test]
fn a_frame_log_that_cannot_be_opened_is_a_warning_not_a_failure() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_assistant_message("m1", "still answered"),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("no-such-dir").join("frames.log");
    let missing = missing.to_string_lossy().into_owned();
    let mut tui = PtySession::spawn_with_env(
        &home,
        work.path(),
        &["hello"],
        24,
        100,
        &[("OSPREY_TUI_FRAME_LOG", &missing)],
    );
    let screen = tui.wait_text("still answered");
    assert!(
        screen.contains("cannot open the frame log"),
        "the person is told why nothing is timed:\n{screen}"
    );
    tui.send(b"\x03\x03");
    assert!(tui.wait_exit(), "osprey exits with success");
}
