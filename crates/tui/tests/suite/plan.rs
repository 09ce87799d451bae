//! End to end: the model's `update_plan` calls become checklist cells, one per call, drawn
//! the same live and when the session is resumed.

use osprey_test_support::{
    MockModelServer, MockResponse, TempHome, WireApi, ev_assistant_message, ev_function_call,
    sse_turn,
};
use serde_json::json;

use super::pty::PtySession;

fn update_plan(call_id: &str, explanation: &str, statuses: [&str; 3]) -> MockResponse {
    let args = json!({
        "explanation": explanation,
        "plan": [
            {"step": "Read the failing test", "status": statuses[0]},
            {"step": "Fix the parser", "status": statuses[1]},
            {"step": "Run the suite", "status": statuses[2]},
        ],
    });
    sse_turn(vec![ev_function_call(
        call_id,
        "update_plan",
        &args.to_string(),
    )])
}

/// Each plan cell's lines: from `• Updated Plan` to the blank line after it.
fn plan_blocks(screen: &str) -> Vec<Vec<String>> {
    let mut blocks: Vec<Vec<String>> = Vec::new();
    let mut open = false;
    for line in screen.lines() {
        if line.starts_with("• Updated Plan") {
            blocks.push(vec![line.to_owned()]);
            open = true;
        } else if open && line.trim().is_empty() {
            open = false;
        } else if open && let Some(block) = blocks.last_mut() {
            block.push(line.to_owned());
        }
    }
    blocks
}

#[test]
fn plan_updates_show_as_checklists_live_and_after_resume() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![
        update_plan(
            "plan_1",
            "Starting with the test.",
            ["in_progress", "pending", "pending"],
        ),
        update_plan(
            "plan_2",
            "The test fails as reported; fixing.",
            ["completed", "in_progress", "pending"],
        ),
        sse_turn(vec![ev_assistant_message("m1", "Parser fixed.")]),
    ]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn(&home, work.path(), &["fix the parser"], 40, 100);
    tui.wait_text("Parser fixed.");
    let live = tui.wait_text("Worked for");
    // NO_COLOR is set (TempHome's environment): the marks alone tell the steps apart.
    let expected = vec![
        vec![
            "• Updated Plan".to_owned(),
            "  └ Starting with the test.".to_owned(),
            "    ▣ Read the failing test".to_owned(),
            "    □ Fix the parser".to_owned(),
            "    □ Run the suite".to_owned(),
        ],
        vec![
            "• Updated Plan".to_owned(),
            "  └ The test fails as reported; fixing.".to_owned(),
            "    ✔ Read the failing test".to_owned(),
            "    ▣ Fix the parser".to_owned(),
            "    □ Run the suite".to_owned(),
        ],
    ];
    assert_eq!(plan_blocks(&live), expected, "{live}");
    let answer = live.find("• Parser fixed.").expect("the answer");
    let last_plan = live.rfind("• Updated Plan").expect("a plan");
    assert!(
        last_plan < answer,
        "the plans come before the answer:\n{live}"
    );
    tui.send(b"\x04");
    assert!(tui.wait_exit());
    let screen = tui.wait_text("osprey resume ");
    let id = screen
        .lines()
        .find_map(|l| l.split("osprey resume ").nth(1))
        .map(|id| id.trim().to_owned())
        .unwrap_or_else(|| panic!("no id:\n{screen}"));
    drop(tui);

    let mut resumed = PtySession::spawn(&home, work.path(), &["resume", &id], 40, 100);
    resumed.wait_text("Parser fixed.");
    let replayed = resumed.wait_text("Ask Osprey to do anything");
    assert_eq!(plan_blocks(&replayed), expected, "{replayed}");
    resumed.send(b"\x04");
    assert!(resumed.wait_exit());
    server.verify();
}
