//! A sub-agent's own events stream on the same connection under its thread id: they must
//! not enter the parent's transcript or end the parent's turn.

use osprey_test_support::{
    MockModelServer, TempHome, WireApi, ev_assistant_message, ev_function_call, sse_turn,
};
use serde_json::json;

use super::pty::PtySession;

#[test]
fn a_sub_agents_messages_and_turns_stay_out_of_the_parents_transcript() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start_routed(
        vec![
            sse_turn(vec![ev_function_call(
                "spawn",
                "spawn_agent",
                &json!({"message": "say hi"}).to_string(),
            )]),
            sse_turn(vec![ev_function_call(
                "wait",
                "wait_agent",
                &json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 60000}).to_string(),
            )]),
            sse_turn(vec![ev_assistant_message("m", "The parent is done.")]),
        ],
        vec![(
            "Planck",
            vec![sse_turn(vec![ev_assistant_message(
                "c",
                "the child speaks here",
            )])],
        )],
    ));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn(
        &home,
        work.path(),
        &["-a", "never", "-s", "danger-full-access", "use a sub-agent"],
        50,
        120,
    );
    let screen = tui.wait_text("The parent is done.");
    let screen = if screen.contains("Worked for") {
        screen
    } else {
        tui.wait_text("Worked for")
    };
    assert!(
        screen.contains("completed — the child speaks here"),
        "the wait cell still reports the child's answer:\n{screen}"
    );
    let child_bullets = screen
        .lines()
        .filter(|l| l.starts_with("• the child speaks here"))
        .count();
    assert_eq!(
        child_bullets, 0,
        "the child's answer is not a parent cell:\n{screen}"
    );
    let ends = screen.lines().filter(|l| l.contains("Worked for")).count();
    assert_eq!(ends, 1, "one turn ended, the parent's:\n{screen}");
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
}

#[test]
fn a_sub_agents_approval_is_labelled_with_the_agent_and_answered_here() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start_routed(
        vec![
            sse_turn(vec![ev_function_call(
                "spawn",
                "spawn_agent",
                &json!({"message": "make the file"}).to_string(),
            )]),
            sse_turn(vec![ev_function_call(
                "wait",
                "wait_agent",
                &json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 60000}).to_string(),
            )]),
            sse_turn(vec![ev_assistant_message("m", "The child made it.")]),
        ],
        vec![(
            "Planck",
            vec![
                sse_turn(vec![ev_function_call(
                    "c1",
                    "exec_command",
                    &json!({"cmd": "touch child.txt"}).to_string(),
                )]),
                sse_turn(vec![ev_assistant_message("c", "made child.txt")]),
            ],
        )],
    ));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn(
        &home,
        work.path(),
        &[
            "-a",
            "untrusted",
            "-s",
            "workspace-write",
            "use a sub-agent",
        ],
        50,
        120,
    );
    let screen = tui.wait_text("Would you like to run the following command?");
    assert!(
        screen
            .lines()
            .any(|l| l.trim_start().starts_with("Sub-agent …") && l.ends_with("asks:")),
        "the overlay names the agent:\n{screen}"
    );
    assert!(screen.contains("touch child.txt"), "{screen}");
    tui.send(b"y");
    tui.wait_text("The child made it.");
    assert!(
        work.path().join("child.txt").exists(),
        "the child's command ran"
    );
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
}
