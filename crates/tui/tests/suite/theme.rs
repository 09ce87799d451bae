//! `[tui] theme = "light"`: the user's message, white on a dark background, is written in
//! black instead (colours on: `NO_COLOR` empty).

use osprey_test_support::{MockModelServer, TempHome, WireApi, ev_assistant_message, sse_turn};

use super::pty::PtySession;

/// crossterm writes named colours as 256-colour indexes (`38;5;15`, maybe joined with the
/// background's parameters).
const WHITE: &str = "[38;5;15";
const BLACK: &str = "[38;5;0;";

fn run(theme: Option<&str>) -> String {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockModelServer::start(vec![sse_turn(vec![
        ev_assistant_message("m1", "Coloured answer."),
    ])]));
    let home = TempHome::for_server(&server, WireApi::Responses);
    if let Some(theme) = theme {
        home.write_config(&format!("[tui]\ntheme = \"{theme}\"\n"));
    }
    let work = tempfile::tempdir().unwrap();
    let mut tui = PtySession::spawn_with_env(
        &home,
        work.path(),
        &["a question"],
        30,
        100,
        &[("NO_COLOR", "")],
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
    let dark = run(None);
    assert!(dark.contains(WHITE), "{}", dark.escape_debug());
    let light = run(Some("light"));
    assert!(!light.contains(WHITE), "{}", light.escape_debug());
    assert!(light.contains(BLACK), "{}", light.escape_debug());
}
