//! The turn loop: prompt → stream → record → run tools → repeat until the model answers
//! without tool calls.
//!
//! [`run_turn_inner`] reads top to bottom as the steps of a turn; each step is a function
//! below it. Every way a turn ends goes through [`TurnEnd`], emitted in one place. Turn
//! inspectors (`crate::inspect`) are consulted at their named points; the loop knows nothing
//! of providers or profiles.

use super::Session;
use super::sampling::sample;
use super::steer::SteerQueue;
use crate::inspect::{CallVerdict, TurnInspectors, TurnStart};
use crate::prompt;
use crate::tools::call::ToolCall;
use crate::tools::router::extract_tool_calls;
use crate::tools::runtime::{BatchOutcome, run_tool_calls};
use crate::turn_context::TurnContext;
use futures::FutureExt;
use osprey_model::{ModelError, Prompt, ToolChoice};
use osprey_protocol::{
    AbortReason, ContentItem, ErrorKind, EventMsg, ResponseItem, ThreadItem, TokenUsage, UserInput,
    WireError,
};
use osprey_rollout::{RolloutItem, TurnContextItem};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub(crate) async fn run_turn(
    session: Arc<Session>,
    turn: Arc<TurnContext>,
    input: Vec<UserInput>,
    steer: Arc<SteerQueue>,
    cancel: CancellationToken,
) {
    let turn_id = turn.turn_id.clone();
    let run = AssertUnwindSafe(run_turn_inner(
        &session,
        turn,
        input,
        Arc::clone(&steer),
        cancel,
    ))
    .catch_unwind();
    if let Err(panic) = run.await {
        steer.close();
        // A bug must not leave the front end waiting for a turn that never ends.
        session.events().emit(
            Some(&turn_id),
            EventMsg::TurnFailed {
                error: panic_error(panic.as_ref()),
                usage: TokenUsage::default(),
            },
        );
    }
    // Whatever way the turn ended, its record is on disk before the next one starts.
    session.sync().await;
}

/// The plain-words error for a turn that panicked.
pub(crate) fn panic_error(panic: &(dyn std::any::Any + Send)) -> WireError {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    WireError::new(
        ErrorKind::Other,
        format!(
            "the turn stopped because of an internal error in Osprey ({detail}); the thread is still usable, and this is a bug worth reporting"
        ),
    )
}

/// `Op::Compact` as a task of its own: started, compacted, completed (or failed).
pub(crate) async fn run_compact_task(
    session: Arc<Session>,
    turn: Arc<TurnContext>,
    cancel: CancellationToken,
) {
    let events = session.events().clone();
    let turn_id = turn.turn_id.clone();
    events.emit(Some(&turn_id), EventMsg::TurnStarted);
    let result = tokio::select! {
        result = crate::compact::compact(&session, &turn, None) => result,
        _ = cancel.cancelled() => {
            events.emit(Some(&turn_id), EventMsg::TurnAborted { reason: AbortReason::Interrupted });
            return;
        }
    };
    let msg = match result {
        Ok(_) => EventMsg::TurnCompleted {
            last_agent_message: None,
            usage: TokenUsage::default(),
        },
        Err(error) => EventMsg::TurnFailed {
            error: error.to_wire(),
            usage: TokenUsage::default(),
        },
    };
    events.emit(Some(&turn_id), msg);
    session.sync().await;
}

/// How a turn ended.
enum TurnEnd {
    Completed,
    Failed(ModelError),
    Aborted(AbortReason),
}

/// What one pass through the loop decided.
enum Step {
    /// Send the next request.
    Continue,
    End(TurnEnd),
}

/// The running state of one turn.
struct TurnState {
    usage: TokenUsage,
    last_agent_message: Option<String>,
    compacted_for_overflow: bool,
    /// Compacted before a request because it was estimated too long; once per turn, so a
    /// history that is still too long after compaction cannot loop.
    compacted_for_estimate: bool,
    inspectors: TurnInspectors,
    /// Input steered into this turn, recorded before the next request.
    steer: Arc<SteerQueue>,
}

