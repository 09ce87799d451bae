//! `osprey` with no subcommand: the interactive terminal UI.
//!
//! # Shape
//!
//! The TUI is a client of the app-server protocol, like an editor: [`app_client`] runs an
//! in-process `osprey_app_server::Server` over a pipe and speaks JSON-RPC to it with the
//! typed structs of `osprey-app-server-protocol`. It never calls the agent's core, so
//! everything it can do, an editor can do too.
//!
//! State and drawing are apart:
//!
//! * [`state`] — transcript cells, the composer, pending approvals and the status facts,
//!   changed only by two pure reducers: `apply(event)` for what the server sends and
//!   `on_key(key)` for what the person types, which return [`state::Action`]s.
//! * [`render`] — pure functions from state to wrapped ratatui lines: markdown (tables laid
//!   out), each cell kind, the composer, the approval overlay, the status line.
//! * [`terminal`] and [`app`] — the inline viewport (finished cells go into the terminal's
//!   real scrollback), the event loop, and restoring the terminal however the program ends.
//!
//! What is built and what is not is listed in `docs/tui.md`.

pub mod app;
pub mod app_client;
pub mod background;
pub mod cli;
pub mod clipboard;
mod editor;
pub mod frame_log;
pub mod git;
pub mod history;
pub mod image_input;
pub mod keys;
pub mod render;
pub mod settings;
pub mod state;
pub mod terminal;
pub mod trust;

pub use app::run_main;
pub use cli::{ResumeTarget, TuiCli};
