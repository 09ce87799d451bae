//! Drawing: pure functions from state to lines. [`live_lines`] is everything the live area
//! at the bottom of the terminal shows; [`cells::cell_lines`] is what a finished cell
//! leaves in the scrollback.

pub mod bottom;
pub mod cells;
mod collab;
pub mod highlight;
pub mod markdown;
mod plan;
pub mod popup;
pub mod theme;
pub mod threads;
pub mod wrap;

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

use crate::state::AppState;

/// The live area: running cells (their last lines, if the screen is short), the approval
/// overlay or the composer, a blank line and the status line; and the cursor's position
/// when the composer has it. `max_height` is the terminal's height.
pub struct Live {
    pub lines: Vec<Line<'static>>,
    pub cursor: Option<(u16, u16)>,
}

pub fn live_lines(
    state: &AppState,
    working: Option<Duration>,
    width: usize,
    max_height: usize,
) -> Live {
    let mut bottom: Vec<Line<'static>> = Vec::new();
    let mut cursor = None;
    if let Some((root, selected)) = &state.trust {
        bottom.extend(bottom::trust_lines(root, *selected, width));
    } else if let Some(approval) = state.approvals.first() {
        bottom.extend(bottom::approval_lines_asked_by(
            approval,
            threads::asker(state, approval),
            width,
        ));
    } else if let Some(picker) = &state.picker {
        let rows = max_height.saturating_sub(6).clamp(1, 12);
        if picker.kind == crate::state::PickerKind::Agent {
            bottom.extend(threads::agent_picker_lines(
                picker,
                &state.agent_rows(),
                width,
                rows,
            ));
        } else {
            bottom.extend(popup::picker_lines(picker, width, rows));
        }
    } else {
        for text in &state.queued {
            let first = text.lines().next().unwrap_or_default();
            bottom.push(Line::styled(
                format!("  ↳ queued: {first}"),
                ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::DIM),
            ));
        }
        bottom.extend(popup::slash_popup_lines(
            &state.popup_entries(),
            state.popup_selected,
            width,
        ));
        if let Some(mention) = &state.mention {
            bottom.extend(popup::mention_lines(mention, width));
        }
        let (lines, (x, y)) = match state.composer.search() {
            Some(search) => bottom::search_lines(search, &state.composer, width),
            None => match threads::composer_hint(state) {
                Some(hint) => bottom::composer_lines_with(&state.composer, width, &hint),
                None => bottom::composer_lines(&state.composer, width),
            },
        };
        let top = bottom.len() as u16;
        bottom.extend(lines);
        cursor = Some((x, top + y));
    }
    bottom.push(Line::default());
    let status = bottom::status_line(
        &state.status,
        working,
        state.queued.len(),
        state.quit_armed,
        width,
    );
    bottom.push(threads::watched_status(state, status, width));

    let mut running: Vec<Line<'static>> = Vec::new();
    for (_, cell) in &state.active {
        running.extend(cells::cell_lines(cell, width));
    }
    // What does not fit shows its newest lines; it reaches the scrollback whole when done.
    let room = max_height.saturating_sub(bottom.len());
    if running.len() > room {
        running.drain(..running.len() - room);
    }
    if bottom.len() > max_height {
        // An overlay taller than the screen keeps its choices (at the end) visible.
        let cut = bottom.len() - max_height;
        bottom.drain(..cut);
        cursor = cursor.map(|(x, y)| (x, y.saturating_sub(cut as u16)));
    }
    let offset = running.len() as u16;
    running.extend(bottom);
    Live {
        lines: running,
        cursor: cursor.map(|(x, y)| (x, y + offset)),
    }
}

/// Draws lines into a buffer area, top to bottom (lines are wrapped already).
pub fn draw_lines(lines: &[Line<'static>], area: Rect, buf: &mut Buffer) {
    Paragraph::new(lines.to_vec()).render(area, buf);
}

#[cfg(test)]
mod tests;
