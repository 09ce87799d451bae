//! Emitting events tagged with their thread and turn.

use osprey_protocol::{Event, EventMsg, ThreadId, TurnId};
use osprey_rollout::{RolloutItem, RolloutRecorder, should_persist_event};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// Sends events to the thread's consumer. Cheap to clone.
#[derive(Clone)]
pub struct EventEmitter {
    thread_id: ThreadId,
    tx: mpsc::UnboundedSender<Event>,
    next_item: Arc<AtomicU64>,
    /// Where events a front end needs for replay are persisted (none when ephemeral).
    recorder: Option<Arc<RolloutRecorder>>,
}

impl EventEmitter {
    pub fn new(thread_id: ThreadId, tx: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            thread_id,
            tx,
            next_item: Arc::new(AtomicU64::new(0)),
            recorder: None,
        }
    }

    /// Also persists the events the rollout policy keeps.
    pub fn with_recorder(mut self, recorder: Option<Arc<RolloutRecorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// Sends an event. A consumer that went away is not an error: the agent finishes its
    /// work (and its rollout) regardless.
    pub fn emit(&self, turn_id: Option<&TurnId>, msg: EventMsg) {
        if let Some(recorder) = &self.recorder
            && should_persist_event(&msg)
        {
            recorder.record(vec![RolloutItem::EventMsg(msg.clone())]);
        }
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
