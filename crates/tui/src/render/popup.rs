//! The slash popup, the pickers slash commands open, and the full-screen pager.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::cells::cell_lines_full;
use super::wrap::wrap_line;
use crate::state::mention::MentionPopup;
use crate::state::sessions::{SessionFocus, SessionQuery};
use crate::state::slash::{POPUP_ROWS, SlashEntry};
use crate::state::{Cell, Pager, PagerContent, Picker, PickerKind};

fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

fn selected_style() -> Style {
    Style::default()
        .fg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

/// The popup's rows: at most [`POPUP_ROWS`], scrolled so the selection shows.
pub fn slash_popup_lines(
    entries: &[&SlashEntry],
    selected: usize,
    width: usize,
) -> Vec<Line<'static>> {
    let first = selected.saturating_sub(POPUP_ROWS - 1);
    let name_width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0) + 3;
    entries
        .iter()
        .enumerate()
        .skip(first)
        .take(POPUP_ROWS)
        .map(|(i, e)| {
            let (marker, style) = if i == selected {
                ("› ", selected_style())
            } else {
                ("  ", Style::default())
            };
            let line = Line::from(vec![
                Span::styled(marker, style),
                Span::styled(format!("{:<name_width$}", format!("/{}", e.name)), style),
                Span::styled(e.description, dim()),
            ]);
            wrap_line(&line, width, "")
                .into_iter()
                .next()
                .unwrap_or_default()
        })
        .collect()
}

/// The `@` popup: the matching files, the selected one marked, and its keys.
pub fn mention_lines(popup: &MentionPopup, width: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    if popup.matches.is_empty() {
        lines.push(Line::styled("  no matching files", dim()));
        return lines;
    }
    for (i, path) in popup.matches.iter().enumerate() {
        let (marker, style) = if i == popup.selected {
            ("› ", selected_style())
        } else {
            ("  ", Style::default())
        };
        let line = Line::from(vec![
            Span::styled(marker, style),
            Span::styled(path.clone(), style),
        ]);
        lines.extend(wrap_line(&line, width, "").into_iter().take(1));
    }
    lines.push(Line::styled(
        "  tab/enter insert · esc close · ↑/↓ select",
        dim(),
    ));
    lines
}

/// A picker: its title, (for sessions) the search, one row per item, and its keys.
pub fn picker_lines(picker: &Picker, width: usize, max_rows: usize) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::styled(format!("  {}", picker.title), bold)];
    if let Some(query) = &picker.sessions {
        lines.push(session_options(query, picker.focus));
        if query.search.is_empty() {
            lines.push(Line::styled("  Type to search", dim()));
        } else {
            lines.push(Line::from(vec![
                Span::styled("  Search: ", dim()),
                Span::raw(query.search.clone()),
            ]));
        }
    }
    if picker.loading && picker.items.is_empty() {
        lines.push(Line::styled("  Loading…", dim()));
    } else if picker.items.is_empty() {
        let empty = match &picker.sessions {
            Some(query) => format!(
                "  No {}sessions{} match",
                if query.archived { "archived " } else { "" },
                if query.all_dirs {
                    ""
                } else {
                    " of this directory"
                }
            ),
            None => "  Nothing to choose from".to_owned(),
        };
        lines.push(Line::styled(empty, dim()));
    }
    let label_width = picker
        .items
        .iter()
        .map(|i| i.label.width())
        .max()
        .unwrap_or(0)
        + 2;
    let numbered = !matches!(picker.kind, PickerKind::Session { .. });
    let rows = max_rows.max(1);
    let first = picker.selected.saturating_sub(rows - 1);
    for (i, item) in picker.items.iter().enumerate().skip(first).take(rows) {
        let (marker, style) = if i == picker.selected {
            ("› ", selected_style())
        } else {
            ("  ", Style::default())
        };
        let label = if numbered {
            format!("{}. {:<label_width$}", i + 1, item.label)
        } else {
            format!("{:<label_width$}", item.label)
        };
        // The description wraps in its own column, right of the labels.
        let lead = 2 + label.width();
        let room = width.saturating_sub(lead).max(10);
        let description = wrap_line(&Line::styled(item.description.clone(), dim()), room, "");
        let mut parts = description.into_iter();
        let mut first = vec![Span::styled(marker, style), Span::styled(label, style)];
        if let Some(part) = parts.next() {
            first.extend(part.spans);
        }
        lines.push(Line::from(first));
        for part in parts {
            let mut spans = vec![Span::raw(" ".repeat(lead))];
            spans.extend(part.spans);
            lines.push(Line::from(spans));
        }
    }
    let archive = match &picker.sessions {
        Some(query) if query.archived => "^a unarchive",
        _ => "^a archive",
    };
    let keys = match picker.kind {
        PickerKind::Session { fork } => format!(
            "  enter {} · {archive} · esc back · tab focus sort/filter · ←/→ change option · ↑/↓ browse",
            if fork { "fork" } else { "resume" }
        ),
        _ => "  enter select · esc back".to_owned(),
    };
    lines.extend(wrap_line(&Line::styled(keys, dim()), width, "  "));
    lines
}

