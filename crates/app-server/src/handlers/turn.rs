//! `turn/start`, `turn/steer`, `turn/interrupt`, and the two requests that run as turns:
//! `thread/shellCommand` and `thread/compact/start`.

use std::sync::Arc;

use osprey_app_server_protocol as wire;
use osprey_protocol::{Op, TurnId};

use super::{Reply, answer, loaded_thread};
use crate::connection::Connection;
use crate::convert;
use crate::loaded::LoadedThread;
use crate::server::Server;

fn remember_input(thread: &LoadedThread, turn_id: &TurnId, input: Vec<wire::UserInput>) {
    thread
        .state()
        .inputs
        .entry(turn_id.0.clone())
        .or_default()
        .push_back(input);
}

fn in_progress(turn_id: &TurnId) -> wire::Turn {
    wire::Turn {
        id: turn_id.0.clone(),
        root_turn_id: Some(turn_id.0.clone()),
        items: Vec::new(),
        items_view: wire::TurnItemsView::NotLoaded,
        status: wire::TurnStatus::InProgress,
        error: None,
        started_at: None,
        completed_at: None,
        duration_ms: None,
    }
}

pub(crate) async fn start(
    server: &Arc<Server>,
    _connection: &Arc<Connection>,
    params: wire::TurnStartParams,
) -> Reply {
    let thread = loaded_thread(server, &params.thread_id)?;
    let cwd_base = thread.info.cwd.clone();
    let cwd = params
        .cwd
        .as_deref()
        .map(|dir| convert::resolve_cwd(&cwd_base, dir))
        .transpose()?;
    let input_cwd = cwd.clone().unwrap_or_else(|| cwd_base.clone());
    let items = convert::user_input(&params.input, &input_cwd)?;
    if items.is_empty() {
        return Err("turn/start needs at least one input item".to_owned());
    }
    let op = Op::UserTurn {
        items,
        cwd,
        approval_policy: params
            .approval_policy
            .as_ref()
            .map(convert::approval_policy)
            .transpose()?,
        sandbox_policy: params
            .sandbox_policy
            .as_ref()
            .map(|p| convert::sandbox_policy(p, &input_cwd))
            .transpose()?,
        model: params.model.clone(),
        effort: params
            .effort
            .as_deref()
            .map(convert::reasoning_effort)
            .transpose()?,
        output_schema: params.output_schema.clone(),
    };
    // Hold the gate until the response is queued: the pump shows `turn/started` after it.
    let _gate = thread.turn_gate.lock().await;
    let turn_id = thread
        .thread
        .start_turn(op)
        .await
        .map_err(|e| format!("the turn could not be started: {e}"))?;
    remember_input(&thread, &turn_id, params.input);
    answer(&wire::TurnStartResponse {
        turn: in_progress(&turn_id),
    })
}

pub(crate) async fn steer(server: &Arc<Server>, params: wire::TurnSteerParams) -> Reply {
    let thread = loaded_thread(server, &params.thread_id)?;
    match thread.active_turn_id() {
        None => return Err("no active turn to steer".to_owned()),
        Some(active) if active != params.expected_turn_id => {
            return Err(format!(
                "expected turn {} but turn {active} is running; steer the running turn or start a new one",
                params.expected_turn_id
            ));
        }
        Some(_) => {}
    }
    let items = convert::user_input(&params.input, &thread.info.cwd)?;
    if items.is_empty() {
        return Err("turn/steer needs at least one input item".to_owned());
    }
    let _gate = thread.turn_gate.lock().await;
    let turn_id = thread
        .thread
        .steer(items)
        .await
        .map_err(|e| e.to_string())?;
    remember_input(&thread, &turn_id, params.input);
    answer(&wire::TurnSteerResponse { turn_id: turn_id.0 })
}

pub(crate) async fn interrupt(server: &Arc<Server>, params: wire::TurnInterruptParams) -> Reply {
    let thread = loaded_thread(server, &params.thread_id)?;
    let Some(active) = thread.active_turn_id() else {
        return Err("no active turn to interrupt".to_owned());
    };
    if active != params.turn_id {
        return Err(format!(
            "turn {} is not running (the running turn is {active})",
            params.turn_id
        ));
    }
    thread
        .thread
        .submit(Op::Interrupt)
        .await
        .map_err(|e| format!("the thread could not be reached: {e}"))?;
    answer(&wire::EmptyResponse {})
}

/// The user's own `!cmd`: a turn with one `commandExecution` item (source `userShell`).
/// Recorded for the model unless `shareWithModel: false`.
pub(crate) async fn shell_command(
    server: &Arc<Server>,
    params: wire::ThreadShellCommandParams,
) -> Reply {
    let thread = loaded_thread(server, &params.thread_id)?;
    if params.command.trim().is_empty() {
        return Err("thread/shellCommand needs a command".to_owned());
    }
    let _gate = thread.turn_gate.lock().await;
    thread
        .thread
        .start_turn(Op::RunUserShellCommand {
            command: params.command,
            timeout_ms: params.timeout_ms,
            share_with_model: params.share_with_model.unwrap_or(true),
        })
        .await
        .map_err(|e| format!("the command could not be started: {e}"))?;
    answer(&wire::EmptyResponse {})
}

pub(crate) async fn compact(server: &Arc<Server>, params: wire::ThreadIdParams) -> Reply {
    let thread = loaded_thread(server, &params.thread_id)?;
    let _gate = thread.turn_gate.lock().await;
    thread
        .thread
        .start_turn(Op::Compact)
        .await
        .map_err(|e| format!("compaction could not be started: {e}"))?;
    answer(&wire::EmptyResponse {})
}
