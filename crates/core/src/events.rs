//! Emitting events tagged with their thread and turn.

use osprey_protocol::{AbortReason, AgentStatus, Event, EventMsg, ThreadId, TurnId};
use osprey_rollout::{RolloutItem, RolloutRecorder, should_persist_event};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Sends events to the thread's consumer. Cheap to clone.
#[derive(Clone)]
pub struct EventEmitter {
    thread_id: ThreadId,
    tx: mpsc::UnboundedSender<Event>,
    next_item: Arc<AtomicU64>,
    /// Tool-call ids already given to an item, so a call that shows a second item (a rerun
    /// outside the sandbox) gets a distinct id.
    call_items: Arc<Mutex<HashSet<String>>>,
    /// Where events a front end needs for replay are persisted (none when ephemeral).
    recorder: Option<Arc<RolloutRecorder>>,
    /// The thread's status as sub-agent supervisors see it, moved by the turn events sent
    /// here (so it never disagrees with what a front end is told).
    status: Option<Arc<tokio::sync::watch::Sender<AgentStatus>>>,
}

impl EventEmitter {
    pub fn new(thread_id: ThreadId, tx: mpsc::UnboundedSender<Event>) -> Self {
        Self {
            thread_id,
            tx,
            next_item: Arc::new(AtomicU64::new(0)),
            call_items: Arc::new(Mutex::new(HashSet::new())),
            recorder: None,
            status: None,
        }
    }

    /// Publishes the thread's status on `status` as its turns start and end.
    pub fn with_status(mut self, status: tokio::sync::watch::Sender<AgentStatus>) -> Self {
        self.status = Some(Arc::new(status));
        self
    }

    /// Sets the published status at once (a turn was accepted and will start).
    pub fn set_status(&self, status: AgentStatus) {
        if let Some(sender) = &self.status {
            sender.send_replace(status);
        }
    }

    fn track_status(&self, msg: &EventMsg) {
        let status = match msg {
            EventMsg::TurnStarted => AgentStatus::Running,
            EventMsg::TurnCompleted {
                last_agent_message, ..
            } => AgentStatus::Completed(last_agent_message.clone()),
            EventMsg::TurnFailed { error, .. } => AgentStatus::Errored(error.message.clone()),
            EventMsg::TurnAborted {
                reason: AbortReason::Shutdown,
            }
            | EventMsg::ShutdownComplete => AgentStatus::Shutdown,
            EventMsg::TurnAborted { .. } => AgentStatus::Interrupted,
            _ => return,
        };
        self.set_status(status);
    }

    /// Also persists the events the rollout policy keeps.
    pub fn with_recorder(mut self, recorder: Option<Arc<RolloutRecorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// Sends an event. A consumer that went away is not an error: the agent finishes its
    /// work (and its rollout) regardless.
    /// The thread whose events these are.
    pub fn thread_id(&self) -> ThreadId {
        self.thread_id
    }

    pub fn emit(&self, turn_id: Option<&TurnId>, msg: EventMsg) {
        if let Some(recorder) = &self.recorder
            && should_persist_event(&msg)
        {
            recorder.record(vec![RolloutItem::EventMsg(msg.clone())]);
        }
        self.track_status(&msg);
        let _ = self.tx.send(Event {
            thread_id: self.thread_id,
            turn_id: turn_id.cloned(),
            msg,
        });
    }

    /// The id of the item a tool call shows: the call's own id, as Codex uses it (so a
    /// front end can match approvals and items to the model's call), or `<call id>_<n>` for
    /// a further item of the same call or a call id the model used before.
    pub fn call_item_id(&self, call_id: &str) -> String {
        let mut used = self.call_items.lock().unwrap_or_else(|e| e.into_inner());
        if call_id.is_empty() || !used.insert(call_id.to_owned()) {
            let n = self.next_item.fetch_add(1, Ordering::Relaxed);
            let id = format!("{call_id}_{n}");
            used.insert(id.clone());
            return id;
        }
        call_id.to_owned()
    }

    /// A fresh id for a thread item (`<prefix>_<n>`), unique within the thread.
    pub fn next_item_id(&self, prefix: &str) -> String {
        let n = self.next_item.fetch_add(1, Ordering::Relaxed);
        format!("{prefix}_{n}")
    }
}
