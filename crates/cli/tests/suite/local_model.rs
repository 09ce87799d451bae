//! The embedded local model end to end: `osprey exec` with no key and no config file.

use super::common::*;
use std::path::PathBuf;

fn local_model() -> Option<PathBuf> {
    match std::env::var("OSPREY_LOCAL_MODEL") {
        Ok(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ if std::env::var("OSPREY_REQUIRE_LOCAL_MODEL").as_deref() == Ok("1") => {
            panic!("OSPREY_LOCAL_MODEL is not set; run scripts/install-test-deps.sh")
        }
        _ => {
            eprintln!("skipping: OSPREY_LOCAL_MODEL is not set");
            None
        }
    }
}

#[test]
fn exec_without_key_or_config_writes_and_runs_hello_py() {
    let Some(model) = local_model() else { return };
    let cache = model.parent().unwrap().to_path_buf();
    let home = tempfile::tempdir().unwrap();
    let repo = osprey_test_support::temp_git_repo();
    let out = assert_cmd::Command::cargo_bin("osprey")
        .unwrap()
        .current_dir(repo.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SHELL", "/bin/bash")
        .env("OSPREY_HOME", home.path().join(".osprey"))
        .env("OSPREY_MODEL_CACHE", &cache)
        .args([
            "exec",
            "--json",
            "-s",
            "workspace-write",
            "create hello.py that prints hello, then run it",
        ])
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("embedded local model"),
        "one line says so: {}",
        stderr(&out)
    );
    let script = repo.path().join("hello.py");
    assert!(
        script.is_file(),
        "hello.py exists; events: {}",
        stdout(&out)
    );
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the script the model wrote"
    )]
    let run = std::process::Command::new("python3")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&run.stdout)
            .to_lowercase()
            .contains("hello")
    );
    let events = jsonl(&out);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution"),
        "a command ran: {events:?}"
    );
}
