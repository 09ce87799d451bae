//! Watching threads (`/agent`): the picker of the main thread and the sub-agents, the header
//! a thread's transcript starts with when it becomes watched, and the watched sub-agent's
//! name on the status line and in the empty composer.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::cells::{bold, dim};
use super::collab::short_id;
use super::wrap::{prefixed, wrap_line};
use crate::state::threads::{AgentRow, AgentStatus, ThreadHeader};
use crate::state::{AppState, PendingApproval, Picker};

fn accent() -> Style {
    Style::default()
        .fg(Color::Magenta)
        .add_modifier(Modifier::BOLD)
}

fn status_style(status: AgentStatus) -> Style {
    match status {
        AgentStatus::Running => Style::default().fg(Color::Cyan),
        AgentStatus::WaitingForApproval => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        AgentStatus::Done => Style::default().fg(Color::Green),
        AgentStatus::Errored | AgentStatus::Interrupted => Style::default().fg(Color::Red),
        AgentStatus::Starting | AgentStatus::Idle | AgentStatus::Closed | AgentStatus::Unknown => {
            dim()
        }
    }
}

/// Cuts a line to `width` columns.
fn cut(line: Line<'static>, width: usize) -> Line<'static> {
    wrap_line(&line, width, "")
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// `━━ Watching Planck [explorer] · sub-agent …27c94a9a ━━━…`, then whom messages go to and
/// how to get back.
pub fn header_lines(header: &ThreadHeader, width: usize) -> Vec<Line<'static>> {
    let (title, about, back) = match (&header.agent, &header.id) {
        (Some(name), id) => (
            format!(
                "Watching {name} · sub-agent {}",
                id.as_deref().map(short_id).unwrap_or_default()
            ),
            format!(
                "{name}'s transcript so far, then what it does next. What you send now goes to {name}."
            ),
            "Back to the main thread: /agent, then 1.",
        ),
        (None, _) => (
            "Watching the main thread".to_owned(),
            "Its transcript so far, then what it does next. What you send now goes to the main thread.".to_owned(),
            "/agent lists the sub-agents to watch.",
        ),
    };
    let lead = format!("━━ {title} ");
    let rule = "━".repeat(width.saturating_sub(lead.width()));
    let mut lines = vec![cut(
        Line::from(vec![
            Span::styled(lead, accent()),
            Span::styled(rule, accent()),
        ]),
        width,
    )];
    lines.extend(prefixed(
        vec![Line::from(about), Line::styled(back, dim())],
        width,
        Span::raw("  "),
        "  ",
    ));
    lines
}

/// The `/agent` picker: a row per thread with its name, the end of its id and its status.
pub fn agent_picker_lines(
    picker: &Picker,
    rows: &[AgentRow],
    width: usize,
    max_rows: usize,
) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::styled(format!("  {}", picker.title), bold()),
        cut(
            Line::styled(
                "  Select a thread to watch; what you send goes to the thread you watch.",
                dim(),
            ),
            width,
        ),
        Line::default(),
    ];
    let name_width = rows.iter().map(|r| r.name.width()).max().unwrap_or(0) + 2;
    let visible = max_rows.max(1);
    let first = picker.selected.saturating_sub(visible - 1);
    for (i, row) in rows.iter().enumerate().skip(first).take(visible) {
        let selected = i == picker.selected;
        let (marker, style) = if selected {
            (
                "› ",
                Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            )
        } else {
            ("  ", Style::default())
        };
        let mut spans = vec![
            Span::styled(marker, style),
            Span::styled(format!("{}. {:<name_width$}", i + 1, row.name), style),
            Span::styled(format!("{:<11}", short_id(&row.id)), dim()),
            Span::styled(row.status.label(), status_style(row.status)),
        ];
        if row.watched {
            spans.push(Span::styled(" · watching", dim()));
        }
        lines.push(cut(Line::from(spans), width));
    }
    lines.push(Line::default());
    lines.push(cut(
        Line::styled("  enter watch · 1-9 pick · ↑/↓ select · esc back", dim()),
        width,
    ));
    lines
}

/// Who asks for an approval: a sub-agent (`Sub-agent …27c94a9a (Planck) asks:`), or the
/// main thread while a sub-agent is watched; `None` for the watched main thread's own.
pub fn asker(state: &AppState, approval: &PendingApproval) -> Option<String> {
    match &approval.from_agent {
        Some(id) => Some(match state.threads.agent(id) {
            Some(agent) => format!("Sub-agent {} ({}) asks:", short_id(id), agent.name()),
            None => format!("Sub-agent {} asks:", short_id(id)),
        }),
        None => state
            .threads
            .watched_agent()
            .map(|_| "The main thread asks:".to_owned()),
    }
}

