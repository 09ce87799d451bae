//! A published third-party client, `codex-app-server-sdk` from PyPI (installed by
//! scripts/install-test-deps.sh), drives `osprey app-server` through an approval turn with
//! its own public API, unchanged; its output must equal what it printed against the
//! reference `codex app-server` (tests/python/reference-output.json), thread id aside.

use std::path::{Path, PathBuf};

use osprey_test_support::{MockModelServer, TempHome, WireApi, load_script};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::client::osprey_bin;

fn python() -> Option<PathBuf> {
    match std::env::var_os("OSPREY_PY_APPSERVER") {
        Some(p) => Some(PathBuf::from(p)),
        None if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") => panic!(
            "OSPREY_PY_APPSERVER is not set and OSPREY_REQUIRE_REFERENCE=1; run eval \"$(bash scripts/install-test-deps.sh)\" (it needs Python 3.12 or newer)"
        ),
        None => {
            eprintln!("skipped: OSPREY_PY_APPSERVER is not set (run scripts/install-test-deps.sh)");
            None
        }
    }
}

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_published_python_client_runs_an_approval_turn_unchanged() {
    let Some(python) = python() else {
        return;
    };
    let script = load_script(&here().join("approval-turn.mock.json")).expect("mock script");
    let server = MockModelServer::start(script).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}\"\nenv_key = \"{}\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
        server.base_url(),
        TempHome::API_KEY_ENV
    );
    std::fs::write(home.config_path(), config).unwrap();
    let work = tempfile::tempdir().unwrap();
    let stderr_file = home.path().join("server.err");
    let env = home.env();
    let (ws, err) = (work.path().to_path_buf(), stderr_file.clone());
    let out = tokio::task::spawn_blocking(move || {
        #[expect(clippy::disallowed_methods, reason = "the test runs the Python client")]
        let mut cmd = std::process::Command::new(python);
        cmd.arg(here().join("drive_approval_turn.py"))
            .arg("--server-stderr")
            .arg(&err)
            .arg(&ws)
            .arg("--")
            .arg(osprey_bin())
            .arg("app-server")
            .current_dir(&ws)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &ws)
            .env("SHELL", "/bin/bash")
            .envs(env);
        cmd.output().expect("the Python client runs")
    })
    .await
    .unwrap();
    let server_err = std::fs::read_to_string(&stderr_file).unwrap_or_default();
    assert!(
        out.status.success(),
        "the client failed: {}\nstdout: {}\nserver stderr:\n{server_err}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let mut got: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let mut want: Value = serde_json::from_str(
        &std::fs::read_to_string(here().join("reference-output.json")).unwrap(),
    )
    .unwrap();
    got["threadId"] = Value::Null;
    want["threadId"] = Value::Null;
    // Osprey sends the turn's diff (`turn/diff/updated`) after every patch; Codex 0.171 sent
    // none in this scenario (a workspace outside git). Everything else must match exactly.
    let methods = got["notificationMethods"].as_array_mut().unwrap();
    let before = methods.len();
    methods.retain(|m| m != "turn/diff/updated");
    assert_eq!(
        before,
        methods.len() + 1,
        "Osprey sends the turn diff once the patch is applied"
    );
    assert_eq!(got, want);
    assert!(work.path().join("notes.txt").exists());
    assert!(work.path().join("notes.md").exists());
    server.verify();
}
