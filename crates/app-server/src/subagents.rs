//! Sub-agent threads: a thread's `spawn_agent` starts a child in core; the server loads it
//! like any thread, subscribes every connection that holds the parent, sends
//! `thread/started` for it (beyond Codex, which sends none, so a client need not infer the
//! child from an unknown `threadId`), and starts its event pump. The child's status, turns,
//! items, deltas and approval requests then stream on the same connections under the child's
//! `threadId`, and its approvals are answered like the parent's.

use std::sync::Arc;

use osprey_app_server_protocol as wire;
use osprey_app_server_protocol::ServerNotification;
use osprey_core::SpawnedThread;
use serde_json::json;

use crate::loaded::{LoadedThread, ThreadInfo};
use crate::server::Server;

/// Adopts every sub-agent the server's thread managers start, for the server's life.
pub(crate) fn follow(server: &Arc<Server>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("no async runtime: sub-agent threads will not be shown to clients");
        return;
    };
    for mut spawned in [
        server.manager.subscribe_spawned(),
        server.ephemeral_manager.subscribe_spawned(),
    ] {
        let server = Arc::downgrade(server);
        runtime.spawn(async move {
            while let Some(child) = spawned.recv().await {
                let Some(server) = server.upgrade() else {
                    return;
                };
                adopt(&server, child);
            }
        });
    }
}

fn adopt(server: &Arc<Server>, child: SpawnedThread) {
    let Some(parent) = server.loaded(&child.parent_thread_id) else {
        // A parent this server does not hold (never happens for threads it started); the
        // child still needs a pump so its events are read.
        tracing::warn!(
            "sub-agent {} has a parent ({}) this server did not load",
            child.thread_id,
            child.parent_thread_id
        );
        return;
    };
    let config = parent.config.clone();
    let path = if parent.info.ephemeral {
        None
    } else {
        osprey_rollout::find_rollout_by_id(&config.osprey_home, &child.thread_id)
            .ok()
            .flatten()
    };
    let info = ThreadInfo {
        id: child.thread_id,
        forked_from_id: None,
        preview: String::new(),
        ephemeral: parent.info.ephemeral,
        model_provider: parent.info.model_provider.clone(),
        model: parent.info.model.clone(),
        reasoning_effort: parent.info.reasoning_effort.clone(),
        created_at: chrono::Utc::now().timestamp(),
        path,
        cwd: parent.info.cwd.clone(),
        cli_version: parent.info.cli_version.clone(),
        originator: parent.info.originator.clone(),
        source: json!({"subAgent": {"thread_spawn": {
            "parent_thread_id": child.parent_thread_id.to_string(),
            "depth": child.depth,
            "agent_nickname": child.nickname,
        }}}),
        git_info: parent.info.git_info.clone(),
        parent_thread_id: Some(child.parent_thread_id.to_string()),
        agent_nickname: Some(child.nickname.clone()),
    };
    let loaded = Arc::new(LoadedThread::new(Arc::clone(&child.thread), info, config));
    {
        // The child's turns belong to the root turn its parent runs (`rootTurnId`).
        let root_turn = parent.state().root_turn_id();
        let mut state = loaded.state();
        state.parent = Some(Arc::downgrade(&parent));
        state.root_turn = root_turn;
    }
    for connection in parent.subscribers() {
        loaded.subscribe(&connection);
    }
    // Announced before its pump runs, so `thread/started` precedes the child's events.
    loaded.broadcast(&ServerNotification::ThreadStarted(
        wire::ThreadStartedNotification {
            thread: loaded.to_wire(Vec::new()),
        },
    ));
    server.register(loaded);
}
