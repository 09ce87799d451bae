//! Emitting events tagged with their thread and turn.

use osprey_protocol::{Event, EventMsg, ThreadId, TurnId};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// Sends events to the thread's consumer. Cheap to clone.
#[derive(Clone)]
pub struct EventEmitter {
    thread_id: ThreadId,
    tx: mpsc::UnboundedSender<Event>,
    next_item: Arc<AtomicU64>,
}

impl EventEmitter {
    pub fn new(thread_id: ThreadId, tx: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            thread_id,
            tx,
            next_item: Arc::new(AtomicU64::new(0)),
        }
    }

    pub fn thread_id(&self) -> ThreadId {
        self.thread_id
    }

    /// Sends an event. A consumer that went away is not an error: the agent finishes its
    /// work (and its rollout) regardless.
    pub fn emit(&self, turn_id: Option<&TurnId>, msg: EventMsg) {
        let _ = self.tx.send(Event {
            thread_id: self.thread_id,
            turn_id: turn_id.cloned(),
            msg,
        });
    }

    /// A fresh id for a thread item (`<prefix>_<n>`), unique within the thread.
    pub fn next_item_id(&self, prefix: &str) -> String {
        let n = self.next_item.fetch_add(1, Ordering::Relaxed);
        format!("{prefix}_{n}")
    }
}
