//! The `osprey exec --json` event stream as data: one [`ExecEvent`] per JSONL line, with the
//! item types ([`ExecItem`], [`ItemDetails`]) a client sees for commands, file changes, MCP
//! calls, agent messages, reasoning, the plan, errors and collaboration calls.
//!
//! The shapes and names are Codex's `exec --json` schema (Codex CLI 0.171), so clients written
//! for Codex — the TypeScript SDK among them — read Osprey's stream unchanged. Serialising an
//! event gives exactly the line `exec` prints: fields appear in declaration order, `null`
//! where Codex writes `null` (never skipped), and the `type` tag first.
//!
//! This crate is serde types and nothing else, so every front end can share them: `exec`
//! translates the core event stream into them in one place (its `json_output` module), and
//! the app server reuses the item types. It depends on no other Osprey crate; translation
//! from core events belongs to the front end doing it.
//!
//! ```
//! use osprey_exec_events::{ExecEvent, ExecItem, ItemDetails};
//!
//! let line = ExecEvent::ItemCompleted {
//!     item: ExecItem::new("item_0", ItemDetails::AgentMessage { text: "Done.".into() }),
//! }
//! .to_json_line();
//! assert_eq!(
//!     line,
//!     r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"Done."}}"#
//! );
//! ```

mod event;
mod item;

pub use event::{ErrorMessage, ExecEvent, Usage};
pub use item::{
    CollabAgentState, CollabAgentStatus, CollabTool, ExecItem, FileChangeKind, FileUpdateChange,
    ItemDetails, ItemStatus, McpToolCallResult, TodoItem,
};
