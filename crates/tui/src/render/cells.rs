//! Transcript cells as lines: one pure function per kind, all wrapped to a width.

use osprey_app_server_protocol::{
    CommandExecutionSource, CommandExecutionStatus, FileUpdateChange, McpToolCallStatus,
    PatchApplyStatus, PatchChangeKind,
};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::markdown::render_markdown;
use super::wrap::{prefixed, wrap_line};
use crate::state::cells::McpCell;
use crate::state::cells::diff_counts;
use crate::state::{Cell, ExecCell};

/// Output lines a command cell shows (the last ones); the rest are counted.
pub const OUTPUT_TAIL_LINES: usize = 5;
/// Diff lines a file change cell shows per file.
pub const DIFF_LINES: usize = 40;

pub(super) fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

pub(super) fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

/// A cell's lines at `width` columns. Each cell ends with a blank line, so cells pushed
/// into scrollback one after another stay apart.
pub fn cell_lines(cell: &Cell, width: usize) -> Vec<Line<'static>> {
    lines_of(cell, width, false)
}

/// A cell's lines with nothing folded (a command's whole output), for the transcript pager.
pub fn cell_lines_full(cell: &Cell, width: usize) -> Vec<Line<'static>> {
    lines_of(cell, width, true)
}

fn lines_of(cell: &Cell, width: usize, full: bool) -> Vec<Line<'static>> {
    let mut lines = match cell {
        Cell::User { text } => {
            let body: Vec<Line<'static>> = text.lines().map(|l| Line::from(l.to_owned())).collect();
            let body = if body.is_empty() {
                vec![Line::default()]
            } else {
                body
            };
            prefixed(body, width, Span::styled("› ", bold()), "  ")
                .into_iter()
                .map(|l| l.patch_style(Style::default().fg(Color::White)))
                .collect()
        }
        Cell::Agent { text, .. } => {
            let body = render_markdown(text, width.saturating_sub(2));
            let body = if body.is_empty() {
                vec![Line::default()]
            } else {
                body
            };
            bullet(body, Span::raw("• "))
        }
        Cell::Reasoning { text } => {
            let body = render_markdown(text, width.saturating_sub(2))
                .into_iter()
                .map(|l| l.patch_style(dim().add_modifier(Modifier::ITALIC)))
                .collect();
            bullet(body, Span::styled("• ", dim()))
        }
        Cell::Exec(exec) => exec_lines(exec, width, full),
        Cell::Plan(plan) => super::plan::plan_lines(plan, width),
        Cell::Mcp(call) => mcp_lines(call, width, full),
        Cell::Collab(call) => super::collab::collab_lines(call, width),
        Cell::Compaction => vec![Line::styled(
            "• Context compacted: the conversation so far was summarized",
            dim(),
        )],
        Cell::FileChange { changes, status } => file_change_lines(changes, *status, width),
        Cell::Error { message } => prefixed(
            vec![Line::from(message.clone())],
            width,
            Span::styled("■ ", Style::default().fg(Color::Red)),
            "  ",
        )
        .into_iter()
        .map(|l| l.patch_style(Style::default().fg(Color::Red)))
        .collect(),
        Cell::Warning { message } => prefixed(
            vec![Line::from(message.clone())],
            width,
            Span::styled("⚠ ", Style::default().fg(Color::Yellow)),
            "  ",
        )
        .into_iter()
        .map(|l| l.patch_style(Style::default().fg(Color::Yellow)))
        .collect(),
        Cell::Notice { text } => wrap_line(&Line::from(text.clone()), width, "  "),
        Cell::Facts { title, rows } => facts_lines(title, rows, width),
        Cell::ThreadHeader(header) => super::threads::header_lines(header, width),
        Cell::TurnEnd {
            seconds,
            interrupted,
        } => {
            let mut lines = Vec::new();
            if *interrupted {
                lines.push(Line::styled(
                    "■ Conversation interrupted",
                    Style::default().fg(Color::Red),
                ));
            }
            lines.push(Line::styled(
                format!("  Worked for {}", duration(*seconds)),
                dim(),
            ));
            lines
        }
    };
    lines.push(Line::default());
    lines
}

