//! The event pump: one task per loaded thread that reads core's events in order and turns
//! them into the wire's notifications for every subscribed connection.
//!
//! Order follows Codex: `thread/status/changed active` → `turn/started` → items (each
//! `item/started` before its deltas and `item/completed`) → `turn/diff/updated` whenever a
//! patch changed files, `turn/plan/updated` whenever the model set its plan →
//! `thread/status/changed idle` (or `systemError` and an `error` notification for a failed
//! turn) → `turn/completed`, then `serverRequest/resolved` for any approval the turn's end
//! left unanswered.

use std::sync::{Arc, Weak};

use osprey_app_server_protocol as wire;
use osprey_app_server_protocol::{ServerNotification, ThreadStatus, method};
use osprey_protocol::{
    ApprovalRequest, ApprovalRequestKind, CommandSource, Event, EventMsg, ItemStatus, ThreadItem,
    TokenUsage,
};
use serde_json::{Map, Value};

use crate::connection::now_ms;
use crate::convert;
use crate::items::{ItemTimes, renamed, turn_error, wire_item};
use crate::loaded::{ActiveTurn, LoadedThread};
use crate::server::Server;

/// Runs until the thread's event stream ends.
pub async fn run(server: Weak<Server>, thread: Arc<LoadedThread>) {
    while let Some(event) = thread.thread.next_event().await {
        if matches!(event.msg, EventMsg::ShutdownComplete) {
            break;
        }
        handle(&thread, event).await;
        if thread.state().turn.is_none()
            && thread.subscribers().is_empty()
            && let Some(server) = server.upgrade()
        {
            server.unload_if_unwatched(&thread).await;
        }
    }
    thread.state().closed = true;
    let server = server.upgrade();
    // A sub-agent reopened by `resume_agent` is registered under the same id, and pumped,
    // while this (its closed registration's) pump may still be finishing: a `notLoaded`
    // sent now would reach the client after the reopened thread's `thread/started`.
    if !server.as_ref().is_some_and(|s| s.superseded(&thread)) {
        thread.set_status(ThreadStatus::NotLoaded);
    }
    if let Some(server) = server {
        server.forget(&thread);
    }
}

fn turn_id_of(thread: &LoadedThread, event: &Event) -> String {
    event
        .turn_id
        .as_ref()
        .map(|t| t.0.clone())
        .or_else(|| thread.active_turn_id())
        .unwrap_or_default()
}

fn wire_id(thread: &LoadedThread, core_id: &str) -> String {
    thread
        .state()
        .turn
        .as_ref()
        .map_or_else(|| core_id.to_owned(), |t| t.wire_id(core_id))
}

/// The item under the id the wire knows it by: a command announced for its approval keeps
/// the announced id when core starts (or completes) it.
fn on_wire(thread: &LoadedThread, item: &ThreadItem) -> ThreadItem {
    let mut state = thread.state();
    let Some(turn) = state.turn.as_mut() else {
        return item.clone();
    };
    if let Some(alias) = turn.aliases.get(item.id()) {
        return renamed(item, alias);
    }
    if let ThreadItem::CommandExecution { command, .. } = item
        && let Some(index) = turn.announced.iter().position(|(c, _)| c == command)
    {
        let (_, wire_id) = turn.announced.remove(index);
        turn.aliases.insert(item.id().to_owned(), wire_id.clone());
        return renamed(item, &wire_id);
    }
    item.clone()
}

/// The wire item an approval is about. A patch's item is already open (core starts it
/// before asking); a command is asked about before core starts it, so it is announced here
/// — `item/started` with source `agent`, as Codex does — under the call's id.
fn approval_item(thread: &LoadedThread, turn_id: &str, request: &ApprovalRequest) -> String {
    let open_file_change = || {
        let state = thread.state();
        let turn = state.turn.as_ref()?;
        turn.open
            .iter()
            .filter(|(_, item)| matches!(item.details, wire::ThreadItemDetails::FileChange { .. }))
            .max_by_key(|(_, item)| item.started_at_ms)
            .map(|(id, _)| id.clone())
    };
    match &request.kind {
        ApprovalRequestKind::Patch { .. } => {
            open_file_change().unwrap_or_else(|| request.call_id.clone())
        }
        ApprovalRequestKind::Exec { command, .. } => {
            let shown = shlex::try_join(command.iter().map(String::as_str))
                .unwrap_or_else(|_| command.join(" "));
            let announced = ThreadItem::CommandExecution {
                id: request.call_id.clone(),
                command: shown.clone(),
                cwd: request.cwd.clone(),
                aggregated_output: String::new(),
                exit_code: None,
                status: ItemStatus::InProgress,
                source: CommandSource::Agent,
                sandbox_denial: None,
            };
            if let Some(turn) = thread.state().turn.as_mut() {
                turn.announced.push((shown, request.call_id.clone()));
            }
            ensure_started_as(
                thread,
                turn_id,
                &announced,
                Some(wire::CommandExecutionSource::Agent),
            );
            request.call_id.clone()
        }
        ApprovalRequestKind::McpTool { .. } => request.call_id.clone(),
    }
}

