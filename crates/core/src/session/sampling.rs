//! Streaming one model response: deltas become events as they arrive, completed items are
//! collected for the history, and model item ids are mapped to thread item ids.
//!
//! When the stream breaks and the model client retries the request, the new attempt starts
//! over, but what the front end was already shown stays shown: a message (or reasoning
//! summary) at the same position keeps its thread item id, is not started again, its deltas
//! are not repeated, and its completion is sent again only if its text changed. Tool calls
//! only run from the attempt that completed, so a retry never runs one twice.

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
                    if !tracker.was_shown(&item_id) {
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
            }
            ResponseEvent::OutputTextDelta { item_id, delta } => {
                let id = tracker.message_id_for(item_id.as_deref(), events);
                if !tracker.was_shown(&id) {
                    events.emit(turn_id, EventMsg::AgentMessageDelta { item_id: id, delta });
                }
            }
            ResponseEvent::ReasoningSummaryDelta { item_id, delta } => {
                let id = tracker.reasoning_id_for(item_id.as_deref(), events);
                if !tracker.was_shown(&id) {
                    events.emit(turn_id, EventMsg::ReasoningDelta { item_id: id, delta });
                }
            }
            ResponseEvent::ToolCallInputDelta { .. } => {}
            ResponseEvent::OutputItemDone(item) => {
                match &item {
                    ResponseItem::Message { id, role, .. } if role == "assistant" => {
                        let item_id = tracker.finish_message(id.as_deref(), events);
                        let text = item.message_text().unwrap_or_default();
                        if tracker.completes_anew(&item_id, &text) {
                            events.emit(
                                turn_id,
                                EventMsg::ItemCompleted {
                                    item: ThreadItem::AgentMessage { id: item_id, text },
                                },
                            );
                        }
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
                        let item_id = (!text.is_empty())
                            .then(|| tracker.reasoning_id_for(id.as_deref(), events))
                            .filter(|item_id| tracker.completes_anew(item_id, &text));
                        if let Some(item_id) = item_id {
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
                tracker = tracker.retried();
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

/// Thread items shown to the front end, by kind and position in the response: the id and,
/// once completed, the text.
#[derive(Default, Clone)]
struct Shown {
    messages: Vec<(String, Option<String>)>,
    reasoning: Vec<(String, Option<String>)>,
}

impl Shown {
    /// Earlier attempts' items overlaid with this attempt's, position by position.
    fn merged(mut self, now: Shown) -> Shown {
        fn overlay(before: &mut Vec<(String, Option<String>)>, now: Vec<(String, Option<String>)>) {
            for (pos, (id, text)) in now.into_iter().enumerate() {
                match before.get_mut(pos) {
                    Some(slot) => {
                        if text.is_some() {
                            slot.1 = text;
                        }
                    }
                    None => before.push((id, text)),
                }
            }
        }
        overlay(&mut self.messages, now.messages);
        overlay(&mut self.reasoning, now.reasoning);
        self
    }

    fn find_mut(&mut self, id: &str) -> Option<&mut (String, Option<String>)> {
        self.messages
            .iter_mut()
            .chain(self.reasoning.iter_mut())
            .find(|(shown, _)| shown == id)
    }

    fn contains(&self, id: &str) -> bool {
        self.messages
            .iter()
            .chain(&self.reasoning)
            .any(|(shown, _)| shown == id)
    }
}

/// Maps the model's item ids to our thread item ids while a response streams, and remembers
/// what earlier (retried) attempts of the same request showed.
#[derive(Default)]
struct ItemTracker {
    messages: HashMap<String, String>,
    reasoning: HashMap<String, String>,
    current_message: Option<String>,
    current_reasoning: Option<String>,
    /// Shown by attempts that were retried.
    before: Shown,
    /// Shown by this attempt.
    now: Shown,
}

impl ItemTracker {
    /// The tracker for the next attempt of the same request.
    fn retried(self) -> Self {
        Self {
            before: self.before.merged(self.now),
            ..Self::default()
        }
    }

    /// An earlier attempt already showed this item.
    fn was_shown(&self, id: &str) -> bool {
        self.before.contains(id)
    }

    /// Records `text` as the item's completed text; `false` when an earlier attempt already
    /// completed it with exactly this text.
    fn completes_anew(&mut self, id: &str, text: &str) -> bool {
        if let Some(slot) = self.now.find_mut(id) {
            slot.1 = Some(text.to_string());
        }
        self.before
            .find_mut(id)
            .is_none_or(|(_, shown)| shown.as_deref() != Some(text))
    }

    fn start_message(
        &mut self,
        model_id: Option<String>,
        events: &crate::events::EventEmitter,
    ) -> String {
        let position = self.now.messages.len();
        let id = match self.before.messages.get(position) {
            Some((id, _)) => id.clone(),
            None => events.next_item_id("msg"),
        };
        self.now.messages.push((id.clone(), None));
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
        let position = self.now.reasoning.len();
        let id = match self.before.reasoning.get(position) {
            Some((id, _)) => id.clone(),
            None => events.next_item_id("reasoning"),
        };
        self.now.reasoning.push((id.clone(), None));
        if let Some(model_id) = model_id {
            self.reasoning.insert(model_id.to_string(), id.clone());
        }
        self.current_reasoning = Some(id.clone());
        id
    }
}
