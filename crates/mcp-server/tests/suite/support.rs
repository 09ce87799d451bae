//! Running the Python SDK client against the server binary, with a mock model behind it.

use std::process::Stdio;

use osprey_test_support::TempHome;
use serde_json::Value;

/// Python interpreter with the `mcp` SDK (`OSPREY_PY_MCP`), or `None` with a note when it is
/// not installed. With `OSPREY_REQUIRE_REFERENCE=1` a missing interpreter fails the test.
pub fn python() -> Option<String> {
    match std::env::var("OSPREY_PY_MCP") {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            let hint = "run `eval \"$(bash scripts/install-test-deps.sh)\"` first";
            if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") {
                panic!("OSPREY_PY_MCP is not set and OSPREY_REQUIRE_REFERENCE=1; {hint}");
            }
            eprintln!("note: skipping, OSPREY_PY_MCP (Python with the mcp SDK) is not set; {hint}");
            None
        }
    }
}

/// Runs `tests/python/client.py <server> <scenario> <args…>` with the home's environment and
/// returns the JSON it printed. Panics with the client's stderr when it fails.
#[expect(
    clippy::disallowed_methods,
    reason = "the test spawns the Python MCP client, which spawns the server"
)]
pub async fn run_client(python: &str, home: &TempHome, scenario: &str, args: &[&str]) -> Value {
    let script = format!("{}/tests/python/client.py", env!("CARGO_MANIFEST_DIR"));
    let server = env!("CARGO_BIN_EXE_osprey-mcp-server");
    let mut command = tokio::process::Command::new(python);
    command
        .arg(&script)
        .arg(server)
        .arg(scenario)
        .args(args)
        .envs(home.env())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(std::time::Duration::from_secs(120), command.output())
        .await
        .expect("the Python client finished within two minutes")
        .expect("the Python client could be started");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if std::env::var_os("OSPREY_TEST_SHOW_STDERR").is_some() {
        eprintln!("client.py {scenario} stderr:\n{stderr}");
    }
    assert!(
        output.status.success(),
        "client.py {scenario} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("client.py printed no JSON ({e}):\nstdout:\n{stdout}\nstderr:\n{stderr}")
    })
}

/// The `msg.type` of every `osprey/event` notification, in arrival order.
pub fn event_types(out: &Value) -> Vec<String> {
    out["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter_map(|e| e["msg"]["type"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
