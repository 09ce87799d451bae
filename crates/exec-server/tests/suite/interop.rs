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
