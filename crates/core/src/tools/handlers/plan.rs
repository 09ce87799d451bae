//! `update_plan`: the model's to-do list. Each call emits the thread's one `TodoList` item
//! (started, then updated: what `exec --json` shows as `todo_list`) and a `PlanUpdate` event
//! with the steps and the model's explanation (what the app server sends as
//! `turn/plan/updated`, and what the rollout keeps so a resumed thread shows each plan).

use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::context::ToolInvocation;
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_protocol::{EventMsg, PlanStep, PlanStepStatus, ThreadItem, TodoEntry};
use osprey_tools::{StepStatus, ToolSpec, UpdatePlanArgs, update_plan_spec};
use std::sync::Mutex;

/// Keeps one plan item id per thread so every update replaces the same list.
#[derive(Default)]
pub struct UpdatePlanHandler {
    item_id: Mutex<Option<String>>,
}

#[async_trait]
impl ToolHandler for UpdatePlanHandler {
    fn spec(&self) -> ToolSpec {
        update_plan_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: UpdatePlanArgs = inv.call.arguments()?;
        args.validate()
            .map_err(|e| ToolError::RespondToModel(e.to_string()))?;
        let items: Vec<TodoEntry> = args
            .plan
            .iter()
            .map(|step| TodoEntry {
                text: step.step.clone(),
                completed: step.status == StepStatus::Completed,
                in_progress: step.status == StepStatus::InProgress,
            })
            .collect();
        let (id, first) = {
            let mut slot = self.item_id.lock().unwrap_or_else(|e| e.into_inner());
            match slot.as_ref() {
                Some(id) => (id.clone(), false),
                None => {
                    let id = inv.events.next_item_id("plan");
                    *slot = Some(id.clone());
                    (id, true)
                }
            }
        };
        let item = ThreadItem::TodoList { id, items };
        inv.emit(if first {
            EventMsg::ItemStarted { item }
        } else {
            EventMsg::ItemUpdated { item }
        });
        inv.emit(EventMsg::PlanUpdate {
            explanation: args.explanation.clone(),
            plan: args
                .plan
                .iter()
                .map(|step| PlanStep {
                    step: step.step.clone(),
                    status: match step.status {
                        StepStatus::Pending => PlanStepStatus::Pending,
                        StepStatus::InProgress => PlanStepStatus::InProgress,
                        StepStatus::Completed => PlanStepStatus::Completed,
                    },
                })
                .collect(),
        });
        Ok(ToolOutput::success("Plan updated"))
    }
}
