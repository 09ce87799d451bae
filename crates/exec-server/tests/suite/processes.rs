//! Processes through the real server: streams, sequence numbers, buffered reads, PTYs,
//! signals, the server's own sandbox, and cleanup when the client goes.

use osprey_exec_server::protocol::{ProcessReadResponse, ProcessWriteResponse, method};
use serde_json::json;

use super::common::{collect, connect, run, start_params, start_sleeper, wait_until_gone};

#[tokio::test]
async fn output_streams_exit_and_close_arrive_in_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &[]).await;
    let done = run(
        &client,
        "p1",
        "echo hi; echo err >&2; sleep 0.1; exit 3",
        dir.path(),
    )
    .await;
    assert_eq!(done.stdout, "hi\n");
    assert_eq!(done.stderr, "err\n");
    assert_eq!(done.exit_code, Some(3));
    assert!(!done.sandbox_denied);
    let mut sorted = done.seqs.clone();
    sorted.sort_unstable();
    assert_eq!(done.seqs, sorted, "notifications out of order");
    assert_eq!(done.seqs.first(), Some(&1));

    // Buffered: a read after the close still has every chunk.
    let read: ProcessReadResponse = client
        .call(
            method::PROCESS_READ,
            json!({"processId": "p1", "afterSeq": null, "maxBytes": 65536, "waitMs": 0}),
        )
        .await
        .unwrap();
    assert_eq!(read.chunks.len(), 2);
    assert!(read.exited && read.closed);
    assert_eq!(read.exit_code, Some(3));
    assert_eq!(read.next_seq, read.chunks[1].seq + 1);
    let after: ProcessReadResponse = client
        .call(
            method::PROCESS_READ,
            json!({"processId": "p1", "afterSeq": read.chunks[0].seq}),
        )
        .await
        .unwrap();
    assert_eq!(after.chunks.len(), 1);

    let again = client
        .call::<serde_json::Value>(
            method::PROCESS_START,
            start_params("p1", "true", dir.path(), false),
        )
        .await
        .unwrap_err();
    assert!(
        again.to_string().contains("process p1 already exists"),
        "{again}"
    );
}

#[tokio::test]
async fn a_terminal_process_echoes_input_and_a_pipe_needs_pipe_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &[]).await;
    let events = client.watch_process("tty");
    client
        .call::<serde_json::Value>(
            method::PROCESS_START,
            start_params("tty", "read x; echo got:$x", dir.path(), true),
        )
        .await
        .unwrap();
    let wrote: ProcessWriteResponse = client
        .call(
            method::PROCESS_WRITE,
            json!({"processId": "tty", "chunk": "aGVsbG8K", "writeId": "w1"}),
        )
        .await
        .unwrap();
    assert_eq!(wrote.status, "accepted");
    let done = collect(events).await;
    assert!(
        done.pty.contains("hello\r\n") && done.pty.contains("got:hello"),
        "{:?}",
        done.pty
    );
    assert_eq!(done.exit_code, Some(0));

    let events = client.watch_process("nopipe");
    client
        .call::<serde_json::Value>(
            method::PROCESS_START,
            start_params("nopipe", "sleep 0.3", dir.path(), false),
        )
        .await
        .unwrap();
    let wrote: ProcessWriteResponse = client
        .call(
            method::PROCESS_WRITE,
            json!({"processId": "nopipe", "chunk": "eAo=", "writeId": "w2"}),
        )
        .await
        .unwrap();
    assert_eq!(wrote.status, "stdinClosed");
    collect(events).await;
    let unknown: ProcessWriteResponse = client
        .call(
            method::PROCESS_WRITE,
            json!({"processId": "ghost", "chunk": "eAo=", "writeId": "w3"}),
        )
        .await
        .unwrap();
    assert_eq!(unknown.status, "unknownProcess");
}

#[tokio::test]
async fn terminate_and_interrupt_stop_the_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &[]).await;
    let events = client.watch_process("long");
    client
        .call::<serde_json::Value>(
            method::PROCESS_START,
            start_params("long", "sleep 30 & wait", dir.path(), false),
        )
        .await
        .unwrap();
    let stopped: serde_json::Value = client
        .call(method::PROCESS_TERMINATE, json!({"processId": "long"}))
        .await
        .unwrap();
    assert_eq!(stopped, json!({"running": true}));
    let done = collect(events).await;
    assert_eq!(done.exit_code, Some(137));

    let events = client.watch_process("int");
    let script = "trap 'echo caught; exit 130' INT; echo ready; sleep 30 & wait";
    client
        .call::<serde_json::Value>(
            method::PROCESS_START,
            start_params("int", script, dir.path(), false),
        )
        .await
        .unwrap();
    // Wait until the trap is set before interrupting.
    let ready: ProcessReadResponse = client
        .call(
            method::PROCESS_READ,
            json!({"processId": "int", "waitMs": 5000}),
        )
        .await
        .unwrap();
    assert_eq!(ready.chunks.len(), 1);
    client
        .call::<serde_json::Value>(
            method::PROCESS_SIGNAL,
            json!({"processId": "int", "signal": "interrupt"}),
        )
        .await
        .unwrap();
    let done = collect(events).await;
    assert!(done.stdout.contains("caught"), "{:?}", done.stdout);
    assert_eq!(done.exit_code, Some(130));
}

