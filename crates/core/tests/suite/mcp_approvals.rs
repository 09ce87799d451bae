//! MCP tool approvals through the one approval engine: per-tool modes from config, and
//! "approve for this session" covering later calls to the same tool. Against the reference
//! server-everything (npm).

use super::harness::*;
use osprey_protocol::{ApprovalRequestKind, EventMsg, ReviewDecision};
use osprey_test_support::*;
use serde_json::{Value, json};

fn everything() -> Option<String> {
    match std::env::var("OSPREY_MCP_EVERYTHING") {
        Ok(path) if !path.is_empty() => Some(path),
        _ if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") => {
            panic!("OSPREY_MCP_EVERYTHING is not set; run scripts/install-test-deps.sh")
        }
        _ => {
            eprintln!("skipping: OSPREY_MCP_EVERYTHING is not set");
            None
        }
    }
}

fn mcp_call(call_id: &str, tool: &str, args: Value) -> SseEvent {
    ev_output_item_done(json!({
        "type": "function_call", "id": format!("fc_{call_id}"), "status": "completed",
        "namespace": "mcp__everything", "name": tool, "call_id": call_id,
        "arguments": args.to_string(),
    }))
}

fn home_with(server: &MockModelServer, everything: &str, approval: &str, extra: &str) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    let path = everything.replace('\\', "\\\\").replace('"', "\\\"");
    home.write_config(&format!(
        "approval_policy = \"{approval}\"\n\
         [mcp_servers.everything]\ncommand = \"node\"\nargs = [\"{path}\"]\nstartup_timeout_sec = 30\n{extra}"
    ));
    home
}

fn approved_tools(events: &[osprey_protocol::Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ApprovalRequested(request) => match &request.kind {
                ApprovalRequestKind::McpTool { tool, .. } => Some(tool.clone()),
                other => panic!("only MCP approvals expected, got {other:?}"),
            },
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_tool_asks_once_per_session_and_other_tools_do_not_ask() {
    let Some(everything) = everything() else {
        return;
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![mcp_call("c1", "echo", json!({"message": "first"}))]),
        sse_turn(vec![mcp_call("c2", "echo", json!({"message": "second"}))]),
        sse_turn(vec![mcp_call("c3", "get_tiny_image", Value::Null)]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = home_with(
        &server,
        &everything,
        "on-request",
        "[mcp_servers.everything.tools.echo]\napproval_mode = \"prompt\"\n",
    );
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "echo", vec![ReviewDecision::ApprovedForSession]).await;
    assert_eq!(
        approved_tools(&events),
        ["echo"],
        "asked once, for echo only"
    );
    let requests = server.requests();
    assert!(requests[1].output_for("c1").unwrap().contains("first"));
    assert!(requests[2].output_for("c2").unwrap().contains("second"));
    assert!(requests[3].output_for("c3").is_some());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_tool_is_not_called_and_an_approve_tool_never_asks() {
    let Some(everything) = everything() else {
        return;
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![mcp_call("c1", "echo", json!({"message": "trusted"}))]),
        sse_turn(vec![mcp_call("c2", "get_tiny_image", Value::Null)]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    // Under `untrusted` every MCP call asks, except the tools the user marked `approve`.
    let home = home_with(
        &server,
        &everything,
        "untrusted",
        "[mcp_servers.everything.tools.echo]\napproval_mode = \"approve\"\n",
    );
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "go", vec![ReviewDecision::Denied]).await;
    assert_eq!(
        approved_tools(&events),
        ["get-tiny-image"],
        "the server's own name"
    );
    let requests = server.requests();
    assert!(requests[1].output_for("c1").unwrap().contains("trusted"));
    let declined = requests[2].output_for("c2").unwrap();
    assert!(declined.contains("declined"), "{declined}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_mcp_result_reaches_the_model_cut_to_the_output_budget() {
    let Some(everything) = everything() else {
        return;
    };
    let huge = format!("START{}END", "y".repeat(120_000));
    let server = MockModelServer::start(vec![
        sse_turn(vec![mcp_call("c1", "echo", json!({"message": huge}))]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = home_with(&server, &everything, "never", "");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    run_turn(&thread, "echo it", vec![]).await;
    let output = server.requests()[1].output_for("c1").unwrap();
    assert!(
        output.len() < 60_000,
        "{} bytes reached the model",
        output.len()
    );
    assert!(
        output.contains("START") && output.contains("END"),
        "head and tail kept"
    );
    assert!(output.contains("tokens truncated"));
    server.verify();
}
