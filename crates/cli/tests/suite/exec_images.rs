//! Images attached with `-i` reach the model labelled and before the prompt, in the wire
//! form of Codex 0.171: `<image name=[Image #N] path="…">`, the image, `</image>`, for each
//! image in order, then the prompt text, all in one user message.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A 1×1 PNG.
const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The parts of a content array with image data replaced by its media type, so the
/// whole message can be compared.
fn shape(content: &Value) -> Vec<Value> {
    content
        .as_array()
        .unwrap()
        .iter()
        .map(|part| match part["type"].as_str() {
            Some("input_image") => {
                let url = part["image_url"].as_str().unwrap();
                let kind = url.split(';').next().unwrap();
                json!({"type": "input_image", "image_url": kind})
            }
            _ => part.clone(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_are_labelled_in_order_and_come_before_the_prompt() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m", "two dots")]),
        sse_turn(vec![ev_assistant_message("m", "one more")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let dir = repo.path().canonicalize().unwrap();
    std::fs::write(dir.join("first.png"), TINY_PNG).unwrap();
    std::fs::create_dir(dir.join("shots")).unwrap();
    std::fs::write(dir.join("shots/second.png"), TINY_PNG).unwrap();
    let out = osprey_async(
        &home,
        &dir,
        &[
            "exec",
            "--json",
            "-i",
            "first.png",
            "--image",
            "shots/second.png",
            "compare them",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let first = dir.join("first.png");
    let second = dir.join("shots/second.png");
    let expected = vec![
        json!({"type": "input_text", "text": format!("<image name=[Image #1] path=\"{}\">", first.display())}),
        json!({"type": "input_image", "image_url": "data:image/png"}),
        json!({"type": "input_text", "text": "</image>"}),
        json!({"type": "input_text", "text": format!("<image name=[Image #2] path=\"{}\">", second.display())}),
        json!({"type": "input_image", "image_url": "data:image/png"}),
        json!({"type": "input_text", "text": "</image>"}),
        json!({"type": "input_text", "text": "compare them"}),
    ];
    let request = &server.requests()[0];
    let message = request.input().last().unwrap().clone();
    assert_eq!(message["role"], "user");
    assert_eq!(shape(&message["content"]), expected);

    // Resuming with one image numbers it from 1 again (labels are per message), and the
    // session list shows the typed prompt, not the labels.
    let out = osprey_async(
        &home,
        &dir,
        &[
            "exec",
            "--json",
            "-i",
            "first.png",
            "resume",
            &id,
            "and this?",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let message = server.requests()[1].input().last().unwrap().clone();
    assert_eq!(
        shape(&message["content"]),
        vec![
            expected[0].clone(),
            expected[1].clone(),
            expected[2].clone(),
            json!({"type": "input_text", "text": "and this?"}),
        ]
    );
    let listed = osprey(&home, &dir, &["sessions", "list", "--json"], "");
    assert!(listed.status.success(), "stderr: {}", stderr(&listed));
    assert!(
        stdout(&listed).contains("compare them"),
        "{}",
        stdout(&listed)
    );
    assert!(!stdout(&listed).contains("Image #"), "{}", stdout(&listed));
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transcript_lists_the_images_by_name_above_the_prompt() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "a dot")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let dir = repo.path().canonicalize().unwrap();
    std::fs::write(dir.join("dot.png"), TINY_PNG).unwrap();
    let out = osprey_async(&home, &dir, &["exec", "-i", "dot.png", "what is it?"], "").await;
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    let user = err
        .find("\nuser\n")
        .expect("the transcript shows the user message");
    let shown: Vec<&str> = err[user + 6..].lines().take(2).collect();
    assert_eq!(
        shown,
        vec![
            format!("[Image #1] {}", dir.join("dot.png").display()).as_str(),
            "what is it?"
        ]
    );
    server.verify();
}
