//! The handshake and the error replies, on the wire.

use serde_json::json;

use super::common::{RawServer, error_of, osprey};

#[tokio::test]
async fn lifecycle_errors_match_codex() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = RawServer::start(&osprey(), &["exec-server", "--listen", "stdio"], dir.path());
    let early = server.request(0, "environment/info", json!({})).await;
    assert_eq!(
        error_of(&early),
        (
            -32600,
            "client must call initialize before using environment info methods".to_owned()
        )
    );
    let init = server
        .request(
            1,
            "initialize",
            json!({"clientName": "t", "unknownField": 1}),
        )
        .await;
    let info = &init["result"]["environmentInfo"];
    assert_eq!(info["executorVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["capabilities"]["capabilityDiscoveryV2"], true);
    assert!(
        info["cwd"].as_str().unwrap().starts_with("file:///"),
        "{info}"
    );
    assert!(
        init["result"]["sessionId"]
            .as_str()
            .is_some_and(|s| s.len() == 36)
    );

    let pipelined = server
        .request(2, "fs/readFile", json!({"path": "file:///etc/hostname"}))
        .await;
    assert_eq!(
        error_of(&pipelined),
        (
            -32600,
            "client must send initialized before using filesystem methods".to_owned()
        )
    );
    let again = server
        .request(3, "initialize", json!({"clientName": "t"}))
        .await;
    assert_eq!(
        error_of(&again),
        (
            -32600,
            "initialize may only be sent once per connection".to_owned()
        )
    );
    server
        .send(json!({"method": "initialized", "params": {}}))
        .await;
    // An unknown notification is ignored: the connection keeps answering.
    server
        .send(json!({"method": "bogus/notification", "params": {}}))
        .await;
    let status = server.request(4, "environment/status", json!({})).await;
    assert_eq!(status["result"], json!({"status": "ready"}));

    let unknown = server.request(5, "no/such", json!({})).await;
    assert_eq!(error_of(&unknown).0, -32601);
    assert!(error_of(&unknown).1.contains("`no/such`"));
    let plain_path = server
        .request(6, "fs/readFile", json!({"path": "/etc/hostname"}))
        .await;
    assert_eq!(
        error_of(&plain_path),
        (
            -32602,
            "invalid URI: relative URL without a base".to_owned()
        )
    );
    let walk = server
        .request(7, "fs/walk", json!({"path": "file:///tmp", "options": {}}))
        .await;
    assert_eq!(
        error_of(&walk),
        (-32602, "missing field `maxDepth`".to_owned())
    );
    let missing = server
        .request(8, "fs/readFile", json!({"path": "file:///nonexistent/x"}))
        .await;
    assert_eq!(
        error_of(&missing),
        (-32004, "No such file or directory (os error 2)".to_owned())
    );
    let empty = server
        .request(
            9,
            "process/start",
            json!({"processId": "p", "argv": [], "cwd": "file:///tmp", "env": {}, "tty": false}),
        )
        .await;
    assert_eq!(
        error_of(&empty),
        (-32602, "argv must not be empty".to_owned())
    );
    let unknown_process = server
        .request(10, "process/read", json!({"processId": "nope"}))
        .await;
    assert_eq!(
        error_of(&unknown_process),
        (-32600, "unknown process id nope".to_owned())
    );
    let terminate = server
        .request(11, "process/terminate", json!({"processId": "nope"}))
        .await;
    assert_eq!(terminate["result"], json!({"running": false}));
    // Malformed JSON is logged, not answered, and the connection lives on.
    server.send(json!("not an object")).await;
    let info = server.request(12, "environment/info", json!({})).await;
    assert!(info["result"]["platformOs"].is_string(), "{info}");
    let _ = server.child.kill().await;
}

/// Pipelines a slow request (a 24 MiB write) and five quick reads of another file, and
/// returns the ids in the order the replies came.
async fn reply_order(extra_args: &[&str]) -> Vec<i64> {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.txt"), "hi\n").unwrap();
    let mut args = vec!["exec-server", "--listen", "stdio"];
    args.extend_from_slice(extra_args);
    let mut server = RawServer::start(&osprey(), &args, dir.path());
    server.handshake().await;
    let big = base64::engine::general_purpose::STANDARD.encode(vec![b'x'; 24 << 20]);
    let big_path = format!("file://{}/big.bin", dir.path().display());
    let small = format!("file://{}/small.txt", dir.path().display());
    server
        .send(json!({"id": 20, "method": "fs/writeFile", "params": {"path": big_path, "dataBase64": big}}))
        .await;
    for id in 21..26 {
        server
            .send(json!({"id": id, "method": "fs/readFile", "params": {"path": small}}))
            .await;
    }
    let mut ids = Vec::new();
    for _ in 20..26 {
        let reply = server.reply().await;
        assert!(reply.get("error").is_none(), "{reply}");
        if reply["id"] != 20 {
            assert_eq!(reply["result"]["dataBase64"], "aGkK", "{reply}");
        }
        ids.push(reply["id"].as_i64().unwrap());
    }
    ids
}

/// One worker by default (as Codex): replies come in the order the requests did, even when
/// the first is slow. With more workers the quick reads overtake it, which shows the first
/// request really is slow enough for the default's order to mean something.
#[tokio::test]
async fn requests_are_answered_in_order_by_default() {
    assert_eq!(reply_order(&[]).await, [20, 21, 22, 23, 24, 25]);
    let concurrent = reply_order(&["--concurrent-requests", "4"]).await;
    assert_ne!(concurrent.first(), Some(&20), "{concurrent:?}");
}