#[tokio::test]
async fn every_process_runs_in_the_servers_sandbox_whatever_the_client_asks() {
    // Not under /tmp, which workspace-write lets processes write (the clean clone CI uses
    // may itself live under /tmp, so the target dir is no good either).
    let dir = super::common::outside_tmp();
    let root = dir.path().join("root");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let root_arg = root.to_string_lossy().into_owned();
    let client = connect(&root, &["--root", &root_arg]).await;
    let inside = run(&client, "in", "echo ok > inside.txt", &root).await;
    assert_eq!(inside.exit_code, Some(0), "{}", inside.stderr);
    assert!(root.join("inside.txt").is_file());

    // A working directory outside the roots would become writable: refused.
    let outside_cwd = client
        .call::<serde_json::Value>(
            method::PROCESS_START,
            start_params("cwd", "touch x", &outside, false),
        )
        .await
        .unwrap_err();
    assert!(
        outside_cwd.to_string().contains("outside the directories"),
        "{outside_cwd}"
    );
    // Nor does the client's TMPDIR make a folder writable.
    let events = client.watch_process("tmp");
    let mut params = start_params(
        "tmp",
        &format!("echo x > {}/t.txt", outside.display()),
        &root,
        false,
    );
    params["env"]["TMPDIR"] = json!(outside.to_string_lossy());
    client
        .call::<serde_json::Value>(method::PROCESS_START, params)
        .await
        .unwrap();
    let tmp = collect(events).await;
    assert_ne!(tmp.exit_code, Some(0));
    assert!(
        !outside.join("t.txt").exists(),
        "TMPDIR opened a way out of the sandbox"
    );
    assert!(!outside.join("x").exists());

    let events = client.watch_process("out");
    let script = format!("echo escaped > {}/x.txt", outside.display());
    let mut params = start_params("out", &script, &root, false);
    // The client asks for no sandbox; the server's own policy still applies.
    params["sandbox"] = json!({"type": "danger-full-access", "permissions": "full"});
    client
        .call::<serde_json::Value>(method::PROCESS_START, params)
        .await
        .unwrap();
    let escaped = collect(events).await;
    assert_ne!(escaped.exit_code, Some(0));
    assert!(
        escaped.sandbox_denied,
        "the refusal is reported: {}",
        escaped.stderr
    );
    assert!(
        !outside.join("x.txt").exists(),
        "the write escaped the sandbox"
    );
}

#[tokio::test]
async fn an_ordinary_failure_is_not_a_sandbox_denial() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &[]).await;
    let done = run(
        &client,
        "f",
        "echo 'permission denied (just kidding)' >&2; exit 1",
        dir.path(),
    )
    .await;
    assert_eq!(done.exit_code, Some(1));
    assert!(!done.sandbox_denied);
}

#[tokio::test]
async fn closing_the_connection_kills_its_processes() {
    let dir = tempfile::tempdir().unwrap();
    let pid = {
        let client = connect(dir.path(), &[]).await;
        start_sleeper(&client, "s", dir.path()).await
        // Dropping the client closes the server's stdin, ending the connection.
    };
    wait_until_gone(&pid, "a sleep whose client left").await;
}

#[tokio::test]
#[expect(clippy::disallowed_methods, reason = "the test signals the server")]
async fn sigterm_to_the_server_kills_every_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &[]).await;
    let pid = start_sleeper(&client, "t", dir.path()).await;
    let server_pid = client.server_pid().expect("a program server has a pid");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server_pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    wait_until_gone(&pid, "a sleep after the server got SIGTERM").await;
    wait_until_gone(&server_pid.to_string(), "the server after SIGTERM").await;
}

#[tokio::test]
async fn finished_processes_are_remembered_up_to_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    let client = connect(dir.path(), &["--sandbox", "danger-full-access"]).await;
    for i in 0..260 {
        run(&client, &format!("q{i}"), "true", dir.path()).await;
    }
    let oldest = client
        .call::<ProcessReadResponse>(method::PROCESS_READ, json!({"processId": "q0"}))
        .await
        .unwrap_err();
    assert!(
        oldest.to_string().contains("unknown process id q0"),
        "{oldest}"
    );
    let newest: ProcessReadResponse = client
        .call(method::PROCESS_READ, json!({"processId": "q259"}))
        .await
        .unwrap();
    assert!(newest.closed && newest.exit_code == Some(0));
}
