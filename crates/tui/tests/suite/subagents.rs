//! Sub-agents' own events stream on the same connection under their thread ids: they stay
//! out of the parent's transcript, and `/agent` watches one thread at a time.

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
            .any(|l| l.trim_start().starts_with("Sub-agent …") && l.ends_with("(Planck) asks:")),
        "the overlay names the agent, by its id and nickname:\n{screen}"
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

/// The status line: the screen's last line with text.
fn status_line(screen: &str) -> &str {
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
}

#[test]
fn agent_watches_a_sub_agent_sends_it_a_message_and_switches_back() {
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
            vec![
                sse_turn(vec![ev_assistant_message("c", "the child speaks here")]),
                sse_turn(vec![ev_assistant_message("c2", "the child answers again")]),
            ],
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
    tui.wait_text("The parent is done.");
    tui.wait_text("Worked for");

    tui.send(b"/agent");
    tui.wait_text("switch between this session's main thread and its sub-agents");
    tui.send(b"\r");
    // Each check waits: a frame may reach the terminal in more than one write.
    tui.wait_for("the picker listing the child as done", |s| {
        s.contains("Select a thread to watch")
            && s.lines().any(|l| l.contains("1. Main thread"))
            && s.lines()
                .any(|l| l.contains("2. Planck") && l.contains("done"))
    });

    tui.send(b"2");
    tui.wait_for(
        "the child's transcript under its header, its name on the status line and in the composer",
        |s| {
            s.split("━━ Watching Planck")
                .nth(1)
                .is_some_and(|after| after.contains("• the child speaks here"))
                && status_line(s).starts_with("Watching Planck")
                && s.contains("Message Planck, the sub-agent you watch")
        },
    );

    // The composer sends to the watched child: its next answer streams here.
    tui.send(b"go on\r");
    tui.wait_for("the child's second answer", |s| {
        s.split("━━ Watching Planck")
            .nth(1)
            .is_some_and(|after| after.contains("• the child answers again"))
    });
    let child = server.requests_for("Planck");
    assert_eq!(child.len(), 2, "the message went to the child");
    assert!(
        child[1].user_texts().iter().any(|t| t == "go on"),
        "{:?}",
        child[1].user_texts()
    );
    assert_eq!(server.root_requests().len(), 3, "not to the parent");

    tui.send(b"/agent");
    tui.wait_text("switch between this session's main thread and its sub-agents");
    tui.send(b"\r");
    tui.wait_for("the picker again", |s| {
        s.rsplit("━━ Watching Planck")
            .next()
            .is_some_and(|after| after.contains("Select a thread to watch"))
    });
    tui.send(b"1");
    tui.wait_for(
        "the main transcript under its header, no sub-agent on the status line",
        |s| {
            s.split("━━ Watching the main thread")
                .nth(1)
                .is_some_and(|after| after.contains("• The parent is done."))
                && !status_line(s).contains("Watching Planck")
                && s.contains("Ask Osprey to do anything")
        },
    );
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
}
