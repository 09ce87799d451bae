//! Osprey's client against the reference Codex exec server (`OSPREY_CODEX_BIN`), and the
//! same raw requests sent to both servers compared reply by reply.

use std::path::PathBuf;

use osprey_exec_server::client::{ConnectOptions, ExecServerClient};
use osprey_exec_server::protocol::{ReadFileResponse, method};
use osprey_exec_server::uri;
use osprey_exec_server::version_gate::Discovery;
use serde_json::{Value, json};

use super::common::{RawServer, base_env, osprey, run};

fn reference_bin() -> Option<PathBuf> {
    match std::env::var_os("OSPREY_CODEX_BIN") {
        Some(bin) => Some(PathBuf::from(bin)),
        None if std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() == Ok("1") => panic!(
            "OSPREY_REQUIRE_REFERENCE=1 but OSPREY_CODEX_BIN is not set; run \
             eval \"$(bash scripts/install-test-deps.sh)\""
        ),
        None => {
            eprintln!("skipped: set OSPREY_CODEX_BIN to run against codex exec-server");
            None
        }
    }
}

fn codex_env(home: &std::path::Path) -> std::collections::HashMap<String, String> {
    let mut env = base_env();
    env.insert("CODEX_HOME".to_owned(), home.to_string_lossy().into_owned());
    env
}

#[tokio::test]
async fn osprey_client_drives_codex_exec_server() {
    let Some(codex) = reference_bin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let home = work.join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let args = [
        "exec-server".to_owned(),
        "--listen".to_owned(),
        "stdio".to_owned(),
    ];
    let client = ExecServerClient::connect_program(
        &codex.to_string_lossy(),
        &args,
        codex_env(&home),
        &work,
        ConnectOptions::default(),
    )
    .await
    .unwrap();
    // Codex 0.171 serves V2 discovery; the shared gate says so.
    assert_eq!(client.discovery(true), Discovery::V2);
    assert!(matches!(client.discovery(false), Discovery::V1 { .. }));
    let done = run(&client, "c1", "echo from-codex; echo e >&2; exit 4", &work).await;
    assert_eq!(done.stdout, "from-codex\n");
    assert_eq!(done.stderr, "e\n");
    assert_eq!(done.exit_code, Some(4));
    let file = uri::from_path(&work.join("x.txt"));
    client
        .call::<Value>(
            method::FS_WRITE_FILE,
            json!({"path": file, "dataBase64": "aGkK"}),
        )
        .await
        .unwrap();
    let read: ReadFileResponse = client
        .call(method::FS_READ_FILE, json!({"path": file}))
        .await
        .unwrap();
    assert_eq!(read.data_base64, "aGkK");
}

/// Requests whose replies must have the same shape (and, for errors, the same code) from
/// both servers. Messages of errors may differ where Osprey says more.
fn script(work: &std::path::Path) -> Vec<(&'static str, Value)> {
    let dir = uri::from_path(work);
    vec![
        ("environment/status", json!({})),
        ("fs/readFile", json!({"path": "file:///nonexistent/x"})),
        ("fs/readFile", json!({"path": "/plain/path"})),
        ("fs/walk", json!({"path": dir, "options": {}})),
        ("fs/getMetadata", json!({"path": format!("{dir}/a.txt")})),
        ("fs/readDirectory", json!({"path": dir})),
        (
            "fs/canonicalize",
            json!({"path": format!("{dir}/../{}", work.file_name().unwrap().to_string_lossy())}),
        ),
        (
            "fs/walk",
            json!({"path": dir, "options": {"maxDepth": 3, "maxDirectories": 10, "maxEntries": 10, "followDirectorySymlinks": false, "pruneHiddenDirectories": true}}),
        ),
        (
            "process/start",
            json!({"processId": "p", "argv": [], "cwd": dir, "env": {}, "tty": false}),
        ),
        ("process/read", json!({"processId": "ghost"})),
        ("process/terminate", json!({"processId": "ghost"})),
        (
            "process/write",
            json!({"processId": "ghost", "chunk": "eA=="}),
        ),
        (
            "process/signal",
            json!({"processId": "ghost", "signal": "interrupt"}),
        ),
        ("no/such", json!({})),
    ]
}