/// An MCP tool call: `Called server.tool(arguments)`, then its result or error.
fn mcp_lines(call: &McpCell, width: usize, full: bool) -> Vec<Line<'static>> {
    let (verb, mark) = match call.status {
        McpToolCallStatus::InProgress => ("Calling", Span::styled("• ", dim())),
        McpToolCallStatus::Completed => (
            "Called",
            Span::styled("• ", Style::default().fg(Color::Green)),
        ),
        McpToolCallStatus::Failed => (
            "Called",
            Span::styled("• ", Style::default().fg(Color::Red)),
        ),
    };
    let header = Line::from(vec![
        Span::styled(format!("{verb} "), bold()),
        Span::styled(
            format!("{}.{}", call.server, call.tool),
            Style::default().fg(Color::Cyan),
        ),
        Span::raw(format!("({})", call.arguments)),
    ]);
    let mut lines = prefixed(vec![header], width, mark, "  ");
    let mut body: Vec<Line<'static>> = Vec::new();
    if let Some(error) = &call.error {
        body.push(Line::styled(error.clone(), Style::default().fg(Color::Red)));
    } else if let Some(result) = &call.result {
        let result: Vec<&str> = result.lines().collect();
        let shown = if full {
            result.len()
        } else {
            result.len().min(OUTPUT_TAIL_LINES)
        };
        for line in &result[..shown] {
            body.push(Line::styled((*line).to_owned(), dim()));
        }
        if shown < result.len() {
            body.push(Line::styled(
                format!(
                    "… +{} lines (ctrl+t shows the whole result)",
                    result.len() - shown
                ),
                dim(),
            ));
        }
    }
    if let Some(ms) = call.duration_ms {
        body.push(Line::styled(format_ms(ms), dim()));
    }
    lines.extend(prefixed(body, width, Span::styled("  └ ", dim()), "    "));
    lines
}

/// A title and `label: value` rows with the values aligned; long values wrap under
/// themselves.
fn facts_lines(title: &str, rows: &[(String, String)], width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(format!("  {title}"), bold())];
    let label_width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let indent = " ".repeat(label_width + 2);
    for (label, value) in rows {
        let head = format!("  {:<label_width$}", format!("{label}:"));
        for (n, part) in value.split('\n').enumerate() {
            let lead = if n == 0 { head.clone() } else { indent.clone() };
            lines.extend(prefixed(
                vec![Line::from(part.to_owned())],
                width,
                Span::styled(lead, dim()),
                &indent,
            ));
        }
    }
    lines
}

/// `Ns`, `Mm Ss` or `Hh Mm`.
pub fn duration(seconds: u64) -> String {
    match seconds {
        0 => "<1s".to_owned(),
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

fn bullet(body: Vec<Line<'static>>, first: Span<'static>) -> Vec<Line<'static>> {
    body.into_iter()
        .enumerate()
        .map(|(n, line)| {
            let lead = if n == 0 {
                first.clone()
            } else {
                Span::raw("  ")
            };
            let mut spans = vec![lead];
            spans.extend(line.spans);
            Line::from(spans).style(line.style)
        })
        .collect()
}

fn exec_lines(exec: &ExecCell, width: usize, full: bool) -> Vec<Line<'static>> {
    let running = exec.status == CommandExecutionStatus::InProgress;
    let verb = match (exec.source, exec.status) {
        (CommandExecutionSource::UserShell, CommandExecutionStatus::InProgress) => {
            "You are running"
        }
        (CommandExecutionSource::UserShell, _) => "You ran",
        (_, CommandExecutionStatus::InProgress) => "Running",
        (_, CommandExecutionStatus::Declined) => "Declined",
        _ => "Ran",
    };
    let mark = match exec.status {
        CommandExecutionStatus::InProgress => Span::styled("• ", dim()),
        CommandExecutionStatus::Completed if exec.exit_code.unwrap_or(0) == 0 => {
            Span::styled("• ", Style::default().fg(Color::Green))
        }
        _ => Span::styled("• ", Style::default().fg(Color::Red)),
    };
    let header = Line::from(vec![
        Span::styled(format!("{verb} "), bold()),
        Span::raw(exec.command.clone()),
    ]);
    let mut lines = prefixed(vec![header], width, mark, "  ");
    let output: Vec<&str> = exec.output.trim_end_matches('\n').lines().collect();
    let shown = if full {
        output.len()
    } else {
        output.len().min(OUTPUT_TAIL_LINES)
    };
    let hidden = output.len() - shown;
    let mut body: Vec<Line<'static>> = Vec::new();
    if hidden > 0 {
        body.push(Line::styled(
            format!("… +{hidden} lines (ctrl+t shows the whole output)"),
            dim(),
        ));
    }
    for line in &output[output.len() - shown..] {
        body.push(Line::styled((*line).to_owned(), dim()));
    }
    if body.is_empty() && !running {
        body.push(Line::styled("(no output)", dim()));
    }
    if !running && exec.status != CommandExecutionStatus::Declined {
        let mut facts = Vec::new();
        if let Some(code) = exec.exit_code {
            facts.push(format!("exit {code}"));
        }
        if let Some(ms) = exec.duration_ms {
            facts.push(format_ms(ms));
        }
        if !facts.is_empty() {
            let style = if exec.exit_code.unwrap_or(0) == 0 {
                dim()
            } else {
                Style::default().fg(Color::Red)
            };
            body.push(Line::styled(facts.join(" · "), style));
        }
    }
    lines.extend(prefixed(body, width, Span::styled("  └ ", dim()), "    "));
    lines
}