/// The empty composer's hint while a sub-agent is watched: messages go to it.
pub fn composer_hint(state: &AppState) -> Option<String> {
    let agent = state.threads.watched_agent()?;
    Some(format!(
        "Message {}, the sub-agent you watch · /agent switches threads",
        agent.name()
    ))
}

/// The status line, headed by the watched sub-agent's name while one is watched.
pub fn watched_status(state: &AppState, status: Line<'static>, width: usize) -> Line<'static> {
    let Some(agent) = state.threads.watched_agent() else {
        return status;
    };
    let mut spans = vec![
        Span::styled(format!("Watching {}", agent.name()), accent()),
        Span::styled(" · ", dim()),
    ];
    spans.extend(status.spans);
    cut(Line::from(spans), width)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use osprey_app_server_protocol::{ServerNotification, method};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::{Value, json};

    use super::*;
    use crate::app_client::ServerEvent;
    use crate::render::{cells::cell_lines, draw_lines, live_lines};
    use crate::state::{AppEvent, AppState};

    const MAIN: &str = "01a2342c-34e8-7287-8117-5a6683027c94";
    const PLANCK: &str = "01a230c9-963e-76e1-acc8-47e827c94a9a";
    const GOODALL: &str = "01a230ca-11b0-7a41-9e5c-0b1d9d0e1f2a";
    const KANT: &str = "01a230cb-5c2d-7f00-8d11-aa0e5b7734c1";

    fn screen(lines: &[Line<'static>], width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| draw_lines(lines, frame.area(), frame.buffer_mut()))
            .unwrap();
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..height {
            let row: String = (0..width).map(|x| buffer[(x, y)].symbol()).collect();
            out.push_str(row.trim_end());
            out.push('\n');
        }
        out
    }

    fn note(state: &mut AppState, method: &str, params: Value) {
        let n = ServerNotification::from_parts(method, Some(params)).unwrap();
        state.apply(
            AppEvent::Server(ServerEvent::Notification(Box::new(n))),
            Instant::now(),
        );
    }

    fn started(state: &mut AppState, id: &str, nickname: &str, role: Option<&str>) {
        let thread = json!({"id": id, "sessionId": MAIN, "forkedFromId": null,
            "parentThreadId": MAIN, "preview": "", "ephemeral": false, "historyMode": "full",
            "modelProvider": "mock", "model": "mock-model", "reasoningEffort": null,
            "createdAt": 0, "updatedAt": 0, "recencyAt": null, "status": {"type": "idle"},
            "path": null, "cwd": "/work", "cliVersion": "0.0.0", "originator": null,
            "source": "cli", "threadSource": "subagent", "agentNickname": nickname,
            "agentRole": role, "gitInfo": null, "name": null, "turns": []});
        note(state, method::THREAD_STARTED, json!({"thread": thread}));
    }

    fn turn(state: &mut AppState, thread: &str, method: &str, status: &str) {
        note(
            state,
            method,
            json!({"threadId": thread, "turn": {"id": format!("turn-{thread}"),
                "rootTurnId": null, "items": [], "itemsView": "notLoaded", "status": status,
                "error": null, "startedAt": null, "completedAt": null, "durationMs": null}}),
        );
    }

    fn answer(state: &mut AppState, thread: &str, text: &str) {
        let item = json!({"type": "agentMessage", "id": format!("m-{thread}"), "text": text,
            "phase": null, "moderation": null, "memoryCitation": null, "delivery": null,
            "questions": null});
        note(
            state,
            method::ITEM_COMPLETED,
            json!({"item": item, "threadId": thread, "turnId": "t", "completedAtMs": 0}),
        );
    }

    /// A session with three sub-agents in different states, the main turn running.
    fn session() -> AppState {
        let mut state = AppState::new();
        state.apply(
            AppEvent::ThreadReady {
                thread_id: MAIN.into(),
                model: "gpt-5.1-codex".into(),
                cwd: "/work/osprey".into(),
                turns: Vec::new(),
                settings: Default::default(),
            },
            Instant::now(),
        );
        turn(&mut state, MAIN, method::TURN_STARTED, "inProgress");
        started(&mut state, PLANCK, "Planck", Some("explorer"));
        started(&mut state, GOODALL, "Goodall", None);
        started(&mut state, KANT, "Kant", Some("worker"));
        turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
        note(
            &mut state,
            method::THREAD_STATUS_CHANGED,
            json!({"threadId": PLANCK,
                   "status": {"type": "active", "activeFlags": ["waitingOnApproval"]}}),
        );
        turn(&mut state, GOODALL, method::TURN_STARTED, "inProgress");
        answer(
            &mut state,
            GOODALL,
            "Found **three** callers of `parse_config`.",
        );
        turn(&mut state, GOODALL, method::TURN_COMPLETED, "completed");
        turn(&mut state, KANT, method::TURN_STARTED, "inProgress");
        turn(&mut state, KANT, method::TURN_COMPLETED, "failed");
        state
    }

    #[test]
    fn agent_picker() {
        let mut state = session();
        state.on_key(
            crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('/')),
            Instant::now(),
        );
        for c in "agent".chars() {
            state.on_key(
                crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(c)),
                Instant::now(),
            );
        }
        state.on_key(
            crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Enter),
            Instant::now(),
        );
        assert!(state.picker.is_some(), "{:?}", state.history);
        for (w, h) in [(80u16, 24u16), (120, 40)] {
            let live = live_lines(&state, None, usize::from(w), usize::from(h));
            insta::assert_snapshot!(format!("agent_picker_{w}x{h}"), screen(&live.lines, w, h));
        }
    }

    #[test]
    fn a_watched_sub_agents_header_transcript_hint_and_status_line() {
        let mut state = session();
        // Watch Goodall (row 3) through the picker.
        state.apply(AppEvent::Notice("before the switch".into()), Instant::now());
        let _ = state.take_unflushed();
        let mut keys = state.on_key(
            crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('/')),
            Instant::now(),
        );
        for c in "agent".chars() {
            keys.extend(state.on_key(
                crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(c)),
                Instant::now(),
            ));
        }
        keys.extend(state.on_key(
            crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Enter),
            Instant::now(),
        ));
        keys.extend(state.on_key(
            crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('3')),
            Instant::now(),
        ));
        assert_eq!(keys, Vec::new());
        // The scrollback gets the header, then Goodall's transcript.
        let scrollback = state.take_unflushed();
        for (w, h) in [(80u16, 24u16), (120, 40)] {
            let width = usize::from(w);
            let mut lines: Vec<Line<'static>> = scrollback
                .iter()
                .flat_map(|c| cell_lines(c, width))
                .collect();
            lines.extend(live_lines(&state, None, width, usize::from(h)).lines);
            insta::assert_snapshot!(format!("watched_sub_agent_{w}x{h}"), screen(&lines, w, h));
        }
    }

    #[test]
    fn an_approval_says_which_thread_asks() {
        let mut state = session();
        let ask = |state: &mut AppState, id: i64, thread: &str| {
            let request = osprey_app_server_protocol::ServerRequest::from_parts(
                method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
                Some(json!({"kind": "command", "threadId": thread, "turnId": "t",
                            "itemId": format!("c{id}"), "startedAtMs": 0, "environmentId": null,
                            "command": "cargo test -p osprey-tui", "cwd": "/work/osprey"})),
            )
            .unwrap();
            state.apply(
                AppEvent::Server(ServerEvent::Request {
                    id: osprey_app_server_protocol::RequestId::Integer(id),
                    request: Box::new(request),
                }),
                Instant::now(),
            );
        };
        // Watching Planck, the main thread asks: the overlay says so.
        state.on_key(
            crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('/')),
            Instant::now(),
        );
        for c in "agent".chars() {
            state.on_key(
                crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char(c)),
                Instant::now(),
            );
        }
        for code in [
            crossterm::event::KeyCode::Enter,
            crossterm::event::KeyCode::Char('2'),
        ] {
            state.on_key(crossterm::event::KeyEvent::from(code), Instant::now());
        }
        assert_eq!(state.threads.watched.as_deref(), Some(PLANCK));
        ask(&mut state, 1, MAIN);
        ask(&mut state, 2, GOODALL);
        for (w, h) in [(80u16, 24u16), (120, 40)] {
            let live = live_lines(&state, None, usize::from(w), usize::from(h));
            insta::assert_snapshot!(
                format!("main_thread_approval_while_watching_{w}x{h}"),
                screen(&live.lines, w, h)
            );
        }
        assert_eq!(
            asker(&state, &state.approvals[1]).as_deref(),
            Some("Sub-agent …9d0e1f2a (Goodall) asks:")
        );
        // The watched main thread's own request needs no heading.
        assert_eq!(asker(&session(), &state.approvals[0]), None);
    }

    #[test]
    fn the_main_threads_header_says_how_to_watch_a_sub_agent_again() {
        let header = ThreadHeader {
            agent: None,
            id: None,
        };
        let text: Vec<String> = header_lines(&header, 60)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(text[0].chars().count(), 60, "{text:?}");
        assert!(
            text[0].starts_with("━━ Watching the main thread ━"),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|l| l.contains("/agent lists the sub-agents"))
        );
    }
}
