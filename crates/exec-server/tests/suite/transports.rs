//! WebSocket with and without a capability token, refusing an open listener, and a
//! server that dies mid-command.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;

use osprey_exec_server::client::{ClientError, ConnectOptions, ExecServerClient};
use osprey_exec_server::protocol::{ProcessReadResponse, method};
use serde_json::json;
use tokio::io::AsyncBufReadExt;

use super::common::{base_env, collect, connect, osprey, run, start_params};

/// Starts `osprey exec-server --listen ws://127.0.0.1:0 …` and returns it with the URL it
/// printed on stdout.
#[expect(
    clippy::disallowed_methods,
    reason = "the test starts the server itself"
)]
async fn ws_server(dir: &std::path::Path, extra: &[&str]) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(osprey())
        .args(["exec-server", "--listen", "ws://127.0.0.1:0"])
        .args(extra)
        .current_dir(dir)
        .env_clear()
        .envs(base_env())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("no URL printed within 20 s")
        .unwrap()
        .expect("the server printed nothing");
    assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
    (child, url)
}

#[tokio::test]
async fn websocket_with_a_token_and_refusals_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "0123456789abcdef-secret\n").unwrap();
    let token_arg = token_file.to_string_lossy().into_owned();
    let (_server, url) = ws_server(dir.path(), &["--ws-token-file", &token_arg]).await;

    for token in [None, Some("wrong-token-0123456789")] {
        let refused = ExecServerClient::connect_url(&url, token, ConnectOptions::default())
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("401"), "{refused}");
    }
    // A web page (Origin header) is refused even with the token.
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
            url.as_str(),
        )
        .unwrap();
    request
        .headers_mut()
        .insert("origin", "http://evil.example".parse().unwrap());
    request.headers_mut().insert(
        "authorization",
        "Bearer 0123456789abcdef-secret".parse().unwrap(),
    );
    let from_page = tokio_tungstenite::connect_async(request).await.unwrap_err();
    assert!(from_page.to_string().contains("403"), "{from_page}");
    let client = ExecServerClient::connect_url(
        &url,
        Some("0123456789abcdef-secret"),
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    let done = run(&client, "ws1", "echo over-ws", dir.path()).await;
    assert_eq!(done.stdout, "over-ws\n");
    assert_eq!(done.exit_code, Some(0));
}

#[tokio::test]
#[expect(clippy::disallowed_methods, reason = "the test runs the binary")]
async fn an_open_listener_without_a_token_is_refused() {
    let out = std::process::Command::new(osprey())
        .args(["exec-server", "--listen", "ws://0.0.0.0:0"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--ws-token-file"), "{stderr}");
}

#[tokio::test]
async fn a_server_that_dies_fails_calls_and_reports_processes_lost() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &[]).await;
    let events = client.watch_process("victim");
    client
        .call::<serde_json::Value>(
            method::PROCESS_START,
            start_params("victim", "echo $$; exec sleep 300", dir.path(), false),
        )
        .await
        .unwrap();
    let read: ProcessReadResponse = client
        .call(
            method::PROCESS_READ,
            json!({"processId": "victim", "waitMs": 5000}),
        )
        .await
        .unwrap();
    assert_eq!(read.chunks.len(), 1);
    let server_pid = server_pid_of(dir.path());
    let pending = client.call_value(
        method::PROCESS_READ,
        json!({"processId": "victim", "afterSeq": 1, "waitMs": 20000}),
        Duration::from_secs(25),
    );
    let kill = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = run_kill(server_pid);
    };
    let (result, ()) = tokio::join!(pending, kill);
    assert!(
        matches!(result, Err(ClientError::Closed { .. })),
        "{result:?}"
    );
    let done = collect(events).await;
    assert!(done.lost, "the process was not reported lost");
    // The server died by SIGKILL and could not clean up: do it here.
    let victim = String::from_utf8(BASE64.decode(&read.chunks[0].chunk).unwrap()).unwrap();
    let _ = run_kill(victim.trim().parse().unwrap());
}

/// The pid of the `osprey exec-server` whose working directory is `dir`.
fn server_pid_of(dir: &std::path::Path) -> u32 {
    let want = dir.canonicalize().unwrap();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd")).ok();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if args.get(1) == Some(&b"exec-server".as_slice()) && cwd.as_deref() == Some(&want) {
            return pid;
        }
    }
    panic!("no exec server runs in {}", want.display());
}

#[expect(clippy::disallowed_methods, reason = "the test signals the server")]
fn run_kill(pid: u32) -> std::io::Result<std::process::ExitStatus> {
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
}

#[tokio::test]
async fn an_environments_toml_entry_connects_to_its_server() {
    use osprey_exec_server::environments::Environments;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("environments.toml"),
        format!(
            "default = \"here\"\n[[environments]]\nid = \"here\"\nprogram = {:?}\nargs = [\"exec-server\", \"--listen\", \"stdio\"]\ncwd = \"..\"\n",
            osprey().display().to_string()
        ),
    )
    .unwrap();
    let environments = Environments::load(&home).unwrap();
    let default = environments.default.clone().unwrap();
    let entry = environments.get(&default).unwrap().expect("a remote entry");
    let client = entry
        .connect(&base_env(), std::path::Path::new("/"))
        .await
        .unwrap();
    let cwd = client.environment().cwd.clone().unwrap();
    assert_eq!(
        cwd,
        osprey_exec_server::uri::from_path(&dir.path().canonicalize().unwrap())
    );
    let done = run(&client, "e1", "echo via-toml", dir.path()).await;
    assert_eq!(done.stdout, "via-toml\n");
}
