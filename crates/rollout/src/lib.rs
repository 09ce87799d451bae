//! Session files: how a thread is written to disk, read back, resumed, forked and listed.
//!
//! Every thread Osprey runs (unless `--ephemeral`) is recorded in one append-only JSONL file,
//! `$OSPREY_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<thread id>.jsonl`, in the
//! same format as Codex's rollout files. Each line is
//! `{"timestamp":"…Z","type":"<kind>","payload":{…}}`, one [`RolloutLine`] holding one
//! [`RolloutItem`]:
//!
//! * `session_meta` — the header, always first: [`SessionMeta`] (id, cwd, originator,
//!   version, source, provider, base instructions, [`GitInfo`], `forked_from_id`);
//! * `response_item` — every item the model saw, exactly as sent or received, so the history
//!   can be rebuilt byte for byte;
//! * `event_msg` — the events a front end needs to redraw the thread; which ones is decided
//!   in one exhaustive match, [`should_persist_event`];
//! * `turn_context` — what a turn ran with ([`TurnContextItem`]); it also marks where each
//!   turn starts;
//! * `compacted` — history was compacted ([`CompactedItem`]).
//!
//! `docs/rollout.md` describes the format for people reading the files.
//!
//! # Using it from the core
//!
//! * New thread: fill a [`SessionMeta`] (set `git` with [`git_info`]), then
//!   [`RolloutRecorder::create`]. For `--ephemeral`, create no recorder at all.
//! * While running: write a `turn_context` record first in every turn (before its user
//!   message), and pass every response item and event (`.into()` makes a [`RolloutItem`])
//!   to [`RolloutRecorder::record`]; it returns at once and drops what the policy does not
//!   keep. Await
//!   [`RolloutRecorder::flush`] after each completed item or turn (the data then survives a
//!   crash of this process) and [`RolloutRecorder::sync`] where power-loss safety is worth a
//!   few milliseconds. End with [`RolloutRecorder::shutdown`].
//! * Resume: find the file ([`find_rollout_by_id`], [`find_latest_rollout`]), then
//!   [`RolloutRecorder::resume`], which locks it, returns its [`RolloutContents`] and appends
//!   to the same file under the same thread id. Rebuild the model's history with
//!   [`RolloutContents::reconstruct_history`] (which honours compaction), the settings with
//!   [`RolloutContents::last_turn_context`], the screen with [`RolloutContents::events`], and
//!   show [`RolloutContents::warnings`] (for example a last line cut short by a crash).
//!   Records this version does not understand (Codex's own events, newer record types) are
//!   skipped and only counted in [`RolloutContents::unrecognized_records`], so files written
//!   by Codex resume too.
//! * Fork: [`fork_rollout`] writes a new file with a new id holding the records before a given
//!   turn; resume that file.
//! * List: [`list_sessions`] (newest first, optionally for one working directory), backed by
//!   a rebuildable cache, `sessions/index.jsonl`.
//!
//! Errors are [`RolloutError`]s that name the file involved; [`RolloutError::to_wire`] turns
//! one into the protocol's error for front ends. Two recorders on one file are refused with
//! [`RolloutError::Locked`]: a `<file>.lock` beside the rollout carries an OS advisory lock
//! for the recorder's life.
//!
//! Reading, finding, listing and forking are plain blocking functions over small reads; call
//! them from `spawn_blocking` if a runtime must not stall. Recording needs a Tokio runtime,
//! because a task owns the file.

mod error;
mod fork;
mod format;
mod git;
mod list;
mod paths;
mod policy;
mod reader;
mod recorder;

pub use error::{Result, RolloutError};
pub use fork::fork_rollout;
pub use format::{
    BaseInstructions, CompactedItem, GitInfo, ParseLineError, RolloutItem, RolloutLine,
    SessionMeta, SessionSource, TurnContextItem, format_timestamp, now_timestamp,
};
pub use git::git_info;
pub use list::{INDEX_FILE, ListOptions, SessionSummary, find_latest_rollout, list_sessions};
pub use paths::{SESSIONS_DIR, find_rollout_by_id, rollout_path, sessions_dir};
pub use policy::{should_persist_event, should_persist_item};
pub use reader::{RolloutContents, read_rollout, reconstruct};
pub use recorder::RolloutRecorder;
