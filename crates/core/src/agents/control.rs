//! One thread's view of the agent registry: what the collaboration tools do.

use super::{AgentPlace, AgentStatus};
use crate::error::CoreError;
use crate::thread_manager::Shared;
use crate::turn_context::TurnContext;
use osprey_config::features::MULTI_AGENT;
use osprey_protocol::{Op, ReasoningEffort, ThreadId, UserInput};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Why a collaboration call failed, in Codex's words where Codex has them; each becomes the
/// call's failed output, which the model can act on.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CollabError {
    #[error("agent with id {0} not found")]
    NotFound(String),
    #[error("collab spawn failed: agent thread limit reached")]
    ThreadLimit,
    #[error("Agent depth limit reached. Solve the task yourself.")]
    DepthLimit,
    #[error("agent ids must be non-empty")]
    NoTargets,
    #[error("collab spawn failed: {0}")]
    Spawn(String),
    #[error("agent with id {0} is closed; reopen it with resume_agent before sending it input")]
    Closed(ThreadId),
    #[error("agent with id {0} ended without reporting a final status")]
    StatusLost(ThreadId),
    /// Codex's words: its `resume_agent` fails through `collab_agent_error`.
    #[error("collab tool failed: agent thread limit reached")]
    ResumeLimit,
    #[error("agent with id {id} could not be reopened: {why}")]
    Resume { id: ThreadId, why: String },
    #[error("agent with id {id} did not take the input: {reason}")]
    Send { id: ThreadId, reason: String },
    #[error("sub-agents are not available: the thread manager that started this thread is gone")]
    ManagerGone,
}

/// What `spawn_agent` asks for, its arguments already read.
pub(crate) struct SpawnRequest {
    pub input: Vec<UserInput>,
    pub fork_context: bool,
    pub model: Option<String>,
    pub effort: Option<ReasoningEffort>,
}

/// What `wait_agent` found: the agents that reached a final status, or a timeout.
pub(crate) struct WaitOutcome {
    pub statuses: BTreeMap<String, AgentStatus>,
    pub timed_out: bool,
}

/// The collaboration service as one thread sees it. Cheap to clone.
#[derive(Clone)]
pub(crate) struct AgentControl {
    manager: Weak<Shared>,
    thread_id: ThreadId,
}

impl AgentControl {
    pub(crate) fn new(manager: Weak<Shared>, thread_id: ThreadId) -> Self {
        Self { manager, thread_id }
    }

    /// A control with no manager behind it (unit tests of the tool table).
    #[cfg(any(test, feature = "bench"))]
    pub(crate) fn detached() -> Self {
        Self::new(Weak::new(), ThreadId::new())
    }

    pub(crate) fn thread_id(&self) -> ThreadId {
        self.thread_id
    }

    fn manager(&self) -> Result<Arc<Shared>, CollabError> {
        self.manager.upgrade().ok_or(CollabError::ManagerGone)
    }

    /// Starts a child on `request.input` and returns its id, nickname and status
    /// (`pending_init`: its turn has been submitted but has not started).
    pub(crate) async fn spawn(
        &self,
        turn: &TurnContext,
        request: SpawnRequest,
    ) -> Result<(ThreadId, String, AgentStatus), CollabError> {
        let manager = self.manager()?;
        let agents = &manager.agents;
        let (root, depth) = agents.root_and_depth(self.thread_id);
        let limits = &turn.config.agents;
        let depth = depth + 1;
        if depth > limits.max_depth {
            return Err(CollabError::DepthLimit);
        }
        let (reservation, nickname) = agents
            .reserve(root, limits.max_concurrent_threads_per_session)
            .ok_or(CollabError::ThreadLimit)?;
        let history = if request.fork_context {
            let mut history = agents
                .session(self.thread_id)
                .map(|s| s.history_snapshot())
                .unwrap_or_default();
            crate::history::close_dangling_calls(&mut history);
            history
        } else {
            Vec::new()
        };
        let id = ThreadId::new();
        let place = AgentPlace {
            id,
            parent: self.thread_id,
            root,
            depth,
            nickname: nickname.clone(),
            initial_status: AgentStatus::PendingInit,
            history,
        };
        let config = self.child_config(turn, &request, &place)?;
        let thread = manager
            .start_thread(config, Some(place))
            .await
            .map_err(|e| CollabError::Spawn(e.to_string()))?;
        drop(reservation);
        let status = self.status(id);
        let turn = Op::UserTurn {
            items: request.input,
            cwd: None,
            approval_policy: None,
            sandbox_policy: None,
            model: None,
            effort: None,
            output_schema: None,
        };
        thread
            .start_turn(turn)
            .await
            .map_err(|e: CoreError| CollabError::Send {
                id,
                reason: e.to_string(),
            })?;
        Ok((id, nickname, status))
    }