async fn run_turn_inner(
    session: &Arc<Session>,
    turn: Arc<TurnContext>,
    input: Vec<UserInput>,
    steer: Arc<SteerQueue>,
    cancel: CancellationToken,
) {
    session
        .events()
        .emit(Some(&turn.turn_id), EventMsg::TurnStarted);
    record_turn_context(session, &turn);
    let request = user_request_text(&input);
    let mut state = TurnState {
        usage: TokenUsage::default(),
        last_agent_message: None,
        compacted_for_overflow: false,
        compacted_for_estimate: false,
        inspectors: inspectors_for(session, &turn, &request),
        steer,
    };
    if session.history_snapshot().is_empty() {
        session.record(initial_context(session, &turn));
    }
    record_user_input(session, &turn, &input);
    let end = loop {
        match step(session, &turn, &mut state, &cancel).await {
            Step::Continue => {}
            Step::End(end) => break end,
        }
    };
    // Input steered in after the last request (the turn failed, was interrupted, or an
    // inspector stopped it) is still the person's message: the next turn's model sees it.
    for input in state.steer.close() {
        record_user_input(session, &turn, &input);
    }
    if matches!(end, TurnEnd::Aborted(AbortReason::Interrupted)) {
        session.services.unified_exec.kill_all().await;
    }
    emit_end(session, &turn, end, state);
}

/// One request and what follows from its answer.
async fn step(
    session: &Arc<Session>,
    turn: &Arc<TurnContext>,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> Step {
    for input in state.steer.take() {
        record_user_input(session, turn, &input);
    }
    session.record_notifications();
    let mut prompt = build_prompt(session, turn);
    if compaction_due(session, state, &prompt) {
        if let Err(error) = crate::compact::compact(session, turn, None).await {
            return Step::End(TurnEnd::Failed(error));
        }
        prompt = build_prompt(session, turn);
    }
    state.inspectors.before_request(&mut prompt);
    let sampled = tokio::select! {
        result = sample(session, turn, &prompt) => result,
        _ = cancel.cancelled() => return Step::End(TurnEnd::Aborted(AbortReason::Interrupted)),
    };
    let (items, usage) = match sampled {
        Ok(ok) => ok,
        Err(error) if error.is_context_window_exceeded() && !state.compacted_for_overflow => {
            // Never send what overflowed again: summarise a trimmed copy, then retry.
            state.compacted_for_overflow = true;
            let overflowed = crate::compact::items_bytes(&prompt.input);
            return match crate::compact::compact(session, turn, Some(overflowed)).await {
                Ok(_) => Step::Continue,
                Err(error) => Step::End(TurnEnd::Failed(error)),
            };
        }
        Err(error) => return Step::End(TurnEnd::Failed(error)),
    };
    // Counted now; told to the front end once the response's tool calls have run (as Codex
    // orders it: the usage follows the items the response produced).
    let usage_event = usage
        .as_ref()
        .map(|usage| account_usage(session, state, usage));
    let mut calls = record_response(session, state, &items).await;
    if calls.is_empty() {
        emit_usage(session, turn, usage_event);
        if state.steer.has_pending() {
            // The person added input while the model answered: answer that too.
            return Step::Continue;
        }
        let answer = last_assistant_text(&items);
        return match state.inspectors.before_finish(answer.as_deref()) {
            Some(reminder) => {
                session.record([reminder]);
                Step::Continue
            }
            None if state.steer.close_if_empty() => Step::End(TurnEnd::Completed),
            None => Step::Continue,
        };
    }
    state.inspectors.adjust_calls(&mut calls);
    match state.inspectors.before_tool_calls(&calls) {
        CallVerdict::Run => {}
        CallVerdict::StopTurn { output, warning } => {
            // Answer the calls so the history stays valid, then stop.
            session.record(calls.iter().map(|call| call.output_item(output.clone())));
            emit_usage(session, turn, usage_event);
            session.events().emit(
                Some(&turn.turn_id),
                EventMsg::Warning {
                    message: warning.clone(),
                },
            );
            state.last_agent_message.get_or_insert(warning);
            return Step::End(TurnEnd::Completed);
        }
        CallVerdict::Answer { outputs } => {
            // Not run: each answer goes to the model; the other calls run.
            let (answered, rest): (Vec<ToolCall>, Vec<ToolCall>) = calls
                .into_iter()
                .partition(|call| outputs.iter().any(|(id, _)| *id == call.call_id));
            session.record(answered.iter().filter_map(|call| {
                let (_, output) = outputs.iter().find(|(id, _)| *id == call.call_id)?;
                Some(call.output_item(output.clone()))
            }));
            if rest.is_empty() {
                emit_usage(session, turn, usage_event);
                return Step::Continue;
            }
            calls = rest;
        }
    }
    let outcome = run_calls(session, turn, state, calls, cancel).await;
    emit_usage(session, turn, usage_event);
    if outcome.fatal.is_some() {
        return Step::End(TurnEnd::Aborted(AbortReason::ApprovalAborted));
    }
    if cancel.is_cancelled() {
        return Step::End(TurnEnd::Aborted(AbortReason::Interrupted));
    }
    Step::Continue
}

/// Whether the history must be compacted before this request: the last response reported
/// a token count over the limit (in this turn or the one before), or this request's input is
/// estimated to pass it.
fn compaction_due(session: &Session, state: &mut TurnState, prompt: &Prompt) -> bool {
    let reported = session
        .compaction_due
        .swap(false, std::sync::atomic::Ordering::SeqCst);
    if reported {
        return true;
    }
    if state.compacted_for_estimate || !crate::compact::input_over_limit(session, &prompt.input) {
        return false;
    }
    state.compacted_for_estimate = true;
    true
}

fn inspectors_for(session: &Session, turn: &TurnContext, request: &str) -> TurnInspectors {
    let start = turn_start(session, turn, request);
    TurnInspectors::for_turn(&session.profile, &start.view())
}

/// The owned pieces a [`TurnStart`] borrows.
struct OwnedTurnStart<'a> {
    request: &'a str,
    cwd: &'a std::path::Path,
    tool_names: Vec<String>,
    command_path: Option<String>,
}

