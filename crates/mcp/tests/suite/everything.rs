//! `@modelcontextprotocol/server-everything` over stdio.

use std::time::{Duration, Instant};

use osprey_mcp::{McpConnectionManager, McpError, ResourceToolCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{everything, everything_stdio, process_env, servers};

async fn start(js: &str) -> McpConnectionManager {
    let manager = McpConnectionManager::start(
        &servers(vec![("everything", everything_stdio(js))]),
        &process_env(),
    )
    .await;
    assert_eq!(manager.failures(), vec![]);
    manager
}

#[tokio::test]
async fn tools_get_codex_names_and_namespaces() {
    let Some(js) = everything() else { return };
    let manager = start(&js).await;

    let qualified: Vec<&str> = manager
        .tools()
        .iter()
        .map(|t| t.qualified_name.as_str())
        .collect();
    for name in [
        "mcp__everything__echo",
        "mcp__everything__get_sum",
        "mcp__everything__get_tiny_image",
        "mcp__everything__trigger_long_running_operation",
    ] {
        assert!(
            qualified.contains(&name),
            "{name} missing from {qualified:?}"
        );
    }
    assert_eq!(
        manager.resolve("mcp__everything__get_tiny_image"),
        Some(("everything".to_owned(), "get-tiny-image".to_owned()))
    );
    assert_eq!(
        manager.resolve_namespaced("mcp__everything", "get_sum"),
        Some(("everything".to_owned(), "get-sum".to_owned()))
    );
    assert_eq!(manager.resolve("mcp__everything__nope"), None);

    let namespaces = manager.responses_tool_specs();
    assert_eq!(namespaces.len(), 1);
    let namespace = &namespaces[0];
    assert_eq!(namespace["type"], "namespace");
    assert_eq!(namespace["name"], "mcp__everything");
    // The server's instructions describe the namespace, as in Codex 0.171.
    assert!(
        namespace["description"]
            .as_str()
            .unwrap()
            .contains("Everything")
    );
    let sum = namespace["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get_sum")
        .expect("get_sum in namespace");
    assert_eq!(
        sum,
        &json!({
            "type": "function",
            "name": "get_sum",
            "description": "Returns the sum of two numbers",
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "a": {"type": "number", "description": "First number"},
                    "b": {"type": "number", "description": "Second number"}
                },
                "required": ["a", "b"]
            }
        })
    );

    let flat = manager.flat_tool_specs();
    assert_eq!(flat.len(), manager.tools().len());
    for spec in &flat {
        let name = spec["name"].as_str().unwrap();
        assert!(name.starts_with("mcp__everything__") && name.len() <= 64);
        assert!(spec["parameters"].get("$schema").is_none());
        assert_eq!(spec["parameters"]["type"], "object");
    }
    manager.shutdown().await;
}

#[tokio::test]
async fn echo_and_sum_answer_as_text() {
    let Some(js) = everything() else { return };
    let manager = start(&js).await;

    let echo = manager
        .call_tool(
            "everything",
            "echo",
            Some(json!({"message": "hello osprey"})),
            None,
        )
        .await
        .unwrap();
    assert!(!echo.is_error);
    assert_eq!(echo.to_model_output().text, "Echo: hello osprey");

    let sum = manager
        .call_tool(
            "everything",
            "get-sum",
            Some(json!({"a": 2, "b": 40})),
            None,
        )
        .await
        .unwrap();
    let text = sum.to_model_output().text;
    assert!(text.contains("42"), "{text}");

    // A server-side validation failure comes back flagged, for a failed output.
    let bad = manager
        .call_tool("everything", "get-sum", Some(json!({"a": "x"})), None)
        .await
        .unwrap();
    let output = bad.to_model_output();
    assert!(output.is_error, "{output:?}");

    // Arguments that are not an object are refused before anything is sent.
    let err = manager
        .call_tool("everything", "echo", Some(json!("hi")), None)
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::InvalidArguments { .. }), "{err}");
    let err = manager
        .call_tool("nope", "echo", None, None)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("no MCP server named `nope`"),
        "{err}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn tiny_image_becomes_a_data_url_and_null_arguments_are_empty() {
    let Some(js) = everything() else { return };
    let manager = start(&js).await;
    // `null` arguments, as models send them for tools without parameters.
    let result = manager
        .call_tool("everything", "get-tiny-image", Some(Value::Null), None)
        .await
        .unwrap();
    assert!(result.content.iter().any(|block| block["type"] == "image"));
    let output = result.to_model_output();
    assert_eq!(output.images.len(), 1, "{output:?}");
    assert!(
        output.images[0].starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{}",
        &output.images[0][..40]
    );
    assert!(
        !output.text.contains("iVBORw0KGgo"),
        "the image is not pasted as text"
    );
    assert!(output.text.contains("Here's the image you requested"));
    let items = output.to_content_items();
    assert_eq!(items.last().unwrap()["type"], "input_image");
    manager.shutdown().await;
}

