//! The live area's parts below the transcript: the composer, the approval overlay and the
//! status line. Pure functions of the state.

use std::time::Duration;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use super::cells::{diff_lines, duration};
use super::wrap::{prefixed, wrap_line};
use crate::state::composer::HistorySearch;
use crate::state::{ApprovalKind, Composer, PendingApproval, Status};

pub const PLACEHOLDER: &str = "Ask Osprey to do anything";

fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

/// The composer's lines and where the cursor is in them (column, row). Lines wrap by
/// character so the cursor position is exact.
pub fn composer_lines(composer: &Composer, width: usize) -> (Vec<Line<'static>>, (u16, u16)) {
    composer_lines_with(composer, width, PLACEHOLDER)
}

/// As [`composer_lines`], with another hint in the empty composer (whom a message goes to).
pub fn composer_lines_with(
    composer: &Composer,
    width: usize,
    placeholder: &str,
) -> (Vec<Line<'static>>, (u16, u16)) {
    let prompt = Span::styled("› ", Style::default().add_modifier(Modifier::BOLD));
    if composer.is_empty() {
        let hint = Line::from(vec![prompt, Span::styled(placeholder.to_owned(), dim())]);
        let hint = wrap_line(&hint, width, "")
            .into_iter()
            .next()
            .unwrap_or_default();
        return (vec![hint], (2, 0));
    }
    let inner = width.saturating_sub(2).max(1);
    let mut lines = Vec::new();
    let mut cursor = (2u16, 0u16);
    let mut row_text = String::new();
    let mut col = 0usize;
    let text = composer.text();
    let mut offset = 0usize;
    let push_row = |lines: &mut Vec<Line<'static>>, row_text: &mut String| {
        let lead = if lines.is_empty() {
            prompt.clone()
        } else {
            Span::raw("  ")
        };
        lines.push(Line::from(vec![lead, Span::raw(std::mem::take(row_text))]));
    };
    for c in text.chars() {
        if offset == composer.cursor() {
            cursor = (2 + col as u16, lines.len() as u16);
        }
        offset += c.len_utf8();
        if c == '\n' {
            push_row(&mut lines, &mut row_text);
            col = 0;
            continue;
        }
        let w = c.width().unwrap_or(0);
        if col + w > inner {
            push_row(&mut lines, &mut row_text);
            col = 0;
        }
        row_text.push(c);
        col += w;
    }
    if offset == composer.cursor() {
        if col >= inner {
            push_row(&mut lines, &mut row_text);
            col = 0;
        }
        cursor = (2 + col as u16, lines.len() as u16);
    }
    push_row(&mut lines, &mut row_text);
    (lines, cursor)
}

/// Ctrl+R: the query and the entry it found (its first line), with the cursor after the
/// query.
pub fn search_lines(
    search: &HistorySearch,
    composer: &Composer,
    width: usize,
) -> (Vec<Line<'static>>, (u16, u16)) {
    let label = "(reverse-i-search)`";
    let found = search
        .hit
        .and_then(|i| composer.history_entry(i))
        .map(|e| e.lines().next().unwrap_or_default().to_owned());
    let tail = match (&found, search.query.is_empty()) {
        (Some(entry), _) => format!("`: {entry}"),
        (None, true) => "`: ".to_owned(),
        (None, false) => "`: no match".to_owned(),
    };
    let line = Line::from(vec![
        Span::styled(label, dim()),
        Span::raw(search.query.clone()),
        Span::styled(tail, dim()),
    ]);
    let x = (label.chars().count() + search.query.chars().count()).min(width.saturating_sub(1));
    let line = wrap_line(&line, width, "")
        .into_iter()
        .next()
        .unwrap_or_default();
    (vec![line], (x as u16, 0))
}

/// The trust question of a project with its own `.osprey/config.toml`.
pub fn trust_lines(root: &str, selected: usize, width: usize) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = vec![
        Line::styled("  Folder access", bold),
        Line::from(format!("  {root}")),
        Line::default(),
    ];
    lines.extend(prefixed(
        vec![Line::from(
            "Trust this folder? Its .osprey/config.toml can change how Osprey works here: the model, when to ask before acting, the sandbox, and MCP servers that start programs. Trust it only if you trust its files. Your answer is saved in your config.toml.",
        )],
        width,
        Span::raw("  "),
        "  ",
    ));
    lines.push(Line::default());
    for (i, label) in ["Trust and continue", "Continue without its settings"]
        .iter()
        .enumerate()
    {
        let (marker, style) = if i == selected {
            (
                "› ",
                Style::default()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::BOLD),
            )
        } else {
            ("  ", Style::default())
        };
        lines.push(Line::from(vec![
            Span::styled(marker, style),
            Span::styled(format!("{}. {label}", i + 1), style),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        "  enter continue · esc without its settings",
        dim(),
    ));
    lines
}

