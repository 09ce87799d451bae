//! The shell tools end to end: real commands run by `osprey exec` for a scripted model.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn call(call_id: &str, name: &str, args: Value) -> MockResponse {
    sse_turn(vec![ev_function_call(call_id, name, &args.to_string())])
}

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("msg_final", text)])
}

fn completed_commands(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .map(|e| e["item"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_command_writes_a_file_and_reports_the_command() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "echo hi > out.txt"}),
        ),
        answer("Wrote out.txt."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("sandbox_mode = \"workspace-write\"\n");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "write it"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(repo.path().join("out.txt")).unwrap(),
        "hi\n"
    );
    let events = jsonl(&out);
    let started = events
        .iter()
        .find(|e| e["type"] == "item.started" && e["item"]["type"] == "command_execution")
        .expect("command started");
    assert_eq!(started["item"]["status"], "in_progress");
    assert_eq!(
        started["item"]["command"],
        "/bin/bash -lc 'echo hi > out.txt'"
    );
    let done = &completed_commands(&events)[0];
    assert_eq!(done["exit_code"], 0);
    assert_eq!(done["status"], "completed");
    assert_eq!(done["id"], started["item"]["id"]);
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.contains("Process exited with code 0"), "{output}");
    assert!(output.contains("Wall time:"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_command_keeps_its_exit_code() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "echo oops >&2; exit 3"}),
        ),
        answer("It failed."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "fail"], "").await;
    assert!(
        out.status.success(),
        "a failed command does not fail the turn"
    );
    let done = &completed_commands(&jsonl(&out))[0];
    assert_eq!(done["exit_code"], 3);
    assert_eq!(done["status"], "failed");
    assert_eq!(done["aggregated_output"], "oops\n");
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.contains("Process exited with code 3"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_output_keeps_head_and_tail() {
    let server = MockModelServer::start(vec![
        call("call_1", "exec_command", json!({"cmd": "seq 1 30000"})),
        answer("Counted."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "count"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(
        output.contains("Warning: truncated output"),
        "{}",
        &output[..300]
    );
    assert!(output.contains("tokens truncated"));
    assert!(output.contains("\n1\n2\n3\n"), "head kept");
    assert!(output.trim_end().ends_with("29999\n30000"), "tail kept");
    assert!(output.len() < 50_000, "bounded: {} bytes", output.len());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_running_command_yields_a_session_and_takes_input() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "echo ready; read line; echo got:$line", "yield_time_ms": 300}),
        ),
        call(
            "call_2",
            "write_stdin",
            json!({"session_id": 1000, "chars": "hello\n", "yield_time_ms": 5000}),
        ),
        answer("Done."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "interact"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    assert!(
        first.contains("Process running with session ID 1000"),
        "{first}"
    );
    assert!(first.contains("ready"), "{first}");
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("got:hello"), "{second}");
    assert!(second.contains("Process exited with code 0"), "{second}");
    let done = &completed_commands(&jsonl(&out))[0];
    assert_eq!(done["exit_code"], 0);
    assert!(
        done["aggregated_output"]
            .as_str()
            .unwrap()
            .contains("got:hello")
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tty_session_has_a_terminal_and_echoes_input() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "tty; read x; echo X=$x", "tty": true, "yield_time_ms": 500}),
        ),
        call(
            "call_2",
            "write_stdin",
            json!({"session_id": 1000, "chars": "abc\n", "yield_time_ms": 5000}),
        ),
        answer("Done."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "tty"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    assert!(first.contains("/dev/pts/"), "{first}");
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("abc"), "typed input is echoed: {second}");
    assert!(second.contains("X=abc"), "{second}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_stdin_to_an_unknown_session_is_a_plain_error() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "write_stdin",
            json!({"session_id": 42, "chars": "x"}),
        ),
        answer("ok"),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "x"], "").await;
    assert!(out.status.success());
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.contains("No running session has id 42"), "{output}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_the_command_and_its_children() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "sleep 100 & echo $! > child.pid; echo started; sleep 100", "timeout_ms": 700}),
        ),
        answer("It timed out."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("tools.shell_type = \"shell_command\"\nsandbox_mode = \"workspace-write\"\n");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "sleep"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.contains("timed out after 700 ms"), "{output}");
    assert!(
        output.contains("started"),
        "output so far is kept: {output}"
    );
    let pid = std::fs::read_to_string(repo.path().join("child.pid")).unwrap();
    let pid: i32 = pid.trim().parse().unwrap();
    let alive = std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z");
    assert!(
        !alive,
        "the background child {pid} was killed with the group"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_arguments_get_a_plain_words_error() {
    let server = MockModelServer::start(vec![
        sse_turn(vec![
            ev_function_call("call_1", "exec_command", "{not json"),
            ev_function_call("call_2", "exec_command", "{\"workdir\": \"/tmp\"}"),
            ev_function_call("call_3", "read_file", "{\"file_path\": \"relative.txt\"}"),
        ]),
        answer("ok"),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "x"], "").await;
    assert!(out.status.success());
    let request = &server.requests()[1];
    let not_json = request.output_for("call_1").unwrap();
    assert!(
        not_json.starts_with("failed to parse function arguments"),
        "{not_json}"
    );
    let missing = request.output_for("call_2").unwrap();
    assert!(
        missing.contains("cmd"),
        "names the missing field: {missing}"
    );
    let relative = request.output_for("call_3").unwrap();
    assert!(relative.contains("absolute"), "{relative}");
    for text in [&not_json, &missing, &relative] {
        assert!(
            !text.contains("Error {") && !text.contains("Some("),
            "no Debug text: {text}"
        );
    }
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_dir_pages_are_stable() {
    let repo = temp_git_repo();
    for name in ["d", "a", "c", "e", "b"] {
        std::fs::write(repo.path().join(format!("{name}.txt")), name).unwrap();
    }
    let dir = repo.path().to_str().unwrap().to_string();
    let server = MockModelServer::start(vec![
        sse_turn(vec![
            ev_function_call(
                "p1",
                "list_dir",
                &json!({"dir_path": dir, "offset": 1, "limit": 3, "depth": 1}).to_string(),
            ),
            ev_function_call(
                "p2",
                "list_dir",
                &json!({"dir_path": dir, "offset": 4, "limit": 3, "depth": 1}).to_string(),
            ),
            ev_function_call(
                "all",
                "list_dir",
                &json!({"dir_path": dir, "offset": 1, "limit": 50, "depth": 1}).to_string(),
            ),
        ]),
        answer("listed"),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "list"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let request = &server.requests()[1];
    let entries = |text: String| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with("Absolute path") && !l.starts_with("More than"))
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    };
    let mut paged = entries(request.output_for("p1").unwrap());
    paged.extend(entries(request.output_for("p2").unwrap()));
    assert_eq!(paged, entries(request.output_for("all").unwrap()));
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_sandbox_blocks_a_write_and_says_so() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "echo hi > blocked.txt"}),
        ),
        answer("Blocked."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("sandbox_mode = \"read-only\"\napproval_policy = \"never\"\n");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "write"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(!repo.path().join("blocked.txt").exists());
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(
        output.contains("Sandbox: the sandbox blocked this command"),
        "{output}"
    );
    let done = &completed_commands(&jsonl(&out))[0];
    assert_eq!(done["status"], "failed");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_running_command_streams_item_updates() {
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "echo first; sleep 1.5; echo second", "login": false}),
        ),
        answer("ok"),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("tools.shell_type = \"shell_command\"\n");
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "slow"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let events = jsonl(&out);
    let update = events
        .iter()
        .find(|e| e["type"] == "item.updated" && e["item"]["type"] == "command_execution")
        .expect("an update while the command runs");
    assert_eq!(update["item"]["status"], "in_progress");
    assert!(
        update["item"]["aggregated_output"]
            .as_str()
            .unwrap()
            .starts_with("first\n")
    );
    let done = &completed_commands(&events)[0];
    assert_eq!(done["aggregated_output"], "first\nsecond\n");
    server.verify();
}

