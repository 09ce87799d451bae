//! The terminal is given back when the program panics: raw mode off (the pty's `ICANON` and
//! `ECHO` back), bracketed paste off, the keyboard mode popped, the cursor shown, and the
//! panic message readable. The panic is asked for with F12 under `OSPREY_TUI_TEST_PANIC=1`,
//! which only debug builds honour.

use osprey_test_support::{MockModelServer, TempHome, WireApi};

use super::pty::PtySession;

#[test]
fn a_panic_restores_the_terminal_and_shows_the_message() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(Vec::new()));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn_with_env(
        &home,
        work.path(),
        &[],
        30,
        100,
        &[("OSPREY_TUI_TEST_PANIC", "1"), ("RUST_BACKTRACE", "0")],
    );
    tui.wait_text("Ask Osprey to do anything");
    let raw_mode = tui.local_flags();
    assert!(
        !raw_mode.iter().any(|f| f == "ICANON"),
        "the UI runs in raw mode: {raw_mode:?}"
    );
    let before = tui.raw_len();

    tui.send(b"\x1b[24~");
    assert!(!tui.wait_exit(), "a panic is a failure exit");
    let flags = tui.local_flags();
    assert!(
        flags.iter().any(|f| f == "ICANON") && flags.iter().any(|f| f == "ECHO"),
        "raw mode is off again: {flags:?}"
    );
    let raw = tui.raw();
    let after = &raw[before.min(raw.len())..];
    for (sequence, what) in [
        ("\x1b[?2004l", "bracketed paste off"),
        ("\x1b[<1u", "keyboard mode popped"),
        ("\x1b[?25h", "cursor shown"),
    ] {
        assert!(after.contains(sequence), "{what}: {}", after.escape_debug());
    }
    let restored_at = after.find("\x1b[?2004l").unwrap();
    let message_at = after
        .find("OSPREY_TUI_TEST_PANIC")
        .unwrap_or_else(|| panic!("the panic message is shown: {}", after.escape_debug()));
    assert!(
        restored_at < message_at,
        "the terminal is restored before the message is written"
    );
}