/// The approval overlay: what is asked, the facts, and one line per choice.
pub fn approval_lines(approval: &PendingApproval, width: usize) -> Vec<Line<'static>> {
    let asker = approval
        .from_agent
        .as_ref()
        .map(|agent| format!("Sub-agent {} asks:", super::collab::short_id(agent)));
    approval_lines_asked_by(approval, asker, width)
}

/// As [`approval_lines`], headed by who asks (`None`: no heading).
pub fn approval_lines_asked_by(
    approval: &PendingApproval,
    asker: Option<String>,
    width: usize,
) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = Vec::new();
    let fact = |label: &str, value: &str| {
        prefixed(
            vec![Line::from(vec![
                Span::styled(format!("{label}: "), bold),
                Span::raw(value.to_owned()),
            ])],
            width,
            Span::raw("  "),
            "  ",
        )
    };
    if let Some(asker) = asker {
        lines.push(Line::styled(
            format!("  {asker}"),
            Style::default()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD),
        ));
    }
    match &approval.kind {
        ApprovalKind::Command {
            command,
            cwd,
            reason,
            sandbox_denial,
            ..
        } => {
            match sandbox_denial {
                // The command ran in the sandbox and was blocked: say what, and that yes
                // runs it again without the sandbox (the server's reason repeats this).
                Some(denial) => {
                    lines.push(Line::styled(
                        "  The sandbox blocked this command. Run it again outside the sandbox?",
                        bold,
                    ));
                    lines.push(Line::default());
                    lines.extend(fact("Blocked", denial));
                }
                None => {
                    lines.push(Line::styled(
                        "  Would you like to run the following command?",
                        bold,
                    ));
                    lines.push(Line::default());
                    if let Some(reason) = reason {
                        lines.extend(fact("Reason", reason));
                    }
                }
            }
            if let Some(cwd) = cwd {
                lines.extend(fact("Directory", cwd));
            }
            if sandbox_denial.is_some() {
                lines.extend(prefixed(
                    vec![Line::styled(
                        "Yes runs it once more with no sandbox: it can then change files anywhere and use the network.",
                        Style::default().fg(Color::Yellow),
                    )],
                    width,
                    Span::raw("  "),
                    "  ",
                ));
            }
            lines.push(Line::default());
            // The whole command, wrapped: never cut off.
            for (n, part) in command.lines().enumerate() {
                let lead = if n == 0 { "  $ " } else { "    " };
                lines.extend(prefixed(
                    vec![Line::styled(
                        part.to_owned(),
                        Style::default().fg(Color::Cyan),
                    )],
                    width,
                    Span::raw(lead),
                    "    ",
                ));
            }
        }
        ApprovalKind::Patch {
            reason,
            grant_root,
            changes,
        } => {
            lines.push(Line::styled(
                "  Would you like to make the following edits?",
                bold,
            ));
            lines.push(Line::default());
            if let Some(reason) = reason {
                lines.extend(fact("Reason", reason));
            }
            for change in changes {
                lines.extend(fact("Destination", &change.path));
                lines.extend(diff_lines(change, width));
            }
            if let Some(root) = grant_root {
                lines.extend(fact("Makes writable for this session", root));
            }
        }
    }
    lines.push(Line::default());
    for (i, choice) in approval.kind.choices().iter().enumerate() {
        let selected = i == approval.selected;
        let marker = if selected { "› " } else { "  " };
        let style = if selected {
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        let text = format!("{}. {} ({})", i + 1, choice.label, choice.key_label);
        lines.extend(prefixed(
            vec![Line::styled(text, style)],
            width,
            Span::styled(marker, style),
            "     ",
        ));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        "  Press a key, or ↑/↓ and enter to confirm; esc stops the turn",
        dim(),
    ));
    lines
}

/// The status line: working indicator (with elapsed time) or the idle facts.
pub fn status_line(
    status: &Status,
    working: Option<Duration>,
    queued: usize,
    quit_armed: bool,
    width: usize,
) -> Line<'static> {
    let mut spans = Vec::new();
    if quit_armed {
        spans.push(Span::styled(
            "Press Ctrl+C again to quit",
            Style::default().fg(Color::Yellow),
        ));
    } else if let Some(elapsed) = working {
        spans.push(Span::styled(
            format!(
                "◦ Working ({} • esc to interrupt)",
                duration(elapsed.as_secs())
            ),
            Style::default().add_modifier(Modifier::BOLD),
        ));
        if queued > 0 {
            spans.push(Span::styled(format!(" · {queued} queued"), dim()));
        }
    } else {
        let mut facts = Vec::new();
        if !status.model.is_empty() {
            facts.push(status.model.clone());
        }
        if !status.cwd.is_empty() {
            facts.push(status.cwd.clone());
        }
        if let Some(left) = status.context_left_percent {
            facts.push(format!("{left}% context left"));
        }
        spans.push(Span::styled(facts.join(" · "), dim()));
    }
    let line = Line::from(spans);
    wrap_line(&line, width, "")
        .into_iter()
        .next()
        .unwrap_or_default()
}
