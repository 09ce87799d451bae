//! Threads read back from their session files: the `Thread` object of a thread that is not
//! loaded, its turns and items (`thread/read`, `thread/resume`), and the listing
//! (`thread/list`) with Codex's cursor (`<created at>|<thread id>`).

use std::path::{Path, PathBuf};

use osprey_app_server_protocol as wire;
use osprey_protocol::{EventMsg, ThreadId};
use osprey_rollout::{GitInfo, RolloutContents, RolloutItem, SessionMeta, SessionSummary};
use serde_json::Value;

use crate::items::{ItemTimes, turn_error, wire_item};
use crate::loaded::ThreadInfo;

/// Where archived session files go (flat, file names kept), as in Codex.
pub fn archived_dir(home: &Path) -> PathBuf {
    home.join("archived_sessions")
}

/// Seconds since the epoch of a rollout timestamp (`2026-12-01T08:45:47.626Z`).
pub fn timestamp_secs(timestamp: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(timestamp)
        .map(|t| t.timestamp())
        .unwrap_or_default()
}

/// A session file's git facts as Codex's wire `GitInfo`: `{sha, branch, originUrl}`, each
/// null when unknown (the rollout names them `commit_hash`, `branch`, `repository_url`).
pub fn git_info_value(git: &GitInfo) -> Value {
    serde_json::json!({
        "sha": git.commit_hash,
        "branch": git.branch,
        "originUrl": git.repository_url,
    })
}

pub fn source_value(meta: &SessionMeta) -> Value {
    serde_json::to_value(&meta.source).unwrap_or(Value::Null)
}

/// The `Thread` facts of a session file.
pub fn info_from(contents: &RolloutContents, ephemeral: bool) -> ThreadInfo {
    let meta = &contents.meta;
    let last = contents.last_turn_context();
    ThreadInfo {
        id: meta.id,
        forked_from_id: meta.forked_from_id.map(|id| id.to_string()),
        preview: contents.first_user_message().unwrap_or_default(),
        ephemeral,
        model_provider: meta.model_provider.clone().unwrap_or_default(),
        model: last.map(|c| c.model.clone()).unwrap_or_default(),
        reasoning_effort: None,
        created_at: timestamp_secs(&meta.timestamp),
        path: Some(contents.path.clone()),
        cwd: meta.cwd.clone(),
        cli_version: meta.cli_version.clone(),
        originator: Some(meta.originator.clone()),
        source: source_value(meta),
        git_info: meta.git.as_ref().map(git_info_value),
        parent_thread_id: meta
            .extra
            .get("parent_thread_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        agent_nickname: meta
            .extra
            .get("agent_nickname")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

/// Whether a session file belongs to a sub-agent (its header says `thread_source:
/// "subagent"`); read from the first line only.
pub fn is_subagent_file(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<Value>(&first)
        .ok()
        .and_then(|line| {
            line.get("payload")?
                .get("thread_source")?
                .as_str()
                .map(|s| s == "subagent")
        })
        .unwrap_or(false)
}

/// The turns recorded in a session file, with their completed items.
pub fn turns_from(contents: &RolloutContents) -> Vec<wire::Turn> {
    let mut turns: Vec<wire::Turn> = Vec::new();
    let mut named = false;
    let mut turn_start = 0i64;
    // Plans have no item id of their own in the file; these are unique within the thread.
    let mut plans = 0usize;
    for line in &contents.lines {
        let at_ms = chrono::DateTime::parse_from_rfc3339(&line.timestamp)
            .map(|t| t.timestamp_millis())
            .unwrap_or_default();
        match &line.item {
            RolloutItem::TurnContext(ctx) => {
                if let (Some(turn), Some(id), false) = (turns.last_mut(), &ctx.turn_id, named) {
                    turn.id = id.0.clone();
                    turn.root_turn_id = Some(id.0.clone());
                    named = true;
                }
            }
            RolloutItem::EventMsg(EventMsg::TurnStarted) => {
                let id = format!("turn-{}", turns.len() + 1);
                named = false;
                turn_start = at_ms;
                turns.push(wire::Turn {
                    id: id.clone(),
                    root_turn_id: Some(id),
                    items: Vec::new(),
                    items_view: wire::TurnItemsView::Full,
                    status: wire::TurnStatus::InProgress,
                    error: None,
                    started_at: Some(at_ms / 1000),
                    completed_at: None,
                    duration_ms: None,
                });
            }
            RolloutItem::EventMsg(EventMsg::ItemCompleted { item }) => {
                if let Some(turn) = turns.last_mut() {
                    let times = ItemTimes {
                        started_at_ms: Some(at_ms),
                        completed_at_ms: Some(at_ms),
                    };
                    turn.items.extend(wire_item(item, times, None));
                }
            }
            RolloutItem::EventMsg(EventMsg::PlanUpdate { explanation, plan }) => {
                if let Some(turn) = turns.last_mut() {
                    plans += 1;
                    turn.items.push(crate::plan::plan_item(
                        format!("plan-update-{plans}"),
                        explanation.as_deref(),
                        plan,
                        at_ms,
                    ));
                }
            }
            RolloutItem::EventMsg(
                msg @ (EventMsg::TurnCompleted { .. }
                | EventMsg::TurnFailed { .. }
                | EventMsg::TurnAborted { .. }),
            ) => {
                if let Some(turn) = turns.last_mut() {
                    turn.status = match msg {
                        EventMsg::TurnCompleted { .. } => wire::TurnStatus::Completed,
                        EventMsg::TurnFailed { .. } => wire::TurnStatus::Failed,
                        _ => wire::TurnStatus::Interrupted,
                    };
                    if let EventMsg::TurnFailed { error, .. } = msg {
                        turn.error = Some(turn_error(error));
                    }
                    turn.completed_at = Some(at_ms / 1000);
                    turn.duration_ms = Some(at_ms - turn_start);
                }
            }
            _ => {}
        }
    }
    // A turn the file ends inside (the process stopped) did not finish.
    if let Some(turn) = turns.last_mut()
        && turn.status == wire::TurnStatus::InProgress
    {
        turn.status = wire::TurnStatus::Interrupted;
    }
    turns
}

/// Sorting and paging key: newest first by creation time, then by id.
fn key(summary: &SessionSummary) -> (String, String) {
    (summary.timestamp.clone(), summary.id.to_string())
}

/// Codex's cursor for the thread after which the next page starts.
pub fn cursor_of(summary: &SessionSummary) -> String {
    let created = chrono::DateTime::parse_from_rfc3339(&summary.timestamp)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        })
        .unwrap_or_else(|_| summary.timestamp.clone());
    format!("{created}|{}", summary.id)
}

/// The threads after `cursor` (exclusive), newest first.
pub fn page_after<'a>(
    sorted: &'a [SessionSummary],
    cursor: Option<&str>,
) -> Result<&'a [SessionSummary], String> {
    let Some(cursor) = cursor else {
        return Ok(sorted);
    };
    let (_, id) = cursor.rsplit_once('|').ok_or_else(|| {
        format!("invalid cursor `{cursor}`: pass the `nextCursor` of an earlier thread/list")
    })?;
    match sorted.iter().position(|s| s.id.to_string() == id) {
        Some(index) => Ok(&sorted[index + 1..]),
        None => Err(format!(
            "invalid cursor `{cursor}`: its thread is no longer listed; start again without a cursor"
        )),
    }
}

