//! Differential: rollout files written by the published Codex CLI are read, listed, rebuilt
//! and resumed by this crate. Needs `OSPREY_CODEX_BIN`; without it the test is skipped with a
//! note, unless `OSPREY_REQUIRE_REFERENCE=1`.

use osprey_rollout::{
    ListOptions, RolloutItem, RolloutLine, RolloutRecorder, SessionSource, find_rollout_by_id,
    list_sessions, read_rollout,
};
use osprey_test_support::{
    MockModelServer, TEST_API_KEY, TempHome, WireApi, ev_assistant_message, ev_reasoning_item,
    sse_turn,
};
use pretty_assertions::assert_eq;
use std::path::PathBuf;

#[expect(clippy::print_stderr, reason = "a skipped differential test says so")]
fn reference_bin() -> Option<PathBuf> {
    match std::env::var_os("OSPREY_CODEX_BIN") {
        Some(bin) => Some(PathBuf::from(bin)),
        None if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") => {
            panic!("OSPREY_REQUIRE_REFERENCE=1 but OSPREY_CODEX_BIN is not set")
        }
        None => {
            eprintln!(
                "skipped: set OSPREY_CODEX_BIN (eval \"$(bash scripts/install-test-deps.sh)\") \
                 to compare with Codex's rollout files"
            );
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::disallowed_methods,
    reason = "runs the reference Codex binary, which is not ours to spawn through `process`"
)]
async fn rollouts_written_by_codex_are_read_listed_rebuilt_and_resumed() {
    let Some(codex) = reference_bin() else {
        return;
    };
    let server = MockModelServer::start(vec![sse_turn(vec![
        ev_reasoning_item("rs_1", &["Saying hello."], Some("gAAAAopaque==")),
        ev_assistant_message("msg_1", "Hello from the mock."),
    ])])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path().canonicalize().unwrap();
    let mut command = std::process::Command::new(&codex);
    command
        .args(["exec", "--skip-git-repo-check", "--cd"])
        .arg(&cwd)
        .arg("say hello")
        .env("CODEX_HOME", home.path())
        .env(TempHome::API_KEY_ENV, TEST_API_KEY)
        .env("NO_COLOR", "1");
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        output.status.success(),
        "codex exec failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let request = server.single_request();

    let listed = list_sessions(home.path(), &ListOptions::default()).unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let summary = &listed[0];
    assert_eq!(summary.first_user_message.as_deref(), Some("say hello"));
    assert_eq!(summary.cwd, cwd);
    assert_eq!(
        find_rollout_by_id(home.path(), &summary.id).unwrap(),
        Some(summary.path.clone())
    );

    let contents = read_rollout(&summary.path).unwrap();
    assert_eq!(contents.meta.id, summary.id);
    assert_eq!(contents.meta.cli_version, "0.171.0");
    assert_eq!(contents.meta.source, SessionSource::Exec);
    assert!(contents.meta.base_instructions.is_some());
    // Codex's own events and newer record types are skipped quietly; nothing is damaged.
    assert_eq!(contents.warnings, Vec::<String>::new());
    assert!(contents.unrecognized_records > 0);
    assert!(contents.last_turn_context().is_some());

    // Every response item Codex recorded survives our parse and re-encoding unchanged,
    // fields we do not model included.
    let text = std::fs::read_to_string(&summary.path).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let mut raw: serde_json::Value = serde_json::from_str(line).unwrap();
        if raw["type"] != "response_item" {
            continue;
        }
        // Known difference: osprey-protocol leaves out an optional field that is null (Codex
        // writes `"content":null` in reasoning items); the API reads both the same.
        if let Some(payload) = raw["payload"].as_object_mut() {
            payload.retain(|_, value| !value.is_null());
        }
        let ours = RolloutLine::parse(line).unwrap().to_json().unwrap();
        let ours: serde_json::Value = serde_json::from_str(&ours).unwrap();
        assert_eq!(ours, raw);
        checked += 1;
    }
    assert!(checked >= 4, "{text}");

    // The rebuilt history holds the prompt as sent and then the model's output as received.
    // (Codex 0.171 adds context items at send time from its own `world_state` records, so
    // only the prompt is compared with the request.)
    let history: Vec<serde_json::Value> = contents
        .reconstruct_history()
        .iter()
        .map(|item| serde_json::to_value(item).unwrap())
        .collect();
    let [.., prompt, reasoning, answer] = history.as_slice() else {
        panic!("history too short: {history:#?}");
    };
    let mut prompt = prompt.clone();
    if let Some(fields) = prompt.as_object_mut() {
        fields.retain(|key, _| !key.starts_with("internal_"));
    }
    assert_eq!(Some(&prompt), request.input().last());
    assert_eq!(reasoning["encrypted_content"], "gAAAAopaque==");
    assert_eq!(answer["id"], "msg_1");

    // Our recorder appends to Codex's file, and both halves read back.
    let before = contents.lines.len();
    let (recorder, _) = RolloutRecorder::resume(&summary.path).unwrap();
    recorder.record(vec![RolloutItem::ResponseItem(
        osprey_protocol::ResponseItem::user_text("and goodbye"),
    )]);
    recorder.shutdown().await.unwrap();
    let resumed = read_rollout(&summary.path).unwrap();
    assert_eq!(resumed.lines.len(), before + 1);
    // Codex numbers the records of its threads (header 0); the appended record continues.
    let physical = std::fs::read_to_string(&summary.path)
        .unwrap()
        .lines()
        .count() as u64;
    if contents.lines.iter().any(|line| line.ordinal.is_some()) {
        assert_eq!(resumed.lines.last().unwrap().ordinal, Some(physical - 1));
    }
    server.verify();
}
