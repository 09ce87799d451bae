//! The user-message item shows what the user typed: the image labels the model gets beside
//! each image (`<image name=[Image #1]>` … `</image>`) are in the request, not in the item.

use super::harness::*;
use osprey_protocol::{EventMsg, ThreadItem, UserInput};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use std::time::Duration;

/// A 1×1 PNG.
const PIXEL: [u8; 70] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0,
    0, 0, 31, 21, 196, 137, 0, 0, 0, 13, 73, 68, 65, 84, 120, 218, 99, 252, 207, 192, 80, 15, 0, 4,
    133, 1, 128, 132, 169, 140, 33, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_message_item_holds_the_typed_text_only() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "a dot")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let image = repo.path().join("dot.png");
    std::fs::write(&image, PIXEL).unwrap();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    thread
        .submit(turn_with(vec![
            UserInput::LocalImage {
                path: image.clone(),
            },
            UserInput::Text {
                text: "what is this?".into(),
            },
        ]))
        .await
        .unwrap();
    let mut user_text = None;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), thread.next_event())
            .await
            .expect("an event in time")
            .expect("thread open");
        match event.msg {
            EventMsg::ItemCompleted {
                item: ThreadItem::UserMessage { text, images, .. },
            } => user_text = Some((text, images)),
            EventMsg::TurnCompleted { .. } => break,
            EventMsg::TurnFailed { error, .. } => panic!("turn failed: {error}"),
            _ => {}
        }
    }
    assert_eq!(user_text, Some(("what is this?".to_owned(), vec![image])));
    let request = serde_json::to_string(server.requests()[0].input()).unwrap();
    assert!(
        request.contains("<image name=[Image #1]"),
        "the model still gets the label: {request}"
    );
    server.verify();
}