#[tokio::test]
async fn resources_list_and_read_with_null_arguments() {
    let Some(js) = everything() else { return };
    let manager = start(&js).await;
    let architecture = "demo://resource/static/document/architecture.md";

    // Every server, from a call whose optional arguments are `null`.
    let call = ResourceToolCall::parse("list_mcp_resources", r#"{"server":null,"cursor":null}"#)
        .unwrap()
        .unwrap();
    let all = manager.run_resource_tool(call).await.unwrap();
    let resources = all["resources"].as_array().unwrap();
    let entry = resources
        .iter()
        .find(|r| r["uri"] == architecture)
        .unwrap_or_else(|| panic!("{architecture} not listed: {all}"));
    assert_eq!(entry["server"], "everything");
    assert_eq!(entry["mimeType"], "text/markdown");

    // One server, with an empty-string cursor.
    let one = manager
        .run_resource_tool(
            ResourceToolCall::parse(
                "list_mcp_resources",
                r#"{"server":"everything","cursor":""}"#,
            )
            .unwrap()
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(one["server"], "everything");
    assert_eq!(one["resources"].as_array().unwrap().len(), resources.len());

    let templates = manager
        .run_resource_tool(
            ResourceToolCall::parse("list_mcp_resource_templates", "null")
                .unwrap()
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(
        templates["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}"),
        "{templates}"
    );

    let read = manager
        .run_resource_tool(
            ResourceToolCall::parse(
                "read_mcp_resource",
                &json!({"server": "everything", "uri": architecture}).to_string(),
            )
            .unwrap()
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(read["uri"], architecture);
    let text = read["contents"][0]["text"].as_str().unwrap();
    assert!(!text.is_empty());
    let shown = osprey_mcp::resource_output_for_model(&read);
    assert!(
        shown
            .text
            .starts_with(&format!("Resource {architecture}:\n"))
    );

    let dynamic = manager
        .read_resource("everything", "demo://resource/dynamic/text/1")
        .await
        .unwrap();
    assert!(
        dynamic["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Resource 1")
    );

    // A cursor without a server is refused in words the model can act on.
    let err = manager
        .list_resources(None, Some("abc".into()))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("pass `server` together with `cursor`"),
        "{err}"
    );
    let err = manager
        .read_resource("everything", "demo://nope")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("resources/read"), "{err}");
    manager.shutdown().await;
}

#[tokio::test]
async fn long_running_tool_past_its_timeout_fails_cleanly() {
    let Some(js) = everything() else { return };
    let manager = start(&js).await;
    let started = Instant::now();
    let err = manager
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            Some(json!({"duration": 30, "steps": 30})),
            Some(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(matches!(err, McpError::ToolTimeout { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "MCP tool `trigger-long-running-operation` on server `everything` did not finish \
         within 300 ms and was cancelled; raise tool_timeout_sec in [mcp_servers.everything] \
         if it needs longer"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    // The session is still usable.
    let echo = manager
        .call_tool(
            "everything",
            "echo",
            Some(json!({"message": "still here"})),
            None,
        )
        .await
        .unwrap();
    assert_eq!(echo.to_model_output().text, "Echo: still here");
    manager.shutdown().await;
}

#[tokio::test]
async fn enabled_and_disabled_tools_filter_what_is_offered() {
    let Some(js) = everything() else { return };
    let mut config = everything_stdio(&js);
    config.enabled_tools = Some(vec!["echo".into(), "get-sum".into()]);
    config.disabled_tools = vec!["get-sum".into()];
    let manager = McpConnectionManager::start(&servers(vec![("ev", config)]), &process_env()).await;
    let names: Vec<&str> = manager
        .tools()
        .iter()
        .map(|t| t.qualified_name.as_str())
        .collect();
    assert_eq!(names, vec!["mcp__ev__echo"]);
    let err = manager
        .call_tool("ev", "get-sum", Some(json!({"a": 1, "b": 2})), None)
        .await
        .unwrap_err();
    assert!(matches!(err, McpError::ToolDisabled { .. }), "{err}");
    manager.shutdown().await;
}

#[tokio::test]
async fn calls_after_shutdown_fail_with_a_message() {
    let Some(js) = everything() else { return };
    let manager = start(&js).await;
    manager.shutdown().await;
    let err = manager
        .call_tool("everything", "echo", Some(json!({"message": "x"})), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("everything"), "{err}");
    // Shutting down twice is harmless.
    manager.shutdown().await;
}