    /// The parent's configuration as the child runs it: the turn's cwd, policies and model
    /// (or the overrides), no collaboration tools at the depth limit, and the headers that
    /// name the thread to the model provider as Codex sends them: `x-openai-subagent`,
    /// `x-codex-parent-thread-id`, `session-id` (the tree's root), `thread-id` (the child)
    /// and `x-codex-turn-metadata`, whose `thread_id` lets a server tell the children apart.
    fn child_config(
        &self,
        turn: &TurnContext,
        request: &SpawnRequest,
        place: &AgentPlace,
    ) -> Result<osprey_config::Config, CollabError> {
        let mut config = (*turn.config).clone();
        match config.environment.as_mut() {
            // A remote parent's cwd is a path on the server: the child works there too, and
            // this machine's directory (where a transport program starts) stays as it was.
            Some(remote) if remote.id != osprey_exec_server::environments::LOCAL_ID => {
                remote.cwd = Some(turn.cwd.clone());
            }
            _ => config.cwd = turn.cwd.clone(),
        }
        let refused = |e: osprey_config::ConfigError| CollabError::Spawn(e.to_string());
        config
            .set_approval_policy(turn.approval_policy)
            .map_err(refused)?;
        config
            .set_sandbox_policy(turn.sandbox_policy.clone())
            .map_err(refused)?;
        config.model = request
            .model
            .clone()
            .or_else(|| config.agents.default_subagent_model.clone())
            .unwrap_or_else(|| turn.model.clone());
        config.model_reasoning_effort = request.effort.or(turn.effort);
        if place.depth >= config.agents.max_depth {
            config.features.set(MULTI_AGENT, false);
        }
        let headers = &mut config.model_provider.http_headers;
        let metadata = child_metadata(headers.get(TURN_METADATA).map(String::as_str), turn, place);
        let parent = place.parent.to_string();
        headers.insert("x-openai-subagent".into(), "collab_spawn".into());
        headers.insert("x-codex-parent-thread-id".into(), parent);
        headers.insert("session-id".into(), place.root.to_string());
        headers.insert("thread-id".into(), place.id.to_string());
        headers.insert(TURN_METADATA.into(), metadata.to_string());
        Ok(config)
    }

    /// An agent's current status (`not_found` for an id the registry does not know).
    pub(crate) fn status(&self, id: ThreadId) -> AgentStatus {
        self.manager
            .upgrade()
            .and_then(|m| m.agents.with_entry(id, |e| e.status.borrow().clone()))
            .unwrap_or(AgentStatus::NotFound)
    }

