//! Multi-agent collaboration: the agent-control service behind the collaboration tools.
//!
//! A thread (the parent) may spawn sub-agents with `spawn_agent`. Each child is an ordinary
//! [`crate::OspreyThread`] with its own history and session file, started through the same
//! [`crate::ThreadManager`] state; its `session_meta` names its parent, its depth and its
//! nickname. The [`AgentRegistry`] (owned by the manager) remembers who spawned whom and
//! holds a `tokio::sync::watch` receiver of each child's [`AgentStatus`], which the child's
//! event emitter updates as its turns start and end — so a status is known without reading
//! the child's events (a front end reads those).
//!
//! `wait_agent` is race-free by construction: it subscribes to a child's status channel
//! first and reads the current value through that subscription, so a change that happens in
//! between is seen as a change; a channel whose sender is gone is an error, never a silent
//! timeout. When a child first finishes, the parent's session queues a
//! `<subagent_notification>` user message that its next model request carries (no turn is
//! started for it, as in Codex). Interrupting a parent interrupts its
//! children; shutting it down closes them.
//!
//! Key types: [`AgentRegistry`] (the shared state), [`AgentControl`] (one thread's view of
//! it, given to the collaboration handlers and the session), [`AgentPlace`] (where a new
//! thread sits in its tree), [`SpawnedThread`] (what front ends are told of a new child).

mod control;
mod nicknames;
mod unattended;

pub use unattended::decline_subagent_approvals;

pub(crate) use control::{AgentControl, CollabError, SpawnRequest};

use crate::session::Session;
use crate::thread_manager::OspreyThread;
use osprey_config::Config;
use osprey_protocol::{AgentStatus, ResponseItem, ThreadId};
use osprey_rollout::{SessionMeta, SessionSource};
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use tokio::sync::{mpsc, watch};

/// A sub-agent thread, as front ends are told of it ([`crate::ThreadManager::subscribe_spawned`]).
#[derive(Clone)]
pub struct SpawnedThread {
    /// The child's handle: read its events, answer its approvals.
    pub thread: Arc<OspreyThread>,
    pub thread_id: ThreadId,
    pub parent_thread_id: ThreadId,
    /// 1 for a child of a root thread.
    pub depth: u32,
    pub nickname: String,
}

/// Where a new thread sits in its agent tree.
#[derive(Debug, Clone)]
pub(crate) struct AgentPlace {
    /// The thread's id, chosen before it starts so that the headers of its model requests
    /// (in its configuration) can name it.
    pub id: ThreadId,
    pub parent: ThreadId,
    pub root: ThreadId,
    pub depth: u32,
    pub nickname: String,
    /// The status the thread starts in (`pending_init`; a reopened agent keeps its last).
    pub initial_status: AgentStatus,
    /// The parent's history, for `fork_context` (empty otherwise).
    pub history: Vec<ResponseItem>,
}

impl AgentPlace {
    /// Writes the child's place into its session file header, as Codex does.
    pub(crate) fn describe(&self, meta: &mut SessionMeta) {
        let parent = self.parent.to_string();
        meta.source = SessionSource::Other(json!({
            "subagent": {"thread_spawn": {
                "parent_thread_id": parent,
                "depth": self.depth,
                "agent_path": null,
                "agent_nickname": self.nickname,
                "agent_role": null,
            }}
        }));
        let extra = [
            ("session_id", json!(self.root.to_string())),
            ("parent_thread_id", json!(parent)),
            ("thread_source", json!("subagent")),
            ("agent_nickname", json!(self.nickname)),
            ("multi_agent_version", json!("v1")),
        ];
        for (key, value) in extra {
            meta.extra.insert(key.to_string(), value);
        }
    }
}

/// One sub-agent the registry knows.
struct AgentEntry {
    place: AgentPlace,
    thread: Arc<OspreyThread>,
    status: watch::Receiver<AgentStatus>,
    /// Closed by `close_agent` (or with its parent); a closed agent does not count towards
    /// the limit and takes no input until `resume_agent`.
    closed: bool,
    /// The status it had when it was closed (what `resume_agent` reopens it with).
    closed_with: Option<AgentStatus>,
    config: Arc<Config>,
    rollout: Option<PathBuf>,
}

