//! thread/start's `environments`: the thread's tools act on the exec server of the chosen
//! `environments.toml` entry, in the working directory the entry's `cwd` names.

use osprey_test_support::*;
use serde_json::json;

use super::client::{Client, osprey_bin};

fn home_with_environment(server: &MockModelServer, remote: &std::path::Path) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config("tools.shell_type = \"shell_command\"\n");
    let args = [
        "exec-server",
        "--listen",
        "stdio",
        "--root",
        &remote.display().to_string(),
        "--sandbox",
        "workspace-write",
    ];
    let file = format!(
        "[[environments]]\nid = \"dev\"\nprogram = {}\nargs = {}\n",
        serde_json::to_string(&osprey_bin().display().to_string()).unwrap(),
        serde_json::to_string(&args).unwrap(),
    );
    std::fs::write(home.path().join("environments.toml"), file).unwrap();
    home
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_started_in_an_environment_runs_its_commands_there() {
    let remote = tempfile::tempdir().unwrap();
    let remote_dir = remote.path().canonicalize().unwrap();
    std::fs::create_dir(remote_dir.join("project")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_1",
            "shell_command",
            &json!({"command": "pwd; echo remote > made.txt"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "Done.")]),
    ])
    .await;
    let home = home_with_environment(&server, &remote_dir);
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let project = remote_dir.join("project");
    let extra = json!({
        "approvalPolicy": "never",
        "sandbox": "workspace-write",
        "environments": [{"environmentId": "dev", "cwd": project.display().to_string()}],
    });
    let thread = client.start_thread(work.path(), extra).await;
    client.start_turn(&thread, "go").await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        std::fs::read_to_string(project.join("made.txt")).unwrap(),
        "remote\n"
    );
    assert!(!work.path().join("made.txt").exists());
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.contains(&project.display().to_string()), "{output}");
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_environment_is_a_plain_error_at_thread_start() {
    let remote = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = MockModelServer::start(vec![]).await;
    let home = home_with_environment(&server, remote.path());
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let error = client
        .request_error(
            "thread/start",
            json!({"cwd": work.path().display().to_string(), "environments": [{"environmentId": "nope", "cwd": "/srv"}]}),
        )
        .await;
    assert!(error.contains("no environment `nope`"), "{error}");
    let relative = client
        .request_error(
            "thread/start",
            json!({"cwd": work.path().display().to_string(), "environments": [{"environmentId": "dev", "cwd": "src"}]}),
        )
        .await;
    assert!(relative.contains("not absolute"), "{relative}");
    assert!(client.close().await.success());
    assert!(server.requests().is_empty());
}

/// An interrupted turn stops its command on the server too (the run's future is dropped
/// mid-wait; the process must not go on there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_remote_command_is_terminated_on_the_server() {
    let remote = tempfile::tempdir().unwrap();
    let remote_dir = remote.path().canonicalize().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = MockModelServer::start(vec![sse_turn(vec![ev_function_call(
        "call_1",
        "shell_command",
        &json!({"command": "echo $$ > pid; sleep 30", "timeout_ms": 60000}).to_string(),
    )])])
    .await;
    let home = home_with_environment(&server, &remote_dir);
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let extra = json!({
        "approvalPolicy": "never",
        "sandbox": "workspace-write",
        "environments": [{"environmentId": "dev", "cwd": remote_dir.display().to_string()}],
    });
    let thread = client.start_thread(work.path(), extra).await;
    let turn = client.start_turn(&thread, "wait").await;
    let pid_file = remote_dir.join("pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    client
        .request(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        )
        .await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "interrupted", "{done}");
    let gone = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_or(true, |stat| stat.contains(") Z"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !gone(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the remote command {pid} still runs after the interrupt"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(client.close().await.success());
}