    /// Gives an open agent new input: a new turn (after interrupting the current one when
    /// `interrupt`), or queued behind the running one. Returns the turn's id.
    pub(crate) async fn send(
        &self,
        id: ThreadId,
        input: Vec<UserInput>,
        interrupt: bool,
    ) -> Result<String, CollabError> {
        let manager = self.manager()?;
        let (thread, closed) = manager
            .agents
            .with_entry(id, |e| (Arc::clone(&e.thread), e.closed))
            .ok_or_else(|| CollabError::NotFound(id.to_string()))?;
        if closed {
            return Err(CollabError::Closed(id));
        }
        let failed = |e: CoreError| CollabError::Send {
            id,
            reason: e.to_string(),
        };
        if interrupt {
            thread.submit(Op::Interrupt).await.map_err(failed)?;
        }
        let turn = thread
            .start_turn(Op::UserTurn {
                items: input,
                cwd: None,
                approval_policy: None,
                sandbox_policy: None,
                model: None,
                effort: None,
                output_schema: None,
            })
            .await
            .map_err(failed)?;
        Ok(turn.0)
    }

    /// Waits until any of `targets` reaches a final status, `timeout` passes, or `cancel`
    /// fires (then `None`). Unknown ids count as final (`not_found`).
    pub(crate) async fn wait(
        &self,
        targets: &[String],
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Option<WaitOutcome>, CollabError> {
        if targets.is_empty() {
            return Err(CollabError::NoTargets);
        }
        let manager = self.manager()?;
        let mut statuses = BTreeMap::new();
        // Subscribe first: each receiver is a clone taken under the registry lock, and its
        // current value is read through it below, so a change after the read wakes us.
        let mut watched: Vec<(ThreadId, watch::Receiver<AgentStatus>)> = Vec::new();
        for target in targets {
            let receiver = target
                .parse::<ThreadId>()
                .ok()
                .and_then(|id| Some((id, manager.agents.with_entry(id, |e| e.status.clone())?)));
            match receiver {
                Some(pair) => watched.push(pair),
                None => {
                    statuses.insert(target.clone(), AgentStatus::NotFound);
                }
            }
        }
        drop(manager);
        wait_any(&mut watched, statuses, timeout, cancel).await
    }

    /// Closes `id` and its open descendants; returns the status `id` had before.
    pub(crate) async fn close(&self, id: ThreadId) -> Result<AgentStatus, CollabError> {
        let manager = self.manager()?;
        let previous = manager
            .agents
            .with_entry(id, |e| {
                if e.closed {
                    AgentStatus::Shutdown
                } else {
                    e.status.borrow().clone()
                }
            })
            .ok_or_else(|| CollabError::NotFound(id.to_string()))?;
        shut_down(&manager, manager.agents.close_tree(id)).await;
        Ok(previous)
    }

    /// Reopens a closed agent from its session file; returns its status (the one it had
    /// when it was closed; `interrupted` if it was still working then).
    pub(crate) async fn resume(&self, id: ThreadId) -> Result<AgentStatus, CollabError> {
        let manager = self.manager()?;
        let found = manager.agents.with_entry(id, |e| {
            (
                e.closed,
                e.closed_with.clone(),
                e.place.clone(),
                e.status.clone(),
                Arc::clone(&e.config),
                e.rollout.clone(),
            )
        });
        let (closed, closed_with, mut place, mut status, config, rollout) =
            found.ok_or_else(|| CollabError::NotFound(id.to_string()))?;
        if !closed {
            return Ok(status.borrow().clone());
        }
        let Some(rollout) = rollout else {
            return Err(CollabError::Resume {
                id,
                why: "it kept no session file (ephemeral)".to_string(),
            });
        };
        // The old session must have let go of its file: wait for its status channel to end
        // (the session is gone), then for its writer to release the file's lock, which it
        // does once it has written out what was queued — a moment later.
        let deadline = tokio::time::Instant::now() + RELEASE_WAIT;
        let _ =
            tokio::time::timeout_at(deadline, async { while status.changed().await.is_ok() {} })
                .await;
        place.initial_status = match closed_with {
            None
            | Some(AgentStatus::PendingInit | AgentStatus::Running | AgentStatus::Shutdown) => {
                AgentStatus::Interrupted
            }
            Some(other) => other,
        };
        place.history = Vec::new();
        let reopened = place.initial_status.clone();
        // Backs off from 5 ms: the writer lets go within milliseconds of its session's end
        // as a rule, and each attempt opens the session anew.
        let mut pause = Duration::from_millis(5);
        loop {
            // Another call may have reopened it meanwhile: that one stands.
            let still_closed = manager.agents.with_entry(id, |e| e.closed);
            if still_closed == Some(false) {
                return Ok(self.status(id));
            }
            // Like Codex's resume, a reopened agent takes a spawn slot.
            let Some(reservation) = manager
                .agents
                .reserve_reopen(place.root, config.agents.max_concurrent_threads_per_session)
            else {
                return Err(CollabError::ResumeLimit);
            };
            match manager
                .resume_thread((*config).clone(), &rollout, Some(place.clone()))
                .await
            {
                Ok(_) => return Ok(reopened),
                Err(CoreError::Rollout(osprey_rollout::RolloutError::Locked { .. })) => {
                    drop(reservation);
                    if tokio::time::Instant::now() + pause >= deadline {
                        return Err(CollabError::Resume {
                            id,
                            why: format!(
                                "its previous session had not released its file after {} s; \
                                 call resume_agent again",
                                RELEASE_WAIT.as_secs()
                            ),
                        });
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(200));
                }
                Err(e) => {
                    return Err(CollabError::Resume {
                        id,
                        why: e.to_string(),
                    });
                }
            }
        }
    }

    /// Interrupts the running turns of this thread's children (the parent was interrupted).
    pub(crate) async fn interrupt_children(&self) {
        let Some(manager) = self.manager.upgrade() else {
            return;
        };
        for (_, thread) in manager.agents.children(self.thread_id) {
            let _ = thread.submit(Op::Interrupt).await;
        }
    }

    /// Closes every open descendant of this thread (it is shutting down).
    pub(crate) async fn close_children(&self) {
        let Some(manager) = self.manager.upgrade() else {
            return;
        };
        let mut closed = Vec::new();
        for (child, _) in manager.agents.children(self.thread_id) {
            closed.extend(manager.agents.close_tree(child));
        }
        shut_down(&manager, closed).await;
    }
}

/// How long `resume_agent` waits for a closed agent's session to let go of its file.
const RELEASE_WAIT: Duration = Duration::from_secs(10);

/// The header Codex names a request's thread and turn in.
const TURN_METADATA: &str = "x-codex-turn-metadata";

/// A child's turn metadata (the fields of Codex's that a static header can carry; the
/// child's own turn id changes per turn and is left out). `root_turn_id` is the root's turn
/// that started the tree: the parent's own `root_turn_id` when the parent is itself a child
/// (read from its metadata header), else the parent's turn. `agent_nickname` and `depth`
/// are Osprey's own additions (Codex sends neither), for servers that route by them.
fn child_metadata(
    parent_metadata: Option<&str>,
    turn: &TurnContext,
    place: &AgentPlace,
) -> serde_json::Value {
    let root_turn = parent_metadata
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
        .and_then(|meta| meta.get("root_turn_id")?.as_str().map(str::to_string))
        .unwrap_or_else(|| turn.turn_id.0.clone());
    json!({
        "session_id": place.root.to_string(),
        "thread_id": place.id.to_string(),
        "thread_source": "subagent",
        "subagent_kind": "thread_spawn",
        "parent_thread_id": place.parent.to_string(),
        "parent_turn_id": turn.turn_id.0,
        "root_turn_id": root_turn,
        "agent_name": "/root",
        "agent_nickname": place.nickname,
        "depth": place.depth,
    })
}

/// Shuts the threads down and forgets their handles in the manager (only these handles: an
/// agent reopened meanwhile under the same id stays).
async fn shut_down(manager: &Shared, threads: Vec<(ThreadId, Arc<crate::OspreyThread>)>) {
    for (_, thread) in threads {
        let _ = thread.submit(Op::Shutdown).await;
        manager.forget_handle(&thread);
    }
}

/// Waits on subscribed status channels until one shows a final status (or `statuses`
/// already has one), `timeout` passes, or `cancel` fires (`None`). Each receiver's current
/// value is read through the receiver itself before it is awaited, so a status set between
/// the subscription and the read is never missed; a closed channel is an error.
pub(crate) async fn wait_any(
    watched: &mut [(ThreadId, watch::Receiver<AgentStatus>)],
    mut statuses: BTreeMap<String, AgentStatus>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Option<WaitOutcome>, CollabError> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        for (id, receiver) in watched.iter_mut() {
            let status = receiver.borrow_and_update().clone();
            if status.is_final() {
                statuses.insert(id.to_string(), status);
            }
        }
        if !statuses.is_empty() || watched.is_empty() {
            return Ok(Some(WaitOutcome {
                statuses,
                timed_out: false,
            }));
        }
        let changes = futures::future::select_all(
            watched
                .iter_mut()
                .map(|(id, receiver)| {
                    let id = *id;
                    Box::pin(async move { receiver.changed().await.map_err(|_| id) })
                })
                .collect::<Vec<_>>(),
        );
        tokio::select! {
            (changed, _, _) = changes => {
                if let Err(id) = changed {
                    return Err(CollabError::StatusLost(id));
                }
            }
            _ = tokio::time::sleep_until(deadline) => {
                return Ok(Some(WaitOutcome { statuses, timed_out: true }));
            }
            _ = cancel.cancelled() => return Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Regression guard for the race wait_agent is built against: a child that finishes
    /// while the waiter subscribes must still be seen, never reported as a timeout.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_status_racing_the_subscription_is_never_lost() {
        for round in 0..500u32 {
            let (tx, master) = watch::channel(AgentStatus::PendingInit);
            let id = ThreadId::new();
            let child = tokio::spawn(async move {
                for _ in 0..(round % 4) {
                    tokio::task::yield_now().await;
                }
                tx.send_replace(AgentStatus::Running);
                tx.send_replace(AgentStatus::Completed(Some(format!("done {round}"))));
                // Keep the channel open a while: a closed one is a different outcome.
                tokio::time::sleep(Duration::from_secs(5)).await;
            });
            for _ in 0..(round % 3) {
                tokio::task::yield_now().await;
            }
            let mut watched = vec![(id, master.clone())];
            let outcome = wait_any(
                &mut watched,
                BTreeMap::new(),
                Duration::from_secs(3),
                &CancellationToken::new(),
            )
            .await
            .unwrap()
            .unwrap();
            assert!(!outcome.timed_out, "round {round} timed out");
            assert_eq!(
                outcome.statuses[&id.to_string()],
                AgentStatus::Completed(Some(format!("done {round}"))),
                "round {round}"
            );
            child.abort();
        }
    }

    #[tokio::test]
    async fn a_dropped_status_channel_is_an_error_not_a_timeout() {
        let (tx, rx) = watch::channel(AgentStatus::Running);
        let id = ThreadId::new();
        drop(tx);
        let error = wait_any(
            &mut [(id, rx)],
            BTreeMap::new(),
            Duration::from_secs(5),
            &CancellationToken::new(),
        )
        .await
        .err()
        .unwrap();
        assert_eq!(
            error.to_string(),
            format!("agent with id {id} ended without reporting a final status")
        );
    }

    #[tokio::test]
    async fn nothing_final_before_the_deadline_is_a_timeout() {
        let (_tx, rx) = watch::channel(AgentStatus::Running);
        let outcome = wait_any(
            &mut [(ThreadId::new(), rx)],
            BTreeMap::new(),
            Duration::from_millis(20),
            &CancellationToken::new(),
        )
        .await
        .unwrap()
        .unwrap();
        assert!(outcome.timed_out);
        assert!(outcome.statuses.is_empty());
    }
}
