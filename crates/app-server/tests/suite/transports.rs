//! WebSocket and Unix-socket transports: the capability token on the upgrade (401 without
//! it, nothing else revealed), loopback by default, and the same protocol on every transport.

use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use osprey_test_support::{MockModelServer, TempHome, WireApi};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest, http};

use super::client::Client;

/// The address the server printed on stderr (`listening on ws://…`).
async fn listening_on(client: &Client) -> String {
    for _ in 0..400 {
        if let Some(line) = client
            .stderr()
            .lines()
            .find(|l| l.contains("listening on "))
        {
            return line
                .rsplit("listening on ")
                .next()
                .unwrap()
                .trim()
                .to_owned();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "the server never said where it listens; stderr:\n{}",
        client.stderr()
    );
}

async fn ws_connect(
    url: &str,
    token: Option<&str>,
) -> Result<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    u16,
> {
    let mut request = url.into_client_request().unwrap();
    if let Some(token) = token {
        request.headers_mut().insert(
            http::header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(e) => panic!("unexpected WebSocket error: {e}"),
    }
}

async fn ws_request(
    socket: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    request: Value,
) -> Value {
    socket
        .send(Message::text(request.to_string()))
        .await
        .unwrap();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), socket.next())
            .await
            .expect("a reply in time")
            .expect("the socket stays open")
            .unwrap();
        if let Message::Text(text) = message {
            let value: Value = serde_json::from_str(&text).unwrap();
            if value["id"] == request["id"] && value.get("method").is_none() {
                return value;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_needs_the_token_and_then_speaks_the_protocol() {
    let server = MockModelServer::start(Vec::new()).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();

    // Beyond loopback without a token: refused at start.
    let open = Client::spawn_with_args(&home, work.path(), &["--listen", "ws://0.0.0.0:0"]);
    let status = open.close().await;
    assert_eq!(status.code(), Some(2));

    let token = "a-capability-token-for-tests";
    let token_file = home.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let listen = Client::spawn_with_args(
        &home,
        work.path(),
        &[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-token-file",
            token_file.to_str().unwrap(),
        ],
    );
    let url = listening_on(&listen).await;
    assert_eq!(ws_connect(&url, None).await.err(), Some(401));
    assert_eq!(
        ws_connect(&url, Some("wrong-token-wrong-token"))
            .await
            .err(),
        Some(401)
    );
    assert!(
        listen
            .stderr()
            .contains("missing or wrong capability token"),
        "{}",
        listen.stderr()
    );

    // A web page is refused even with the token: browsers send Origin, editors do not.
    let mut from_page = url.as_str().into_client_request().unwrap();
    from_page
        .headers_mut()
        .insert(http::header::ORIGIN, "http://evil.example".parse().unwrap());
    from_page.headers_mut().insert(
        http::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    match tokio_tungstenite::connect_async(from_page).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 403);
        }
        other => panic!("a request with an Origin header was not refused: {other:?}"),
    }

    let mut socket = ws_connect(&url, Some(token))
        .await
        .expect("the right token is accepted");
    let early = ws_request(
        &mut socket,
        json!({"id": 1, "method": "thread/loaded/list", "params": {}}),
    )
    .await;
    assert_eq!(early["error"]["message"], "Not initialized");
    let init = ws_request(
        &mut socket,
        json!({"id": 2, "method": "initialize", "params": {"clientInfo": {"name": "ws-test", "version": "1"}}}),
    )
    .await;
    assert!(
        init["result"]["userAgent"]
            .as_str()
            .unwrap()
            .starts_with("ws-test/")
    );
    let started = ws_request(
        &mut socket,
        json!({"id": 3, "method": "thread/start", "params": {"cwd": work.path().display().to_string()}}),
    )
    .await;
    let thread = started["result"]["thread"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // A second connection sees the thread (threads belong to the server, not a connection).
    let mut other = ws_connect(&url, Some(token)).await.unwrap();
    ws_request(
        &mut other,
        json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "second", "version": "1"}}}),
    )
    .await;
    let loaded = ws_request(&mut other, json!({"id": 2, "method": "thread/loaded/list"})).await;
    assert_eq!(loaded["result"]["data"], json!([thread]));
    drop(socket);
    drop(other);
    drop(listen);
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unix_socket_serves_one_message_per_line() {
    let server = MockModelServer::start(Vec::new()).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let socket_path = home.path().join("app.sock");
    let listen = Client::spawn_with_args(
        &home,
        work.path(),
        &["--listen", &format!("unix://{}", socket_path.display())],
    );
    listening_on(&listen).await;
    assert!(Path::new(&socket_path).exists());
    let stream = tokio::net::UnixStream::connect(&socket_path).await.unwrap();
    let (reader, mut writer) = stream.into_split();
    writer
        .write_all(b"{\"id\":1,\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"sock\",\"version\":\"1\"}}}\n")
        .await
        .unwrap();
    let mut lines = BufReader::new(reader).lines();
    let reply = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert!(
        reply["result"]["userAgent"]
            .as_str()
            .unwrap()
            .starts_with("sock/"),
        "{reply}"
    );
    drop(listen);
    server.verify();
}
