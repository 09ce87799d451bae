//! `[tui] theme = "light"`: the user's message, white on a dark background, is written in
//! black instead (colours on: `NO_COLOR` empty). With `auto` (the default) and no
//! `COLORFGBG`, the terminal is asked for its background (OSC 11).

use std::time::Duration;

use osprey_test_support::{MockModelServer, TempHome, WireApi, ev_assistant_message, sse_turn};

use super::pty::{Background, PtySession};

/// crossterm writes named colours as 256-colour indexes (`38;5;15`, maybe joined with the
/// background's parameters).
const WHITE: &str = "[38;5;15";
const BLACK: &str = "[38;5;0;";

const LIGHT: &str = "rgb:ffff/ffff/ffff";

fn run(theme: Option<&str>, background: Background) -> String {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_assistant_message("m1", "Coloured answer."),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    if let Some(theme) = theme {
        home.write_config(&format!("[tui]\ntheme = \"{theme}\"\n"));
    }
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn_with_terminal(
        &home,
        work.path(),
        &["a question"],
        30,
        100,
        &[("NO_COLOR", "")],
        background,
    );
    tui.wait_text("Coloured answer.");
    tui.wait_text("Worked for");
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
    tui.raw()
}

#[test]
fn the_light_theme_writes_dark_text_where_the_dark_one_writes_white() {
    let dark = run(None, Background::Silent);
    assert!(dark.contains(WHITE), "{}", dark.escape_debug());
    let light = run(Some("light"), Background::Silent);
    assert!(!light.contains(WHITE), "{}", light.escape_debug());
    assert!(light.contains(BLACK), "{}", light.escape_debug());
    assert!(
        !light.contains("\x1b]11;?"),
        "a theme that is set does not ask the terminal"
    );
}

#[test]
fn a_terminal_answering_osc_11_with_a_light_background_gets_dark_user_text() {
    let light = run(None, Background::Answer(LIGHT));
    assert_eq!(
        light.matches("\x1b]11;?").count(),
        1,
        "asked once: {}",
        light.escape_debug()
    );
    assert!(!light.contains(WHITE), "{}", light.escape_debug());
    assert!(light.contains(BLACK), "{}", light.escape_debug());
    // A dark answer keeps the dark palette.
    let dark = run(None, Background::Answer("rgb:1e1e/1e1e/2e2e"));
    assert!(dark.contains(WHITE), "{}", dark.escape_debug());
}

#[test]
fn a_terminal_that_never_answers_costs_a_short_wait_and_loses_no_early_keys() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_assistant_message("m1", "Answered the early words."),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn_with_terminal(
        &home,
        work.path(),
        &[],
        30,
        100,
        &[("NO_COLOR", "")],
        Background::Silent,
    );
    // Typed before the UI is up: read while the terminal is asked, and handed on.
    tui.send(b"typed early");
    tui.wait_for("the early keys in the composer", |s| {
        s.lines().any(|l| l.trim_end() == "› typed early")
    });
    let waits = tui.background_queries();
    assert_eq!(waits.len(), 1, "asked once");
    let waited = waits[0].expect("the UI went on after asking");
    assert!(
        waited < Duration::from_millis(1500),
        "a silent terminal delays the start by about 150 ms, not {waited:?}"
    );
    tui.send(b"\r");
    tui.wait_text("Answered the early words.");
    tui.wait_text("Worked for");
    let input = serde_json::to_string(server.requests()[0].input()).unwrap();
    assert!(input.contains("typed early"), "{input}");
    tui.send(b"\x03");
    tui.send(b"\x03");
    assert!(tui.wait_exit());
    assert!(
        tui.raw().contains(WHITE),
        "no answer: the dark palette; {}",
        tui.raw().escape_debug()
    );
}

/// Regression guard: a reply arriving after the wait would be parsed as keys — `11;rgb:…`
/// typed into the draft and its BEL taken as Ctrl+G, opening the editor.
#[test]
fn a_late_answer_is_not_typed_into_the_draft() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(Vec::new()));
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    let tui = PtySession::spawn_with_terminal(
        &home,
        work.path(),
        &[],
        30,
        100,
        &[("NO_COLOR", "")],
        Background::Late(LIGHT, Duration::from_millis(700)),
    );
    tui.wait_text("Ask Osprey to do anything");
    let deadline = std::time::Instant::now() + super::pty::WAIT;
    while tui.background_answers() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the late answer was written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Typed after the reply: the UI reads them after it.
    tui.send(b"after");
    let screen = tui.wait_for("the typed word", |s| {
        s.lines()
            .any(|l| l.trim_end().starts_with("› ") && l.contains("after"))
    });
    let draft = screen
        .lines()
        .find(|l| l.trim_end().starts_with("› "))
        .unwrap_or_default();
    assert_eq!(draft.trim_end(), "› after", "{screen}");
    assert!(!screen.contains("rgb"), "{screen}");
    assert!(!screen.to_lowercase().contains("editor"), "{screen}");
}
