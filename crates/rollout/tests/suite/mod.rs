//! Shared helpers for the rollout integration tests.

mod codex_files;
mod git;
mod history;
mod listing;
mod locking;
mod recording;

use chrono::{DateTime, TimeZone, Utc};
use osprey_protocol::{AskForApproval, ResponseItem, SandboxPolicy, ThreadId, TurnId};
use osprey_rollout::{
    RolloutItem, RolloutLine, SessionMeta, SessionSource, TurnContextItem, format_timestamp,
    rollout_path,
};
use std::path::{Path, PathBuf};

pub fn meta(cwd: &str) -> SessionMeta {
    let mut meta = SessionMeta::new(
        ThreadId::new(),
        PathBuf::from(cwd),
        "osprey_test",
        "0.1.0",
        SessionSource::Exec,
    );
    meta.model_provider = Some("openai".to_string());
    meta
}

pub fn turn_context(turn: &str) -> RolloutItem {
    RolloutItem::TurnContext(TurnContextItem {
        turn_id: Some(TurnId(turn.to_string())),
        cwd: PathBuf::from("/work"),
        approval_policy: AskForApproval::OnRequest,
        sandbox_policy: SandboxPolicy::ReadOnly,
        model: "gpt-test".to_string(),
        effort: None,
        extra: Default::default(),
    })
}

pub fn user(text: &str) -> RolloutItem {
    RolloutItem::ResponseItem(ResponseItem::user_text(text))
}

pub fn assistant(text: &str) -> RolloutItem {
    RolloutItem::ResponseItem(ResponseItem::assistant_text(text))
}

pub fn at(day: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 6, day, hour, 0, 0).unwrap()
}

/// Writes a complete rollout file as if created at `created`, without a recorder.
pub fn write_rollout(
    home: &Path,
    created: DateTime<Utc>,
    mut meta: SessionMeta,
    items: Vec<RolloutItem>,
) -> PathBuf {
    meta.timestamp = format_timestamp(created);
    let path = rollout_path(home, created, &meta.id);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut out = Vec::new();
    let stamp = format_timestamp(created);
    RolloutLine::new(stamp.clone(), RolloutItem::SessionMeta(meta))
        .write_to(&mut out)
        .unwrap();
    for item in items {
        RolloutLine::new(stamp.clone(), item)
            .write_to(&mut out)
            .unwrap();
    }
    std::fs::write(&path, out).unwrap();
    path
}
