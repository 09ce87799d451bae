//! The model's `update_plan` calls on the wire.
//!
//! Live, each call is a `turn/plan/updated` notification, as in Codex: the whole plan and the
//! model's explanation. Codex's `plan` item is for plan-mode proposals, so no item is sent
//! for these calls (a client that drew both would show every plan twice).
//!
//! Codex keeps nothing of these calls in its session files, so a resumed Codex thread has
//! lost its plans. Osprey's rollout keeps each call's `plan_update` event, and the history
//! (`thread/read`, `thread/resume`) gives each one back as a `plan` item in its turn, in
//! order, with the text [`plan_text`] writes: the explanation, a blank line, then one step a
//! line, `- [x]` done, `- [~]` in progress, `- [ ]` to do.

use osprey_app_server_protocol as wire;
use osprey_protocol::{PlanStep, PlanStepStatus};

/// The notification for one `update_plan` call.
pub fn plan_updated(
    thread_id: String,
    turn_id: String,
    explanation: Option<String>,
    plan: &[PlanStep],
) -> wire::TurnPlanUpdatedNotification {
    wire::TurnPlanUpdatedNotification {
        thread_id,
        turn_id,
        explanation,
        plan: plan
            .iter()
            .map(|step| wire::TurnPlanStep {
                step: step.step.clone(),
                status: match step.status {
                    PlanStepStatus::Pending => wire::TurnPlanStepStatus::Pending,
                    PlanStepStatus::InProgress => wire::TurnPlanStepStatus::InProgress,
                    PlanStepStatus::Completed => wire::TurnPlanStepStatus::Completed,
                },
            })
            .collect(),
    }
}

/// The history's `plan` item for one `update_plan` call recorded at `at_ms`.
pub fn plan_item(
    id: String,
    explanation: Option<&str>,
    plan: &[PlanStep],
    at_ms: i64,
) -> wire::ThreadItem {
    wire::ThreadItem {
        details: wire::ThreadItemDetails::Plan {
            id,
            text: plan_text(explanation, plan),
        },
        started_at_ms: Some(at_ms),
        completed_at_ms: Some(at_ms),
    }
}

/// The plan as markdown-like text. Each step is kept on one line (its line breaks become
/// spaces), and an explanation line that would read as a step is escaped (`\- [`), so the
/// text parses back into the same explanation and steps.
pub fn plan_text(explanation: Option<&str>, plan: &[PlanStep]) -> String {
    let mut out = Vec::new();
    if let Some(explanation) = explanation.map(str::trim).filter(|e| !e.is_empty()) {
        for line in explanation.lines() {
            let body = line.trim_start();
            if body.starts_with("- [") {
                let indent = &line[..line.len() - body.len()];
                out.push(format!("{indent}\\{body}"));
            } else {
                out.push(line.to_owned());
            }
        }
        if !plan.is_empty() {
            out.push(String::new());
        }
    }
    for step in plan {
        let mark = match step.status {
            PlanStepStatus::Completed => "x",
            PlanStepStatus::InProgress => "~",
            PlanStepStatus::Pending => " ",
        };
        let text = step.step.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(format!("- [{mark}] {text}"));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn step(step: &str, status: PlanStepStatus) -> PlanStep {
        PlanStep {
            step: step.into(),
            status,
        }
    }

    #[test]
    fn the_notification_has_codexs_shape() {
        let plan = [
            step("Read the code", PlanStepStatus::Completed),
            step("Write the fix", PlanStepStatus::InProgress),
            step("Test", PlanStepStatus::Pending),
        ];
        let note = plan_updated("t1".into(), "u1".into(), None, &plan);
        assert_eq!(
            serde_json::to_value(&note).unwrap(),
            serde_json::json!({
                "threadId": "t1",
                "turnId": "u1",
                "explanation": null,
                "plan": [
                    {"step": "Read the code", "status": "completed"},
                    {"step": "Write the fix", "status": "inProgress"},
                    {"step": "Test", "status": "pending"},
                ],
            })
        );
    }

    #[test]
    fn the_history_text_puts_the_explanation_before_one_step_a_line() {
        let plan = [
            step("Read\nthe code", PlanStepStatus::Completed),
            step("Write the fix", PlanStepStatus::InProgress),
            step("Test", PlanStepStatus::Pending),
        ];
        assert_eq!(
            plan_text(Some("Found the bug.\n  - [x] is not a step"), &plan),
            "Found the bug.\n  \\- [x] is not a step\n\n- [x] Read the code\n- [~] Write the fix\n- [ ] Test"
        );
        assert_eq!(plan_text(Some("  "), &plan[2..]), "- [ ] Test");
        assert_eq!(plan_text(Some("Nothing left."), &[]), "Nothing left.");
        assert_eq!(plan_text(None, &[]), "");
    }
}