/// `Filter:  Cwd  All    Status:  Active  Archived    Sort:  Updated  Created`: the chosen
/// option of each group highlighted, the focused group's name underlined.
fn session_options(query: &SessionQuery, focus: SessionFocus) -> Line<'static> {
    let groups = [
        (
            SessionFocus::Filter,
            "Filter:",
            ["Cwd", "All"],
            query.all_dirs,
        ),
        (
            SessionFocus::Status,
            "Status:",
            ["Active", "Archived"],
            query.archived,
        ),
        (
            SessionFocus::Sort,
            "Sort:",
            ["Updated", "Created"],
            query.by_created,
        ),
    ];
    let mut spans = vec![Span::raw("  ")];
    for (n, (group, name, options, second)) in groups.into_iter().enumerate() {
        if n > 0 {
            spans.push(Span::raw("    "));
        }
        let name_style = if focus == group {
            Style::default()
                .add_modifier(Modifier::BOLD)
                .add_modifier(Modifier::UNDERLINED)
        } else {
            dim()
        };
        spans.push(Span::styled(name, name_style));
        for (i, option) in options.into_iter().enumerate() {
            spans.push(Span::raw("  "));
            let chosen = (i == 1) == second;
            let style = if chosen { selected_style() } else { dim() };
            spans.push(Span::styled(option, style));
        }
    }
    Line::from(spans)
}

/// The pager's screen: a title, the visible part of the content, a ruler with the
/// position, and its keys. Returns the lines and the scroll clamped to the content.
pub fn pager_view(
    pager: &Pager,
    history: &[Cell],
    width: usize,
    height: usize,
) -> (Vec<Line<'static>>, usize) {
    let body: Vec<Line<'static>> = match &pager.content {
        PagerContent::Diff(text) => text
            .lines()
            .flat_map(|l| {
                let style = if l.starts_with("+++") || l.starts_with("---") {
                    Style::default().add_modifier(Modifier::BOLD)
                } else if l.starts_with('+') {
                    Style::default().fg(Color::Green)
                } else if l.starts_with('-') {
                    Style::default().fg(Color::Red)
                } else if l.starts_with("@@") {
                    Style::default().fg(Color::Cyan)
                } else {
                    Style::default()
                };
                wrap_line(&Line::styled(l.replace('\t', "    "), style), width, "")
            })
            .collect(),
        PagerContent::Transcript => history
            .iter()
            .flat_map(|c| cell_lines_full(c, width))
            .collect(),
    };
    let room = height.saturating_sub(4).max(1);
    let max_scroll = body.len().saturating_sub(room);
    let scroll = pager.scroll.min(max_scroll);
    let mut lines = vec![Line::styled(
        format!("/ {} /", pager.title.trim_start_matches('/').to_uppercase()),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    lines.extend(body.iter().skip(scroll).take(room).cloned());
    while lines.len() < room + 1 {
        lines.push(Line::default());
    }
    let percent = if body.len() <= room {
        100
    } else {
        (scroll + room) * 100 / body.len()
    };
    let tag = format!(" {percent}% ");
    let rule = "─".repeat(width.saturating_sub(tag.width() + 1));
    lines.push(Line::styled(format!("{rule}{tag}─"), dim()));
    lines.push(Line::styled(
        " ↑/↓ to scroll · pgup/pgdn to page · home/end to jump",
        dim(),
    ));
    lines.push(Line::styled(" q close", dim()));
    (lines, scroll)
}