/// Sorts newest first.
pub fn sort_newest_first(sessions: &mut [SessionSummary]) {
    sessions.sort_by_key(|s| std::cmp::Reverse(key(s)));
}

/// Sorts by when the session file last changed, most recent first (`sortKey:
/// "updated_at"`); sessions of the same instant keep their creation order.
pub fn sort_recently_updated_first(sessions: &mut [SessionSummary]) {
    sort_newest_first(sessions);
    sessions.sort_by_cached_key(|s| {
        std::cmp::Reverse(std::fs::metadata(&s.path).and_then(|m| m.modified()).ok())
    });
}

/// The archived threads (session files under `archived_sessions/`).
pub fn list_archived(home: &Path) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(archived_dir(home)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| {
            let contents = osprey_rollout::read_rollout(&e.path()).ok()?;
            Some(SessionSummary {
                id: contents.meta.id,
                timestamp: contents.meta.timestamp.clone(),
                cwd: contents.meta.cwd.clone(),
                first_user_message: contents.first_user_message(),
                path: e.path(),
                model_provider: contents.meta.model_provider.clone(),
                forked_from_id: contents.meta.forked_from_id,
            })
        })
        .collect()
}

/// The archived session file of a thread, if there is one.
pub fn find_archived(home: &Path, id: &ThreadId) -> Option<PathBuf> {
    let suffix = format!("-{id}.jsonl");
    std::fs::read_dir(archived_dir(home))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&suffix))
        })
}

/// A summary as the wire's `Thread` (not loaded, no turns).
pub fn summary_thread(summary: &SessionSummary, cli_version: &str) -> wire::Thread {
    let info = ThreadInfo {
        id: summary.id,
        forked_from_id: summary.forked_from_id.map(|id| id.to_string()),
        preview: summary.first_user_message.clone().unwrap_or_default(),
        ephemeral: false,
        model_provider: summary.model_provider.clone().unwrap_or_default(),
        model: String::new(),
        reasoning_effort: None,
        created_at: timestamp_secs(&summary.timestamp),
        path: Some(summary.path.clone()),
        cwd: summary.cwd.clone(),
        cli_version: cli_version.to_owned(),
        originator: None,
        source: Value::Null,
        git_info: None,
        parent_thread_id: None,
        agent_nickname: None,
    };
    let mut thread = info.to_wire(wire::ThreadStatus::NotLoaded, Vec::new());
    thread.model = None;
    thread
}
