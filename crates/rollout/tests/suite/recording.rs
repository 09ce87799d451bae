//! Writing with the recorder and reading back.

use super::{assistant, meta, turn_context, user};
use osprey_protocol::{
    ApprovalRequest, ApprovalRequestKind, EventMsg, ResponseItem, ThreadItem, TokenUsage,
};
use osprey_rollout::{
    BaseInstructions, CompactedItem, GitInfo, RolloutError, RolloutItem, RolloutRecorder,
    read_rollout,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use std::io::Write;

fn model_items() -> Vec<ResponseItem> {
    [
        json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"plan"}],
               "encrypted_content":"gAAAAB\u{00e9}==","status":"completed"}),
        json!({"type":"function_call","id":"fc_1","name":"exec_command","call_id":"call_1",
               "arguments":"{\"cmd\":\"ls -la\"}","status":"completed"}),
        json!({"type":"function_call_output","call_id":"call_1","output":"a\nb\u{1F980}"}),
        json!({"type":"web_search_call","id":"ws_1","action":{"query":"x","n":1.5}}),
    ]
    .into_iter()
    .map(|v| serde_json::from_value(v).unwrap())
    .collect()
}

#[tokio::test]
async fn every_record_kind_round_trips_and_response_items_are_byte_exact() {
    let home = tempfile::tempdir().unwrap();
    let mut header = meta("/work");
    header.base_instructions = Some(BaseInstructions {
        text: "You are Osprey.".into(),
    });
    header.git = Some(GitInfo {
        commit_hash: Some("a".repeat(40)),
        branch: Some("main".into()),
        repository_url: None,
    });
    let recorder = RolloutRecorder::create(home.path(), header.clone()).unwrap();

    let mut kept = vec![turn_context("turn-1"), user("list files")];
    kept.extend(model_items().into_iter().map(RolloutItem::ResponseItem));
    kept.push(RolloutItem::EventMsg(EventMsg::TurnStarted));
    kept.push(RolloutItem::EventMsg(EventMsg::ItemCompleted {
        item: ThreadItem::AgentMessage {
            id: "m1".into(),
            text: "done".into(),
        },
    }));
    kept.push(RolloutItem::EventMsg(EventMsg::TokenCount {
        last: TokenUsage::default(),
        total: TokenUsage {
            input_tokens: 10,
            total_tokens: 12,
            ..TokenUsage::default()
        },
    }));
    kept.push(RolloutItem::Compacted(CompactedItem {
        message: "summary".into(),
        replacement_history: Some(vec![ResponseItem::user_text("list files")]),
    }));
    kept.push(assistant("after compaction"));
    let dropped = vec![
        RolloutItem::EventMsg(EventMsg::AgentMessageDelta {
            item_id: "m1".into(),
            delta: "do".into(),
        }),
        RolloutItem::EventMsg(EventMsg::ApprovalRequested(ApprovalRequest {
            id: "a".into(),
            call_id: "call_1".into(),
            kind: ApprovalRequestKind::Exec {
                command: vec!["rm".into()],
                escalation: false,
            },
            cwd: "/work".into(),
            reason: "why".into(),
            available_decisions: vec![],
            justification: None,
            proposed_execpolicy_amendment: None,
            sandbox_denial: None,
        })),
    ];
    recorder.record(kept[..3].to_vec());
    recorder.record(dropped);
    recorder.record(kept[3..].to_vec());
    recorder.flush().await.unwrap();

    // Visible on disk after flush, while the recorder still runs.
    let contents = read_rollout(recorder.path()).unwrap();
    assert_eq!(contents.warnings, Vec::<String>::new());
    assert_eq!(contents.meta, header);
    let items: Vec<RolloutItem> = contents.lines.iter().map(|l| l.item.clone()).collect();
    assert_eq!(items, kept);

    // Each response item's payload is exactly its serde_json form.
    let text = std::fs::read_to_string(recorder.path()).unwrap();
    for (line, record) in text.lines().skip(1).zip(&contents.lines) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["timestamp"].as_str(), Some(record.timestamp.as_str()));
        if let RolloutItem::ResponseItem(item) = &record.item {
            let expected = format!(
                r#"{{"timestamp":"{}","type":"response_item","payload":{}}}"#,
                record.timestamp,
                serde_json::to_string(item).unwrap()
            );
            assert_eq!(line, expected);
        }
    }
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(r#""type":"session_meta""#)
    );
    recorder.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_cut_off_last_line_is_a_warning_not_an_error() {
    let home = tempfile::tempdir().unwrap();
    let recorder = RolloutRecorder::create(home.path(), meta("/w")).unwrap();
    recorder.record(vec![user("one"), assistant("two")]);
    let path = recorder.path().to_path_buf();
    recorder.shutdown().await.unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"timestamp":"2025-01-01T00:00:00.000Z","type":"respo"#)
        .unwrap();

    let contents = read_rollout(&path).unwrap();
    assert_eq!(contents.lines.len(), 2);
    assert_eq!(contents.warnings.len(), 1, "{:?}", contents.warnings);
    assert!(
        contents.warnings[0].contains("incomplete"),
        "{:?}",
        contents.warnings
    );
    assert!(
        contents.warnings[0].contains(":4:"),
        "{:?}",
        contents.warnings
    );
}