#[derive(Default)]
struct RegistryState {
    agents: HashMap<ThreadId, AgentEntry>,
    /// Every live session, for notifications and forked histories.
    sessions: HashMap<ThreadId, Weak<Session>>,
    /// How many agents each tree has spawned so far (for nicknames).
    spawned: HashMap<ThreadId, usize>,
    /// Spawns under way per tree, counted against the limit before their thread exists.
    reserved: HashMap<ThreadId, usize>,
    subscribers: Vec<mpsc::UnboundedSender<SpawnedThread>>,
}

/// Who spawned whom, and each child's status channel. Owned by the thread manager.
#[derive(Default)]
pub(crate) struct AgentRegistry {
    state: Mutex<RegistryState>,
}

/// A slot under the concurrency limit, taken before a child's thread is started; dropping
/// it without [`AgentRegistry::insert_child`] gives the slot back.
pub(crate) struct Reservation<'a> {
    registry: &'a AgentRegistry,
    root: ThreadId,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut state = self.registry.lock();
        if let Some(count) = state.reserved.get_mut(&self.root) {
            *count = count.saturating_sub(1);
        }
    }
}

impl AgentRegistry {
    fn lock(&self) -> MutexGuard<'_, RegistryState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn subscribe(&self) -> mpsc::UnboundedReceiver<SpawnedThread> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().subscribers.push(tx);
        rx
    }

    pub(crate) fn info(&self, id: ThreadId) -> Option<SpawnedThread> {
        self.lock()
            .agents
            .get(&id)
            .map(|entry| spawned(id, &entry.place, &entry.thread))
    }

    pub(crate) fn register_session(&self, id: ThreadId, session: Weak<Session>) {
        let mut state = self.lock();
        state.sessions.retain(|_, s| s.strong_count() > 0);
        state.sessions.insert(id, session);
    }

    pub(crate) fn session(&self, id: ThreadId) -> Option<Arc<Session>> {
        self.lock().sessions.get(&id)?.upgrade()
    }

    pub(crate) fn session_weak(&self, id: ThreadId) -> Option<Weak<Session>> {
        self.lock().sessions.get(&id).cloned()
    }

    /// The tree root and depth of `id` (a thread no agent spawned is a root at depth 0).
    pub(crate) fn root_and_depth(&self, id: ThreadId) -> (ThreadId, u32) {
        match self.lock().agents.get(&id) {
            Some(entry) => (entry.place.root, entry.place.depth),
            None => (id, 0),
        }
    }

    /// Takes a slot for a new child of tree `root` and its nickname, or `None` when the tree
    /// has `max` open agents (spawns under way included).
    pub(crate) fn reserve(&self, root: ThreadId, max: usize) -> Option<(Reservation<'_>, String)> {
        let mut state = self.lock();
        let reservation = self.take_slot(&mut state, root, max)?;
        let n = state.spawned.entry(root).or_default();
        let nickname = nicknames::nickname(*n);
        *n += 1;
        Some((reservation, nickname))
    }

    /// Takes a slot in tree `root` for a closed agent that is being reopened (it keeps its
    /// nickname), or `None` when the tree has `max` open agents — Codex's `resume_agent`
    /// reserves a spawn slot too.
    pub(crate) fn reserve_reopen(&self, root: ThreadId, max: usize) -> Option<Reservation<'_>> {
        let mut state = self.lock();
        self.take_slot(&mut state, root, max)
    }

    fn take_slot<'a>(
        &'a self,
        state: &mut RegistryState,
        root: ThreadId,
        max: usize,
    ) -> Option<Reservation<'a>> {
        let open = state
            .agents
            .values()
            .filter(|e| e.place.root == root && !e.closed)
            .count();
        let reserved = state.reserved.get(&root).copied().unwrap_or(0);
        if open + reserved >= max {
            return None;
        }
        *state.reserved.entry(root).or_default() += 1;
        Some(Reservation {
            registry: self,
            root,
        })
    }

    /// Records a started child (or a reopened one, replacing its entry) and announces it.
    pub(crate) fn insert_child(
        &self,
        id: ThreadId,
        place: AgentPlace,
        thread: Arc<OspreyThread>,
        status: watch::Receiver<AgentStatus>,
        config: Arc<Config>,
        rollout: Option<PathBuf>,
    ) {
        let announcement = spawned(id, &place, &thread);
        let mut state = self.lock();
        state.agents.insert(
            id,
            AgentEntry {
                place,
                thread,
                status,
                closed: false,
                closed_with: None,
                config,
                rollout,
            },
        );
        state
            .subscribers
            .retain(|tx| tx.send(announcement.clone()).is_ok());
    }

    fn with_entry<T>(&self, id: ThreadId, f: impl FnOnce(&mut AgentEntry) -> T) -> Option<T> {
        self.lock().agents.get_mut(&id).map(f)
    }

    /// The open children of `parent`.
    fn children(&self, parent: ThreadId) -> Vec<(ThreadId, Arc<OspreyThread>)> {
        self.lock()
            .agents
            .iter()
            .filter(|(_, e)| e.place.parent == parent && !e.closed)
            .map(|(id, e)| (*id, Arc::clone(&e.thread)))
            .collect()
    }

    /// Marks `id` and its open descendants closed; returns their threads (`id`'s first).
    fn close_tree(&self, id: ThreadId) -> Vec<(ThreadId, Arc<OspreyThread>)> {
        let mut state = self.lock();
        let mut closed = Vec::new();
        let mut queue = vec![id];
        while let Some(next) = queue.pop() {
            if let Some(entry) = state.agents.get_mut(&next)
                && !entry.closed
            {
                entry.closed = true;
                entry.closed_with = Some(entry.status.borrow().clone());
                closed.push((next, Arc::clone(&entry.thread)));
            }
            queue.extend(
                state
                    .agents
                    .iter()
                    .filter(|(_, e)| e.place.parent == next && !e.closed)
                    .map(|(child, _)| *child),
            );
        }
        closed
    }
}

