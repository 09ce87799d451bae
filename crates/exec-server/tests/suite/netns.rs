//! The server as a real remote: in its own network namespace (reached over a veth pair, so
//! a non-loopback address and therefore a token) and its own mount namespace, where the
//! directory it serves is a fresh tmpfs the test machine cannot see. Needs root (the CI
//! machine is); skipped with a message otherwise.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use osprey_exec_server::client::{ConnectOptions, ExecServerClient};
use osprey_exec_server::protocol::{ReadDirectoryResponse, method};
use osprey_exec_server::uri;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use osprey_test_support::netns::{TestHost, is_root};

use super::common::{osprey, run};

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test starts the server in namespaces"
)]
async fn a_server_in_its_own_network_and_mount_namespace_serves_its_own_files() {
    if !is_root() {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let pid = std::process::id();
    let subnet = u8::try_from(pid % 200).unwrap_or(7) + 20;
    let host = TestHost::create("es", subnet)
        .unwrap_or_else(|e| panic!("cannot create a network namespace as root: {e}"));
    let name = host.name.clone();

    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::write(served.join("host-only.txt"), "the test machine's file").unwrap();
    let token = "netns-capability-token-0123456789";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, token).unwrap();
    let listen = format!("ws://10.231.{subnet}.2:0");
    // In the server's own mount namespace, `served` is an empty tmpfs.
    let script = format!(
        "mount -t tmpfs tmpfs {served} && cd {served} && exec {osprey} exec-server --listen {listen} --ws-token-file {token} --root {served}",
        served = served.display(),
        osprey = osprey().display(),
        token = token_file.display(),
    );
    let mut server = tokio::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &name,
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    let url = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::io::BufReader::new(stdout).lines().next_line(),
    )
    .await
    .expect("the server printed no URL within 20 s")
    .unwrap()
    .expect("the server exited before listening");
    assert!(
        url.starts_with(&format!("ws://10.231.{subnet}.2:")),
        "{url}"
    );

    // Not reachable without the token, even from the host.
    let refused = ExecServerClient::connect_url(&url, None, ConnectOptions::default())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("401"), "{refused}");
    let client = ExecServerClient::connect_url(&url, Some(token), ConnectOptions::default())
        .await
        .unwrap();
    let listing: ReadDirectoryResponse = client
        .call(
            method::FS_READ_DIRECTORY,
            json!({"path": uri::from_path(&served)}),
        )
        .await
        .unwrap();
    assert!(
        listing.entries.is_empty(),
        "the server sees the host's files: {listing:?}"
    );
    client
        .call::<Value>(
            method::FS_WRITE_FILE,
            json!({"path": uri::from_path(&served.join("remote.txt")), "dataBase64": BASE64.encode("made there")}),
        )
        .await
        .unwrap();
    let done = run(
        &client,
        "n1",
        "ls; ls /sys/class/net | sort | tr '\\n' ' '",
        &served,
    )
    .await;
    assert_eq!(done.exit_code, Some(0), "{}", done.stderr);
    let mut lines = done.stdout.lines();
    assert_eq!(lines.next(), Some("remote.txt"), "{}", done.stdout);
    // lo and the veth end: the server's own network, not the host's.
    let mut want = ["lo".to_owned(), host.interface.clone()];
    want.sort();
    assert_eq!(
        lines.next().map(str::trim),
        Some(want.join(" ").as_str()),
        "{}",
        done.stdout
    );
    assert!(
        !served.join("remote.txt").exists(),
        "the remote write landed on the host"
    );
    assert!(Path::new(&served.join("host-only.txt")).exists());
    drop(client);
    let _ = server.kill().await;
}
