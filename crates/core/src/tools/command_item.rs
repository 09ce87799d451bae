//! Command items: what front ends see of a command the agent runs.

use super::scope::CallScope;
use crate::events::EventEmitter;
use osprey_protocol::TurnId;
use osprey_protocol::{CommandSource, EventMsg, ItemStatus, ThreadItem};
use std::path::PathBuf;

/// The item id, display text and cwd of one command, reused for its start and end events.
#[derive(Debug, Clone)]
pub struct CommandItem {
    pub id: String,
    pub command: String,
    pub cwd: PathBuf,
}

impl CommandItem {
    pub fn new(inv: CallScope<'_>, argv: &[String], cwd: PathBuf) -> Self {
        Self {
            id: inv.events.next_item_id("cmd"),
            command: display_command(argv),
            cwd,
        }
    }

    fn item(
        &self,
        output: &str,
        exit_code: Option<i32>,
        status: ItemStatus,
        sandbox_denial: Option<String>,
    ) -> ThreadItem {
        ThreadItem::CommandExecution {
            id: self.id.clone(),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            aggregated_output: output.to_string(),
            exit_code,
            status,
            source: CommandSource::Agent,
            sandbox_denial,
        }
    }

    pub fn started(&self, inv: CallScope<'_>) {
        inv.emit(EventMsg::ItemStarted {
            item: self.item("", None, ItemStatus::InProgress, None),
        });
    }

    pub fn updated(&self, inv: CallScope<'_>, output: &str) {
        self.updated_via(inv.events, &inv.turn.turn_id, output);
    }

    /// [`CommandItem::updated`] from places that hold only the emitter (output callbacks).
    pub fn updated_via(&self, events: &EventEmitter, turn_id: &TurnId, output: &str) {
        events.emit(
            Some(turn_id),
            EventMsg::ItemUpdated {
                item: self.item(output, None, ItemStatus::InProgress, None),
            },
        );
    }

    pub fn completed(
        &self,
        inv: CallScope<'_>,
        output: &str,
        exit_code: Option<i32>,
        sandbox_denial: Option<String>,
    ) {
        let status = if exit_code == Some(0) {
            ItemStatus::Completed
        } else {
            ItemStatus::Failed
        };
        inv.emit(EventMsg::ItemCompleted {
            item: self.item(output, exit_code, status, sandbox_denial),
        });
    }

    /// The command was refused before it ran (policy, approval or sandbox setup).
    pub fn declined(&self, inv: CallScope<'_>, reason: &str) {
        inv.emit(EventMsg::ItemCompleted {
            item: self.item(reason, None, ItemStatus::Declined, None),
        });
    }
}

/// The argv as a shell would need it typed: `/bin/bash -lc 'echo hi > out.txt'`.
pub fn display_command(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}
