//! A command the sandbox blocked, offered for a rerun outside it: the overlay says what was
//! blocked and that yes runs it again without the sandbox, and yes does.

use osprey_test_support::{
    MockModelServer, TempHome, WireApi, ev_assistant_message, ev_function_call, sse_turn,
};
use serde_json::json;

use super::pty::PtySession;

#[test]
fn a_sandbox_denial_gets_its_own_overlay_and_yes_reruns_outside_the_sandbox() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "c1",
            "exec_command",
            &json!({"cmd": "touch made.txt && echo wrote-it"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "Made it in the end.")]),
    ]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    // Read-only: the sandbox blocks the write, and on-request lets a person allow a rerun.
    let mut tui = PtySession::spawn(
        &home,
        work.path(),
        &["-a", "on-request", "-s", "read-only", "make the file"],
        40,
        110,
    );
    let screen =
        tui.wait_text("The sandbox blocked this command. Run it again outside the sandbox?");
    assert!(screen.contains("Blocked: "), "{screen}");
    assert!(
        screen.contains("Yes, run it again outside the sandbox (y)"),
        "{screen}"
    );
    assert!(
        !screen.contains("Would you like to run the following command?"),
        "{screen}"
    );
    assert!(
        !work.path().join("made.txt").exists(),
        "the sandboxed attempt wrote nothing"
    );
    tui.send(b"y");
    let screen = tui.wait_text("Made it in the end.");
    assert!(
        screen.contains("again outside the sandbox"),
        "the decision is kept:\n{screen}"
    );
    assert!(screen.contains("wrote-it"), "{screen}");
    assert!(work.path().join("made.txt").exists(), "the rerun wrote it");
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
}