/// Holds a write lease on each file named on its command line (Linux `F_SETLEASE`): a
/// process that opens a leased file blocks in `open` until the lease is released, and the
/// holder is told (SIGIO). The holder releases nothing until every file is being opened at
/// once, so the openers must be waiting side by side; it then prints `overlap`. If that does
/// not happen within the timeout it prints `alone` with the files that were opened, releases
/// everything and exits, so a run that reads one file after the other finishes and fails.
const LEASE_HOLDER: &str = r#"
import fcntl, os, signal, sys, time
timeout, paths = float(sys.argv[1]), sys.argv[2:]
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGIO])
fds = [os.open(p, os.O_RDWR) for p in paths]
for fd in fds:
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
print("ready", flush=True)
def opened():
    return [p for p, fd in zip(paths, fds) if fcntl.fcntl(fd, fcntl.F_GETLEASE) != fcntl.F_WRLCK]
deadline = time.monotonic() + timeout
while len(opened()) < len(paths):
    left = deadline - time.monotonic()
    if left <= 0 or signal.sigtimedwait([signal.SIGIO], left) is None:
        break
seen = opened()
print("overlap" if len(seen) == len(paths) else "alone " + " ".join(seen), flush=True)
for fd in fds:
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
"#;

/// Two `read_file` calls in one response run at the same time: each blocks in `open` on a
/// leased file until the other is blocked too (see [`LEASE_HOLDER`]), so run one after the
/// other they would not overlap and the holder would say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_calls_in_one_response_run_at_the_same_time() {
    use std::io::BufRead;
    let repo = temp_git_repo();
    let slow = repo.path().join("slow");
    std::fs::create_dir(&slow).unwrap();
    let (a, b) = (slow.join("a.txt"), slow.join("b.txt"));
    std::fs::write(&a, "contents of a\n").unwrap();
    std::fs::write(&b, "contents of b\n").unwrap();

    #[expect(
        clippy::disallowed_methods,
        reason = "the lease holder runs beside osprey for the whole test"
    )]
    let mut holder = std::process::Command::new("python3")
        .args(["-c", LEASE_HOLDER, "20"])
        .arg(&a)
        .arg(&b)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut lines = std::io::BufReader::new(holder.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");

    let read = |id: &str, path: &std::path::Path| {
        ev_function_call(
            id,
            "read_file",
            &json!({"file_path": path.display().to_string()}).to_string(),
        )
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![read("call_a", &a), read("call_b", &b)]),
        answer("Read both."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "read both"], "").await;
    let verdict = lines.next().unwrap().unwrap();
    holder.wait().unwrap();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(verdict, "overlap", "the two reads did not overlap in time");
    let outputs = &server.requests()[1];
    assert!(
        outputs
            .output_for("call_a")
            .unwrap()
            .contains("contents of a"),
        "{:?}",
        outputs.output_for("call_a")
    );
    assert!(
        outputs
            .output_for("call_b")
            .unwrap()
            .contains("contents of b"),
        "{:?}",
        outputs.output_for("call_b")
    );
    server.verify();
}

