//! The tools through an exec server: `osprey exec --environment ID` with an
//! `environments.toml` entry that starts `osprey exec-server --listen stdio` (as `ssh host
//! osprey exec-server …` would) in a directory of its own, apart from the agent's.
//!
//! Every test checks where things happened: the remote directory has the effects, the
//! agent's directory has none.

use super::common::*;
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::path::Path;

fn call(call_id: &str, name: &str, args: Value) -> MockResponse {
    sse_turn(vec![ev_function_call(call_id, name, &args.to_string())])
}

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("msg_final", text)])
}

/// A home whose `environments.toml` names `dev`: an Osprey exec server started over stdio
/// in `remote`, its only root. `extra_args` go to the server. The shell tool is
/// `shell_command` (one-shot runs) unless `interactive`.
fn home_with_environment(
    server: &MockModelServer,
    remote: &Path,
    extra_args: &[&str],
    interactive: bool,
) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    if !interactive {
        home.write_config("tools.shell_type = \"shell_command\"\n");
    }
    if extra_args.contains(&"danger-full-access") {
        // An unconfined server gets commands only from a thread that asks for no sandbox.
        home.write_config("sandbox_mode = \"danger-full-access\"\n");
    }
    let osprey = workspace_binary("osprey");
    let mut args = vec![
        "exec-server".to_owned(),
        "--listen".to_owned(),
        "stdio".to_owned(),
        "--root".to_owned(),
        remote.display().to_string(),
    ];
    args.extend(extra_args.iter().map(|a| (*a).to_owned()));
    let file = format!(
        "[[environments]]\nid = \"dev\"\nprogram = {program}\nargs = {args}\ncwd = {cwd}\n",
        program = toml_string(&osprey.display().to_string()),
        args = serde_json::to_string(&args).unwrap(),
        cwd = toml_string(&remote.display().to_string()),
    );
    std::fs::write(home.path().join("environments.toml"), file).unwrap();
    home
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A home whose `dev` environment is an exec server in a mount namespace of its own, where
/// `shown` (empty on this machine) holds a copy of `staged`'s files; `staged` is emptied
/// once the copy is made. Whatever the agent then finds under `shown` it can only have
/// read through the server: nothing on this side has those files.
fn home_with_hidden_environment(server: &MockModelServer, staged: &Path, shown: &Path) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config(
        "tools.shell_type = \"shell_command\"\nsandbox_mode = \"danger-full-access\"\n",
    );
    let osprey = workspace_binary("osprey");
    let script = r#"set -e
mount -t tmpfs tmpfs "$1"
cp -a "$2"/. "$1"/
find "$2" -mindepth 1 -delete
cd "$1"
exec "$3" exec-server --listen stdio --root "$1" --sandbox danger-full-access"#;
    let args = [
        "--user",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        script,
        "hidden-server",
        &shown.display().to_string(),
        &staged.display().to_string(),
        &osprey.display().to_string(),
    ]
    .map(str::to_owned);
    let file = format!(
        "[[environments]]\nid = \"dev\"\nprogram = \"unshare\"\nargs = {args}\n",
        args = serde_json::to_string(&args).unwrap(),
    );
    std::fs::write(home.path().join("environments.toml"), file).unwrap();
    home
}

