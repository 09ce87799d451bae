//! Sub-agent tool calls: one header line saying what was done to which agents, the message
//! sent (dimmed, first lines), and after a wait or a close each agent's status and last
//! message. Agents are named by nickname when their thread said one (the item itself carries
//! none), else by the end of their thread id.

use osprey_app_server_protocol::{CollabAgentTool, CollabAgentToolCallStatus};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::cells::{bold, dim};
use super::wrap::prefixed;
use crate::state::cells::CollabCell;

/// Lines of the message shown before it is folded.
const PROMPT_LINES: usize = 3;

/// `…` and the last eight characters of a thread id.
pub(super) fn short_id(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    if chars.len() <= 8 {
        return id.to_owned();
    }
    let tail: String = chars[chars.len() - 8..].iter().collect();
    format!("…{tail}")
}

/// An agent's nickname (and role) when known, else the end of its id.
fn name(call: &CollabCell, id: &str) -> String {
    call.names.get(id).cloned().unwrap_or_else(|| short_id(id))
}

fn agents(call: &CollabCell) -> String {
    match call.receivers.as_slice() {
        [] => "a new agent".to_owned(),
        [one] => format!("agent {}", name(call, one)),
        many => format!(
            "{} agents ({})",
            many.len(),
            many.iter()
                .map(|id| name(call, id))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn header(call: &CollabCell) -> String {
    let done = call.status != CollabAgentToolCallStatus::InProgress;
    let (now, past) = match call.tool {
        CollabAgentTool::SpawnAgent => ("Spawning", "Spawned"),
        CollabAgentTool::SendInput | CollabAgentTool::SendMessage => ("Sending to", "Sent to"),
        CollabAgentTool::Wait => ("Waiting for", "Waited for"),
        CollabAgentTool::CloseAgent => ("Closing", "Closed"),
        CollabAgentTool::ResumeAgent => ("Resuming", "Resumed"),
        CollabAgentTool::FollowupTask => ("Giving a task to", "Gave a task to"),
        CollabAgentTool::InterruptAgent => ("Interrupting", "Interrupted"),
        CollabAgentTool::ListAgents => ("Listing", "Listed"),
    };
    let verb = if done { past } else { now };
    let who = if call.tool == CollabAgentTool::ListAgents {
        "agents".to_owned()
    } else {
        agents(call)
    };
    let outcome = match call.status {
        CollabAgentToolCallStatus::Failed => " (failed)",
        CollabAgentToolCallStatus::Interrupted => " (interrupted)",
        _ => "",
    };
    format!("{verb} {who}{outcome}")
}

pub fn collab_lines(call: &CollabCell, width: usize) -> Vec<Line<'static>> {
    let mark = match call.status {
        CollabAgentToolCallStatus::InProgress => Span::styled("• ", dim()),
        CollabAgentToolCallStatus::Completed => {
            Span::styled("• ", Style::default().fg(Color::Green))
        }
        CollabAgentToolCallStatus::Failed | CollabAgentToolCallStatus::Interrupted => {
            Span::styled("• ", Style::default().fg(Color::Red))
        }
    };
    let mut lines = prefixed(vec![Line::styled(header(call), bold())], width, mark, "  ");
    let mut body: Vec<Line<'static>> = Vec::new();
    if let Some(prompt) = &call.prompt {
        let all: Vec<&str> = prompt.lines().collect();
        for line in all.iter().take(PROMPT_LINES) {
            body.push(Line::styled((*line).to_owned(), dim()));
        }
        if all.len() > PROMPT_LINES {
            body.push(Line::styled(
                format!("… +{} lines", all.len() - PROMPT_LINES),
                dim(),
            ));
        }
    }
    if call.status != CollabAgentToolCallStatus::InProgress {
        for state in &call.states {
            let mut text = format!("{}: {}", name(call, &state.id), state.status);
            if let Some(message) = state.message.as_deref().and_then(|m| m.lines().next()) {
                text.push_str(" — ");
                text.push_str(message);
            }
            body.push(Line::from(text));
        }
    }
    lines.extend(prefixed(body, width, Span::styled("  └ ", dim()), "    "));
    lines
}
