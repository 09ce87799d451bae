//! The collaboration tools (Codex v1): `spawn_agent`, `send_input`, `wait_agent`,
//! `close_agent`, `resume_agent`. Each handler holds the thread's [`AgentControl`]; each call
//! shows one `CollabAgentToolCall` item (started, then completed or failed) and sends
//! Codex's `Collab*Begin/End` events around its work. Outputs are Codex's JSON; failures are
//! plain words the model can act on.

use crate::agents::{AgentControl, CollabError, SpawnRequest};
use crate::tools::call::{ToolError, ToolOutput};
use crate::tools::context::ToolInvocation;
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_protocol::{
    AgentStatus, CollabAgentTool, CollabReceiver, EventMsg, ItemStatus, ReasoningEffort, ThreadId,
    ThreadItem, UserInput,
};
use osprey_tools::{
    CloseAgentArgs, CollabInputItem, ResumeAgentArgs, SendInputArgs, SpawnAgentArgs, ToolSpec,
    WaitAgentArgs,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// The item one collaboration call shows, filled in as the call goes.
struct CallItem {
    id: String,
    tool: CollabAgentTool,
    sender: ThreadId,
    receivers: Vec<String>,
    nicknames: Vec<CollabReceiver>,
    prompt: Option<String>,
    model: Option<String>,
    effort: Option<ReasoningEffort>,
    states: BTreeMap<String, AgentStatus>,
}

impl CallItem {
    fn new(inv: &ToolInvocation, tool: CollabAgentTool, sender: ThreadId) -> Self {
        Self {
            id: inv.events.call_item_id(&inv.call.call_id),
            tool,
            sender,
            receivers: Vec::new(),
            nicknames: Vec::new(),
            prompt: None,
            model: None,
            effort: None,
            states: BTreeMap::new(),
        }
    }

    fn item(&self, status: ItemStatus) -> ThreadItem {
        ThreadItem::CollabAgentToolCall {
            id: self.id.clone(),
            tool: self.tool,
            status,
            sender_thread_id: self.sender,
            receiver_thread_ids: self.receivers.clone(),
            receiver_agents: self.nicknames.clone(),
            prompt: self.prompt.clone(),
            model: self.model.clone(),
            reasoning_effort: self.effort,
            agents_states: self.states.clone(),
        }
    }

    fn start(&self, inv: &ToolInvocation) {
        inv.emit(EventMsg::ItemStarted {
            item: self.item(ItemStatus::InProgress),
        });
    }

    fn finish(&self, inv: &ToolInvocation, ok: bool) {
        let status = if ok {
            ItemStatus::Completed
        } else {
            ItemStatus::Failed
        };
        inv.emit(EventMsg::ItemCompleted {
            item: self.item(status),
        });
    }
}

/// `message` or `items` as user input, and the prompt text the item shows.
fn input_of(
    message: Option<String>,
    items: Option<Vec<CollabInputItem>>,
) -> Result<(Vec<UserInput>, String), ToolError> {
    let refuse = |m: &str| Err(ToolError::RespondToModel(m.to_string()));
    match (message, items) {
        (Some(_), Some(items)) if !items.is_empty() => {
            refuse("Provide either message or items, but not both")
        }
        (Some(message), _) if !message.trim().is_empty() => Ok((
            vec![UserInput::Text {
                text: message.clone(),
            }],
            message,
        )),
        (_, Some(items)) if !items.is_empty() => {
            let mut input = Vec::new();
            let mut texts = Vec::new();
            for item in items {
                let kind = item.kind.as_deref().unwrap_or("text");
                match (kind, item.text, item.image_url, item.path) {
                    ("text", Some(text), _, _) => {
                        texts.push(text.clone());
                        input.push(UserInput::Text { text });
                    }
                    ("image", _, Some(image_url), _) => input.push(UserInput::Image { image_url }),
                    ("local_image", _, _, Some(path)) => {
                        input.push(UserInput::LocalImage { path: path.into() })
                    }
                    (kind, ..) => {
                        return Err(ToolError::RespondToModel(format!(
                            "an input item of type `{kind}` is missing its field or is not supported here; \
                             use text (with `text`), image (with `image_url`) or local_image (with `path`)"
                        )));
                    }
                }
            }
            Ok((input, texts.join("\n")))
        }
        _ => refuse("Empty message can't be sent to an agent"),
    }
}

fn parse_id(target: &str) -> Result<ThreadId, CollabError> {
    target
        .parse()
        .map_err(|_| CollabError::NotFound(target.to_string()))
}

fn failed(error: CollabError) -> ToolError {
    ToolError::RespondToModel(error.to_string())
}

pub struct SpawnAgentHandler {
    pub agents: AgentControl,
}

#[async_trait]
impl ToolHandler for SpawnAgentHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::collab::spawn_agent_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: SpawnAgentArgs = inv.call.arguments()?;
        let (input, prompt) = input_of(args.message, args.items)?;
        let effort = match args.reasoning_effort.as_deref() {
            None => None,
            Some(text) => Some(serde_json::from_value(json!(text)).map_err(|_| {
                ToolError::RespondToModel(format!(
                    "unknown reasoning_effort `{text}`: use none, minimal, low, medium, high or xhigh, or omit it"
                ))
            })?),
        };
        let sender = self.agents.thread_id();
        let mut item = CallItem::new(&inv, CollabAgentTool::SpawnAgent, sender);
        item.prompt = Some(prompt.clone());
        item.start(&inv);
        inv.emit(EventMsg::CollabAgentSpawnBegin {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            prompt: prompt.clone(),
        });
        let request = SpawnRequest {
            input,
            fork_context: args.fork_context.unwrap_or(false),
            model: args.model,
            effort,
        };
        let model = request
            .model
            .clone()
            .or_else(|| inv.turn.config.agents.default_subagent_model.clone())
            .unwrap_or_else(|| inv.turn.model.clone());
        let outcome = self.agents.spawn(&inv.turn, request).await;
        let (new_id, nickname, status) = match &outcome {
            Ok((id, nickname, status)) => (Some(*id), Some(nickname.clone()), status.clone()),
            Err(_) => (None, None, AgentStatus::NotFound),
        };
        inv.emit(EventMsg::CollabAgentSpawnEnd {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            new_thread_id: new_id,
            new_agent_nickname: nickname,
            prompt,
            status,
        });
        match outcome {
            Ok((id, nickname, status)) => {
                item.receivers = vec![id.to_string()];
                item.nicknames = vec![CollabReceiver {
                    thread_id: id.to_string(),
                    agent_nickname: Some(nickname.clone()),
                }];
                item.model = Some(model);
                item.effort = effort.or(inv.turn.effort);
                item.states.insert(id.to_string(), status);
                item.finish(&inv, true);
                Ok(ToolOutput::success(
                    json!({"agent_id": id.to_string(), "nickname": nickname}).to_string(),
                ))
            }
            Err(error) => {
                item.finish(&inv, false);
                Err(failed(error))
            }
        }
    }
}