async fn handle(thread: &Arc<LoadedThread>, event: Event) {
    let turn_id = turn_id_of(thread, &event);
    match event.msg {
        EventMsg::ThreadStarted { .. } | EventMsg::ShutdownComplete => {}
        // Shown through the `collabAgentToolCall` item the call emits as well.
        EventMsg::CollabAgentSpawnBegin { .. }
        | EventMsg::CollabAgentSpawnEnd { .. }
        | EventMsg::CollabAgentInteractionBegin { .. }
        | EventMsg::CollabAgentInteractionEnd { .. }
        | EventMsg::CollabWaitingBegin { .. }
        | EventMsg::CollabWaitingEnd { .. }
        | EventMsg::CollabCloseBegin { .. }
        | EventMsg::CollabCloseEnd { .. } => {}
        EventMsg::TurnStarted => turn_started(thread, &turn_id).await,
        EventMsg::ItemStarted { item } => {
            let item = on_wire(thread, &item);
            item_started(thread, &turn_id, &item).await;
        }
        EventMsg::ItemUpdated { .. } => {}
        EventMsg::ItemCompleted { item } => {
            let item = on_wire(thread, &item);
            item_completed(thread, &turn_id, &item).await;
        }
        EventMsg::AgentMessageDelta { item_id, delta } => {
            ensure_started(
                thread,
                &turn_id,
                &ThreadItem::AgentMessage {
                    id: item_id.clone(),
                    text: String::new(),
                },
            );
            delta_to(
                thread,
                method::ITEM_AGENT_MESSAGE_DELTA,
                &turn_id,
                &item_id,
                None,
                &delta,
            );
        }
        EventMsg::ReasoningDelta { item_id, delta } => {
            reasoning_delta(thread, &turn_id, item_id, &delta)
        }
        EventMsg::CommandOutputDelta { item_id, chunk } => {
            let item_id = wire_id(thread, &item_id);
            delta_to(
                thread,
                method::ITEM_COMMAND_EXECUTION_OUTPUT_DELTA,
                &turn_id,
                &item_id,
                None,
                &chunk,
            );
        }
        EventMsg::ApprovalRequested(request) => {
            // The status first, then the command's item (announced), then the request.
            thread.set_status(ThreadStatus::Active {
                active_flags: vec![wire::ThreadActiveFlag::WaitingOnApproval],
            });
            let item_id = approval_item(thread, &turn_id, &request);
            crate::approval::ask(thread, &turn_id, &item_id, request);
        }
        EventMsg::TokenCount { last, total } => token_count(thread, &turn_id, &last, &total),
        EventMsg::Warning { message } => {
            thread.broadcast(&ServerNotification::Warning(wire::WarningNotification {
                thread_id: Some(thread.id_text()),
                message,
            }))
        }
        EventMsg::Error { error } => {
            thread.broadcast(&ServerNotification::Error(wire::ErrorNotification {
                error: turn_error(&error),
                will_retry: true,
                thread_id: thread.id_text(),
                turn_id,
            }))
        }
        EventMsg::Compacted { .. } => compacted(thread, &turn_id),
        EventMsg::PlanUpdate { explanation, plan } => {
            thread.broadcast(&ServerNotification::TurnPlanUpdated(
                crate::plan::plan_updated(thread.id_text(), turn_id, explanation, &plan),
            ))
        }
        EventMsg::TurnCompleted { .. } => {
            turn_ended(thread, &turn_id, wire::TurnStatus::Completed, None)
        }
        EventMsg::TurnFailed { error, .. } => {
            let error = turn_error(&error);
            thread.set_status(ThreadStatus::SystemError);
            thread.broadcast(&ServerNotification::Error(wire::ErrorNotification {
                error: error.clone(),
                will_retry: false,
                thread_id: thread.id_text(),
                turn_id: turn_id.clone(),
            }));
            turn_ended(thread, &turn_id, wire::TurnStatus::Failed, Some(error));
        }
        EventMsg::TurnAborted { .. } => {
            turn_ended(thread, &turn_id, wire::TurnStatus::Interrupted, None)
        }
    }
}

