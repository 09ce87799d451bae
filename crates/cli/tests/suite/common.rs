//! Shared helpers: run `osprey exec` in a temp repo with a temp home.

use assert_cmd::Command;
use osprey_test_support::TempHome;
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// Runs `osprey <args>` in `cwd` with the home's environment and `stdin` as input.
pub fn osprey(home: &TempHome, cwd: &Path, args: &[&str], stdin: &str) -> Output {
    let mut cmd = Command::cargo_bin("osprey").expect("osprey binary is built");
    cmd.current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("SHELL", "/bin/bash")
        .envs(home.env())
        .args(args)
        .write_stdin(stdin.as_bytes().to_vec())
        .timeout(std::time::Duration::from_secs(60));
    cmd.output().expect("osprey runs")
}

/// Runs `osprey <args>` on a blocking thread so the mock server keeps serving.
pub async fn osprey_async(home: &TempHome, cwd: &Path, args: &[&str], stdin: &str) -> Output {
    osprey_async_with(home, cwd, args, stdin, &[]).await
}

/// As [`osprey_async`], with `extra` variables set as well (`RUST_LOG`, say).
pub async fn osprey_async_with(
    home: &TempHome,
    cwd: &Path,
    args: &[&str],
    stdin: &str,
    extra: &[(&str, &str)],
) -> Output {
    let mut env: Vec<(String, std::ffi::OsString)> = home
        .env()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())));
    let home_path = home.path().to_path_buf();
    let cwd = cwd.to_path_buf();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let stdin = stdin.to_string();
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::cargo_bin("osprey").expect("osprey binary is built");
        cmd.current_dir(&cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home_path)
            .env("SHELL", "/bin/bash")
            .envs(env)
            .args(&args)
            .write_stdin(stdin.into_bytes())
            .timeout(std::time::Duration::from_secs(60));
        cmd.output().expect("osprey runs")
    })
    .await
    .expect("blocking task joins")
}

/// Parses stdout as JSON Lines.
pub fn jsonl(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The `type` of each event, in order.
pub fn event_types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect()
}