pub struct SendInputHandler {
    pub agents: AgentControl,
}

#[async_trait]
impl ToolHandler for SendInputHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::collab::send_input_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: SendInputArgs = inv.call.arguments()?;
        let (input, prompt) = input_of(args.message, args.items)?;
        let sender = self.agents.thread_id();
        let mut item = CallItem::new(&inv, CollabAgentTool::SendInput, sender);
        item.prompt = Some(prompt.clone());
        item.receivers = vec![args.target.clone()];
        item.start(&inv);
        inv.emit(EventMsg::CollabAgentInteractionBegin {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            receiver_thread_id: args.target.clone(),
            prompt: prompt.clone(),
        });
        let outcome = match parse_id(&args.target) {
            Ok(id) => {
                let before = self.agents.status(id);
                self.agents
                    .send(id, input, args.interrupt.unwrap_or(false))
                    .await
                    .map(|turn| (turn, before))
            }
            Err(error) => Err(error),
        };
        let status = match &outcome {
            Ok((_, before)) => before.clone(),
            Err(_) => AgentStatus::NotFound,
        };
        item.states.insert(args.target.clone(), status.clone());
        inv.emit(EventMsg::CollabAgentInteractionEnd {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            receiver_thread_id: args.target,
            prompt,
            status,
        });
        item.finish(&inv, outcome.is_ok());
        let (turn, _) = outcome.map_err(failed)?;
        Ok(ToolOutput::success(
            json!({ "submission_id": turn }).to_string(),
        ))
    }
}

pub struct WaitAgentHandler {
    pub agents: AgentControl,
}

