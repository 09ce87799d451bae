//! Bad input and failing providers: each gives a clear message and the right exit code.

use super::common::*;
use osprey_test_support::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_api_key_names_the_variable_and_sends_nothing() {
    let server = MockModelServer::start(vec![]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let home_path = home.path().to_path_buf();
    let cwd = repo.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("osprey")
            .unwrap()
            .current_dir(&cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("OSPREY_HOME", &home_path)
            .args(["exec", "hi"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("OSPREY_TEST_API_KEY"),
        "names the variable: {err}"
    );
    assert!(err.contains("Mock"), "names the provider: {err}");
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_base_url_fails_after_retries_naming_the_url() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/v1");
    let home = TempHome::for_base_url(&url, WireApi::Responses);
    home.set_provider_option("request_max_retries", "1");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "hi"], "").await;
    assert_eq!(out.status.code(), Some(1));
    let events = jsonl(&out);
    let failed = events
        .iter()
        .find(|e| e["type"] == "turn.failed")
        .expect("turn.failed");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("127.0.0.1:{port}")),
        "names the URL: {message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_sse_is_a_clear_error_not_a_hang() {
    let server = MockModelServer::start(vec![MockResponse::Malformed(
        "event: response.created\ndata: {not json\n\n".to_string(),
    )])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "hi"], "").await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("ERROR"), "stderr: {err}");
    // The error names the event that failed to parse and quotes its data.
    assert!(
        err.contains("the `response.created` event is not JSON") && err.contains("{not json"),
        "stderr: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_that_never_completes_times_out() {
    let server = MockModelServer::start(vec![MockResponse::Hang(vec![ev_response_created(
        "resp_1",
    )])])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.set_provider_option("stream_idle_timeout_ms", "300");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "hi"], "").await;
    assert_eq!(out.status.code(), Some(1));
    let events = jsonl(&out);
    assert!(
        events.iter().any(|e| e["type"] == "turn.failed"),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_request_shows_the_servers_message() {
    let server = MockModelServer::start(vec![MockResponse::http_json(
        400,
        &json!({"error": {"message": "Unsupported parameter: 'frobnicate'", "type": "invalid_request_error"}}),
    )])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "hi"], "").await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("Unsupported parameter: 'frobnicate'"),
        "stderr: {}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 1, "a 400 is not retried");
}

#[test]
fn invalid_config_reports_file_line_and_column() {
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    home.write_config("approval_policy = 3\n");
    let repo = temp_git_repo();
    let out = osprey(&home, repo.path(), &["exec", "hi"], "");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("config.toml:"), "names the file: {err}");
    let config = std::fs::read_to_string(home.config_path()).unwrap();
    let line = config
        .lines()
        .position(|l| l.starts_with("approval_policy"))
        .unwrap()
        + 1;
    assert!(
        err.contains(&format!("config.toml:{line}:")),
        "names line {line}: {err}"
    );
}

#[test]
fn unknown_profile_names_the_known_ones() {
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    home.write_config("[profiles.fast]\nmodel = \"m1\"\n[profiles.deep]\nmodel = \"m2\"\n");
    let repo = temp_git_repo();
    let out = osprey(&home, repo.path(), &["exec", "--profile", "nope", "hi"], "");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("nope") && err.contains("fast") && err.contains("deep"),
        "{err}"
    );
}

#[test]
fn outside_a_git_repo_is_refused_unless_skipped() {
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let dir = tempfile::tempdir().unwrap();
    let out = osprey(&home, dir.path(), &["exec", "hi"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--skip-git-repo-check"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn usage_errors_exit_with_two() {
    let home = TempHome::for_base_url("http://127.0.0.1:9/v1", WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey(&home, repo.path(), &["exec", "--no-such-flag", "hi"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = osprey(
        &home,
        repo.path(),
        &["exec", "--sandbox", "bogus", "hi"],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
}
