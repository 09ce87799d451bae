//! Checking an `update_plan` call.
//!
//! A plan is a list of short steps, each pending, in progress or completed. Two rules are
//! enforced, as *errors* (so the model resends a corrected plan rather than the UI showing a
//! confusing one): every step has some text, and at most one step is in progress at a time.

use crate::args::{StepStatus, UpdatePlanArgs};
use crate::error::ToolInputError;
use crate::spec::names::UPDATE_PLAN;

/// What update_plan returns to the model when the plan was accepted.
pub const PLAN_UPDATED: &str = "Plan updated";

impl UpdatePlanArgs {
    /// Check the plan's rules; see the module docs.
    pub fn validate(&self) -> Result<(), ToolInputError> {
        if let Some(index) = self
            .plan
            .iter()
            .position(|item| item.step.trim().is_empty())
        {
            return Err(ToolInputError::invalid(
                UPDATE_PLAN,
                &format!("plan[{index}].step"),
                "the step has no text; describe it in a few words",
            ));
        }
        let in_progress: Vec<usize> = self
            .plan
            .iter()
            .enumerate()
            .filter(|(_, item)| item.status == StepStatus::InProgress)
            .map(|(index, _)| index + 1)
            .collect();
        if in_progress.len() > 1 {
            let steps: Vec<String> = in_progress.iter().map(|n| n.to_string()).collect();
            return Err(ToolInputError::invalid(
                UPDATE_PLAN,
                "plan",
                format!(
                    "steps {} are all in_progress, but at most one step may be in progress at \
                     a time; mark the others pending or completed and send the plan again",
                    steps.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::PlanItemArg;
    use pretty_assertions::assert_eq;

    fn plan(statuses: &[StepStatus]) -> UpdatePlanArgs {
        UpdatePlanArgs {
            explanation: None,
            plan: statuses
                .iter()
                .enumerate()
                .map(|(i, status)| PlanItemArg {
                    step: format!("step {i}"),
                    status: *status,
                })
                .collect(),
        }
    }

    #[test]
    fn one_step_in_progress_is_fine() {
        use StepStatus::*;
        assert_eq!(plan(&[Completed, InProgress, Pending]).validate(), Ok(()));
        assert_eq!(plan(&[]).validate(), Ok(()));
    }

    #[test]
    fn two_steps_in_progress_are_refused() {
        use StepStatus::*;
        let err = plan(&[InProgress, Pending, InProgress])
            .validate()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid `plan` for update_plan: steps 1, 3 are all in_progress, but at most one \
             step may be in progress at a time; mark the others pending or completed and send \
             the plan again"
        );
    }

    #[test]
    fn empty_step_text_is_refused() {
        let mut args = plan(&[StepStatus::Pending]);
        args.plan[0].step = "  ".into();
        assert!(
            args.validate()
                .unwrap_err()
                .to_string()
                .contains("plan[0].step")
        );
    }
}
