//! Streaming one model response: deltas become events as they arrive, completed items are
//! collected for the history, and model item ids are mapped to thread item ids.

use super::Session;
use crate::turn_context::TurnContext;
use futures::StreamExt;
use osprey_model::{ModelError, Prompt, ResponseEvent};
use osprey_protocol::{EventMsg, ReasoningSummary, ResponseItem, ThreadItem, TokenUsage};
use std::collections::HashMap;

/// Streams one model response, forwarding deltas as events. Returns the completed items.
pub(super) async fn sample(
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