impl OwnedTurnStart<'_> {
    fn view(&self) -> TurnStart<'_> {
        TurnStart {
            request: self.request,
            cwd: self.cwd,
            tool_names: &self.tool_names,
            command_path: self.command_path.as_deref(),
        }
    }
}

fn turn_start<'a>(
    session: &Session,
    turn: &'a TurnContext,
    request: &'a str,
) -> OwnedTurnStart<'a> {
    let command_path = crate::tools::exec_env::command_env(
        &session.services.commands.env,
        &session.config.shell_environment_policy,
        false,
    )
    .remove("PATH");
    OwnedTurnStart {
        request,
        cwd: &turn.cwd,
        tool_names: session.registry.names(),
        command_path,
    }
}

fn record_turn_context(session: &Session, turn: &TurnContext) {
    if let Some(recorder) = &session.recorder {
        recorder.record(vec![RolloutItem::TurnContext(TurnContextItem {
            turn_id: Some(turn.turn_id.clone()),
            cwd: turn.cwd.clone(),
            approval_policy: turn.approval_policy,
            sandbox_policy: turn.sandbox_policy.clone(),
            model: turn.model.clone(),
            effort: turn.effort,
            extra: Default::default(),
        })]);
    }
}

fn user_request_text(input: &[UserInput]) -> String {
    input
        .iter()
        .filter_map(|part| match part {
            UserInput::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Records a user message (the turn's input, or input steered into it) and shows it to the
/// front end as a started and completed item of this turn.
fn record_user_input(session: &Session, turn: &TurnContext, input: &[UserInput]) {
    let events = session.events();
    let user_item = user_input_item(input, turn.config.tools.view_image_max_dimension);
    // The item shows what the user typed; the image labels the model gets beside the images
    // (`<image name=[Image #1]>`) are not part of it.
    let typed: Vec<&str> = input
        .iter()
        .filter_map(|part| match part {
            UserInput::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    if !input.is_empty() {
        let text = typed.join("\n");
        let images = input
            .iter()
            .filter_map(|part| match part {
                UserInput::LocalImage { path } => Some(path.clone()),
                _ => None,
            })
            .collect();
        let item = ThreadItem::UserMessage {
            id: events.next_item_id("user"),
            text,
            images,
        };
        events.emit(
            Some(&turn.turn_id),
            EventMsg::ItemStarted { item: item.clone() },
        );
        events.emit(Some(&turn.turn_id), EventMsg::ItemCompleted { item });
    }
    session.record([user_item]);
}

/// Adds a response's usage to the turn's and the thread's; the event to send for it.
fn account_usage(session: &Session, state: &mut TurnState, usage: &TokenUsage) -> EventMsg {
    state.usage.add(usage);
    if crate::compact::usage_over_limit(session, usage) {
        session
            .compaction_due
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
    let total = {
        let mut total = session
            .total_usage
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        total.add(usage);
        *total
    };
    EventMsg::TokenCount {
        last: *usage,
        total,
    }
}

fn emit_usage(session: &Session, turn: &TurnContext, usage_event: Option<EventMsg>) {
    if let Some(msg) = usage_event {
        session.events().emit(Some(&turn.turn_id), msg);
    }
}

/// Records the model's items and returns the tool calls among them.
async fn record_response(
    session: &Session,
    state: &mut TurnState,
    items: &[ResponseItem],
) -> Vec<ToolCall> {
    if let Some(text) = last_assistant_text(items) {
        state.last_agent_message = Some(text);
    }
    session.record(items.iter().cloned());
    session.flush().await;
    extract_tool_calls(items)
}

fn last_assistant_text(items: &[ResponseItem]) -> Option<String> {
    items
        .iter()
        .rev()
        .filter(|item| item.role() == Some("assistant"))
        .find_map(ResponseItem::message_text)
}

/// Runs a batch of calls and records their outputs (after the inspectors saw them).
async fn run_calls(
    session: &Arc<Session>,
    turn: &Arc<TurnContext>,
    state: &mut TurnState,
    calls: Vec<ToolCall>,
    cancel: &CancellationToken,
) -> BatchOutcome {
    let mut outcome = run_tool_calls(
        calls,
        Arc::clone(&session.registry),
        Arc::clone(turn),
        session.services.events.clone(),
        cancel.clone(),
    )
    .await;
    state.inspectors.after_tool_outputs(&mut outcome.outputs);
    session.record(outcome.outputs.iter().cloned());
    session.flush().await;
    outcome
}

/// Emits the one event that ends the turn.
fn emit_end(session: &Session, turn: &TurnContext, end: TurnEnd, state: TurnState) {
    let msg = match end {
        TurnEnd::Completed => EventMsg::TurnCompleted {
            last_agent_message: state.last_agent_message,
            usage: state.usage,
        },
        TurnEnd::Failed(error) => EventMsg::TurnFailed {
            error: error.to_wire(),
            usage: state.usage,
        },
        TurnEnd::Aborted(reason) => EventMsg::TurnAborted { reason },
    };
    session.events().emit(Some(&turn.turn_id), msg);
}

/// The items every new thread starts with (and a compacted history starts again with):
/// permissions, developer instructions, AGENTS.md, the environment, and what the profile's
/// inspectors add.
pub(crate) fn initial_context(session: &Session, turn: &TurnContext) -> Vec<ResponseItem> {
    let mut items = vec![prompt::permissions_message(
        turn.approval_policy,
        &turn.sandbox_policy,
    )];
    if let Some(developer) = session.config.developer_instructions.as_deref() {
        items.push(ResponseItem::developer_text(developer));
    }
    let config = &session.config;
    let doc = if session.services.commands.environment.remote().is_some() {
        session.remote_instructions.clone()
    } else {
        crate::project_doc::load_project_instructions(
            &config.osprey_home,
            &turn.cwd,
            &config.project_doc_fallback_filenames,
            config.project_doc_max_bytes,
        )
    };
    if let Some(doc) = doc {
        items.push(ResponseItem::user_text(
            crate::project_doc::instructions_message(&turn.cwd, &doc),
        ));
    }
    items.push(ResponseItem::user_text(prompt::environment_context(
        turn,
        &session.shell_name,
        &session.services.commands.environment,
    )));
    let start = turn_start(session, turn, "");
    let inspectors = TurnInspectors::for_turn(&session.profile, &start.view());
    items.extend(inspectors.initial_context(&start.view()));
    items
}

/// The user message for one turn's input, in the wire form of Codex 0.171: each attached
/// file image is wrapped in `<image name=[Image #N] path="…">` … `</image>` text parts, so
/// the model can refer to it by name; `N` counts every image of the message in order (an
/// image URL counts but is sent unwrapped, as Codex does).
fn user_input_item(input: &[UserInput], max_image_dimension: u32) -> ResponseItem {
    let mut image_number = 0usize;
    let mut content = Vec::with_capacity(input.len());
    for part in input {
        match part {
            UserInput::Text { text } => content.push(ContentItem::InputText { text: text.clone() }),
            UserInput::Image { image_url } => {
                image_number += 1;
                content.push(ContentItem::InputImage {
                    image_url: image_url.clone(),
                });
            }
            UserInput::LocalImage { path } => {
                image_number += 1;
                match osprey_tools::load_image_for_model(path, max_image_dimension) {
                    Ok(image) => content.extend([
                        ContentItem::InputText {
                            text: format!(
                                "<image name=[Image #{image_number}] path=\"{}\">",
                                path.display()
                            ),
                        },
                        ContentItem::InputImage {
                            image_url: image.data_url,
                        },
                        ContentItem::InputText {
                            text: "</image>".to_string(),
                        },
                    ]),
                    Err(e) => content.push(ContentItem::InputText {
                        text: format!(
                            "[Image #{image_number}, {}, could not be attached: {e}]",
                            path.display()
                        ),
                    }),
                }
            }
        }
    }
    ResponseItem::message("user", content)
}

fn build_prompt(session: &Session, turn: &TurnContext) -> Prompt {
    let mut input = vec![ResponseItem::developer_text(&session.base_instructions)];
    input.extend(session.history_snapshot());
    Prompt {
        model: turn.model.clone(),
        instructions: None,
        input,
        tools: session.registry.specs_json(),
        parallel_tool_calls: true,
        reasoning_effort: turn.effort,
        reasoning_summary: turn.effort.is_some(),
        output_schema: turn.output_schema.clone(),
        prompt_cache_key: session.thread_id.to_string(),
        tool_choice: ToolChoice::Auto,
    }
}
