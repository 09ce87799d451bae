//! Streamable HTTP: server-everything in its streamableHttp mode and the Python SDK server.

use std::collections::BTreeMap;
use std::time::Duration;

use osprey_config::McpTransport;
use osprey_mcp::{McpConnectionManager, McpError};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    everything, free_port, http, process_env, python, servers, start_everything_http, start_py_http,
};

#[tokio::test]
async fn everything_over_streamable_http_lists_and_calls() {
    let Some(js) = everything() else { return };
    let server = start_everything_http(&js);
    let manager = McpConnectionManager::start(
        &servers(vec![("ev_http", http(&server.url))]),
        &process_env(),
    )
    .await;
    assert_eq!(manager.failures(), vec![]);
    assert!(
        manager
            .tools()
            .iter()
            .any(|t| t.qualified_name == "mcp__ev_http__echo")
    );
    let echo = manager
        .call_tool(
            "ev_http",
            "echo",
            Some(json!({"message": "over http"})),
            None,
        )
        .await
        .unwrap();
    assert_eq!(echo.to_model_output().text, "Echo: over http");
    let image = manager
        .call_tool("ev_http", "get-tiny-image", None, None)
        .await
        .unwrap();
    assert_eq!(image.to_model_output().images.len(), 1);
    manager.shutdown().await;
}

#[tokio::test]
async fn python_server_gets_bearer_token_and_headers() {
    let Some(py) = python() else { return };
    let server = start_py_http(&py);
    let mut config = http(&server.url);
    config.transport = McpTransport::StreamableHttp {
        url: server.url.clone(),
        bearer_token_env_var: Some("OSPREY_TEST_MCP_TOKEN".into()),
        http_headers: BTreeMap::from([("X-Osprey-Test".into(), "yes".into())]),
    };
    // The token comes from the environment handed to the manager, not the process's.
    let mut env = process_env();
    env.insert("OSPREY_TEST_MCP_TOKEN".into(), "s3cret".into());
    let manager = McpConnectionManager::start(&servers(vec![("py", config)]), &env).await;
    assert_eq!(manager.failures(), vec![]);
    assert_eq!(
        manager.instructions("py"),
        Some("Test tools for Osprey's MCP client.")
    );

    let sum = manager
        .call_tool("py", "add", Some(json!({"a": 2, "b": 3})), None)
        .await
        .unwrap();
    assert_eq!(sum.to_model_output().text, "5");
    let who = manager.call_tool("py", "whoami", None, None).await.unwrap();
    assert_eq!(
        who.to_model_output().text,
        "authorization=Bearer s3cret x-osprey-test=yes"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_on_the_server() {
    let Some(py) = python() else { return };
    let server = start_py_http(&py);
    let manager =
        McpConnectionManager::start(&servers(vec![("py", http(&server.url))]), &process_env())
            .await;
    assert_eq!(manager.failures(), vec![]);
    let err = manager
        .call_tool(
            "py",
            "slow",
            Some(json!({"seconds": 30})),
            Some(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::ToolTimeout { .. }), "{err}");
    // The server counts cancelled `slow` calls; ask until it has processed the cancellation
    // (each question is a real round trip, bounded).
    let mut count = String::new();
    for _ in 0..100 {
        count = manager
            .call_tool("py", "cancelled_count", None, None)
            .await
            .unwrap()
            .to_model_output()
            .text;
        if count == "1" {
            break;
        }
    }
    assert_eq!(count, "1", "the server never saw the cancellation");
    manager.shutdown().await;
}

#[tokio::test]
async fn unreachable_url_and_missing_token_are_reported() {
    let refused = format!("http://127.0.0.1:{}/mcp", free_port());
    let mut needs_token = http("http://127.0.0.1:9/mcp");
    needs_token.transport = McpTransport::StreamableHttp {
        url: "http://127.0.0.1:9/mcp".into(),
        bearer_token_env_var: Some("OSPREY_TEST_SURELY_UNSET_TOKEN".into()),
        http_headers: BTreeMap::new(),
    };
    let manager = McpConnectionManager::start(
        &servers(vec![("refused", http(&refused)), ("token", needs_token)]),
        &process_env(),
    )
    .await;
    let failures = manager.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert_eq!(failures[0].server, "refused");
    assert!(
        failures[0].reason.starts_with(&refused),
        "{}",
        failures[0].reason
    );
    assert!(
        failures[0].reason.contains("Connection refused"),
        "{}",
        failures[0].reason
    );
    assert_eq!(failures[1].server, "token");
    assert!(
        failures[1]
            .reason
            .contains("OSPREY_TEST_SURELY_UNSET_TOKEN"),
        "{}",
        failures[1].reason
    );
    assert!(!manager.has_servers());
}

#[tokio::test]
async fn an_http_error_status_is_reported_with_the_url() {
    let Some(py) = python() else { return };
    let server = start_py_http(&py);
    let wrong = server.url.replace("/mcp", "/not-mcp");
    let manager =
        McpConnectionManager::start(&servers(vec![("wrong", http(&wrong))]), &process_env()).await;
    let failures = manager.failures();
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].reason.starts_with(&wrong),
        "{}",
        failures[0].reason
    );
    assert!(failures[0].reason.contains("404"), "{}", failures[0].reason);
}
