//! The turn loop: prompt → stream → record → run tools → repeat until the model answers
//! without tool calls.

use super::Session;
use super::local_aids::{FinishNudge, LoopGuard};
use crate::prompt;
use crate::tools::router::extract_tool_calls;
use crate::tools::runtime::run_tool_calls;
use crate::turn_context::TurnContext;
use futures::StreamExt;
use osprey_model::{ModelError, Prompt, ResponseEvent, ToolChoice};
use osprey_protocol::{
    AbortReason, ContentItem, EventMsg, ReasoningSummary, ResponseItem, ThreadItem, TokenUsage,
    UserInput,
};
use osprey_rollout::{RolloutItem, TurnContextItem};
use std::collections::HashMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub(crate) async fn run_turn(
    session: Arc<Session>,
    turn: Arc<TurnContext>,
    input: Vec<UserInput>,
    cancel: CancellationToken,
) {
    run_turn_inner(&session, turn, input, cancel).await;
    // Whatever way the turn ended, its record is on disk before the next one starts.
    session.sync().await;
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
        result = crate::compact::compact(&session, &turn) => result,
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

async fn run_turn_inner(
    session: &Arc<Session>,
    turn: Arc<TurnContext>,
    input: Vec<UserInput>,
    cancel: CancellationToken,
) {
    let events = session.events().clone();
    let turn_id = turn.turn_id.clone();
    events.emit(Some(&turn_id), EventMsg::TurnStarted);

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
    if session.history_snapshot().is_empty() {
        session.record(initial_context(session, &turn));
    }
    let user_item = user_input_item(&input, turn.config.tools.view_image_max_dimension);
    if let Some(text) = user_item.message_text() {
        events.emit(
            Some(&turn_id),
            EventMsg::ItemCompleted {
                item: ThreadItem::UserMessage {
                    id: events.next_item_id("user"),
                    text,
                },
            },
        );
    }
    let request_text = user_item.message_text().unwrap_or_default();
    session.record([user_item]);

    let mut turn_usage = TokenUsage::default();
    let mut last_agent_message: Option<String> = None;
    let mut compacted_for_overflow = false;
    let mut loop_guard = LoopGuard::for_config(&session.config);
    let mut nudge = FinishNudge::for_session(session, &request_text, &turn.cwd);
    let mut tool_choice = ToolChoice::Auto;
    loop {
        let prompt = build_prompt(session, &turn, std::mem::take(&mut tool_choice));
        let sampled = tokio::select! {
            result = sample(session, &turn, &prompt) => result,
            _ = cancel.cancelled() => {
                session.services.unified_exec.kill_all().await;
                events.emit(Some(&turn_id), EventMsg::TurnAborted { reason: AbortReason::Interrupted });
                return;
            }
        };
        let fail = |error: ModelError, usage: TokenUsage| {
            events.emit(
                Some(&turn_id),
                EventMsg::TurnFailed {
                    error: error.to_wire(),
                    usage,
                },
            );
        };
        let (items, usage) = match sampled {
            Ok(ok) => ok,
            Err(ModelError::ContextWindowExceeded { .. }) if !compacted_for_overflow => {
                compacted_for_overflow = true;
                if let Err(error) = crate::compact::compact(session, &turn).await {
                    return fail(error, turn_usage);
                }
                continue;
            }
            Err(error) => return fail(error, turn_usage),
        };
        if let Some(usage) = usage {
            turn_usage.add(&usage);
            let total = {
                let mut total = session
                    .total_usage
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                total.add(&usage);
                *total
            };
            events.emit(Some(&turn_id), EventMsg::TokenCount { last: usage, total });
        }
        for item in &items {
            if item.role() == Some("assistant")
                && let Some(text) = item.message_text()
            {
                last_agent_message = Some(text);
            }
        }
        session.record(items.clone());
        session.flush().await;

        let calls = extract_tool_calls(&items);
        let said = items
            .iter()
            .rev()
            .filter(|item| item.role() == Some("assistant"))
            .find_map(ResponseItem::message_text);
        if calls.is_empty()
            && let Some(reminder) = nudge.check(said.as_deref())
        {
            // The small model stopped early (described a call instead of making it, or left
            // a change unchecked): remind it, and require a call in the next answer.
            session.record([reminder]);
            tool_choice = ToolChoice::Required;
            continue;
        }
        nudge.observe(&calls);
        if calls.is_empty() {
            events.emit(
                Some(&turn_id),
                EventMsg::TurnCompleted {
                    last_agent_message,
                    usage: turn_usage,
                },
            );
            return;
        }
        if let Some(name) = loop_guard.repeated(&calls) {
            // A small model that repeats itself will not get further: stop the turn, answering
            // the calls so the history stays valid.
            let outputs: Vec<ResponseItem> = calls
                .iter()
                .map(|call| {
                    call.output_item(crate::tools::call::ToolOutput::failure(
                        "not run: this exact call was already made in this turn",
                    ))
                })
                .collect();
            session.record(outputs);
            let message = format!(
                "Stopped: the model repeated an earlier `{name}` call with the same arguments, so the task may be incomplete."
            );
            events.emit(
                Some(&turn_id),
                EventMsg::Warning {
                    message: message.clone(),
                },
            );
            events.emit(
                Some(&turn_id),
                EventMsg::TurnCompleted {
                    last_agent_message: Some(last_agent_message.unwrap_or(message)),
                    usage: turn_usage,
                },
            );
            return;
        }
        let outcome = run_tool_calls(
            calls,
            Arc::clone(&session.registry),
            Arc::clone(&turn),
            Arc::clone(&session.services),
            cancel.clone(),
        )
        .await;
        let mut outputs = outcome.outputs;
        nudge.annotate(&mut outputs);
        session.record(outputs);
        session.flush().await;
        let over_limit = usage.is_some_and(|u| crate::compact::should_auto_compact(session, &u));
        if over_limit
            && outcome.fatal.is_none()
            && !cancel.is_cancelled()
            && let Err(error) = crate::compact::compact(session, &turn).await
        {
            return fail(error, turn_usage);
        }
        if outcome.fatal.is_some() {
            events.emit(
                Some(&turn_id),
                EventMsg::TurnAborted {
                    reason: AbortReason::ApprovalAborted,
                },
            );
            return;
        }
        if cancel.is_cancelled() {
            session.services.unified_exec.kill_all().await;
            events.emit(
                Some(&turn_id),
                EventMsg::TurnAborted {
                    reason: AbortReason::Interrupted,
                },
            );
            return;
        }
    }
}

/// The items every new thread starts with: permissions and the environment.
pub(crate) fn initial_context(session: &Session, turn: &TurnContext) -> Vec<ResponseItem> {
    let mut items = vec![prompt::permissions_message(
        turn.approval_policy,
        &turn.sandbox_policy,
    )];
    if let Some(developer) = session.config.developer_instructions.as_deref() {
        items.push(ResponseItem::developer_text(developer));
    }
    let config = &session.config;
    if let Some(doc) = crate::project_doc::load_project_instructions(
        &config.osprey_home,
        &turn.cwd,
        &config.project_doc_fallback_filenames,
        config.project_doc_max_bytes,
    ) {
        items.push(ResponseItem::user_text(
            crate::project_doc::instructions_message(&turn.cwd, &doc),
        ));
    }
    items.push(ResponseItem::user_text(prompt::environment_context(
        turn,
        &session.shell_name,
    )));
    if super::local_aids::uses_local_profile(config) {
        let path = crate::tools::exec_env::command_env(
            &session.services.env,
            &config.shell_environment_policy,
            false,
        )
        .remove("PATH");
        items.push(super::local_aids::project_files_message(
            &turn.cwd,
            path.as_deref(),
        ));
    }
    items
}

fn user_input_item(input: &[UserInput], max_image_dimension: u32) -> ResponseItem {
    let content = input
        .iter()
        .map(|part| match part {
            UserInput::Text { text } => ContentItem::InputText { text: text.clone() },
            UserInput::Image { image_url } => ContentItem::InputImage {
                image_url: image_url.clone(),
            },
            UserInput::LocalImage { path } => {
                match osprey_tools::load_image_for_model(path, max_image_dimension) {
                    Ok(image) => ContentItem::InputImage {
                        image_url: image.data_url,
                    },
                    Err(e) => ContentItem::InputText {
                        text: format!("[the image {} could not be attached: {e}]", path.display()),
                    },
                }
            }
        })
        .collect();
    ResponseItem::message("user", content)
}

fn build_prompt(session: &Session, turn: &TurnContext, tool_choice: ToolChoice) -> Prompt {
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
        tool_choice,
    }
}