async fn turn_started(thread: &Arc<LoadedThread>, turn_id: &str) {
    // Wait for `turn/start` to have answered (it holds the gate while it does).
    let _gate = thread.turn_gate.lock().await;
    let now = now_ms();
    let root_turn_id = root_turn_of(thread, turn_id);
    let mut active = ActiveTurn::new(turn_id, now);
    active.root_turn_id = root_turn_id.clone();
    thread.state().turn = Some(active);
    thread.set_status(ThreadStatus::Active {
        active_flags: Vec::new(),
    });
    let turn = wire::Turn {
        id: turn_id.to_owned(),
        root_turn_id: Some(root_turn_id),
        items: Vec::new(),
        items_view: wire::TurnItemsView::NotLoaded,
        status: wire::TurnStatus::InProgress,
        error: None,
        started_at: Some(now / 1000),
        completed_at: None,
        duration_ms: None,
    };
    thread.broadcast(&ServerNotification::TurnStarted(wire::TurnNotification {
        thread_id: thread.id_text(),
        turn,
    }));
}

/// The input the client sent for this turn's next user message, if the server has it.
fn user_content(
    thread: &LoadedThread,
    turn_id: &str,
    consume: bool,
) -> Option<Vec<wire::UserInput>> {
    let mut state = thread.state();
    let queue = state.inputs.get_mut(turn_id)?;
    if consume {
        let content = queue.pop_front();
        if queue.is_empty() {
            state.inputs.remove(turn_id);
        }
        content
    } else {
        queue.front().cloned()
    }
}

async fn item_started(thread: &Arc<LoadedThread>, turn_id: &str, item: &ThreadItem) {
    if matches!(item, ThreadItem::UserMessage { .. }) {
        let _gate = thread.turn_gate.lock().await;
    }
    if let ThreadItem::FileChange { changes, .. } = item
        && let Some(turn) = thread.state().turn.as_mut()
    {
        for change in changes {
            turn.diff.track(&change.path);
            if let Some(target) = &change.move_path {
                turn.diff.track(target);
            }
        }
    }
    ensure_started(thread, turn_id, item);
}

/// Sends `item/started` for `item` unless this turn already did.
fn ensure_started(thread: &LoadedThread, turn_id: &str, item: &ThreadItem) -> i64 {
    ensure_started_as(thread, turn_id, item, None)
}

fn ensure_started_as(
    thread: &LoadedThread,
    turn_id: &str,
    item: &ThreadItem,
    source: Option<wire::CommandExecutionSource>,
) -> i64 {
    let now = now_ms();
    {
        let mut state = thread.state();
        if let Some(turn) = state.turn.as_mut() {
            if let Some(at) = turn.item_started.get(item.id()) {
                return *at;
            }
            turn.item_started.insert(item.id().to_owned(), now);
        }
    }
    let content = matches!(item, ThreadItem::UserMessage { .. })
        .then(|| user_content(thread, turn_id, false))
        .flatten();
    let times = ItemTimes {
        started_at_ms: Some(now),
        completed_at_ms: None,
    };
    if let Some(mut wire_item) = wire_item(item, times, content.as_deref()) {
        if let (Some(source), wire::ThreadItemDetails::CommandExecution { source: shown, .. }) =
            (source, &mut wire_item.details)
        {
            *shown = source;
        }
        if let Some(turn) = thread.state().turn.as_mut() {
            turn.open.insert(item.id().to_owned(), wire_item.clone());
        }
        thread.broadcast(&ServerNotification::ItemStarted(
            wire::ItemStartedNotification {
                item: wire_item,
                thread_id: thread.id_text(),
                turn_id: turn_id.to_owned(),
                started_at_ms: now,
            },
        ));
    }
    now
}

