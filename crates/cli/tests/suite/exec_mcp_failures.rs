//! MCP servers that fail to start are named on stderr in `--json` mode too: one line each,
//! with the reason, besides the `error` item on stdout that programs read.

use super::common::*;
use osprey_test_support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_mcp_servers_are_named_on_stderr_in_json_mode() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "done")])]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "[mcp_servers.crashing]\n\
         command = \"sh\"\n\
         args = [\"-c\", \"echo the database is gone >&2\\necho second line >&2\\nexit 3\"]\n\
         startup_timeout_sec = 20\n\
         [mcp_servers.absent]\n\
         command = \"/nonexistent/osprey-test-mcp-server\"\n\
         startup_timeout_sec = 20\n",
    );
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "hi"], "").await;
    let err = stderr(&out);
    assert!(out.status.success(), "stderr: {err}");

    for (name, reason) in [
        ("crashing", "the database is gone"),
        ("absent", "/nonexistent/osprey-test-mcp-server"),
    ] {
        let lines: Vec<&str> = err
            .lines()
            .filter(|line| line.contains(&format!("`{name}`")))
            .collect();
        assert_eq!(lines.len(), 1, "one stderr line for {name}:\n{err}");
        assert!(lines[0].starts_with("warning: "), "{}", lines[0]);
        assert!(lines[0].contains("failed to start"), "{}", lines[0]);
        assert!(lines[0].contains(reason), "{}", lines[0]);
        // Programs still get the `error` item.
        let items = jsonl(&out)
            .into_iter()
            .filter(|e| {
                e["type"] == "item.completed"
                    && e["item"]["type"] == "error"
                    && e["item"]["message"]
                        .as_str()
                        .unwrap()
                        .contains(&format!("`{name}`"))
            })
            .count();
        assert_eq!(items, 1, "one error item for {name}: {}", stdout(&out));
    }
    // The stderr tail's lines are joined onto the one line.
    assert!(err.contains("the database is gone | second line"), "{err}");
    server.verify();
}