/// Streams one model response, forwarding deltas as events. Returns the completed items.
async fn sample(
    session: &Session,
    turn: &TurnContext,
    prompt: &Prompt,
) -> Result<(Vec<ResponseItem>, Option<TokenUsage>), ModelError> {
    let events = session.events();
    let turn_id = Some(&turn.turn_id);
    let mut stream = session.model.stream(prompt).await?;
    let mut items: Vec<ResponseItem> = Vec::new();
    let mut tracker = ItemTracker::default();
    while let Some(event) = stream.next().await {
        match event? {
            ResponseEvent::Created => {}
            ResponseEvent::OutputItemAdded(item) => {
                if let ResponseItem::Message { id, role, .. } = &item
                    && role == "assistant"
                {
                    let item_id = tracker.start_message(id.clone(), events);
                    events.emit(
                        turn_id,
                        EventMsg::ItemStarted {
                            item: ThreadItem::AgentMessage {
                                id: item_id,
                                text: String::new(),
                            },
                        },
                    );
                }
            }
            ResponseEvent::OutputTextDelta { item_id, delta } => {
                let id = tracker.message_id_for(item_id.as_deref(), events);
                events.emit(turn_id, EventMsg::AgentMessageDelta { item_id: id, delta });
            }
            ResponseEvent::ReasoningSummaryDelta { item_id, delta } => {
                let id = tracker.reasoning_id_for(item_id.as_deref(), events);
                events.emit(turn_id, EventMsg::ReasoningDelta { item_id: id, delta });
            }
            ResponseEvent::ToolCallInputDelta { .. } => {}
            ResponseEvent::OutputItemDone(item) => {
                match &item {
                    ResponseItem::Message { id, role, .. } if role == "assistant" => {
                        let item_id = tracker.finish_message(id.as_deref(), events);
                        events.emit(
                            turn_id,
                            EventMsg::ItemCompleted {
                                item: ThreadItem::AgentMessage {
                                    id: item_id,
                                    text: item.message_text().unwrap_or_default(),
                                },
                            },
                        );
                    }
                    ResponseItem::Reasoning { id, summary, .. } => {
                        let text = summary
                            .iter()
                            .filter_map(|s| match s {
                                ReasoningSummary::SummaryText { text } => Some(text.as_str()),
                                ReasoningSummary::Other(_) => None,
                            })
                            .collect::<Vec<_>>()
                            .join("\n\n");
                        if !text.is_empty() {
                            let item_id = tracker.reasoning_id_for(id.as_deref(), events);
                            events.emit(
                                turn_id,
                                EventMsg::ItemCompleted {
                                    item: ThreadItem::Reasoning { id: item_id, text },
                                },
                            );
                        }
                    }
                    _ => {}
                }
                items.push(item);
            }
            ResponseEvent::Completed { usage, .. } => return Ok((items, usage)),
            ResponseEvent::RetryingStream {
                attempt,
                max,
                reason,
            } => {
                items.clear();
                tracker = ItemTracker::default();
                events.emit(
                    turn_id,
                    EventMsg::Error {
                        error: osprey_protocol::WireError::new(
                            osprey_protocol::ErrorKind::StreamFailed,
                            format!("Reconnecting… {attempt}/{max}: {reason}"),
                        ),
                    },
                );
            }
        }
    }
    Err(ModelError::Stream {
        provider: session.config.model_provider.name.clone(),
        url: session
            .config
            .model_provider
            .base_url
            .clone()
            .unwrap_or_default(),
        fault: osprey_model::StreamFault::EndedEarly,
        attempts: 1,
    })
}

