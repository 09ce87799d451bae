//! The plan cell: `• Updated Plan`, the model's explanation (dim, italic), then a checklist.
//!
//! ```text
//! • Updated Plan
//!   └ Found the cause; fixing it now.
//!     ✔ Read the failing test
//!     ▣ Fix the parser so that a long step wraps
//!       under its own text
//!     □ Run the suite
//! ```
//!
//! The mark says the status without colour (`NO_COLOR`): `✔` done (text dim and struck
//! through), `▣` in progress (cyan, bold), `□` to do (plain). Wrapped lines hang under the
//! step's text.

use osprey_app_server_protocol::TurnPlanStepStatus;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::cells::{bold, dim};
use super::wrap::{prefixed, wrap_line};
use crate::state::plan::{PlanCell, PlanStep};

/// Where the body starts, under the header's bullet.
const FIRST: &str = "  └ ";
const REST: &str = "    ";

pub(super) fn plan_lines(plan: &PlanCell, width: usize) -> Vec<Line<'static>> {
    let inner = width.saturating_sub(REST.len()).max(1);
    let mut body: Vec<Line<'static>> = Vec::new();
    if let Some(explanation) = &plan.explanation {
        let style = dim().add_modifier(Modifier::ITALIC);
        for line in explanation.lines() {
            body.extend(wrap_line(&Line::styled(line.to_owned(), style), inner, ""));
        }
    }
    if plan.steps.is_empty() {
        body.push(Line::styled(
            "(no steps)",
            dim().add_modifier(Modifier::ITALIC),
        ));
    }
    for step in &plan.steps {
        body.extend(step_lines(step, inner));
    }
    let header = Line::from(vec![
        Span::styled("• ", dim()),
        Span::styled("Updated Plan", bold()),
    ]);
    let mut lines = wrap_line(&header, width, "  ");
    for (n, line) in body.into_iter().enumerate() {
        let lead = if n == 0 { FIRST } else { REST };
        let mut spans = vec![Span::styled(lead, dim())];
        spans.extend(line.spans);
        lines.push(Line::from(spans));
    }
    lines
}

/// One step: its mark, then its text wrapped with a hanging indent.
fn step_lines(step: &PlanStep, width: usize) -> Vec<Line<'static>> {
    let (mark, mark_style, text_style) = match step.status {
        TurnPlanStepStatus::Completed => (
            "✔ ",
            Style::default().fg(Color::Green),
            dim().add_modifier(Modifier::CROSSED_OUT),
        ),
        TurnPlanStepStatus::InProgress => {
            let style = Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD);
            ("▣ ", style, style)
        }
        TurnPlanStepStatus::Pending => ("□ ", Style::default(), Style::default()),
    };
    prefixed(
        vec![Line::styled(step.text.clone(), text_style)],
        width,
        Span::styled(mark, mark_style),
        "  ",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::wrap::plain;
    use pretty_assertions::assert_eq;

    fn cell() -> PlanCell {
        PlanCell {
            explanation: Some("Found the cause; fixing it now.".into()),
            steps: vec![
                PlanStep {
                    text: "Read the failing test".into(),
                    status: TurnPlanStepStatus::Completed,
                },
                PlanStep {
                    text: "Fix the parser so that a long step wraps under its own text".into(),
                    status: TurnPlanStepStatus::InProgress,
                },
                PlanStep {
                    text: "Run the suite".into(),
                    status: TurnPlanStepStatus::Pending,
                },
            ],
        }
    }

    #[test]
    fn a_narrow_plan_wraps_each_step_under_its_text() {
        let lines: Vec<String> = plan_lines(&cell(), 30).iter().map(plain).collect();
        assert_eq!(
            lines,
            [
                "• Updated Plan",
                "  └ Found the cause; fixing it",
                "    now.",
                "    ✔ Read the failing test",
                "    ▣ Fix the parser so that a",
                "      long step wraps under",
                "      its own text",
                "    □ Run the suite",
            ]
        );
        for line in plan_lines(&cell(), 12) {
            assert!(
                super::super::wrap::width(&plain(&line)) <= 12,
                "{:?}",
                plain(&line)
            );
        }
    }

    #[test]
    fn the_marks_carry_the_status_and_the_styles_follow_it() {
        let lines = plan_lines(&cell(), 80);
        let explanation = &lines[1].spans[1];
        assert!(explanation.style.add_modifier.contains(Modifier::ITALIC));
        assert!(explanation.style.add_modifier.contains(Modifier::DIM));
        let done = &lines[2].spans;
        assert_eq!(done[1].content, "✔ ");
        assert!(done[2].style.add_modifier.contains(Modifier::CROSSED_OUT));
        let doing = &lines[3].spans;
        assert_eq!(doing[1].content, "▣ ");
        assert_eq!(doing[2].style.fg, Some(Color::Cyan));
        assert!(doing[2].style.add_modifier.contains(Modifier::BOLD));
        let todo = &lines[4].spans;
        assert_eq!(todo[1].content, "□ ");
        assert_eq!(todo[2].style, Style::default());
    }

    #[test]
    fn a_plan_without_steps_says_so() {
        let empty = PlanCell {
            explanation: None,
            steps: Vec::new(),
        };
        let lines: Vec<String> = plan_lines(&empty, 80).iter().map(plain).collect();
        assert_eq!(lines, ["• Updated Plan", "  └ (no steps)"]);
    }
}
