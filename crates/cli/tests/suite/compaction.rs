//! Compaction: automatic past the token limit, on a context-window error, and on resume.

use super::common::*;
use osprey_test_support::*;
use serde_json::Value;

fn summary(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("sum", text)])
}

fn has_text(input: &[Value], needle: &str) -> bool {
    input.iter().any(|i| {
        i["content"].as_array().is_some_and(|c| {
            c.iter()
                .any(|p| p["text"].as_str().is_some_and(|t| t.contains(needle)))
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_usage_compacts_before_the_next_request_and_resume_uses_the_compacted_history() {
    let server = MockModelServer::start(vec![
        MockResponse::Sse(vec![
            ev_response_created("r1"),
            ev_assistant_message("m0", "OLD ANSWER"),
            ev_function_call("call_1", "no_such_tool", "{}"),
            ev_completed_with_usage("r1", 5000, 0, 100, 0),
        ]),
        summary("HANDOFF NOTE"),
        sse_turn(vec![ev_assistant_message("m1", "finished")]),
        sse_turn(vec![ev_assistant_message("m2", "resumed")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("model_auto_compact_token_limit = 1000\n");
    let repo = temp_git_repo();
    let out = osprey_async(
        &home,
        repo.path(),
        &[
            "exec",
            "--json",
            "-c",
            "base_instructions=\"BASE\"",
            "big task",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let requests = server.requests();
    assert!(
        requests[1].tool_names().is_empty(),
        "the compaction request offers no tools"
    );
    let after = requests[2].input();
    assert_eq!(
        after[0]["content"][0]["text"], "BASE",
        "base instructions untouched"
    );
    assert!(has_text(after, "HANDOFF NOTE"));
    assert!(has_text(after, "big task"), "recent user messages are kept");
    assert!(!has_text(after, "OLD ANSWER"), "the old answer is gone");
    assert!(!after.iter().any(|i| i["type"] == "function_call"));

    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "go on"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let resumed = server.requests()[3].input().to_vec();
    assert!(has_text(&resumed, "HANDOFF NOTE"));
    assert!(
        !has_text(&resumed, "OLD ANSWER"),
        "resume rebuilds the compacted history"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_window_error_compacts_once_and_retries() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m0", "first answer")]),
        MockResponse::Sse(vec![
            ev_response_created("r"),
            ev_failed("context_length_exceeded", "too long"),
        ]),
        summary("NOTE"),
        sse_turn(vec![ev_assistant_message("m1", "fits now")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "one"], "").await;
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "two"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "fits now\n");
    let retry = server.requests()[3].input().to_vec();
    assert!(has_text(&retry, "NOTE"));
    assert!(has_text(&retry, "two"));
    server.verify();
}

fn big_output_call(id: &str) -> SseEvent {
    let cmd = "head -c 20000 /dev/zero | tr '\\0' x";
    ev_function_call(
        id,
        "exec_command",
        &serde_json::json!({"cmd": cmd, "login": false}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflowing_request_is_compacted_from_a_trimmed_history_and_the_thread_resumes() {
    // Regression: the compaction request used to re-send the very history that overflowed,
    // so a real provider refused it too and the session was stuck for good.
    const WINDOW: usize = 45_000;
    let options = ServerOptions {
        max_body_bytes: Some(WINDOW),
        ..ServerOptions::default()
    };
    let server = MockModelServer::start_with(
        vec![
            sse_turn(vec![big_output_call("c1")]),
            sse_turn(vec![ev_assistant_message("m1", "first done")]),
            sse_turn(vec![big_output_call("c2")]),
            // The next request (two 20 KB outputs) is refused by the window, unscripted.
            summary("THE NOTE"),
            sse_turn(vec![ev_assistant_message("m2", "fits now")]),
            sse_turn(vec![ev_assistant_message("m3", "resumed fine")]),
        ],
        options,
    )
    .await
    .unwrap();
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "one"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "two"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "fits now\n");
    assert_eq!(
        server.rejected().len(),
        1,
        "only the first overflow was refused"
    );

    let requests = server.requests();
    let summarising = requests
        .iter()
        .find(|r| has_text(r.input(), "handoff") || r.tool_names().is_empty())
        .expect("a summarising request");
    let size = summarising.body.to_string().len();
    assert!(size <= WINDOW, "the summarising request fits: {size} bytes");
    let retried = requests
        .iter()
        .rev()
        .find(|r| has_text(r.input(), "THE NOTE"))
        .unwrap();
    assert!(has_text(retried.input(), "two"));

    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "three"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "resumed fine\n");
    let last = server.requests().last().unwrap().input().to_vec();
    assert!(
        has_text(&last, "THE NOTE"),
        "resume continues from the compacted history"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_summary_never_replaces_the_history() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m0", "KEEP ME")]),
        MockResponse::Sse(vec![
            ev_response_created("r"),
            ev_failed("context_length_exceeded", "too long"),
        ]),
        summary("   "),
        sse_turn(vec![ev_assistant_message("m1", "still here")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "one"], "").await;
    let id = jsonl(&out)[0]["thread_id"].as_str().unwrap().to_string();
    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "two"], "").await;
    assert!(
        !out.status.success(),
        "the turn fails: nothing fits and no summary came"
    );
    assert!(stderr(&out).contains("empty summary"), "{}", stderr(&out));
    let out = osprey_async(&home, repo.path(), &["exec", "resume", &id, "three"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let last = server.requests().last().unwrap().input().to_vec();
    assert!(has_text(&last, "KEEP ME"), "the history was kept");
    server.verify();
}