async fn item_completed(thread: &Arc<LoadedThread>, turn_id: &str, item: &ThreadItem) {
    if let ThreadItem::Error { message, .. } = item {
        thread.broadcast(&ServerNotification::Warning(wire::WarningNotification {
            thread_id: Some(thread.id_text()),
            message: message.clone(),
        }));
        return;
    }
    if matches!(item, ThreadItem::UserMessage { .. }) {
        let _gate = thread.turn_gate.lock().await;
    }
    let started = ensure_started(thread, turn_id, item);
    let content = matches!(item, ThreadItem::UserMessage { .. })
        .then(|| user_content(thread, turn_id, true))
        .flatten();
    let now = now_ms();
    let times = ItemTimes {
        started_at_ms: Some(started),
        completed_at_ms: Some(now),
    };
    let Some(wire_item) = wire_item(item, times, content.as_deref()) else {
        return;
    };
    if let ThreadItem::UserMessage { text, .. } = item {
        let mut state = thread.state();
        if state.preview.is_none() && !text.trim().is_empty() {
            state.preview = Some(text.trim().chars().take(200).collect());
        }
    }
    if let Some(turn) = thread.state().turn.as_mut() {
        turn.open.remove(item.id());
        if matches!(item, ThreadItem::AgentMessage { .. }) {
            turn.last_agent_message = Some(wire_item.clone());
        }
    }
    thread.broadcast(&ServerNotification::ItemCompleted(
        wire::ItemCompletedNotification {
            item: wire_item,
            thread_id: thread.id_text(),
            turn_id: turn_id.to_owned(),
            content_token_count: None,
            completed_at_ms: now,
        },
    ));
    if matches!(item, ThreadItem::FileChange { .. }) {
        send_diff(thread, turn_id);
    }
}

fn send_diff(thread: &LoadedThread, turn_id: &str) {
    let diff = {
        let state = thread.state();
        match state.turn.as_ref() {
            Some(turn) if !turn.diff.is_empty() => turn.diff.unified(&thread.info.cwd),
            _ => return,
        }
    };
    if diff.is_empty() {
        return;
    }
    thread.broadcast(&ServerNotification::TurnDiffUpdated(
        wire::TurnDiffUpdatedNotification {
            thread_id: thread.id_text(),
            turn_id: turn_id.to_owned(),
            diff,
        },
    ));
}

fn delta_to(
    thread: &LoadedThread,
    method: &'static str,
    turn_id: &str,
    item_id: &str,
    summary_index: Option<i64>,
    delta: &str,
) {
    let mut params = Map::new();
    params.insert("threadId".into(), Value::String(thread.id_text()));
    params.insert("turnId".into(), Value::String(turn_id.to_owned()));
    params.insert("itemId".into(), Value::String(item_id.to_owned()));
    if let Some(index) = summary_index {
        params.insert("summaryIndex".into(), Value::from(index));
    }
    thread.broadcast_delta(method, &params, delta);
}

fn reasoning_delta(thread: &LoadedThread, turn_id: &str, item_id: String, delta: &str) {
    ensure_started(
        thread,
        turn_id,
        &ThreadItem::Reasoning {
            id: item_id.clone(),
            text: String::new(),
        },
    );
    let first = {
        let mut state = thread.state();
        match state.turn.as_mut() {
            Some(turn) if !turn.reasoning_started.contains(&item_id) => {
                turn.reasoning_started.push(item_id.clone());
                true
            }
            _ => false,
        }
    };
    if first {
        thread.broadcast(&ServerNotification::ReasoningSummaryPartAdded(
            wire::ReasoningSummaryPartAddedNotification {
                thread_id: thread.id_text(),
                turn_id: turn_id.to_owned(),
                item_id: item_id.clone(),
                summary_index: 0,
            },
        ));
    }
    delta_to(
        thread,
        method::ITEM_REASONING_SUMMARY_TEXT_DELTA,
        turn_id,
        &item_id,
        Some(0),
        delta,
    );
}

fn token_count(thread: &LoadedThread, turn_id: &str, last: &TokenUsage, total: &TokenUsage) {
    thread.broadcast(&ServerNotification::ThreadTokenUsageUpdated(
        wire::ThreadTokenUsageUpdatedNotification {
            thread_id: thread.id_text(),
            turn_id: turn_id.to_owned(),
            token_usage: wire::ThreadTokenUsage {
                total: convert::token_usage(total),
                last: convert::token_usage(last),
                model_context_window: thread.context_window.and_then(|w| i64::try_from(w).ok()),
            },
        },
    ));
}