/// Over `tools.unified_exec_max_sessions`, starting a session closes the least recently used
/// one: its process is killed, the model is told in the new session's output, and a later
/// `write_stdin` to it is a plain "no running session" error. Session 1000 is the oldest but
/// was used last, so 1001 goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_over_the_cap_closes_the_least_recently_used() {
    let start = |id: &str, name: &str| {
        call(
            id,
            "exec_command",
            json!({"cmd": format!("echo $$ > {name}.pid; echo ready-{name}; exec sleep 600"),
                   "yield_time_ms": 500}),
        )
    };
    // Waits up to 10 s for the process to be gone (or a zombie), then says which it is.
    let check = "pid=$(cat two.pid); for i in $(seq 200); do \
                 s=$(cut -d' ' -f3 /proc/$pid/stat 2>/dev/null); \
                 if [ -z \"$s\" ] || [ \"$s\" = Z ]; then echo two-gone; exit 0; fi; sleep 0.05; done; \
                 echo two-alive";
    let server = MockModelServer::start(vec![
        start("call_1", "one"),
        start("call_2", "two"),
        call(
            "call_3",
            "write_stdin",
            json!({"session_id": 1000, "chars": "", "yield_time_ms": 100}),
        ),
        start("call_4", "three"),
        call(
            "call_5",
            "write_stdin",
            json!({"session_id": 1001, "chars": "x\n"}),
        ),
        call(
            "call_6",
            "exec_command",
            json!({"cmd": check, "yield_time_ms": 30000}),
        ),
        answer("Done."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "tools.unified_exec_max_sessions = 2\nsandbox_mode = \"workspace-write\"\n\
         approval_policy = \"never\"\n",
    );
    let repo = temp_git_repo();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "sessions"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    for (request, call_id, session) in [(1, "call_1", 1000), (2, "call_2", 1001)] {
        let output = requests[request].output_for(call_id).unwrap();
        assert!(
            output.contains(&format!("Process running with session ID {session}")),
            "{output}"
        );
    }
    let third = requests[4].output_for("call_4").unwrap();
    let note = third.lines().next().unwrap_or_default();
    assert!(
        note.starts_with("Note: session 1001 (`")
            && note.contains("echo ready-two; exec sleep 600")
            && note.ends_with("`) was closed to stay within the limit of 2 live sessions."),
        "{third}"
    );
    assert!(
        third.contains("Process running with session ID 1002"),
        "{third}"
    );
    let write = requests[5].output_for("call_5").unwrap();
    assert!(
        write.starts_with("No running session has id 1001 (live sessions: 1000, 1002)."),
        "{write}"
    );
    let check = requests[6].output_for("call_6").unwrap();
    assert!(
        check.contains("two-gone"),
        "the closed session's process still runs: {check}"
    );
    server.verify();
}
