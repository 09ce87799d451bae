//! The vocabulary every Osprey component speaks.
//!
//! This crate is pure data: serde types and nothing that does I/O. Front ends (exec, TUI,
//! app server, MCP server) and the core agree on it, and so do the model client and the
//! rollout writer. It is organised around three nouns:
//!
//! * a **thread** is one conversation with its history ([`ThreadId`]);
//! * a **turn** is one user request and everything the agent does for it ([`TurnId`]);
//! * an **item** is one visible unit inside a turn: an agent message, a reasoning summary, a
//!   command execution, a file change, an MCP call, a plan, an error ([`ThreadItem`]).
//!
//! Front ends submit [`Op`]s; the agent emits [`Event`]s, each tagged with its thread and turn.
//! Items are started, updated and completed, so every front end can render progress the same
//! way.
//!
//! The model's own view of the conversation is a list of [`ResponseItem`]s, shaped exactly like
//! the OpenAI Responses API items so they can be sent back verbatim (reasoning items keep their
//! `encrypted_content` untouched; item types we do not know are kept as raw JSON).
//!
//! Policies the user picks ([`AskForApproval`], [`SandboxPolicy`]) and the decisions a user can
//! give ([`ReviewDecision`]) live here too, as does the one error enum that crosses the wire
//! ([`ErrorKind`] inside [`WireError`]).

mod collab;
mod error;
mod events;
mod ids;
mod items;
mod ops;
mod policy;
mod usage;

pub use collab::{AgentStatus, CollabAgentTool, CollabReceiver};
pub use error::{ErrorKind, WireError};
pub use events::{
    AbortReason, ApprovalRequest, ApprovalRequestKind, CommandSource, Event, EventMsg,
    FileChangeKind, FileChangeSummary, ItemStatus, McpCallResult, PlanStep, PlanStepStatus,
    ThreadItem, TodoEntry,
};
pub use ids::{CallId, ThreadId, TurnId};
pub use items::{
    ContentItem, FunctionCallOutputContent, FunctionCallOutputPayload, LocalShellAction,
    ReasoningContent, ReasoningSummary, ResponseItem,
};
pub use ops::{Op, UserInput};
pub use policy::{AskForApproval, ReasoningEffort, ReviewDecision, SandboxMode, SandboxPolicy};
pub use usage::TokenUsage;