fn compacted(thread: &LoadedThread, turn_id: &str) {
    let id = format!("compaction-{}", now_ms());
    let now = now_ms();
    let item = wire::ThreadItem {
        details: wire::ThreadItemDetails::ContextCompaction { id },
        started_at_ms: Some(now),
        completed_at_ms: None,
    };
    thread.broadcast(&ServerNotification::ItemStarted(
        wire::ItemStartedNotification {
            item: item.clone(),
            thread_id: thread.id_text(),
            turn_id: turn_id.to_owned(),
            started_at_ms: now,
        },
    ));
    let done = wire::ThreadItem {
        completed_at_ms: Some(now),
        ..item
    };
    thread.broadcast(&ServerNotification::ItemCompleted(
        wire::ItemCompletedNotification {
            item: done,
            thread_id: thread.id_text(),
            turn_id: turn_id.to_owned(),
            content_token_count: None,
            completed_at_ms: now,
        },
    ));
}

/// Items whose approval was answered `cancel` never ran: they end `declined`.
fn complete_cancelled(thread: &LoadedThread, turn_id: &str) {
    let items: Vec<wire::ThreadItem> = {
        let mut state = thread.state();
        let Some(turn) = state.turn.as_mut() else {
            return;
        };
        let cancelled = std::mem::take(&mut turn.cancelled);
        cancelled
            .iter()
            .filter_map(|id| turn.open.remove(id))
            .collect()
    };
    let now = now_ms();
    for mut item in items {
        item.completed_at_ms = Some(now);
        if let wire::ThreadItemDetails::CommandExecution { status, .. } = &mut item.details {
            *status = wire::CommandExecutionStatus::Declined;
        }
        if let wire::ThreadItemDetails::FileChange { status, .. } = &mut item.details {
            *status = wire::PatchApplyStatus::Declined;
        }
        thread.broadcast(&ServerNotification::ItemCompleted(
            wire::ItemCompletedNotification {
                item,
                thread_id: thread.id_text(),
                turn_id: turn_id.to_owned(),
                content_token_count: None,
                completed_at_ms: now,
            },
        ));
    }
}

/// A turn's `rootTurnId`, as Codex shows it: a root thread's turn is its own root; a
/// sub-agent's turn belongs to the root turn its parent is running (the parent's own
/// `rootTurnId`), or, when the parent runs none, to the last root turn the child knew.
fn root_turn_of(thread: &LoadedThread, turn_id: &str) -> String {
    let (parent, known) = {
        let state = thread.state();
        (state.parent.clone(), state.root_turn.clone())
    };
    let Some(parent) = parent.and_then(|p| p.upgrade()) else {
        return known.unwrap_or_else(|| turn_id.to_owned());
    };
    let running = parent.state().root_turn_id();
    let root = running.or(known).unwrap_or_else(|| turn_id.to_owned());
    thread.state().root_turn = Some(root.clone());
    root
}

fn turn_ended(
    thread: &LoadedThread,
    turn_id: &str,
    status: wire::TurnStatus,
    error: Option<wire::TurnError>,
) {
    complete_cancelled(thread, turn_id);
    let turn = {
        let mut state = thread.state();
        state.inputs.remove(turn_id);
        state.turn.take()
    };
    let now = now_ms();
    let (started_at, started_ms, items, root_turn_id) = match turn {
        Some(turn) => {
            let items = if status == wire::TurnStatus::Completed {
                turn.last_agent_message.into_iter().collect()
            } else {
                Vec::new()
            };
            (
                turn.started_at,
                turn.started_at_ms,
                items,
                turn.root_turn_id,
            )
        }
        None => (now / 1000, now, Vec::new(), turn_id.to_owned()),
    };
    if status != wire::TurnStatus::Failed {
        thread.set_status(ThreadStatus::Idle);
    }
    thread.broadcast(&ServerNotification::TurnCompleted(wire::TurnNotification {
        thread_id: thread.id_text(),
        turn: wire::Turn {
            id: turn_id.to_owned(),
            root_turn_id: Some(root_turn_id),
            items,
            items_view: wire::TurnItemsView::Summary,
            status,
            error,
            started_at: Some(started_at),
            completed_at: Some(now / 1000),
            duration_ms: Some(now - started_ms),
        },
    }));
    crate::approval::resolve_turn(thread, turn_id);
}
