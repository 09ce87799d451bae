//! `--remote ws://…`: the UI driven against an `osprey app-server --listen ws://…` started
//! as its own process (with a capability token), a prompt answered through it, the
//! connection dropped when the server dies, and plain-words errors when nothing listens or
//! the token is wrong.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use osprey_test_support::{MockModelServer, TempHome, WireApi, ev_assistant_message, sse_turn};

use super::pty::{PtySession, osprey_bin};

const TOKEN: &str = "a-capability-token-for-the-tui-test";

/// A listening app server and the `ws://` address it printed.
struct Listening {
    child: Child,
    url: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen(home: &TempHome, cwd: &std::path::Path) -> Listening {
    let token_file = home.path().join("ws-token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    #[expect(
        clippy::disallowed_methods,
        reason = "the test runs the app server as its own process"
    )]
    let mut command = std::process::Command::new(osprey_bin());
    command
        .args([
            "app-server",
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-token-file",
        ])
        .arg(&token_file)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (key, value) in home.env() {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("osprey app-server starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("listening on ws://") {
                let _ = tx.send(line[at + "listening on ".len()..].trim().to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the app server says where it listens");
    Listening { child, url }
}

#[test]
fn remote_ui_talks_to_a_listening_app_server_and_says_when_it_goes_away() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_assistant_message("m1", "Answered **remotely**."),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut app_server = listen(&home, work.path());

    let mut tui = PtySession::spawn_with_env(
        &home,
        work.path(),
        &[
            "--remote",
            &app_server.url,
            "--remote-auth-token-env",
            "OSPREY_TEST_WS_TOKEN",
            "hello over the wire",
        ],
        30,
        100,
        &[("OSPREY_TEST_WS_TOKEN", TOKEN)],
    );
    let screen = tui.wait_text("Answered remotely.");
    assert!(screen.contains("› hello over the wire"), "{screen}");
    tui.wait_text("Worked for");
    let requests = server.requests();
    assert_eq!(
        requests[0].user_texts().last().map(String::as_str),
        Some("hello over the wire")
    );

    // The server dies: the UI says so in plain words instead of hanging.
    let _ = app_server.child.kill();
    let _ = app_server.child.wait();
    let screen = tui.wait_text("lost the connection to the app server at");
    assert!(screen.contains(&app_server.url), "{screen}");
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
    let screen = tui.wait_text("To continue this session, run: osprey resume ");
    // The line may wrap at the screen's width: compare without whitespace.
    let flat: String = screen.split_whitespace().collect();
    assert!(
        flat.contains(&format!("--remote{}", app_server.url)),
        "the resume line goes through the same server: {screen}"
    );
}

#[test]
fn remote_errors_say_what_failed_and_what_to_do() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(Vec::new()));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let app_server = listen(&home, work.path());

    // No token where one is needed: the 401 is explained.
    let mut tui = PtySession::spawn(&home, work.path(), &["--remote", &app_server.url], 24, 120);
    assert!(!tui.wait_exit(), "a refused connection is a failure");
    let screen = tui.wait_text("401 Unauthorized");
    assert!(screen.contains("--remote-auth-token-env"), "{screen}");

    // Nothing listens: the address is named and the way to start a server given.
    drop(app_server);
    let closed = "ws://127.0.0.1:9";
    let mut tui = PtySession::spawn(&home, work.path(), &["--remote", closed], 24, 120);
    assert!(!tui.wait_exit());
    let screen = tui.wait_text("could not connect to the app server at ws://127.0.0.1:9");
    assert!(screen.contains("osprey app-server --listen"), "{screen}");

    // Not a WebSocket address.
    let mut tui = PtySession::spawn(&home, work.path(), &["--remote", "http://x"], 24, 120);
    assert!(!tui.wait_exit());
    tui.wait_text("expected a WebSocket address such as ws://127.0.0.1:4500");
}

#[test]
fn an_attached_image_reaches_a_remote_server_inline_with_its_label() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_assistant_message("m1", "I see the remote picture."),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    // The server works in one folder, the UI in another that holds the image.
    let server_dir = tempfile::tempdir().unwrap();
    let ui_dir = tempfile::tempdir().unwrap();
    super::clipboard::picture()
        .save(ui_dir.path().join("pic.png"))
        .unwrap();
    let app_server = listen(&home, server_dir.path());
    let mut tui = PtySession::spawn_with_env(
        &home,
        ui_dir.path(),
        &[
            "--remote",
            &app_server.url,
            "--remote-auth-token-env",
            "OSPREY_TEST_WS_TOKEN",
        ],
        30,
        100,
        &[("OSPREY_TEST_WS_TOKEN", TOKEN)],
    );
    tui.wait_text("Ask Osprey to do anything");
    tui.send(b"look at ");
    tui.send(b"\x1b[200~pic.png\x1b[201~");
    tui.wait_text("[Image #1]");
    tui.send(b"\r");
    tui.wait_text("I see the remote picture.");

    let requests = server.requests();
    let input = requests[0].input();
    let pngs = super::clipboard::sent_pngs(input);
    assert_eq!(pngs.len(), 1, "one image sent: {input:?}");
    let sent = image::load_from_memory_with_format(&pngs[0], image::ImageFormat::Png)
        .expect("a valid PNG")
        .to_rgba8();
    assert_eq!(sent, super::clipboard::picture(), "the file's pixels");
    let json = serde_json::to_string(input).unwrap();
    // Labelled as a path the server reads is, without a path that means nothing there.
    assert!(json.contains("<image name=[Image #1]>"), "{json}");
    let image_at = json.find("input_image").unwrap();
    let text_at = json.find("look at [Image #1]").unwrap();
    assert!(
        image_at < text_at,
        "the image comes before the text: {json}"
    );
    tui.send(b"\x03\x03");
    assert!(tui.wait_exit());
}
