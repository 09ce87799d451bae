//! The published Codex TypeScript SDK drives `osprey exec` through `codexPathOverride`.

use super::common::*;
use osprey_test_support::*;
use serde_json::{Value, json};
use std::path::PathBuf;

/// The SDK's entry file, from the folder `scripts/install-test-deps.sh` installs into.
fn sdk_entry() -> Option<PathBuf> {
    let dir = std::env::var_os("OSPREY_NPM_DIR").map(PathBuf::from);
    let entry = dir.map(|d| d.join("node_modules/@openai/codex-sdk/dist/index.js"));
    match entry {
        Some(path) if path.is_file() => Some(path),
        _ => {
            if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") {
                panic!("the Codex SDK is not installed; run scripts/install-test-deps.sh");
            }
            eprintln!("skipping: OSPREY_NPM_DIR is not set (run scripts/install-test-deps.sh)");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_runs_a_thread_with_a_command() {
    let Some(entry) = sdk_entry() else { return };
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_1",
            "exec_command",
            &json!({"cmd": "echo from-sdk > sdk.txt && cat sdk.txt", "login": false}).to_string(),
        )]),
        MockResponse::Sse(vec![
            ev_response_created("resp_2"),
            ev_assistant_message("msg_1", "Wrote sdk.txt."),
            ev_completed_with_usage("resp_2", 50, 10, 5, 0),
        ]),
        sse_turn(vec![ev_assistant_message("msg_2", "Still here.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("sandbox_mode = \"workspace-write\"\n");
    let repo = temp_git_repo();
    let bin = assert_cmd::cargo::cargo_bin("osprey");
    let env: Vec<(String, std::ffi::OsString)> = home
        .env()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let workdir = repo.path().to_path_buf();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/run_thread.mjs");
    let output = tokio::task::spawn_blocking(move || {
        #[expect(
            clippy::disallowed_methods,
            reason = "the test runs node, a reference client"
        )]
        let mut cmd = std::process::Command::new("node");
        cmd.arg(script)
            .envs(env)
            .env("OSPREY_SDK_ENTRY", entry)
            .env("OSPREY_BIN", bin)
            .env("WORKDIR", &workdir)
            .env("SHELL", "/bin/bash")
            .env("PROMPT", "write sdk.txt");
        cmd.output().expect("node runs")
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "node failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    let result: Value = serde_json::from_str(stdout(&output).lines().last().unwrap()).unwrap();
    assert!(
        result["threadId"].as_str().is_some_and(|id| id.len() == 36),
        "{result}"
    );
    assert_eq!(result["finalResponse"], "Wrote sdk.txt.");
    assert_eq!(result["usage"]["input_tokens"], 50);
    let items = result["items"].as_array().unwrap();
    let command = items
        .iter()
        .find(|i| i["type"] == "command_execution")
        .expect("command item");
    assert_eq!(command["exit_code"], 0);
    assert_eq!(command["status"], "completed");
    assert_eq!(command["aggregated_output"], "from-sdk\n");
    assert!(
        items
            .iter()
            .any(|i| i["type"] == "agent_message" && i["text"] == "Wrote sdk.txt.")
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("sdk.txt")).unwrap(),
        "from-sdk\n"
    );
    server.verify();
}
