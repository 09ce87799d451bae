//! Whole turns through `osprey exec`: events, request shape, tool-call plumbing.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_turn_emits_codex_shaped_jsonl_and_a_full_request() {
    let server = MockModelServer::start(vec![MockResponse::Sse(vec![
        ev_response_created("resp_1"),
        ev_assistant_message("msg_1", "Hello from the mock."),
        ev_completed_with_usage("resp_1", 120, 20, 7, 0),
    ])])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "say hello"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = jsonl(&out);
    assert_eq!(
        event_types(&events),
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "turn.completed"
        ]
    );
    let thread_id = events[0]["thread_id"].as_str().unwrap().to_string();
    assert_eq!(
        events[2]["item"],
        json!({"id": "item_0", "type": "agent_message", "text": "Hello from the mock."})
    );
    assert_eq!(
        events[3]["usage"],
        json!({"input_tokens": 120, "cached_input_tokens": 20, "cache_write_input_tokens": 0,
               "output_tokens": 7, "reasoning_output_tokens": 0})
    );

    let request = server.single_request();
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.header("authorization"), Some("Bearer test-key"));
    let body = &request.body;
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["stream"], true);
    assert_eq!(body["store"], false);
    assert_eq!(body["parallel_tool_calls"], true);
    assert_eq!(body["prompt_cache_key"], thread_id.as_str());
    let input = request.input();
    assert_eq!(
        input[0]["role"], "developer",
        "base instructions come first"
    );
    assert!(
        input[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Osprey")
    );
    assert_eq!(
        input[1]["role"], "developer",
        "then the permissions message"
    );
    assert!(
        input[2]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("<environment_context>")
    );
    assert_eq!(input.last().unwrap()["content"][0]["text"], "say hello");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn human_mode_prints_only_the_final_message_on_stdout() {
    let server = MockModelServer::start(vec![sse_turn(vec![ev_assistant_message(
        "msg_1",
        "The answer is 42.",
    )])])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let last = repo.path().join("last.txt");
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "-o", last.to_str().unwrap(), "what is the answer?"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "The answer is 42.\n");
    let err = stderr(&out);
    assert!(
        err.contains("what is the answer?"),
        "transcript shows the prompt: {err}"
    );
    assert!(
        err.contains("model: mock-model"),
        "transcript header: {err}"
    );
    assert!(!err.contains("\x1b["), "NO_COLOR is honoured");
    assert_eq!(std::fs::read_to_string(last).unwrap(), "The answer is 42.");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_from_stdin_and_appended_stdin_block() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m1", "ok")]),
        sse_turn(vec![ev_assistant_message("m2", "ok")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "-"], "task from stdin\n").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let out = osprey_async(&home, repo.path(), &["exec", "summarise"], "log line 1\n").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    assert_eq!(
        requests[0].user_texts().last().unwrap(),
        "task from stdin\n"
    );
    assert_eq!(
        requests[1].user_texts().last().unwrap(),
        "summarise\n\n<stdin>\nlog line 1\n</stdin>"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tool_gets_a_failed_output_and_the_turn_goes_on() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call("call_1", "no_such_tool", "{}")]),
        sse_turn(vec![ev_assistant_message(
            "m1",
            "I could not use that tool.",
        )]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "try it"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].output_for("call_1").as_deref(),
        Some("unsupported call: no_such_tool")
    );
    // The model's call is sent back exactly as received, before its output.
    let input = requests[1].input();
    let call = input.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["call_id"], "call_1");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_items_round_trip_untouched() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![
            ev_reasoning_item("rs_1", &["Thinking about it."], Some("ENCRYPTED==")),
            ev_function_call("call_1", "nope", "{}"),
        ]),
        sse_turn(vec![ev_assistant_message("m1", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "think"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = jsonl(&out);
    assert!(
        events
            .iter()
            .any(|e| e["item"]["type"] == "reasoning" && e["item"]["text"] == "Thinking about it.")
    );
    let second = &server.requests()[1];
    let reasoning = second
        .input()
        .iter()
        .find(|i| i["type"] == "reasoning")
        .unwrap();
    assert_eq!(reasoning["encrypted_content"], "ENCRYPTED==");
    assert_eq!(reasoning["id"], "rs_1");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completions_provider_runs_a_turn() {
    let server = MockModelServer::start(vec![
        MockResponse::ChatSse(chat_tool_call_chunks(&[(
            "call_9",
            "missing_tool",
            "{\"a\":1}",
        )])),
        MockResponse::ChatSse(chat_text_chunks("All done via chat.")),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Chat);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "hi"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "All done via chat.\n");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let messages = requests[1].messages();
    let tool_msg = messages.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(tool_msg["tool_call_id"], "call_9");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_schema_is_sent_as_a_json_schema_text_format() {
    let server = MockModelServer::start(vec![sse_turn(vec![ev_assistant_message(
        "m",
        "{\"ok\":true}",
    )])])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let schema = repo.path().join("schema.json");
    std::fs::write(
        &schema,
        r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}"#,
    )
    .unwrap();
    let out = osprey_async(
        &home,
        repo.path(),
        &[
            "exec",
            "--output-schema",
            schema.to_str().unwrap(),
            "answer",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let body = server.single_request().body;
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(body["text"]["format"]["strict"], true);
    assert_eq!(body["text"]["format"]["schema"]["required"][0], "ok");
    server.verify();
}

/// A 1×1 PNG.
const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_flag_attaches_an_input_image() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "a dot")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    std::fs::write(repo.path().join("dot.png"), TINY_PNG).unwrap();
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "--image", "dot.png", "what is this?"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let request = server.single_request();
    let last = request.input().last().unwrap().clone();
    // The labelled image comes first, then the prompt (see exec_images.rs for the form).
    assert_eq!(last["content"][3]["text"], "what is this?");
    assert_eq!(last["content"][1]["type"], "input_image");
    assert!(
        last["content"][1]["image_url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_reaches_the_model_before_the_environment() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    std::fs::write(repo.path().join("AGENTS.md"), "Always run `make check`.").unwrap();
    let out = osprey_async(&home, repo.path(), &["exec", "hi"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let request = server.single_request();
    let texts = request.user_texts();
    let doc = texts
        .iter()
        .position(|t| t.starts_with("# AGENTS.md instructions for"))
        .unwrap();
    let env = texts
        .iter()
        .position(|t| t.starts_with("<environment_context>"))
        .unwrap();
    assert!(doc < env);
    assert!(texts[doc].contains("<INSTRUCTIONS>\nAlways run `make check`.\n</INSTRUCTIONS>"));
    server.verify();
}
