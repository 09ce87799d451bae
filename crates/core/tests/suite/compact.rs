//! Manual compaction (`Op::Compact`), as the TUI's `/compact` will use it.

use super::harness::*;
use osprey_protocol::{EventMsg, Op};
use osprey_test_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_op_replaces_history_with_the_summary() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m0", "LONG ANSWER")]),
        sse_turn(vec![ev_assistant_message("s", "THE NOTE")]),
        sse_turn(vec![ev_assistant_message("m1", "ok")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    run_turn(&thread, "first question", vec![]).await;
    thread.submit(Op::Compact).await.unwrap();
    let mut compacted = false;
    loop {
        let event = thread.next_event().await.unwrap();
        match event.msg {
            EventMsg::Compacted { summary } => {
                assert_eq!(summary, "THE NOTE");
                compacted = true;
            }
            EventMsg::TurnCompleted { .. } => break,
            EventMsg::TurnFailed { error, .. } => panic!("{error}"),
            _ => {}
        }
    }
    assert!(compacted);
    run_turn(&thread, "second question", vec![]).await;
    let request = &server.requests()[2];
    let texts = request.user_texts();
    assert!(texts.iter().any(|t| t.contains("THE NOTE")));
    assert!(texts.contains(&"first question".to_string()));
    let body = request.body.to_string();
    assert!(
        !body.contains("LONG ANSWER"),
        "the old answer was compacted away"
    );
    server.verify();
}
