//! The model's plan as a transcript cell. Each `update_plan` call is its own cell, as in
//! Codex: live from `turn/plan/updated`, and on resume from the `plan` item the history
//! gives back for each call (`- [x]` / `- [~]` / `- [ ]` lines after the explanation).
//! Both become the same [`PlanCell`], so a plan is drawn the same either way.

use osprey_app_server_protocol::{TurnPlanStepStatus, TurnPlanUpdatedNotification};

/// One plan: why it changed (if the model said) and its steps in order.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCell {
    pub explanation: Option<String>,
    pub steps: Vec<PlanStep>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PlanStep {
    /// On one line (the model's line breaks are spaces here).
    pub text: String,
    pub status: TurnPlanStepStatus,
}

impl PlanCell {
    pub fn from_notification(note: &TurnPlanUpdatedNotification) -> Self {
        Self {
            explanation: note
                .explanation
                .as_deref()
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_owned),
            steps: note
                .plan
                .iter()
                .map(|step| PlanStep {
                    text: one_line(&step.step),
                    status: step.status,
                })
                .collect(),
        }
    }

    /// A `plan` item's text: the lines before the first step are the explanation (`\- [`
    /// unescaped), each `- [x]` / `- [~]` / `- [ ]` line a step, and any other line after
    /// the first step continues the step above it.
    pub fn from_text(text: &str) -> Self {
        let mut explanation: Vec<String> = Vec::new();
        let mut steps: Vec<PlanStep> = Vec::new();
        for line in text.lines() {
            let trimmed = line.trim();
            if let Some((status, rest)) = step_line(trimmed) {
                steps.push(PlanStep {
                    text: one_line(rest),
                    status,
                });
            } else if let Some(last) = steps.last_mut() {
                if !trimmed.is_empty() {
                    last.text = one_line(&format!("{} {trimmed}", last.text));
                }
            } else {
                explanation.push(unescape(line));
            }
        }
        let explanation = explanation.join("\n").trim().to_owned();
        Self {
            explanation: (!explanation.is_empty()).then_some(explanation),
            steps,
        }
    }
}

/// A checklist line's status and text.
fn step_line(line: &str) -> Option<(TurnPlanStepStatus, &str)> {
    let rest = line.strip_prefix("- [")?;
    let (mark, rest) = rest.split_at_checked(1)?;
    let rest = rest.strip_prefix(']')?;
    let status = match mark {
        "x" | "X" => TurnPlanStepStatus::Completed,
        "~" => TurnPlanStepStatus::InProgress,
        " " => TurnPlanStepStatus::Pending,
        _ => return None,
    };
    Some((status, rest.strip_prefix(' ').unwrap_or(rest)))
}

/// An explanation line as the model wrote it: `\- [` (escaped so it does not read as a
/// step) back to `- [`, its indentation kept.
fn unescape(line: &str) -> String {
    let body = line.trim_start();
    match body.strip_prefix('\\') {
        Some(rest) if rest.starts_with("- [") => {
            format!("{}{rest}", &line[..line.len() - body.len()])
        }
        _ => line.to_owned(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_app_server_protocol::TurnPlanStep;
    use pretty_assertions::assert_eq;

    fn step(text: &str, status: TurnPlanStepStatus) -> PlanStep {
        PlanStep {
            text: text.into(),
            status,
        }
    }

    #[test]
    fn a_notification_and_its_history_text_make_the_same_cell() {
        let note = TurnPlanUpdatedNotification {
            thread_id: "t".into(),
            turn_id: "u".into(),
            explanation: Some("  Found the bug.\n  - [x] not a step  ".into()),
            plan: vec![
                TurnPlanStep {
                    step: "Read\nthe code".into(),
                    status: TurnPlanStepStatus::Completed,
                },
                TurnPlanStep {
                    step: "Fix it".into(),
                    status: TurnPlanStepStatus::InProgress,
                },
                TurnPlanStep {
                    step: "Test".into(),
                    status: TurnPlanStepStatus::Pending,
                },
            ],
        };
        let expected = PlanCell {
            explanation: Some("Found the bug.\n  - [x] not a step".into()),
            steps: vec![
                step("Read the code", TurnPlanStepStatus::Completed),
                step("Fix it", TurnPlanStepStatus::InProgress),
                step("Test", TurnPlanStepStatus::Pending),
            ],
        };
        assert_eq!(PlanCell::from_notification(&note), expected);
        // The text the app server's history writes for the same call.
        let text =
            "Found the bug.\n  \\- [x] not a step\n\n- [x] Read the code\n- [~] Fix it\n- [ ] Test";
        assert_eq!(PlanCell::from_text(text), expected);
    }

    #[test]
    fn text_without_explanation_or_steps_and_continued_steps() {
        assert_eq!(
            PlanCell::from_text("- [X] done\n  more of it\n\n- [?] odd\n- []"),
            PlanCell {
                explanation: None,
                steps: vec![step(
                    "done more of it - [?] odd - []",
                    TurnPlanStepStatus::Completed
                )],
            }
        );
        assert_eq!(
            PlanCell::from_text(""),
            PlanCell {
                explanation: None,
                steps: Vec::new(),
            }
        );
        let blank = TurnPlanUpdatedNotification {
            thread_id: "t".into(),
            turn_id: "u".into(),
            explanation: Some("   ".into()),
            plan: Vec::new(),
        };
        assert_eq!(
            PlanCell::from_notification(&blank),
            PlanCell {
                explanation: None,
                steps: Vec::new(),
            }
        );
    }
}