fn spawned(id: ThreadId, place: &AgentPlace, thread: &Arc<OspreyThread>) -> SpawnedThread {
    SpawnedThread {
        thread: Arc::clone(thread),
        thread_id: id,
        parent_thread_id: place.parent,
        depth: place.depth,
        nickname: place.nickname.clone(),
    }
}

/// The message a parent's history gets when a child reaches a final status (Codex v1).
pub(crate) fn notification(child: ThreadId, status: &AgentStatus) -> ResponseItem {
    let body = json!({"agent_path": child.to_string(), "status": status});
    ResponseItem::user_text(format!(
        "<subagent_notification>\n{body}\n</subagent_notification>"
    ))
}

/// Watches a child's status and queues one notification in its parent's session the first
/// time the child finishes a turn (completed or errored — not interrupted: as in Codex, an
/// interrupted agent is expected to go on, and its real result is the one announced), then
/// ends — as Codex 0.171's v1 does: a later turn (after `send_input`) is learnt through
/// `wait_agent`, and an agent reopened by `resume_agent` gets a new watcher. The
/// notification is injected into the parent's history without starting a turn (Codex's
/// `inject_user_message_without_turn`): an idle parent's model sees it with the next turn's
/// first request.
///
/// `status` must not have been read since the channel was made (its seen version is the
/// initial status), so a child that changed before this task first runs still wakes it;
/// and since only a turn's end sets `completed` or `errored`, any change that lands on one
/// is a finish — even when the channel merged `running` into a value equal to the initial
/// one (a reopened agent that completes with the same message).
pub(crate) fn watch_for_parent(
    child: ThreadId,
    mut status: watch::Receiver<AgentStatus>,
    parent: Weak<Session>,
) {
    tokio::spawn(async move {
        while status.changed().await.is_ok() {
            let now = status.borrow_and_update().clone();
            match now {
                AgentStatus::Completed(_) | AgentStatus::Errored(_) => {
                    if let Some(parent) = parent.upgrade() {
                        parent.queue_notification(notification(child, &now));
                    }
                    return;
                }
                AgentStatus::Shutdown | AgentStatus::NotFound => return,
                AgentStatus::PendingInit | AgentStatus::Running | AgentStatus::Interrupted => {}
            }
        }
    });
}
