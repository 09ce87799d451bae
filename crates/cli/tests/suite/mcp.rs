//! MCP servers end to end: the reference server-everything over stdio, driven by the model
//! through `osprey exec`.

use super::common::*;
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

fn namespaced_call(call_id: &str, tool: &str, args: Value) -> SseEvent {
    ev_output_item_done(json!({
        "type": "function_call", "id": format!("fc_{call_id}"), "status": "completed",
        "namespace": "mcp__everything", "name": tool, "call_id": call_id,
        "arguments": args.to_string(),
    }))
}

fn home_with_servers(server: &MockModelServer, everything: &str, extra: &str) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config(&format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}]\nstartup_timeout_sec = 30\n{extra}",
        toml_string(everything)
    ));
    home
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_calls_mcp_tools_and_sees_their_images() {
    let Some(everything) = everything() else {
        return;
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![
            namespaced_call("c1", "echo", json!({"message": "hello mcp"})),
            namespaced_call("c2", "get_tiny_image", Value::Null),
        ]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = home_with_servers(&server, &everything, "");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "use the tools"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let tools = requests[0].body["tools"].as_array().unwrap().clone();
    let namespace = tools
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == "mcp__everything")
        .expect("the server's tools are offered as a namespace from the first request");
    assert!(
        namespace["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "echo")
    );
    let second = &requests[1];
    assert!(second.output_for("c1").unwrap().contains("hello mcp"));
    let image_output = second
        .input()
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == "c2")
        .unwrap()
        .clone();
    let parts = image_output["output"].as_array().expect("content parts");
    assert!(
        parts.iter().any(|p| p["type"] == "input_image"
            && p["image_url"].as_str().unwrap().starts_with("data:image/")),
        "the image reaches the model as an input image: {image_output}"
    );
    let events = jsonl(&out);
    let calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "mcp_tool_call")
        .map(|e| &e["item"])
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["server"], "everything");
    assert_eq!(calls[0]["tool"], "echo");
    assert_eq!(calls[0]["status"], "completed");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_servers_are_reported_and_the_rest_keep_working() {
    let Some(everything) = everything() else {
        return;
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![namespaced_call(
            "c1",
            "echo",
            json!({"message": "still here"}),
        )]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = home_with_servers(
        &server,
        &everything,
        "[mcp_servers.crashes]\ncommand = \"sh\"\nargs = [\"-c\", \"echo boom >&2; exit 3\"]\n\
         [mcp_servers.silent]\ncommand = \"sleep\"\nargs = [\"100\"]\nstartup_timeout_sec = 1\n",
    );
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "go"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = jsonl(&out);
    let errors: Vec<String> = events
        .iter()
        .filter(|e| e["item"]["type"] == "error")
        .map(|e| e["item"]["message"].as_str().unwrap().to_string())
        .collect();
    assert!(errors.iter().any(|m| m.contains("crashes")), "{errors:?}");
    assert!(errors.iter().any(|m| m.contains("silent")), "{errors:?}");
    assert!(
        server.requests()[1]
            .output_for("c1")
            .unwrap()
            .contains("still here")
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn osprey_mcp_server_serves_the_python_sdk_client() {
    let python = match std::env::var("OSPREY_PY_MCP") {
        Ok(p) if !p.is_empty() => p,
        _ if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") => {
            panic!("OSPREY_PY_MCP is not set; run scripts/install-test-deps.sh")
        }
        _ => return,
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_assistant_message("m1", "First answer.")]),
        sse_turn(vec![ev_assistant_message("m2", "Second answer.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let cwd = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp-server/tests/python/client.py");
    let osprey = assert_cmd::cargo::cargo_bin("osprey");
    let env: Vec<(String, std::ffi::OsString)> = home
        .env()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let cwd_path = cwd.path().to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        #[expect(
            clippy::disallowed_methods,
            reason = "the test runs the Python MCP client"
        )]
        let mut cmd = std::process::Command::new(python);
        cmd.arg(script)
            .arg(osprey)
            .arg("conversation")
            .arg(&cwd_path)
            .envs(env)
            .env("OSPREY_MCP_SERVER_ARGS", "mcp-server");
        cmd.output().unwrap()
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "client failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    let result: Value =
        serde_json::from_str(stdout(&output).trim().lines().last().unwrap()).unwrap();
    assert_eq!(result["first"]["structured"]["content"], "First answer.");
    assert_eq!(result["second"]["structured"]["content"], "Second answer.");
    assert_eq!(
        result["first"]["structured"]["threadId"],
        result["second"]["structured"]["threadId"]
    );
    let texts = server.requests()[1].user_texts();
    assert!(
        texts.len() >= 2,
        "the reply carries the first turn: {texts:?}"
    );
    server.verify();
}
