//! Command items: what front ends see of a command the agent runs.
//!
//! A started item always ends: when the last handle to a started, unfinished item goes away
//! (its call was interrupted, its session killed, its handler failed in a way nobody
//! reported), it completes itself as failed with the output seen so far, so no client is left
//! with a command "in progress" forever.

use super::scope::CallScope;
use crate::events::EventEmitter;
use osprey_protocol::TurnId;
use osprey_protocol::{CommandSource, EventMsg, ItemStatus, ThreadItem};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The item id, display text and cwd of one command, reused for its start and end events.
/// Clones share one item.
#[derive(Debug, Clone)]
pub struct CommandItem {
    pub id: String,
    pub command: String,
    pub cwd: PathBuf,
    lifecycle: Arc<Lifecycle>,
}

/// Whether the item was started and ended, and the last output it showed; completes the item
/// when it is dropped started but unfinished.
struct Lifecycle {
    events: EventEmitter,
    turn_id: TurnId,
    item: Mutex<Option<ThreadItem>>,
    state: Mutex<(bool, bool)>,
}

impl std::fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lifecycle").finish_non_exhaustive()
    }
}

impl Lifecycle {
    fn mark(&self, started: Option<bool>, finished: Option<bool>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(started) = started {
            state.0 = started;
        }
        if let Some(finished) = finished {
            state.1 = finished;
        }
    }

    fn remember(&self, item: &ThreadItem) {
        *self.item.lock().unwrap_or_else(|e| e.into_inner()) = Some(item.clone());
    }
}

impl Drop for Lifecycle {
    fn drop(&mut self) {
        let (started, finished) = *self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !started || finished {
            return;
        }
        let last = self.item.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(ThreadItem::CommandExecution {
            id,
            command,
            cwd,
            aggregated_output,
            source,
            sandbox_denial,
            ..
        }) = last
        {
            self.events.emit(
                Some(&self.turn_id),
                EventMsg::ItemCompleted {
                    item: ThreadItem::CommandExecution {
                        id,
                        command,
                        cwd,
                        aggregated_output,
                        exit_code: None,
                        status: ItemStatus::Failed,
                        source,
                        sandbox_denial,
                    },
                },
            );
        }
    }
}

impl CommandItem {
    pub fn new(inv: CallScope<'_>, argv: &[String], cwd: PathBuf) -> Self {
        Self {
            id: inv.events.call_item_id(inv.call_id),
            command: display_command(argv),
            cwd,
            lifecycle: Arc::new(Lifecycle {
                events: inv.events.clone(),
                turn_id: inv.turn.turn_id.clone(),
                item: Mutex::new(None),
                state: Mutex::new((false, false)),
            }),
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
        let item = self.item("", None, ItemStatus::InProgress, None);
        self.lifecycle.remember(&item);
        self.lifecycle.mark(Some(true), None);
        inv.emit(EventMsg::ItemStarted { item });
    }

    pub fn updated(&self, inv: CallScope<'_>, output: &str) {
        self.updated_via(inv.events, &inv.turn.turn_id, output);
    }

    /// [`CommandItem::updated`] from places that hold only the emitter (output callbacks).
    pub fn updated_via(&self, events: &EventEmitter, turn_id: &TurnId, output: &str) {
        let item = self.item(output, None, ItemStatus::InProgress, None);
        self.lifecycle.remember(&item);
        events.emit(Some(turn_id), EventMsg::ItemUpdated { item });
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
        self.lifecycle.mark(None, Some(true));
        inv.emit(EventMsg::ItemCompleted {
            item: self.item(output, exit_code, status, sandbox_denial),
        });
    }

    /// The command was refused before it ran (policy, approval or sandbox setup).
    pub fn declined(&self, inv: CallScope<'_>, reason: &str) {
        self.lifecycle.mark(None, Some(true));
        inv.emit(EventMsg::ItemCompleted {
            item: self.item(reason, None, ItemStatus::Declined, None),
        });
    }
}

/// The argv as a shell would need it typed: `/bin/bash -lc 'echo hi > out.txt'`.
pub fn display_command(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}
