//! Differential: the Responses tool namespace we build for server-everything against the one
//! the reference Codex CLI 0.171 sends for the same server (captured by the scripted model
//! server from `osprey-test-support`).

use std::process::Stdio;

use osprey_mcp::McpConnectionManager;
use osprey_test_support::{MockModelServer, ev_assistant_message, sse_turn};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::support::{everything, everything_stdio, process_env, reference, servers};

/// Property names, their types, and `required`, which both sides must agree on (Codex drops
/// keywords such as `default` that we keep).
fn shape(parameters: &Value) -> Value {
    let properties = parameters["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let types: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(name, schema)| (name.clone(), schema["type"].clone()))
        .collect();
    serde_json::json!({
        "type": parameters["type"],
        "properties": types,
        "required": parameters.get("required").cloned().unwrap_or(Value::Array(vec![])),
    })
}

fn by_name(tools: &Value) -> Vec<(String, String, Value)> {
    let mut list: Vec<(String, String, Value)> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["description"].as_str().unwrap_or_default().to_owned(),
                shape(&t["parameters"]),
            )
        })
        .collect();
    list.sort_by(|a, b| a.0.cmp(&b.0));
    list
}

#[tokio::test]
async fn responses_namespace_matches_codex() {
    let Some(js) = everything() else { return };
    let Some(codex) = reference("OSPREY_CODEX_BIN") else {
        return;
    };

    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("msg_1", "ok")])]).await;
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\n\
             name = \"mock\"\nbase_url = \"{}\"\nenv_key = \"OSPREY_TEST_KEY\"\n\
             wire_api = \"responses\"\n\n[mcp_servers.everything]\ncommand = \"node\"\n\
             args = [\"{js}\", \"stdio\"]\nrequired = true\nstartup_timeout_sec = 120\n",
            server.base_url()
        ),
    )
    .unwrap();
    // `required`: Codex waits for the server before its first request (otherwise, on a
    // machine busy with builds, node may not be up yet and Codex sends no namespace — seen
    // once); with a generous start-up timeout.
    let status = {
        let home = home.path().to_owned();
        let work = work.path().to_owned();
        tokio::task::spawn_blocking(move || {
            #[expect(clippy::disallowed_methods, reason = "runs the reference Codex CLI")]
            let mut command = std::process::Command::new(codex);
            command
                .args(["exec", "--skip-git-repo-check", "say ok"])
                .current_dir(&work)
                .env("CODEX_HOME", &home)
                .env("OSPREY_TEST_KEY", "test")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        })
        .await
        .unwrap()
        .unwrap()
    };
    assert!(status.success(), "codex exec failed: {status}");
    let request = server
        .requests()
        .into_iter()
        .next()
        .expect("codex sent a request");
    let codex_namespace = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == "mcp__everything")
        .cloned()
        .unwrap_or_else(|| panic!("no mcp__everything namespace in {}", request.body["tools"]));

    let manager = McpConnectionManager::start(
        &servers(vec![("everything", everything_stdio(&js))]),
        &process_env(),
    )
    .await;
    let ours = manager.responses_tool_specs().remove(0);
    manager.shutdown().await;

    assert_eq!(ours["type"], codex_namespace["type"]);
    assert_eq!(ours["name"], codex_namespace["name"]);
    assert_eq!(ours["description"], codex_namespace["description"]);
    // Codex offers the same tools, except those needing client capabilities it declares and
    // we do not (sampling, elicitation, roots): compare the ones we both offer, and require
    // that we offer nothing Codex does not.
    let theirs = by_name(&codex_namespace["tools"]);
    let ours = by_name(&ours["tools"]);
    let common: Vec<_> = ours
        .iter()
        .filter(|(name, _, _)| theirs.iter().any(|(n, _, _)| n == name))
        .cloned()
        .collect();
    assert_eq!(common.len(), ours.len(), "tools only we offer: {ours:?}");
    let theirs_common: Vec<_> = theirs
        .into_iter()
        .filter(|(name, _, _)| common.iter().any(|(n, _, _)| n == name))
        .collect();
    assert_eq!(common, theirs_common);
    for tool in codex_namespace["tools"].as_array().unwrap() {
        assert_eq!(tool["strict"], false);
    }
}
