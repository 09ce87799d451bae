//! Session files end to end: resume, fork, ephemeral, listing, crashes and locks.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::PathBuf;

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("m", text)])
}

fn thread_id(events: &[Value]) -> String {
    events[0]["thread_id"].as_str().unwrap().to_string()
}

fn session_files(home: &TempHome) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![home.path().join("sessions")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl")
                && path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("rollout-")
            {
                files.push(path);
            }
        }
    }
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_keeps_id_cache_key_history_and_base_instructions_across_models() {
    let server =
        MockModelServer::start(vec![answer("first answer"), answer("second answer")]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(
        &home,
        repo.path(),
        &[
            "exec",
            "--json",
            "-c",
            "base_instructions=\"ORIGINAL RULES\"",
            "first",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let id = thread_id(&jsonl(&out));
    let out = osprey_async(
        &home,
        repo.path(),
        &[
            "exec",
            "--json",
            "-m",
            "other-model",
            "resume",
            &id,
            "second",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(thread_id(&jsonl(&out)), id, "same thread id");
    let requests = server.requests();
    let (first, second) = (&requests[0].body, &requests[1].body);
    assert_eq!(second["model"], "other-model");
    assert_eq!(second["prompt_cache_key"], first["prompt_cache_key"]);
    assert_eq!(second["input"][0]["content"][0]["text"], "ORIGINAL RULES");
    let texts = requests[1].user_texts();
    assert!(texts.contains(&"first".to_string()) && texts.contains(&"second".to_string()));
    let first_input = first["input"].as_array().unwrap();
    let second_input = second["input"].as_array().unwrap();
    assert_eq!(
        &second_input[..first_input.len()],
        &first_input[..],
        "history is replayed exactly"
    );
    assert_eq!(
        session_files(&home).len(),
        1,
        "resume appends to the same file"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_last_and_fork_at_a_turn() {
    let server = MockModelServer::start(vec![answer("one"), answer("two"), answer("forked")]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "turn one"], "").await;
    let id = thread_id(&jsonl(&out));
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "--json", "resume", "--last", "turn two"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(thread_id(&jsonl(&out)), id);
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "--json", "fork", &id, "--at", "1", "turn three"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_ne!(thread_id(&jsonl(&out)), id, "a fork is a new thread");
    let texts = server.requests()[2].user_texts();
    assert!(texts.contains(&"turn one".to_string()));
    assert!(
        !texts.contains(&"turn two".to_string()),
        "turn two was cut: {texts:?}"
    );
    assert!(texts.contains(&"turn three".to_string()));
    assert_eq!(session_files(&home).len(), 2);
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ephemeral_writes_nothing() {
    let server = MockModelServer::start(vec![answer("ok")]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--ephemeral", "hi"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(session_files(&home).is_empty());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_shows_newest_first_and_a_copied_file_works_in_an_empty_home() {
    let server = MockModelServer::start(vec![answer("a"), answer("b"), answer("c")]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let first = thread_id(&jsonl(
        &osprey_async(&home, repo.path(), &["exec", "--json", "older task"], "").await,
    ));
    let second = thread_id(&jsonl(
        &osprey_async(&home, repo.path(), &["exec", "--json", "newer task"], "").await,
    ));
    let out = osprey(&home, repo.path(), &["sessions", "list", "--json"], "");
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [second.as_str(), first.as_str()]);
    assert_eq!(list[0]["first_user_message"], "newer task");

    // Copy one file alone into an empty home: listed and resumable there.
    let other = TempHome::for_server(&server, WireApi::Responses);
    let file = session_files(&home)
        .into_iter()
        .find(|p| p.to_string_lossy().contains(&first))
        .unwrap();
    let rel = file.strip_prefix(home.path()).unwrap();
    std::fs::create_dir_all(other.path().join(rel).parent().unwrap()).unwrap();
    std::fs::copy(&file, other.path().join(rel)).unwrap();
    let out = osprey(&other, repo.path(), &["sessions", "list", "--json"], "");
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["id"], first.as_str());
    let out = osprey_async(
        &other,
        repo.path(),
        &["exec", "--json", "resume", &first, "more"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        server.requests()[2]
            .user_texts()
            .contains(&"older task".to_string())
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_last_line_is_tolerated_and_reported() {
    let server = MockModelServer::start(vec![answer("a"), answer("b")]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let id = thread_id(&jsonl(
        &osprey_async(&home, repo.path(), &["exec", "--json", "task"], "").await,
    ));
    let file = session_files(&home).pop().unwrap();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"type\":\"response_it");
    std::fs::write(&file, text).unwrap();
    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "again"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("warning"),
        "the cut line is reported: {}",
        stderr(&out)
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_resume_is_refused_and_unknown_ids_are_clear() {
    let server = MockModelServer::start(vec![
        answer("a"),
        MockResponse::Hang(vec![ev_response_created("r")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.set_provider_option("stream_idle_timeout_ms", "20000");
    let repo = temp_git_repo();
    let id = thread_id(&jsonl(
        &osprey_async(&home, repo.path(), &["exec", "--json", "task"], "").await,
    ));
    // The first resume holds the session while its stream hangs.
    #[expect(
        clippy::disallowed_methods,
        reason = "the test holds a session open in a child"
    )]
    let mut holder = std::process::Command::new(assert_cmd::cargo::cargo_bin("osprey"));
    holder
        .current_dir(repo.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(home.env())
        .args(["exec", "resume", &id, "hold it"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = holder.spawn().unwrap();
    server.wait_for_requests(2).await;
    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "me too"], "").await;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).to_lowercase().contains("in use") || stderr(&out).contains("lock"),
        "{}",
        stderr(&out)
    );
    let out = osprey(
        &home,
        repo.path(),
        &[
            "exec",
            "resume",
            "0199a000-0000-7000-8000-000000000000",
            "x",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no session with id"),
        "{}",
        stderr(&out)
    );
    server.verify_allow_unused();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_turn_loses_nothing_written_before_it() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_1",
            "exec_command",
            &json!({"cmd": "touch started.marker; sleep 60"}).to_string(),
        )]),
        answer("resumed fine"),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("sandbox_mode = \"workspace-write\"\n");
    let repo = temp_git_repo();
    let marker = repo.path().join("started.marker");
    #[expect(
        clippy::disallowed_methods,
        reason = "the test kills the process it spawns"
    )]
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("osprey"));
    cmd.current_dir(repo.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("SHELL", "/bin/bash")
        .envs(home.env())
        .args(["exec", "--json", "crash me"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !marker.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL
    let output = child.wait_with_output().unwrap();
    let first_line = String::from_utf8_lossy(&output.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let id = serde_json::from_str::<Value>(&first_line).unwrap()["thread_id"]
        .as_str()
        .unwrap()
        .to_string();

    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "--json", "resume", &id, "continue"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let request = &server.requests()[1];
    assert!(request.user_texts().contains(&"crash me".to_string()));
    let call = request
        .input()
        .iter()
        .find(|i| i["type"] == "function_call")
        .expect("the call survived");
    assert_eq!(call["call_id"], "call_1");
    assert!(
        request.output_for("call_1").unwrap().starts_with("aborted"),
        "the lost call is closed"
    );
    server.verify();
}
