//! Ctrl+V reads the system clipboard: under a real X server (Xvfb, with xclip owning the
//! CLIPBOARD selection) an image becomes `[Image #1]` and reaches the model as a PNG before
//! the text, and clipboard text is pasted; with no display at all a notice says to paste
//! the file's path instead. Xvfb and xclip are Debian packages that
//! `scripts/install-test-deps.sh` installs; `OSPREY_REQUIRE_REFERENCE=1` makes them required.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use osprey_test_support::{MockModelServer, TempHome, WireApi, ev_assistant_message, sse_turn};

use super::pty::PtySession;

/// A private X server; its display number chosen by the server itself (`-displayfd`).
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    #[expect(clippy::disallowed_methods, reason = "the test runs an X server")]
    fn start() -> Self {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-nolisten",
                "tcp",
                // By default the server resets whenever its last client leaves; a client
                // connecting during that reset is refused ("Can't open display").
                "-noreset",
                "-screen",
                "0",
                "320x240x24",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb starts");
        // It writes its display number once it accepts connections.
        let mut stdout = child.stdout.take().expect("Xvfb's stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut number = String::new();
            let mut byte = [0u8; 1];
            while stdout.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {
                number.push(char::from(byte[0]));
            }
            let _ = tx.send(number);
        });
        let number = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("Xvfb reports its display");
        assert!(
            !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()),
            "Xvfb's display number: {number:?}"
        );
        Self {
            child,
            display: format!(":{number}"),
        }
    }

    /// Makes `xclip` own the CLIPBOARD selection with `data` as `mime`, and waits until the
    /// selection offers it. An owner that exits before that (it could not connect) is
    /// started again, and its error is in the failure message if it never gets there.
    fn own_clipboard(&self, file: &Path, mime: &str) -> Owner {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut owner = self.start_owner(file, mime);
        loop {
            if self.offered_targets().contains(mime) {
                return owner;
            }
            if let Some(error) = owner.exited() {
                assert!(
                    Instant::now() < deadline,
                    "xclip never owned the clipboard: {error}"
                );
                owner = self.start_owner(file, mime);
            }
            assert!(Instant::now() < deadline, "xclip never offered {mime}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[expect(clippy::disallowed_methods, reason = "the test runs xclip")]
    fn start_owner(&self, file: &Path, mime: &str) -> Owner {
        Owner(
            Command::new("xclip")
                .args(["-quiet", "-selection", "clipboard", "-t", mime, "-i"])
                .arg(file)
                .env("DISPLAY", &self.display)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("xclip starts"),
        )
    }

    /// The targets the CLIPBOARD selection offers now (empty when nobody owns it).
    #[expect(clippy::disallowed_methods, reason = "the test runs xclip")]
    fn offered_targets(&self) -> String {
        let targets = Command::new("xclip")
            .args(["-selection", "clipboard", "-t", "TARGETS", "-o"])
            .env("DISPLAY", &self.display)
            .output()
            .expect("xclip lists the targets");
        String::from_utf8_lossy(&targets.stdout).into_owned()
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kills an xclip that owns the selection.
struct Owner(Child);

impl Owner {
    /// How the owner ended and what it printed, once it has exited.
    fn exited(&mut self) -> Option<String> {
        let status = self.0.try_wait().ok()??;
        let mut error = String::new();
        if let Some(mut stderr) = self.0.stderr.take() {
            let _ = stderr.read_to_string(&mut error);
        }
        Some(format!("{status}: {}", error.trim()))
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[expect(clippy::disallowed_methods, reason = "looks for the programs")]
fn installed(program: &str, version_arg: &str) -> bool {
    Command::new(program)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Xvfb and xclip are there, or the test is skipped (and fails when they are required).
fn x_tools() -> bool {
    let missing: Vec<&str> = [("Xvfb", "-help"), ("xclip", "-version")]
        .into_iter()
        .filter(|(program, arg)| !installed(program, arg))
        .map(|(program, _)| program)
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("OSPREY_REQUIRE_REFERENCE").as_deref() != Ok("1"),
        "{} not installed (scripts/install-test-deps.sh installs them)",
        missing.join(" and ")
    );
    eprintln!("skipping: {} not installed", missing.join(" and "));
    false
}

/// A 3×2 picture, every pixel different.
pub(super) fn picture() -> image::RgbaImage {
    image::RgbaImage::from_fn(3, 2, |x, y| {
        let (x, y) = (u8::try_from(x).unwrap(), u8::try_from(y).unwrap());
        image::Rgba([x * 100, y * 200, 50 + x * 10 + y, 255])
    })
}

/// The `input_image` data URLs in a request's input, decoded.
pub(super) fn sent_pngs(input: &[serde_json::Value]) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    for item in input {
        for part in item["content"].as_array().into_iter().flatten() {
            if part["type"] == "input_image" {
                let url = part["image_url"].as_str().unwrap_or_default();
                let data = url
                    .strip_prefix("data:image/png;base64,")
                    .unwrap_or_else(|| panic!("a PNG data URL: {url}"));
                found.push(
                    base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .unwrap(),
                );
            }
        }
    }
    found
}

#[test]
fn ctrl_v_attaches_the_clipboard_image_before_the_text_and_pastes_clipboard_text() {
    if !x_tools() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_assistant_message("m1", "I see the picture."),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let png = home.path().join("picture.png");
    picture().save(&png).unwrap();
    let x = Xvfb::start();
    let owner = x.own_clipboard(&png, "image/png");

    let mut tui =
        PtySession::spawn_with_env(&home, work.path(), &[], 30, 100, &[("DISPLAY", &x.display)]);
    tui.wait_text("Ask Osprey to do anything");
    tui.send(b"what is in ");
    tui.send(b"\x16");
    tui.wait_for("the image in the draft", |s| {
        s.lines().any(|l| l.trim_end() == "› what is in [Image #1]")
    });
    tui.send(b" this?\r");
    tui.wait_text("I see the picture.");
    tui.wait_text("Worked for");

    let requests = server.requests();
    let input = requests[0].input();
    let pngs = sent_pngs(input);
    assert_eq!(pngs.len(), 1, "one image sent: {input:?}");
    let sent = image::load_from_memory_with_format(&pngs[0], image::ImageFormat::Png)
        .expect("a valid PNG")
        .to_rgba8();
    assert_eq!(sent, picture(), "the same pixels as the clipboard's");
    let json = serde_json::to_string(input).unwrap();
    let image_at = json.find("input_image").unwrap();
    let text_at = json.find("what is in [Image #1] this?").unwrap();
    assert!(
        image_at < text_at,
        "the image comes before the text: {json}"
    );
    // The image's file, named beside it (`<image name=[Image #1] path="…">`).
    let saved = input
        .iter()
        .flat_map(|item| item["content"].as_array().into_iter().flatten())
        .filter_map(|part| part["text"].as_str())
        .find_map(|text| text.split("path=\"").nth(1)?.split('"').next())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| panic!("the image's path is named: {json}"));
    assert!(saved.ends_with("clipboard-1.png"), "{}", saved.display());
    let folder = saved.parent().unwrap().to_path_buf();
    assert!(
        folder.is_dir(),
        "{} exists while the UI runs",
        folder.display()
    );

    // Text on the clipboard is pasted as it is.
    drop(owner);
    let text = home.path().join("words.txt");
    std::fs::write(&text, "words from the clipboard").unwrap();
    let _owner = x.own_clipboard(&text, "UTF8_STRING");
    tui.send(b"\x16");
    tui.wait_for("the clipboard's text in the draft", |s| {
        s.lines()
            .any(|l| l.trim_end() == "› words from the clipboard")
    });
    tui.send(b"\x03");
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
    assert!(
        !folder.exists(),
        "{} is removed when the UI exits",
        folder.display()
    );
}

#[test]
fn ctrl_v_with_no_display_says_to_paste_the_image_path_instead() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(Vec::new()));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    // The harness clears the environment: neither DISPLAY nor WAYLAND_DISPLAY is set.
    let mut tui = PtySession::spawn(&home, work.path(), &[], 30, 100);
    tui.wait_text("Ask Osprey to do anything");
    tui.send(b"draft");
    tui.send(b"\x16");
    let screen = tui.wait_text("no clipboard here");
    let words = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "Ctrl+V: no clipboard here (neither DISPLAY nor WAYLAND_DISPLAY is set, as over \
             SSH); paste or drag the image file's path instead"
        ),
        "{screen}"
    );
    assert!(
        screen.lines().any(|l| l.trim_end() == "› draft"),
        "the draft is kept: {screen}"
    );
    tui.send(b"\x03\x03\x03");
    assert!(tui.wait_exit());
}