/// Maps the model's item ids to our thread item ids while a response streams.
#[derive(Default)]
struct ItemTracker {
    messages: HashMap<String, String>,
    reasoning: HashMap<String, String>,
    current_message: Option<String>,
    current_reasoning: Option<String>,
}

impl ItemTracker {
    fn start_message(
        &mut self,
        model_id: Option<String>,
        events: &crate::events::EventEmitter,
    ) -> String {
        let id = events.next_item_id("msg");
        if let Some(model_id) = model_id {
            self.messages.insert(model_id, id.clone());
        }
        self.current_message = Some(id.clone());
        id
    }

    fn message_id_for(
        &mut self,
        model_id: Option<&str>,
        events: &crate::events::EventEmitter,
    ) -> String {
        if let Some(id) = model_id.and_then(|m| self.messages.get(m)) {
            return id.clone();
        }
        if let Some(id) = &self.current_message {
            return id.clone();
        }
        self.start_message(model_id.map(str::to_string), events)
    }

    fn finish_message(
        &mut self,
        model_id: Option<&str>,
        events: &crate::events::EventEmitter,
    ) -> String {
        let id = self.message_id_for(model_id, events);
        self.current_message = None;
        id
    }

    fn reasoning_id_for(
        &mut self,
        model_id: Option<&str>,
        events: &crate::events::EventEmitter,
    ) -> String {
        if let Some(id) = model_id.and_then(|m| self.reasoning.get(m)) {
            return id.clone();
        }
        if model_id.is_none()
            && let Some(id) = &self.current_reasoning
        {
            return id.clone();
        }
        let id = events.next_item_id("reasoning");
        if let Some(model_id) = model_id {
            self.reasoning.insert(model_id.to_string(), id.clone());
        }
        self.current_reasoning = Some(id.clone());
        id
    }
}
