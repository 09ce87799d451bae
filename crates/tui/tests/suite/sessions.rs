//! The session picker's options end to end: `Filter: All` lists other directories'
//! sessions, Ctrl+A archives the selected one (it leaves the list) and `Status: Archived`
//! lists it.

use osprey_test_support::{MockModelServer, TempHome, WireApi, ev_assistant_message, sse_turn};

use super::pty::PtySession;
use super::screens::recorded_session;

#[test]
fn the_picker_filters_by_directory_archives_with_ctrl_a_and_lists_archived_sessions() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m1", "Answer here.")]),
        sse_turn(vec![ev_assistant_message("m2", "Answer elsewhere.")]),
    ]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    recorded_session(&home, work.path(), "here question", "Answer here.");
    recorded_session(
        &home,
        other.path(),
        "elsewhere question",
        "Answer elsewhere.",
    );

    let mut picker = PtySession::spawn(&home, work.path(), &["resume"], 40, 120);
    picker.wait_text("Filter:  Cwd  All    Status:  Active  Archived    Sort:  Updated  Created");
    let screen = picker.wait_text("here question");
    assert!(!screen.contains("elsewhere question"), "{screen}");

    // Tab focuses Filter, → picks All: the other directory's session is listed too, first
    // as the most recently changed.
    picker.send(b"\t");
    picker.send(b"\x1b[C");
    picker.wait_for("both directories' sessions", |s| {
        s.contains("› ") && s.contains("elsewhere question") && s.contains("here question")
    });
    // Ctrl+A archives the selected one.
    picker.send(b"\x01");
    picker.wait_text("Archived session");
    picker.wait_for("the archived session left the list", |s| {
        !s.lines()
            .any(|l| l.contains("ago") && l.contains("elsewhere question"))
    });
    // Tab to Status, → Archived: only the archived session.
    picker.send(b"\t");
    picker.send(b"\x1b[C");
    picker.wait_for("the archived list", |s| {
        s.contains("^a unarchive")
            && s.lines()
                .any(|l| l.contains("ago") && l.contains("elsewhere question"))
            && !s.lines().any(|l| {
                l.contains("ago") && l.contains("here question") && !l.contains("elsewhere")
            })
    });
    let archived = home.path().join("archived_sessions");
    let files = std::fs::read_dir(&archived).map(|d| d.count()).unwrap_or(0);
    assert_eq!(files, 1, "one session file under {}", archived.display());

    picker.send(b"\x1b");
    picker.wait_text("Ask Osprey to do anything");
    picker.send(b"\x04");
    assert!(picker.wait_exit());
}