#[tokio::test]
async fn resume_appends_to_the_same_file_with_the_same_id() {
    let home = tempfile::tempdir().unwrap();
    let header = meta("/w");
    let recorder = RolloutRecorder::create(home.path(), header.clone()).unwrap();
    recorder.record(vec![turn_context("turn-1"), user("first")]);
    let path = recorder.path().to_path_buf();
    recorder.shutdown().await.unwrap();
    // A crash left half a line behind.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"timestamp":"#).unwrap();

    let (recorder, contents) = RolloutRecorder::resume(&path).unwrap();
    assert_eq!(recorder.path(), path);
    assert_eq!(contents.meta.id, header.id);
    assert_eq!(contents.warnings.len(), 1);
    recorder.record(vec![turn_context("turn-2"), user("second")]);
    recorder.shutdown().await.unwrap();

    let contents = read_rollout(&path).unwrap();
    assert_eq!(contents.warnings, Vec::<String>::new());
    let items: Vec<RolloutItem> = contents.lines.into_iter().map(|l| l.item).collect();
    assert_eq!(
        items,
        vec![
            turn_context("turn-1"),
            user("first"),
            turn_context("turn-2"),
            user("second")
        ]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("session_meta").count(), 1);
    let count = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(
        count, 1,
        "only the rollout file remains (the lock file is removed)"
    );
}

/// Regression: a last record that was whole but had lost its newline was cut off on
/// resume (the reader kept it, the recorder truncated the file before it).
#[tokio::test]
async fn resume_keeps_a_whole_last_record_that_lost_its_newline() {
    let home = tempfile::tempdir().unwrap();
    let recorder = RolloutRecorder::create(home.path(), meta("/w")).unwrap();
    recorder.record(vec![
        turn_context("turn-1"),
        user("first"),
        assistant("kept"),
    ]);
    let path = recorder.path().to_path_buf();
    recorder.shutdown().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let without_newline = text.strip_suffix('\n').unwrap();
    std::fs::write(&path, without_newline).unwrap();

    let (recorder, contents) = RolloutRecorder::resume(&path).unwrap();
    assert_eq!(contents.warnings, Vec::<String>::new());
    assert_eq!(contents.lines.len(), 3);
    recorder.record(vec![user("second")]);
    recorder.shutdown().await.unwrap();

    let after = std::fs::read_to_string(&path).unwrap();
    assert!(
        after.starts_with(&text),
        "the old records stay byte for byte, newline restored:\n{after}"
    );
    let contents = read_rollout(&path).unwrap();
    assert_eq!(contents.warnings, Vec::<String>::new());
    let items: Vec<RolloutItem> = contents.lines.into_iter().map(|l| l.item).collect();
    assert_eq!(
        items,
        vec![
            turn_context("turn-1"),
            user("first"),
            assistant("kept"),
            user("second")
        ]
    );
}

#[tokio::test]
async fn resume_of_a_lone_header_without_its_newline_continues_the_thread() {
    let home = tempfile::tempdir().unwrap();
    let header = meta("/w");
    let recorder = RolloutRecorder::create(home.path(), header.clone()).unwrap();
    let path = recorder.path().to_path_buf();
    recorder.shutdown().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.trim_end()).unwrap();

    let (recorder, contents) = RolloutRecorder::resume(&path).unwrap();
    assert_eq!(contents.meta.id, header.id);
    recorder.record(vec![user("hello")]);
    recorder.shutdown().await.unwrap();
    let contents = read_rollout(&path).unwrap();
    assert_eq!(contents.warnings, Vec::<String>::new());
    let items: Vec<RolloutItem> = contents.lines.into_iter().map(|l| l.item).collect();
    assert_eq!(items, vec![user("hello")]);
}

#[tokio::test]
async fn resume_cuts_a_cut_off_line_and_trailing_blanks_but_keeps_the_record_before() {
    let home = tempfile::tempdir().unwrap();
    let recorder = RolloutRecorder::create(home.path(), meta("/w")).unwrap();
    recorder.record(vec![user("first")]);
    let path = recorder.path().to_path_buf();
    recorder.shutdown().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}   ")).unwrap();

    let (recorder, _) = RolloutRecorder::resume(&path).unwrap();
    recorder.record(vec![user("second")]);
    recorder.shutdown().await.unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    assert_eq!(after.lines().count(), 3, "{after}");
    assert!(
        after.starts_with(&text) && !after.contains("   "),
        "{after}"
    );
}

#[test]
fn creating_a_recorder_outside_a_runtime_is_an_error_not_a_panic() {
    let home = tempfile::tempdir().unwrap();
    let err = RolloutRecorder::create(home.path(), meta("/w")).unwrap_err();
    assert!(matches!(err, RolloutError::NoRuntime { .. }), "{err}");
}

#[tokio::test]
async fn resuming_a_file_that_is_not_a_rollout_names_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout-x.jsonl");
    std::fs::write(&path, "hello\n").unwrap();
    let err = RolloutRecorder::resume(&path).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("session_meta"), "{message}");
    assert!(message.contains("rollout-x.jsonl"), "{message}");
}