fn format_ms(ms: i64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

fn file_change_lines(
    changes: &[FileUpdateChange],
    status: PatchApplyStatus,
    width: usize,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for change in changes {
        let (added, removed) = diff_counts(change);
        let verb = match (&change.kind, status) {
            (_, PatchApplyStatus::Declined) => "Declined edit of",
            (_, PatchApplyStatus::Failed) => "Failed to edit",
            (PatchChangeKind::Add, _) => "Added",
            (PatchChangeKind::Delete, _) => "Deleted",
            (PatchChangeKind::Update { .. }, PatchApplyStatus::InProgress) => "Editing",
            (PatchChangeKind::Update { .. }, _) => "Edited",
        };
        let path = match &change.kind {
            PatchChangeKind::Update {
                move_path: Some(to),
            } => format!("{} → {to}", change.path),
            _ => change.path.clone(),
        };
        let header = Line::from(vec![
            Span::styled(format!("{verb} "), bold()),
            Span::raw(path),
            Span::raw(" ("),
            Span::styled(format!("+{added}"), Style::default().fg(Color::Green)),
            Span::raw(" "),
            Span::styled(format!("-{removed}"), Style::default().fg(Color::Red)),
            Span::raw(")"),
        ]);
        lines.extend(prefixed(vec![header], width, Span::raw("• "), "  "));
        lines.extend(diff_lines(change, width));
    }
    lines
}

/// A file's diff as coloured lines (headers dropped), at most [`DIFF_LINES`].
pub fn diff_lines(change: &FileUpdateChange, width: usize) -> Vec<Line<'static>> {
    let body: Vec<(char, &str)> = match change.kind {
        PatchChangeKind::Add => change.diff.lines().map(|l| ('+', l)).collect(),
        PatchChangeKind::Delete => change.diff.lines().map(|l| ('-', l)).collect(),
        PatchChangeKind::Update { .. } => change
            .diff
            .lines()
            .filter(|l| !l.starts_with("+++") && !l.starts_with("---"))
            .map(|l| {
                let mut chars = l.chars();
                let sign = chars.next().unwrap_or(' ');
                (sign, chars.as_str())
            })
            .collect(),
    };
    let mut out = Vec::new();
    for (sign, text) in body.iter().take(DIFF_LINES) {
        let (style, shown) = match sign {
            '+' => (Style::default().fg(Color::Green), format!("+{text}")),
            '-' => (Style::default().fg(Color::Red), format!("-{text}")),
            '@' => (Style::default().fg(Color::Cyan), format!("@{text}")),
            _ => (Style::default(), format!(" {text}")),
        };
        out.extend(prefixed(
            vec![Line::styled(shown, style)],
            width,
            Span::raw("    "),
            "      ",
        ));
    }
    if body.len() > DIFF_LINES {
        out.push(Line::styled(
            format!("    … +{} lines", body.len() - DIFF_LINES),
            dim(),
        ));
    }
    out
}
