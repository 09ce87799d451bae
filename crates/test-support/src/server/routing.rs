//! How a sub-agent's request finds its script entry (its own route, else the catch-all
//! route `*` per thread), and how `{{agent:…}}` placeholders become the ids of spawned agents.

use axum::http::StatusCode;
use serde_json::Value;

use super::{EVERY_AGENT, Plan, ServerState};
use crate::script::MockResponse;

/// The next entry of a sub-agent's script: its own route's, else the catch-all route's
/// (each thread from the start), else a failure.
pub(super) fn serve_route(
    state: &mut ServerState,
    label: &str,
    route: &str,
    thread: Option<&str>,
) -> Plan {
    let failure = |state: &mut ServerState, failure: String| {
        state.failures.push(failure.clone());
        Plan::Reject(StatusCode::INTERNAL_SERVER_ERROR, failure)
    };
    if let Some(script) = state.routes.get_mut(route) {
        if let Some(response) = script.script.get(script.next).cloned() {
            script.next += 1;
            return Plan::Serve(response);
        }
        let used = script.script.len();
        return failure(
            state,
            format!(
                "{label} from sub-agent {route} arrived after its {used} scripted responses were used up"
            ),
        );
    }
    if let Some(script) = state.routes.get_mut(EVERY_AGENT) {
        let Some(thread) = thread else {
            return failure(
                state,
                format!(
                    "{label} came from sub-agent {route}, whose headers name no thread \
                     (no thread_id in x-codex-turn-metadata, no thread-id header), so the \
                     catch-all route `*` cannot tell it from the others"
                ),
            );
        };
        let next = script.per_thread.entry(thread.to_owned()).or_default();
        if let Some(response) = script.script.get(*next).cloned() {
            *next += 1;
            return Plan::Serve(response);
        }
        let used = script.script.len();
        return failure(
            state,
            format!(
                "{label} from sub-agent thread {thread} arrived after the {used} responses of \
                 the catch-all route `*` were used up"
            ),
        );
    }
    let known: Vec<String> = state.routes.keys().cloned().collect();
    let known = if known.is_empty() {
        "none".to_owned()
    } else {
        known.join(", ")
    };
    failure(
        state,
        format!(
            "{label} came from sub-agent {route}, which has no script (scripted sub-agents: \
             {known}); give it one with MockModelServer::start_routed"
        ),
    )
}

/// Remembers the `{"agent_id", "nickname"}` outputs of `spawn_agent` calls in a history, by
/// nickname and in the order they first appear.
pub(super) fn learn_agent_ids(state: &mut ServerState, body: &Value) {
    let Some(input) = body.get("input").and_then(Value::as_array) else {
        return;
    };
    for item in input {
        if item.get("type").and_then(Value::as_str) != Some("function_call_output") {
            continue;
        }
        let Some(output) = item
            .get("output")
            .and_then(Value::as_str)
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
        else {
            continue;
        };
        if let (Some(id), Some(nickname)) = (
            output.get("agent_id").and_then(Value::as_str),
            output.get("nickname").and_then(Value::as_str),
        ) {
            state.agent_ids.insert(nickname.to_owned(), id.to_owned());
            if !state.agent_order.iter().any(|known| known == id) {
                state.agent_order.push(id.to_owned());
            }
        }
    }
}

/// The response with each `{{agent:<nickname>}}` replaced by that agent's id, and each
/// `{{agent:#N}}` by the id of the N-th agent spawned (from 0, in the order the spawn outputs
/// appeared), so a script can address sub-agents whose ids are only known at run time.
pub(super) fn fill_agent_ids(
    response: &MockResponse,
    state: &ServerState,
) -> Result<MockResponse, String> {
    let Ok(mut text) = serde_json::to_string(response) else {
        return Ok(response.clone());
    };
    if !text.contains("{{agent:") {
        return Ok(response.clone());
    }
    while let Some(start) = text.find("{{agent:") {
        let Some(len) = text[start..].find("}}") else {
            return Err("a `{{agent:` placeholder in the script is not closed with `}}`".into());
        };
        let name = &text[start + "{{agent:".len()..start + len];
        let id = match name.strip_prefix('#') {
            Some(index) => index
                .parse::<usize>()
                .ok()
                .and_then(|index| state.agent_order.get(index))
                .ok_or_else(|| {
                    format!(
                        "the script names agent {name} ({{{{agent:{name}}}}}), but the histories \
                         so far hold {} spawn_agent output(s)",
                        state.agent_order.len()
                    )
                })?,
            None => state.agent_ids.get(name).ok_or_else(|| {
                format!(
                    "the script names agent {name} ({{{{agent:{name}}}}}), but no spawn_agent \
                     output in the histories so far gave that nickname"
                )
            })?,
        };
        text.replace_range(start..start + len + 2, &id.clone());
    }
    serde_json::from_str(&text).map_err(|e| format!("the filled-in script entry is not valid: {e}"))
}
