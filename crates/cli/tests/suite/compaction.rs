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