/// The JSON shape of a value: key paths and types, values left out.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        Value::Array(items) => Value::Array(items.first().map(shape).into_iter().collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => json!("null"),
    }
}

async fn replies(program: &std::path::Path, args: &[&str], work: &std::path::Path) -> Vec<Value> {
    let mut server = RawServer::start(program, args, work);
    server.handshake().await;
    let mut out = Vec::new();
    for (i, (name, params)) in script(work).into_iter().enumerate() {
        let id = 100 + i64::try_from(i).unwrap();
        let reply = server.request(id, name, params).await;
        out.push(match reply.get("error") {
            Some(error) => json!({"error": error["code"]}),
            None => json!({"result": shape(&reply["result"])}),
        });
    }
    out
}

#[tokio::test]
async fn replies_match_codex_exec_server() {
    let Some(codex) = reference_bin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    std::fs::write(work.join("a.txt"), "a").unwrap();
    std::fs::create_dir_all(work.join("sub")).unwrap();
    let theirs = replies(&codex, &["exec-server", "--listen", "stdio"], &work).await;
    let ours = replies(&osprey(), &["exec-server", "--listen", "stdio"], &work).await;
    let names: Vec<&str> = script(&work).iter().map(|(n, _)| *n).collect();
    let mut problems = Vec::new();
    for ((name, theirs), ours) in names.iter().zip(&theirs).zip(&ours) {
        if theirs != ours {
            problems.push(format!("{name}: codex {theirs} / osprey {ours}"));
        }
    }
    assert!(
        problems.is_empty(),
        "differences from codex exec-server 0.171:\n{}",
        problems.join("\n")
    );
}

/// The other direction: Codex's own agent (`codex exec`) with an `environments.toml` whose
/// default environment is `osprey exec-server --listen stdio` runs its command there. A
/// `tee` in front of the server records what Codex sent.
#[tokio::test]
#[expect(clippy::disallowed_methods, reason = "the test runs codex exec")]
async fn codex_agent_runs_its_command_through_osprey_exec_server() {
    use osprey_test_support::{MockModelServer, load_script};
    let Some(codex) = reference_bin() else {
        return;
    };
    let script_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite/codex-agent.mock.json");
    let model = MockModelServer::start(load_script(&script_path).unwrap()).await;
    // Not under /tmp: Codex refuses to place its helpers beside a home in a temp folder.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (home, user_home, work) = (base.join("home"), base.join("user"), base.join("work"));
    for d in [&home, &user_home, &work] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\n\
             name = \"mock\"\nbase_url = \"{}\"\nenv_key = \"MOCK_KEY\"\nwire_api = \"responses\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n",
            model.base_url()
        ),
    )
    .unwrap();
    let wire = base.join("wire.log");
    let server = format!(
        "tee -a {} | {} exec-server --listen stdio --root {} 2>>{}",
        wire.display(),
        osprey().display(),
        work.display(),
        base.join("server.err").display()
    );
    std::fs::write(
        home.join("environments.toml"),
        format!(
            "default = \"osp\"\n\n[[environments]]\nid = \"osp\"\nprogram = \"bash\"\nargs = [\"-c\", {}]\n",
            serde_json::to_string(&server).unwrap()
        ),
    )
    .unwrap();
    let out = tokio::process::Command::new(&codex)
        .args([
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "run it",
        ])
        .current_dir(&work)
        .env_clear()
        .envs(base_env())
        .env("HOME", &user_home)
        .env("CODEX_HOME", &home)
        .env("MOCK_KEY", "test")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "codex exec failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let completed = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .unwrap_or_else(|| panic!("no command item: {stdout}"));
    assert_eq!(completed["item"]["exit_code"], 0, "{completed}");
    assert_eq!(
        completed["item"]["aggregated_output"], "ok\n",
        "{completed}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("made-by-codex.txt")).unwrap(),
        "remote-run\n"
    );
    let log = std::fs::read_to_string(&wire).unwrap_or_default();
    let started = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["method"] == "process/start")
        .unwrap_or_else(|| panic!("codex sent no process/start to osprey exec-server: {log}"));
    let argv = started["params"]["argv"].to_string();
    assert!(argv.contains("made-by-codex.txt"), "{argv}");
    model.verify();
}
