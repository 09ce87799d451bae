//! Live command sessions of `exec_command` / `write_stdin`.
//!
//! A command that is still running when its `yield_time_ms` is up is kept here under a
//! session id; `write_stdin` types into it and collects what it printed since. The store is
//! bounded: starting a session beyond the limit closes the least recently used one (and
//! says so). Sessions end when their process exits, when the turn is interrupted, or when
//! the thread shuts down.

use super::command_item::CommandItem;
use crate::environment::session_process::SessionProcess;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Mutex;

/// How much of a session's output is kept for its final command item (head and tail).
const AGGREGATE_CAP_BYTES: usize = 256 * 1024;

pub struct ExecSession {
    pub process: Arc<SessionProcess>,
    pub item: CommandItem,
    pub last_used: Instant,
    /// Everything collected so far, for the command item (capped).
    pub aggregated: String,
    pub sandbox_denial: Option<String>,
}

impl ExecSession {
    pub fn append(&mut self, text: &str) {
        self.aggregated.push_str(text);
        if self.aggregated.len() > AGGREGATE_CAP_BYTES {
            let mut cut = self.aggregated.len() - AGGREGATE_CAP_BYTES;
            while !self.aggregated.is_char_boundary(cut) {
                cut += 1;
            }
            self.aggregated.replace_range(..cut, "");
        }
    }
}

pub struct UnifiedExecSessions {
    max_sessions: usize,
    inner: Mutex<Inner>,
}

struct Inner {
    next_id: u64,
    sessions: BTreeMap<u64, ExecSession>,
}

impl UnifiedExecSessions {
    pub fn new(max_sessions: usize) -> Self {
        Self {
            max_sessions: max_sessions.max(1),
            inner: Mutex::new(Inner {
                next_id: 1000,
                sessions: BTreeMap::new(),
            }),
        }
    }

    /// Stores a running session; returns its id and a note if an old session was closed.
    pub async fn insert(&self, session: ExecSession) -> (u64, Option<String>) {
        let mut inner = self.inner.lock().await;
        let mut note = None;
        if inner.sessions.len() >= self.max_sessions {
            let oldest = inner
                .sessions
                .iter()
                .min_by_key(|(_, s)| (!s.process.has_exited(), s.last_used))
                .map(|(id, _)| *id);
            if let Some(id) = oldest
                && let Some(old) = inner.sessions.remove(&id)
            {
                old.process.kill();
                note = Some(format!(
                    "Note: session {id} (`{}`) was closed to stay within the limit of {} live sessions.",
                    old.item.command, self.max_sessions
                ));
            }
        }
        let id = inner.next_id;
        inner.next_id += 1;
        inner.sessions.insert(id, session);
        (id, note)
    }

    pub async fn take(&self, id: u64) -> Option<ExecSession> {
        self.inner.lock().await.sessions.remove(&id)
    }

    pub async fn put_back(&self, id: u64, session: ExecSession) {
        self.inner.lock().await.sessions.insert(id, session);
    }

    pub async fn ids(&self) -> Vec<u64> {
        self.inner.lock().await.sessions.keys().copied().collect()
    }

    /// Kills every session (interrupt, shutdown) and returns them for final reporting.
    pub async fn kill_all(&self) -> Vec<ExecSession> {
        let mut inner = self.inner.lock().await;
        let sessions: Vec<ExecSession> =
            std::mem::take(&mut inner.sessions).into_values().collect();
        for session in &sessions {
            session.process.kill();
        }
        sessions
    }
}