#[async_trait]
impl ToolHandler for WaitAgentHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::collab::wait_agent_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: WaitAgentArgs = inv.call.arguments()?;
        let sender = self.agents.thread_id();
        let asked = args.timeout_ms.map(|ms| ms.max(0.0) as u64);
        let timeout = Duration::from_millis(inv.turn.config.agents.wait_timeout_ms(asked));
        let mut item = CallItem::new(&inv, CollabAgentTool::Wait, sender);
        item.receivers = args.targets.clone();
        item.start(&inv);
        inv.emit(EventMsg::CollabWaitingBegin {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            receiver_thread_ids: args.targets.clone(),
        });
        let outcome = self.agents.wait(&args.targets, timeout, &inv.cancel).await;
        let statuses = match &outcome {
            Ok(Some(found)) => found.statuses.clone(),
            Ok(None) | Err(_) => BTreeMap::new(),
        };
        inv.emit(EventMsg::CollabWaitingEnd {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            statuses: statuses.clone(),
        });
        // The finished item lists only the agents that finished, as Codex's does.
        item.receivers = statuses.keys().cloned().collect();
        item.states = statuses;
        item.finish(&inv, matches!(outcome, Ok(Some(_))));
        match outcome {
            Ok(Some(found)) => Ok(ToolOutput::success(
                json!({"status": found.statuses, "timed_out": found.timed_out}).to_string(),
            )),
            Ok(None) => Ok(ToolOutput::failure(
                "wait_agent was interrupted before any agent finished",
            )),
            Err(error) => Err(failed(error)),
        }
    }
}

pub struct CloseAgentHandler {
    pub agents: AgentControl,
}

#[async_trait]
impl ToolHandler for CloseAgentHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::collab::close_agent_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: CloseAgentArgs = inv.call.arguments()?;
        let sender = self.agents.thread_id();
        let mut item = CallItem::new(&inv, CollabAgentTool::CloseAgent, sender);
        item.receivers = vec![args.target.clone()];
        item.start(&inv);
        inv.emit(EventMsg::CollabCloseBegin {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            receiver_thread_id: args.target.clone(),
        });
        let outcome = match parse_id(&args.target) {
            Ok(id) => self.agents.close(id).await,
            Err(error) => Err(error),
        };
        let status = match &outcome {
            Ok(previous) => previous.clone(),
            Err(_) => AgentStatus::NotFound,
        };
        item.states.insert(args.target.clone(), status.clone());
        inv.emit(EventMsg::CollabCloseEnd {
            call_id: inv.call.call_id.clone(),
            sender_thread_id: sender,
            receiver_thread_id: args.target,
            status,
        });
        item.finish(&inv, outcome.is_ok());
        let previous = outcome.map_err(failed)?;
        Ok(ToolOutput::success(
            json!({ "previous_status": previous }).to_string(),
        ))
    }
}

pub struct ResumeAgentHandler {
    pub agents: AgentControl,
}

#[async_trait]
impl ToolHandler for ResumeAgentHandler {
    fn spec(&self) -> ToolSpec {
        osprey_tools::collab::resume_agent_spec()
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let args: ResumeAgentArgs = inv.call.arguments()?;
        let sender = self.agents.thread_id();
        let mut item = CallItem::new(&inv, CollabAgentTool::ResumeAgent, sender);
        item.receivers = vec![args.id.clone()];
        item.start(&inv);
        let outcome = match parse_id(&args.id) {
            Ok(id) => self.agents.resume(id).await,
            Err(error) => Err(error),
        };
        let status = match &outcome {
            Ok(status) => status.clone(),
            Err(_) => AgentStatus::NotFound,
        };
        item.states.insert(args.id.clone(), status);
        item.finish(&inv, outcome.is_ok());
        let status = outcome.map_err(failed)?;
        Ok(ToolOutput::success(json!({ "status": status }).to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn input_is_message_or_items_never_both_never_nothing() {
        let (input, prompt) = input_of(Some("go".into()), None).unwrap();
        assert_eq!(prompt, "go");
        assert_eq!(input, vec![UserInput::Text { text: "go".into() }]);
        let text = CollabInputItem {
            kind: Some("text".into()),
            text: Some("a".into()),
            ..Default::default()
        };
        assert_eq!(input_of(None, Some(vec![text.clone()])).unwrap().1, "a");
        let both = input_of(Some("go".into()), Some(vec![text])).unwrap_err();
        assert_eq!(
            both.to_string(),
            "Provide either message or items, but not both"
        );
        let none = input_of(Some("  ".into()), None).unwrap_err();
        assert_eq!(none.to_string(), "Empty message can't be sent to an agent");
    }
}