async fn run(home: &TempHome, local: &Path, prompt: &str) -> std::process::Output {
    osprey_async(
        home,
        local,
        &["exec", "--json", "--environment", "dev", prompt],
        "",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_on_the_exec_server_side() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "pwd; echo made-remotely > out.txt"}),
        ),
        call("call_2", "shell_command", json!({"command": "cat out.txt"})),
        answer("Done."),
    ])
    .await;
    let home = home_with_environment(&server, remote.path(), &[], false);
    let out = run(&home, local.path(), "write it").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(remote.path().join("out.txt")).unwrap(),
        "made-remotely\n"
    );
    assert!(
        !local.path().join("out.txt").exists(),
        "nothing happens on the agent's side"
    );
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    let remote_dir = remote.path().canonicalize().unwrap();
    assert!(first.contains(&remote_dir.display().to_string()), "{first}");
    assert!(first.contains("Process exited with code 0"), "{first}");
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("made-remotely"), "{second}");
    // The model is told where its tools act.
    let context = requests[0]
        .user_texts()
        .into_iter()
        .find(|t| t.starts_with("<environment_context>"))
        .expect("an environment context");
    assert!(
        context.contains("<environment id=\"dev\" primary=\"true\">"),
        "{context}"
    );
    assert!(
        context.contains(&format!("<cwd>{}</cwd>", remote.path().display())),
        "{context}"
    );
    let events = jsonl(&out);
    let done: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .collect();
    assert_eq!(done.len(), 2, "{events:?}");
    assert_eq!(done[0]["item"]["exit_code"], 0);
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_session_on_the_server_takes_input() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "read line; echo got-$line", "tty": true, "yield_time_ms": 500}),
        ),
        call(
            "call_2",
            "write_stdin",
            json!({"session_id": 1000, "chars": "abc\n", "yield_time_ms": 3000}),
        ),
        answer("Done."),
    ])
    .await;
    let home = home_with_environment(&server, remote.path(), &[], true);
    let out = run(&home, local.path(), "talk to it").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    assert!(
        first.contains("Process running with session ID 1000"),
        "{first}"
    );
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("got-abc"), "{second}");
    assert!(second.contains("Process exited with code 0"), "{second}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escalation_cannot_leave_the_servers_sandbox() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "touch escaped", "sandbox_permissions": "require_escalated", "justification": "needs it"}),
        ),
        answer("Could not."),
    ])
    .await;
    let home = home_with_environment(&server, remote.path(), &[], false);
    let out = run(&home, local.path(), "escape").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.contains("exec server's own sandbox"), "{output}");
    assert!(!remote.path().join("escaped").exists());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_lost_mid_command_is_reported_and_the_next_call_reconnects() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        // The command's parent is the exec server: killing it drops the connection.
        call(
            "call_1",
            "shell_command",
            json!({"command": "kill -9 $PPID; sleep 5"}),
        ),
        call("call_2", "shell_command", json!({"command": "echo back"})),
        answer("Done."),
    ])
    .await;
    let home = home_with_environment(
        &server,
        remote.path(),
        &["--sandbox", "danger-full-access"],
        false,
    );
    let out = run(&home, local.path(), "crash it").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    // The server may die before or after it answers process/start: either way the model
    // hears that the connection went and the command's fate is unknown.
    assert!(
        first.contains("the connection to the exec server of environment `dev`"),
        "{first}"
    );
    assert!(first.contains("is unknown"), "{first}");
    let second = requests[2].output_for("call_2").unwrap();
    assert!(
        second.contains("back"),
        "a new connection serves the next call: {second}"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_environment_fails_before_any_request() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![]).await;
    let home = home_with_environment(&server, remote.path(), &[], false);
    let out = osprey_async(
        &home,
        local.path(),
        &["exec", "--environment", "nope", "hi"],
        "",
    )
    .await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("no environment `nope`"), "{err}");
    assert!(err.contains("dev"), "lists the configured ones: {err}");
    assert!(server.requests().is_empty());
}

