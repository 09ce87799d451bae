//! `osprey exec resume` continues a thread with the settings it ran with: provider, model,
//! reasoning effort, sandbox, approval policy and working directory come from its rollout
//! (the `session_meta` and the last `turn_context`), unless the command line chooses them.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("m", text)])
}

/// The transcript's settings block, as `(key, value)` pairs in order.
fn header(stderr: &str) -> Vec<(String, String)> {
    let keys = ["workdir", "model", "provider", "approval", "sandbox"];
    stderr
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(": ")?;
            keys.contains(&key)
                .then(|| (key.to_string(), value.to_string()))
        })
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A home whose default provider is `mock` at `default`, with a second provider `other`
/// at `other`.
fn home_with_two_providers(default: &MockModelServer, other: &MockModelServer) -> TempHome {
    let home = TempHome::for_server(default, WireApi::Responses);
    home.write_config(&format!(
        "[model_providers.other]\n\
         name = \"Other\"\n\
         base_url = \"{}\"\n\
         env_key = \"{}\"\n\
         wire_api = \"responses\"\n\
         request_max_retries = 0\n\
         stream_max_retries = 0\n",
        other.base_url(),
        TempHome::API_KEY_ENV
    ));
    home
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_restores_provider_model_effort_sandbox_approval_and_cwd() {
    // Nothing may reach the configured default provider: the thread ran on `other`.
    let default = MockModelServer::start(vec![]).await;
    let other = MockModelServer::start(vec![
        answer("started"),
        sse_turn(vec![ev_function_call(
            "call_1",
            "exec_command",
            &json!({"cmd": "echo resumed > resumed.txt"}).to_string(),
        )]),
        answer("wrote it"),
        answer("read-only now"),
    ])
    .await;
    let home = home_with_two_providers(&default, &other);
    let repo = temp_git_repo();
    let repo_dir = repo.path().canonicalize().unwrap();
    let out = osprey_async(
        &home,
        &repo_dir,
        &[
            "exec",
            "--json",
            "-c",
            "model_provider=\"other\"",
            "-m",
            "recorded-model",
            "-s",
            "workspace-write",
            "-c",
            "approval_policy=\"never\"",
            "-c",
            "model_reasoning_effort=\"high\"",
            "start",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();

    // Resumed from another directory, outside any repository, with no flags at all.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = osprey_async(
        &home,
        elsewhere.path(),
        &["exec", "resume", &id, "write it"],
        "",
    )
    .await;
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert_eq!(
        header(&err),
        pairs(&[
            ("workdir", &repo_dir.display().to_string()),
            ("model", "recorded-model"),
            ("provider", "other"),
            ("approval", "never"),
            ("sandbox", "workspace-write"),
        ])
    );
    assert_eq!(
        std::fs::read_to_string(repo_dir.join("resumed.txt")).unwrap(),
        "resumed\n",
        "the workspace-write sandbox came back: the write succeeded"
    );
    let requests = other.requests();
    for request in &requests[1..3] {
        assert_eq!(request.body["model"], "recorded-model");
        assert_eq!(request.body["reasoning"]["effort"], "high");
    }

    // Flags still win, setting by setting; what they do not name stays as recorded.
    let out = osprey_async(
        &home,
        &repo_dir,
        &[
            "exec",
            "-m",
            "override-model",
            "-s",
            "read-only",
            "resume",
            &id,
            "again",
        ],
        "",
    )
    .await;
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");
    assert_eq!(
        header(&err),
        pairs(&[
            ("workdir", &repo_dir.display().to_string()),
            ("model", "override-model"),
            ("provider", "other"),
            ("approval", "never"),
            ("sandbox", "read-only"),
        ])
    );
    let last = other.requests().last().unwrap().body.clone();
    assert_eq!(last["model"], "override-model");
    // A new model drops the recorded effort (it belonged to the old model).
    assert!(
        last.get("reasoning")
            .is_none_or(|r| r.get("effort").is_none()),
        "{last}"
    );
    other.verify();
    default.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_last_keeps_workspace_write_without_flags() {
    let server = MockModelServer::start(vec![
        answer("started"),
        sse_turn(vec![ev_function_call(
            "call_1",
            "exec_command",
            &json!({"cmd": "echo again > again.txt"}).to_string(),
        )]),
        answer("done"),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "-s", "workspace-write", "-m", "model-x", "start"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "resume", "--last", "write"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("again.txt")).unwrap(),
        "again\n"
    );
    assert_eq!(server.requests()[1].body["model"], "model-x");
    server.verify();
}
