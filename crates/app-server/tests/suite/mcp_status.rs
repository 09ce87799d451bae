//! `mcpServerStatus/list`: the servers a thread really started, with the tools the reference
//! server-everything lists, a server that failed to start with its reason, and a disabled one.

use osprey_test_support::{MockModelServer, TempHome, WireApi};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::client::Client;

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

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_started_servers_tools_and_startup_failures() {
    let Some(everything) = everything() else {
        return;
    };
    let server = MockModelServer::start(Vec::new()).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(&format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [{}]\nstartup_timeout_sec = 30\n\
         [mcp_servers.crashing]\ncommand = \"sh\"\n\
         args = [\"-c\", \"echo the database is gone >&2; exit 3\"]\nstartup_timeout_sec = 20\n\
         [mcp_servers.off]\ncommand = \"/nonexistent/never-started\"\nenabled = false\n",
        toml_string(&everything)
    ));
    let work = tempfile::tempdir().unwrap();
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;

    // Before any thread there is nothing to report on, and the error says what to do.
    let error = client
        .request_error("mcpServerStatus/list", json!({}))
        .await;
    assert!(error.contains("call thread/start"), "{error}");

    let thread_id = client.start_thread(work.path(), json!({})).await;
    let status = client.request("mcpServerStatus/list", json!({})).await;
    let data = status["data"].as_array().unwrap();
    let names: Vec<&str> = data.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["crashing", "everything", "off"]);
    assert!(status["nextCursor"].is_null());

    let crashing = &data[0];
    assert_eq!(crashing["tools"], json!({}));
    assert_eq!(crashing["enabled"], true);
    assert_eq!(crashing["authStatus"], "unsupported");
    let reason = crashing["startupError"].as_str().unwrap();
    assert!(reason.contains("the database is gone"), "{reason}");

    let running = &data[1];
    assert!(running.get("startupError").is_none(), "{running:#}");
    let echo = &running["tools"]["echo"];
    assert_eq!(echo["name"], "echo");
    assert!(
        echo["inputSchema"]["properties"]["message"].is_object(),
        "{echo:#}"
    );
    assert!(
        running["tools"].as_object().unwrap().len() > 3,
        "{running:#}"
    );
    assert!(
        !running["resources"].as_array().unwrap().is_empty(),
        "{running:#}"
    );

    let off = &data[2];
    assert_eq!(off["enabled"], false);
    assert!(off.get("startupError").is_none());
    assert_eq!(off["tools"], json!({}));

    // Pages of one, by thread id, without the resource listing.
    let first = client
        .request(
            "mcpServerStatus/list",
            json!({"threadId": thread_id, "limit": 1, "detail": "toolsAndAuthOnly"}),
        )
        .await;
    assert_eq!(first["data"][0]["name"], "crashing");
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = client
        .request(
            "mcpServerStatus/list",
            json!({"threadId": thread_id, "limit": 1, "cursor": cursor, "detail": "toolsAndAuthOnly"}),
        )
        .await;
    assert_eq!(second["data"][0]["name"], "everything");
    assert_eq!(second["data"][0]["resources"], Value::Array(Vec::new()));
    assert!(second["data"][0]["tools"]["echo"].is_object());

    let error = client
        .request_error("mcpServerStatus/list", json!({"cursor": "zz"}))
        .await;
    assert!(error.contains("invalid cursor `zz`"), "{error}");
    client.close().await;
}