fn patch(call_id: &str, text: &str) -> MockResponse {
    sse_turn(vec![ev_custom_tool_call(call_id, "apply_patch", text)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_edits_the_files_on_the_server_side() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    std::fs::write(remote.path().join("crlf.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    std::fs::write(local.path().join("crlf.txt"), "local copy\n").unwrap();
    let server = MockModelServer::start(vec![
        patch(
            "call_1",
            "*** Begin Patch\n*** Update File: crlf.txt\n@@\n one\n-two\n+TWO\n*** Add File: new/dir/added.txt\n+added remotely\n*** End Patch\n",
        ),
        // A patch whose second file does not match: nothing of it may land.
        patch(
            "call_2",
            "*** Begin Patch\n*** Add File: half.txt\n+should not exist\n*** Update File: crlf.txt\n@@\n-no such line\n+x\n*** End Patch\n",
        ),
        answer("Done."),
    ])
    .await;
    let home = home_with_environment(&server, remote.path(), &[], false);
    // Writes inside the (remote) working directory need no approval.
    home.write_config("sandbox_mode = \"workspace-write\"\n");
    let out = run(&home, local.path(), "edit").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    assert!(first.contains("Success."), "{first}");
    assert_eq!(
        std::fs::read_to_string(remote.path().join("crlf.txt")).unwrap(),
        "one\r\nTWO\r\nthree\r\n",
        "CRLF stays CRLF"
    );
    assert_eq!(
        std::fs::read_to_string(remote.path().join("new/dir/added.txt")).unwrap(),
        "added remotely\n"
    );
    assert_eq!(
        std::fs::read_to_string(local.path().join("crlf.txt")).unwrap(),
        "local copy\n",
        "the agent's own files are untouched"
    );
    assert!(!local.path().join("new").exists());
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("verification failed"), "{second}");
    assert!(!remote.path().join("half.txt").exists());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_outside_the_servers_roots_is_refused_there() {
    let remote = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let target = outside.path().join("planted.txt");
    let server = MockModelServer::start(vec![
        patch(
            "call_1",
            &format!(
                "*** Begin Patch\n*** Add File: {}\n+nope\n*** End Patch\n",
                target.display()
            ),
        ),
        answer("Refused."),
    ])
    .await;
    let home = home_with_environment(&server, remote.path(), &[], false);
    // Full access here, so only the server's roots can stop the write.
    home.write_config("approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n");
    let out = run(&home, local.path(), "plant").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.contains("apply_patch failed"), "{output}");
    assert!(
        !target.exists(),
        "the server refused the write outside its roots"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_md_comes_from_the_servers_side() {
    let staged = tempfile::tempdir().unwrap();
    let shown = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    std::fs::create_dir(staged.path().join(".git")).unwrap();
    std::fs::create_dir(staged.path().join("sub")).unwrap();
    std::fs::write(staged.path().join("AGENTS.md"), "remote root rules").unwrap();
    std::fs::write(staged.path().join("sub/AGENTS.md"), "remote sub rules").unwrap();
    std::fs::write(local.path().join("AGENTS.md"), "local rules").unwrap();
    let server = MockModelServer::start(vec![answer("Read them.")]).await;
    // Only the server's mount namespace has these files.
    let home = home_with_hidden_environment(&server, staged.path(), shown.path());
    let sub = shown.path().join("sub").display().to_string();
    let out = osprey_async(
        &home,
        local.path(),
        &[
            "exec",
            "--json",
            "--environment",
            "dev",
            "--environment-cwd",
            &sub,
            "hi",
        ],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let texts = server.requests()[0].user_texts().join("\n");
    let root = texts
        .find("remote root rules")
        .expect("the remote root's AGENTS.md");
    let nested = texts
        .find("remote sub rules")
        .expect("the remote cwd's AGENTS.md");
    assert!(root < nested, "root first: {texts}");
    assert!(!texts.contains("local rules"), "{texts}");
    assert!(texts.contains(&format!("<cwd>{sub}</cwd>")), "{texts}");
    server.verify();
}

/// The reference Codex CLI (`OSPREY_CODEX_BIN`), when the test dependencies are installed.
fn codex_bin() -> Option<String> {
    match std::env::var("OSPREY_CODEX_BIN") {
        Ok(bin) => Some(bin),
        Err(_) if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") => {
            panic!("OSPREY_REQUIRE_REFERENCE=1 but OSPREY_CODEX_BIN is not set")
        }
        Err(_) => {
            eprintln!("skipped: set OSPREY_CODEX_BIN to run against codex exec-server");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_works_through_codexs_exec_server() {
    let Some(codex) = codex_bin() else {
        return;
    };
    let remote = tempfile::tempdir().unwrap();
    let remote_dir = remote.path().canonicalize().unwrap();
    let codex_home = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    std::fs::write(remote_dir.join("notes.txt"), "old\r\nline\r\n").unwrap();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "echo via-codex > made.txt; cat made.txt"}),
        ),
        patch(
            "call_2",
            "*** Begin Patch\n*** Update File: notes.txt\n@@\n-old\n+new\n*** End Patch\n",
        ),
        answer("Done."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    // Codex's server runs commands unconfined unless sent a sandbox context: only a thread
    // without a sandbox may use it (the next test shows the refusal).
    home.write_config(
        "tools.shell_type = \"shell_command\"\nsandbox_mode = \"danger-full-access\"\n",
    );
    let file = format!(
        "[[environments]]\nid = \"codex\"\nprogram = {program}\nargs = [\"exec-server\", \"--listen\", \"stdio\"]\ncwd = {cwd}\nenv = {{ CODEX_HOME = {codex_home} }}\n",
        program = toml_string(&codex),
        cwd = toml_string(&remote_dir.display().to_string()),
        codex_home = toml_string(&codex_home.path().display().to_string()),
    );
    std::fs::write(home.path().join("environments.toml"), file).unwrap();
    let out = osprey_async_with(
        &home,
        local.path(),
        &["exec", "--json", "--environment", "codex", "go"],
        "",
        &[("RUST_LOG", "osprey_core=info")],
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    assert!(first.contains("via-codex"), "{first}");
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("Success."), "{second}");
    assert_eq!(
        std::fs::read_to_string(remote_dir.join("made.txt")).unwrap(),
        "via-codex\n"
    );
    assert_eq!(
        std::fs::read_to_string(remote_dir.join("notes.txt")).unwrap(),
        "new\r\nline\r\n"
    );
    // Codex 0.171 advertises V2 discovery and is past the 0.164.0 gate.
    let err = stderr(&out);
    assert!(err.contains("capability discovery: V2"), "{err}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn osprey_s_own_server_is_probed_with_fs_calls() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![answer("Hi.")]).await;
    let home = home_with_environment(&server, remote.path(), &[], false);
    let out = osprey_async_with(
        &home,
        local.path(),
        &["exec", "--environment", "dev", "hi"],
        "",
        &[("RUST_LOG", "osprey_core=info")],
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    // Osprey reports its own version (0.x), older than the V2 gate's 0.164.0.
    assert!(err.contains("capability discovery: V1"), "{err}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_tools_read_the_servers_files() {
    let staged = tempfile::tempdir().unwrap();
    let shown = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let dir = staged.path();
    std::fs::create_dir(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "fn one() {}\nfn needle() {}\n").unwrap();
    std::fs::write(dir.join("ignored.rs"), "fn needle() {}\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "ignored.rs\n").unwrap();
    // A 1x1 PNG.
    let png = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8,
        0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    std::fs::write(dir.join("dot.png"), png).unwrap();
    let dir = shown.path();
    let lib = dir.join("src/lib.rs").display().to_string();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "read_file",
            json!({"file_path": lib, "offset": 2, "limit": 1}),
        ),
        call(
            "call_2",
            "list_dir",
            json!({"dir_path": dir.display().to_string(), "depth": 2}),
        ),
        call(
            "call_3",
            "grep_files",
            json!({"pattern": "needle", "path": dir.display().to_string()}),
        ),
        call("call_4", "view_image", json!({"path": "dot.png"})),
        call(
            "call_5",
            "read_file",
            json!({"file_path": dir.join("missing.rs").display().to_string()}),
        ),
        answer("Read."),
    ])
    .await;
    let home = home_with_hidden_environment(&server, staged.path(), dir);
    home.write_config(
        "tools.read_file = true\ntools.list_dir = true\ntools.grep_files = true\ntools.view_image = true\n",
    );
    let out = run(&home, local.path(), "look").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let read = requests[1].output_for("call_1").unwrap();
    assert!(read.contains("fn needle() {}"), "{read}");
    assert!(!read.contains("fn one"), "{read}");
    let listing = requests[2].output_for("call_2").unwrap();
    assert!(listing.contains("lib.rs"), "{listing}");
    assert!(listing.contains("dot.png"), "{listing}");
    let grep = requests[3].output_for("call_3").unwrap();
    assert!(grep.contains("src/lib.rs"), "{grep}");
    assert!(
        !grep.contains("ignored.rs"),
        ".gitignore holds on the server too: {grep}"
    );
    let image = requests[4].output_for("call_4").unwrap();
    assert!(image.contains("1x1"), "{image}");
    let missing = requests[5].output_for("call_5").unwrap();
    assert!(missing.contains("missing.rs"), "{missing}");
    // None of it was ever on this side.
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(staged.path()).unwrap().count(), 0);
    server.verify();
}

/// The whole path as it is with a real remote: the server in a network namespace of its
/// own (reached over a veth pair, so with a token) and a mount namespace where the folder
/// it serves is a tmpfs this machine cannot see.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::disallowed_methods,
    reason = "the test starts the server in its namespaces"
)]
async fn the_agent_works_against_a_server_on_its_own_network() {
    use osprey_test_support::netns::{TestHost, is_root};
    use std::io::BufRead;
    if !is_root() {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let subnet = u8::try_from(std::process::id() % 200).unwrap_or(9) + 20;
    let host = TestHost::create("ag", subnet).expect("a network namespace (as root)");
    let work = tempfile::tempdir().unwrap();
    let served = work.path().join("served");
    std::fs::create_dir(&served).unwrap();
    let token = "agent-netns-token-0123456789abcdef";
    let token_file = work.path().join("token");
    std::fs::write(&token_file, token).unwrap();
    let script = format!(
        "mount -t tmpfs tmpfs {served} && cd {served} && exec {osprey} exec-server --listen ws://{addr}:0 --ws-token-file {token} --root {served} --sandbox danger-full-access",
        served = served.display(),
        osprey = workspace_binary("osprey").display(),
        addr = host.address,
        token = token_file.display(),
    );
    let mut child = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &host.name,
            "unshare",
            "--mount",
            "--propagation",
            "private",
        ])
        .args(["sh", "-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_owned();
    assert!(
        url.starts_with(&format!("ws://{}:", host.address)),
        "{url:?}"
    );

    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "echo there > made.txt; ls /sys/class/net | sort | tr '\\n' ' '"}),
        ),
        patch(
            "call_2",
            "*** Begin Patch\n*** Update File: made.txt\n@@\n-there\n+patched there\n*** End Patch\n",
        ),
        call("call_3", "shell_command", json!({"command": "cat made.txt"})),
        answer("Done."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "tools.shell_type = \"shell_command\"\nsandbox_mode = \"danger-full-access\"\n",
    );
    let file = format!(
        "[[environments]]\nid = \"dev\"\nurl = {url}\ntoken_env_var = \"DEV_TOKEN\"\n",
        url = toml_string(&url),
    );
    std::fs::write(home.path().join("environments.toml"), file).unwrap();
    let out = osprey_async_with(
        &home,
        local.path(),
        &["exec", "--json", "--environment", "dev", "work there"],
        "",
        &[("DEV_TOKEN", token)],
    )
    .await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    let mut interfaces = ["lo".to_owned(), host.interface.clone()];
    interfaces.sort();
    assert!(
        first.contains(&interfaces.join(" ")),
        "its own network: {first}"
    );
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("Success."), "{second}");
    let third = requests[3].output_for("call_3").unwrap();
    assert!(third.contains("patched there"), "{third}");
    assert!(
        !served.join("made.txt").exists(),
        "nothing landed on this machine"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_cut_off_by_a_lost_connection_is_reported_lost() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "echo waiting; sleep 30", "yield_time_ms": 300}),
        ),
        // Its parent is the exec server: the connection goes with it.
        call(
            "call_2",
            "exec_command",
            json!({"cmd": "kill -9 $PPID", "yield_time_ms": 2000}),
        ),
        call(
            "call_3",
            "write_stdin",
            json!({"session_id": 1000, "chars": "", "yield_time_ms": 2000}),
        ),
        call("call_4", "exec_command", json!({"cmd": "echo reconnected"})),
        answer("Done."),
    ])
    .await;
    let home = home_with_environment(
        &server,
        remote.path(),
        &["--sandbox", "danger-full-access"],
        true,
    );
    let out = run(&home, local.path(), "lose it").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    assert!(
        first.contains("Process running with session ID 1000"),
        "{first}"
    );
    let third = requests[3].output_for("call_3").unwrap();
    assert!(third.contains("session lost"), "{third}");
    assert!(
        !third.contains("Process running"),
        "a lost session is over: {third}"
    );
    let fourth = requests[4].output_for("call_4").unwrap();
    assert!(fourth.contains("reconnected"), "{fourth}");
    server.verify();
}

