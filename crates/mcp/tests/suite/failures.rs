//! Servers that crash, hang or cannot be launched: reported, never blocking the others.

use std::time::{Duration, Instant};

use osprey_mcp::McpConnectionManager;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{everything, everything_stdio, process_env, servers, stdio};

#[tokio::test]
async fn crashing_and_silent_servers_are_reported_while_others_work() {
    let Some(js) = everything() else { return };
    let mut crash = stdio("sh", &["-c", "echo boom >&2; exit 3"]);
    crash.startup_timeout = Duration::from_secs(5);
    let mut silent = stdio("sleep", &["100"]);
    silent.startup_timeout = Duration::from_secs(1);
    let good = everything_stdio(&js);

    let started = Instant::now();
    let manager = McpConnectionManager::start(
        &servers(vec![("crash", crash), ("good", good), ("silent", silent)]),
        &process_env(),
    )
    .await;
    let elapsed = started.elapsed();

    let failures = manager.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    let crash = &failures[0];
    assert_eq!(crash.server, "crash");
    assert!(
        crash
            .reason
            .starts_with("`sh -c 'echo boom >&2; exit 3'` exited with status 3"),
        "{}",
        crash.reason
    );
    assert!(
        crash.reason.ends_with("stderr:\n  boom"),
        "{}",
        crash.reason
    );
    let silent = &failures[1];
    assert_eq!(silent.server, "silent");
    assert_eq!(
        silent.reason,
        "`sleep 100` did not answer within 1 s (initialize + tools/list)"
    );
    assert_eq!(
        silent.to_string(),
        "MCP server `silent` failed to start: `sleep 100` did not answer within 1 s \
         (initialize + tools/list)"
    );
    // Reported once.
    assert!(manager.failures().is_empty());

    // Startup waited for the silent server's 1 s, not for anything longer.
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");

    assert_eq!(manager.server_names().collect::<Vec<_>>(), vec!["good"]);
    let echo = manager
        .call_tool("good", "echo", Some(json!({"message": "ok"})), None)
        .await
        .unwrap();
    assert_eq!(echo.to_model_output().text, "Echo: ok");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_that_times_out_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!("echo $$ > '{}'; exec sleep 100", pid_file.display());
    let mut config = stdio("sh", &["-c", &script]);
    config.startup_timeout = Duration::from_millis(500);
    let manager =
        McpConnectionManager::start(&servers(vec![("hang", config)]), &process_env()).await;
    assert_eq!(manager.failures().len(), 1);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc_dir = format!("/proc/{}", pid.trim());
    assert!(
        !std::path::Path::new(&proc_dir).exists(),
        "process {} outlived its startup timeout",
        pid.trim()
    );
}

#[tokio::test]
async fn missing_programs_and_disabled_servers() {
    let mut disabled = stdio("sleep", &["100"]);
    disabled.enabled = false;
    let manager = McpConnectionManager::start(
        &servers(vec![
            ("missing", stdio("/nonexistent/osprey-mcp-server", &["--x"])),
            ("off", disabled),
        ]),
        &process_env(),
    )
    .await;
    let failures = manager.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].server, "missing");
    assert!(
        failures[0]
            .reason
            .starts_with("could not start `/nonexistent/osprey-mcp-server`")
            && failures[0].reason.contains("No such file"),
        "{}",
        failures[0].reason
    );
    assert!(!manager.has_servers());
    assert!(manager.responses_tool_specs().is_empty());
}

#[tokio::test]
async fn a_stdio_server_gets_only_its_env_and_the_basic_variables() {
    let Some(js) = everything() else { return };
    let mut config = everything_stdio(&js);
    if let osprey_config::McpTransport::Stdio { env, .. } = &mut config.transport {
        env.insert("OSPREY_TEST_SERVER_VAR".into(), "from-config".into());
    }
    let mut parent_env = process_env();
    parent_env.insert("OSPREY_TEST_PARENT_SECRET".into(), "do-not-leak".into());
    let manager = McpConnectionManager::start(&servers(vec![("ev", config)]), &parent_env).await;
    assert_eq!(manager.failures(), vec![]);
    let env = manager
        .call_tool("ev", "get-env", None, None)
        .await
        .unwrap()
        .to_model_output()
        .text;
    assert!(env.contains("OSPREY_TEST_SERVER_VAR"), "{env}");
    assert!(env.contains("from-config"), "{env}");
    assert!(env.contains("\"PATH\""), "{env}");
    assert!(!env.contains("OSPREY_TEST_PARENT_SECRET"), "{env}");
    manager.shutdown().await;
}

/// Whether `pid` is gone or only a zombie waiting for init.
fn is_dead(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn shutdown_kills_a_server_group_that_ignores_eof_and_sigterm() {
    let Some(py) = super::support::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let leader = dir.path().join("leader");
    let straggler = dir.path().join("straggler");
    // The shell ignores SIGTERM (and so does everything it starts), keeps a background
    // process, and outlives the real server when stdin closes.
    let script = format!(
        "trap '' TERM; echo $$ > '{}'; sleep 300 & echo $! > '{}'; '{py}' '{}' stdio; sleep 300",
        leader.display(),
        straggler.display(),
        super::support::py_server_script()
    );
    let manager = McpConnectionManager::start(
        &servers(vec![("stubborn", stdio("sh", &["-c", &script]))]),
        &process_env(),
    )
    .await;
    assert_eq!(manager.failures(), vec![]);
    let leader = std::fs::read_to_string(&leader).unwrap().trim().to_owned();
    let straggler = std::fs::read_to_string(&straggler)
        .unwrap()
        .trim()
        .to_owned();
    assert!(!is_dead(&leader) && !is_dead(&straggler));

    let started = Instant::now();
    manager.shutdown().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "shutdown took {took:?}");
    assert!(is_dead(&leader), "the launched shell survived shutdown");
    // The background process got the group's SIGKILL; on a loaded machine it may take a
    // while to be scheduled, die and be reaped. Give it up to 5 s.
    let mut dead = is_dead(&straggler);
    for _ in 0..250 {
        if dead {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        dead = is_dead(&straggler);
    }
    assert!(dead, "a process in the server's group survived shutdown");
}

#[tokio::test]
async fn a_server_that_dies_mid_session_fails_calls_quickly() {
    let Some(py) = super::support::python() else {
        return;
    };
    let config = stdio(&py, &[&super::support::py_server_script(), "stdio"]);
    let manager = McpConnectionManager::start(&servers(vec![("py", config)]), &process_env()).await;
    assert_eq!(manager.failures(), vec![]);
    let started = Instant::now();
    let err = manager
        .call_tool("py", "crash", None, None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`py`"), "{err}");
    let err = manager
        .call_tool("py", "add", Some(json!({"a": 1, "b": 2})), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no longer connected"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    manager.shutdown().await;
}
