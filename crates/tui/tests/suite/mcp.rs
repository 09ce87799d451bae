//! `/mcp` end to end: the reference MCP server-everything started by the thread shows its
//! tools, and a server that fails to start shows why.

use osprey_test_support::{MockModelServer, TempHome, WireApi};

use super::pty::PtySession;

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

#[test]
fn mcp_shows_each_servers_tools_and_a_startup_failure() {
    let Some(everything) = everything() else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(Vec::new()));
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(&format!(
        "[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"{}\"]\nstartup_timeout_sec = 30\n\
         [mcp_servers.crashing]\ncommand = \"sh\"\n\
         args = [\"-c\", \"echo the database is gone >&2; exit 3\"]\nstartup_timeout_sec = 20\n",
        everything.replace('\\', "\\\\").replace('"', "\\\"")
    ));
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn(&home, work.path(), &[], 50, 120);
    // The model's name comes with the started thread (whose servers /mcp reports).
    tui.wait_text("mock-model");

    tui.send(b"/mcp");
    tui.wait_for("/mcp in the composer", |s| {
        s.lines().any(|l| l.trim_end() == "› /mcp")
    });
    tui.send(b"\r");
    let screen = tui.wait_text("running ·");
    let row = |name: &str| {
        screen
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no {name} row:\n{screen}"))
            .to_owned()
    };
    assert!(row("crashing").contains("failed to start:"), "{screen}");
    assert!(screen.contains("the database is gone"), "{screen}");
    assert!(row("everything").contains("tools"), "{screen}");
    assert!(
        screen.contains("echo, ") && screen.contains("get-sum"),
        "the tool names are listed:\n{screen}"
    );

    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
}