/// The Windows exec server (cross-compiled, `bash scripts/wine-exec-server.sh build`) under
/// Wine, or why it cannot run here. `OSPREY_REQUIRE_WINE=1` (set by the test dependencies'
/// script once Wine and mingw are installed) turns a missing piece into a failure.
fn windows_server() -> Option<std::path::PathBuf> {
    let exe = workspace_binary("osprey")
        .parent()
        .and_then(Path::parent)
        .map(|target| target.join("x86_64-pc-windows-gnu/debug/osprey-exec-server.exe"))?;
    let wine = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join("wine").is_file());
    let shim = exe.with_file_name("bcryptprimitives.dll");
    if wine && exe.is_file() && shim.is_file() {
        return Some(exe);
    }
    let why = format!(
        "the Windows exec server under Wine needs `wine` on PATH and {} with bcryptprimitives.dll beside it (bash scripts/wine-exec-server.sh build)",
        exe.display()
    );
    assert!(
        std::env::var("OSPREY_REQUIRE_WINE").as_deref() != Ok("1"),
        "OSPREY_REQUIRE_WINE=1 but {why}"
    );
    eprintln!("skipped: {why}");
    None
}

/// Osprey's agent against the Windows exec server under Wine: the shell is cmd.exe (never
/// /bin/bash), shell_command and exec_command derive cmd's arguments, apply_patch keeps a
/// CRLF file CRLF through fs calls on Windows paths, the file tools read Windows paths, and
/// a timeout kills the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_drives_a_windows_exec_server_under_wine() {
    let Some(exe) = windows_server() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    std::fs::write(dir.join("notes.txt"), "alpha\r\nbeta\r\n").unwrap();
    // Wine maps this machine's / to drive Z:.
    let win_dir = format!("Z:{}", dir.display().to_string().replace('/', "\\"));
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "echo %COMSPEC% & echo made> made.txt & type made.txt"}),
        ),
        patch(
            "call_2",
            "*** Begin Patch\n*** Update File: notes.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n",
        ),
        call("call_3", "read_file", json!({"file_path": format!("{win_dir}\\notes.txt")})),
        call("call_4", "list_dir", json!({"dir_path": win_dir.clone()})),
        call("call_4b", "grep_files", json!({"pattern": "gamma", "path": win_dir.clone()})),
        call(
            "call_5",
            "shell_command",
            json!({"command": "ping -n 30 127.0.0.1 >NUL & echo never", "timeout_ms": 1500}),
        ),
        answer("Done."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(
        "tools.shell_type = \"shell_command\"\ntools.read_file = true\ntools.list_dir = true\ntools.grep_files = true\nsandbox_mode = \"danger-full-access\"\n",
    );
    let args = [
        exe.display().to_string(),
        "--listen".to_owned(),
        "stdio".to_owned(),
        "--sandbox".to_owned(),
        "danger-full-access".to_owned(),
        "--root".to_owned(),
        win_dir.clone(),
    ];
    let file = format!(
        "[[environments]]\nid = \"win\"\nprogram = \"wine\"\nargs = {args}\ncwd = {cwd}\ninitialize_timeout_sec = 120\nenv = {{ WINEPREFIX = {prefix}, WINEDEBUG = \"-all\", WINEDLLOVERRIDES = \"mscoree,mshtml=\" }}\n",
        args = serde_json::to_string(&args).unwrap(),
        cwd = toml_string(&dir.display().to_string()),
        prefix = toml_string(&prefix.path().display().to_string()),
    );
    std::fs::write(home.path().join("environments.toml"), file).unwrap();
    let out = osprey_async(
        &home,
        local.path(),
        &["exec", "--json", "--environment", "win", "work on windows"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let requests = server.requests();
    let context = requests[0].user_texts().join("\n");
    assert!(
        context.contains("<shell>cmd"),
        "cmd.exe, never bash: {context}"
    );
    let first = requests[1].output_for("call_1").unwrap();
    assert!(first.to_lowercase().contains("cmd.exe"), "{first}");
    assert!(first.contains("made"), "{first}");
    assert!(!first.contains("/bin/bash"), "{first}");
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("Success."), "{second}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "alpha\r\ngamma\r\n",
        "CRLF kept"
    );
    let third = requests[3].output_for("call_3").unwrap();
    assert!(third.contains("gamma"), "{third}");
    let fourth = requests[4].output_for("call_4").unwrap();
    assert!(fourth.contains("made.txt"), "{fourth}");
    let grep = requests[5].output_for("call_4b").unwrap();
    assert!(grep.contains("notes.txt"), "{grep}");
    assert!(grep.contains("Z:/"), "Windows paths for the model: {grep}");
    let fifth = requests[6].output_for("call_5").unwrap();
    assert!(fifth.contains("timed out"), "{fifth}");
    assert!(!fifth.contains("never"), "{fifth}");
    server.verify();

    // exec_command without `shell` uses the server's shell too (the seed ran /bin/bash).
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "exec_command",
            json!({"cmd": "echo %COMSPEC%", "yield_time_ms": 5000}),
        ),
        answer("Done."),
    ])
    .await;
    let exec_home = TempHome::for_server(&server, WireApi::Responses);
    exec_home.write_config("sandbox_mode = \"danger-full-access\"\n");
    std::fs::copy(
        home.path().join("environments.toml"),
        exec_home.path().join("environments.toml"),
    )
    .unwrap();
    let out = osprey_async(
        &exec_home,
        local.path(),
        &["exec", "--json", "--environment", "win", "which shell"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(output.to_lowercase().contains("cmd.exe"), "{output}");
    assert!(output.contains("Process exited with code 0"), "{output}");
    let events = jsonl(&out);
    let command = events
        .iter()
        .find(|e| e["type"] == "item.started" && e["item"]["type"] == "command_execution")
        .map(|e| e["item"]["command"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    assert!(command.to_lowercase().contains("cmd.exe"), "{command}");
    assert!(!command.contains("bash"), "{command}");
    server.verify();
}

/// Codex's exec server runs processes unconfined when the client sends no sandbox context
/// (Osprey sends none): a thread whose policy asks for a sandbox must not hand it a
/// command. The probe at connection time finds out before the model's first command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_thread_refuses_a_server_that_does_not_confine() {
    let Some(codex) = codex_bin() else {
        return;
    };
    let remote = tempfile::tempdir().unwrap();
    let remote_dir = remote.path().canonicalize().unwrap();
    let codex_home = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![
        call(
            "call_1",
            "shell_command",
            json!({"command": "touch unconfined.txt"}),
        ),
        answer("Could not."),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("tools.shell_type = \"shell_command\"\nsandbox_mode = \"workspace-write\"\n");
    let file = format!(
        "[[environments]]\nid = \"codex\"\nprogram = {program}\nargs = [\"exec-server\", \"--listen\", \"stdio\"]\ncwd = {cwd}\nenv = {{ CODEX_HOME = {codex_home} }}\n",
        program = toml_string(&codex),
        cwd = toml_string(&remote_dir.display().to_string()),
        codex_home = toml_string(&codex_home.path().display().to_string()),
    );
    std::fs::write(home.path().join("environments.toml"), file).unwrap();
    let out = osprey_async(
        &home,
        local.path(),
        &["exec", "--json", "--environment", "codex", "go"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let output = server.requests()[1].output_for("call_1").unwrap();
    assert!(
        output.contains("runs commands without a sandbox"),
        "{output}"
    );
    assert!(!remote_dir.join("unconfined.txt").exists(), "nothing ran");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relative_environment_cwd_is_a_usage_error() {
    let remote = tempfile::tempdir().unwrap();
    let local = temp_git_repo();
    let server = MockModelServer::start(vec![]).await;
    let home = home_with_environment(&server, remote.path(), &[], false);
    let out = osprey_async(
        &home,
        local.path(),
        &[
            "exec",
            "--environment",
            "dev",
            "--environment-cwd",
            "src",
            "hi",
        ],
        "",
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = stderr(&out);
    assert!(
        err.contains("--environment-cwd src is not absolute"),
        "{err}"
    );
    assert!(server.requests().is_empty());
}
