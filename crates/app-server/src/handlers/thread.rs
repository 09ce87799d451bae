//! `thread/*`: start, resume, fork, list, loaded/list, read, archive, unarchive,
//! unsubscribe.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use osprey_app_server_protocol as wire;
use osprey_app_server_protocol::{NoticeNotification, ServerNotification, ThreadStatus};
use osprey_config::Config;
use osprey_core::OspreyThread;
use osprey_protocol::ThreadId;
use osprey_rollout::ListOptions;

use super::thread_config::{self, BuiltConfig};
use super::{Answer, Reply, answer, loaded_thread, parse_thread_id};
use crate::connection::{Connection, to_value};
use crate::convert;
use crate::history;
use crate::loaded::{LoadedThread, ThreadInfo};
use crate::server::Server;

const DEFAULT_PAGE: usize = 25;

fn config_warnings(connection: &Connection, warnings: Vec<osprey_config::ConfigWarning>) {
    for warning in warnings {
        connection.notify(&ServerNotification::ConfigWarning(NoticeNotification {
            summary: warning.to_string(),
            details: None,
        }));
    }
}

fn info_for(
    server: &Server,
    thread: &OspreyThread,
    config: &Config,
    forked_from: Option<ThreadId>,
    ephemeral: bool,
) -> ThreadInfo {
    let id = thread.id();
    let path = if ephemeral {
        None
    } else {
        osprey_rollout::find_rollout_by_id(&config.osprey_home, &id)
            .ok()
            .flatten()
    };
    let contents = path
        .as_deref()
        .and_then(|p| osprey_rollout::read_rollout(p).ok());
    let created_at = contents
        .as_ref()
        .map(|c| history::timestamp_secs(&c.meta.timestamp))
        .unwrap_or_else(|| chrono::Utc::now().timestamp());
    ThreadInfo {
        id,
        forked_from_id: forked_from
            .or_else(|| contents.as_ref().and_then(|c| c.meta.forked_from_id))
            .map(|id| id.to_string()),
        preview: contents
            .as_ref()
            .and_then(|c| c.first_user_message())
            .unwrap_or_default(),
        ephemeral,
        model_provider: config.model_provider_id.clone(),
        model: config.model.clone(),
        reasoning_effort: config.model_reasoning_effort.map(|e| e.as_str().to_owned()),
        created_at,
        path,
        cwd: config.cwd.clone(),
        cli_version: server.options.version.clone(),
        originator: Some(server.options.originator.clone()),
        source: serde_json::to_value(&server.options.source).unwrap_or_default(),
        git_info: contents
            .as_ref()
            .and_then(|c| c.meta.git.as_ref())
            .map(history::git_info_value),
        parent_thread_id: None,
        agent_nickname: None,
    }
}

/// The `thread/start`-shaped response for a loaded thread.
fn thread_response(
    thread: &LoadedThread,
    config: &Config,
    turns: Vec<wire::Turn>,
) -> wire::ThreadStartResponse {
    wire::ThreadStartResponse {
        thread: thread.to_wire(turns),
        model: config.model.clone(),
        model_provider: config.model_provider_id.clone(),
        service_tier: None,
        cwd: convert::path_text(&config.cwd),
        runtime_workspace_roots: vec![convert::path_text(&config.cwd)],
        disabled_plugin_ids: Vec::new(),
        approval_policy: convert::wire_approval_policy(config.approval_policy()),
        approvals_reviewer: "user".to_owned(),
        sandbox: convert::wire_sandbox_policy(config.sandbox_policy()),
        reasoning_effort: config.model_reasoning_effort.map(|e| e.as_str().to_owned()),
    }
}

fn load(
    server: &Arc<Server>,
    connection: &Arc<Connection>,
    thread: Arc<OspreyThread>,
    info: ThreadInfo,
    config: &Config,
) -> Arc<LoadedThread> {
    let loaded = Arc::new(LoadedThread::new(thread, info, config.clone()));
    loaded.subscribe(connection);
    server.register(Arc::clone(&loaded));
    loaded
}

pub(crate) async fn start(
    server: &Arc<Server>,
    connection: &Arc<Connection>,
    params: wire::ThreadStartParams,
) -> Reply {
    let BuiltConfig {
        mut config,
        warnings,
    } = thread_config::build(server, &params.overrides, None)?;
    if let Some(environment) = params.environments.as_ref().and_then(|all| all.first()) {
        config.environment = Some(thread_config::environment_selection(environment)?);
    }
    let ephemeral = params.ephemeral.unwrap_or(false);
    // Ephemeral threads come from a manager that writes no session file.
    let manager = if ephemeral {
        &server.ephemeral_manager
    } else {
        &server.manager
    };
    let thread = manager
        .start_thread(config.clone())
        .await
        .map_err(|e| format!("the thread could not be started: {e}"))?;
    config_warnings(connection, warnings);
    let info = info_for(server, &thread, &config, None, ephemeral);
    let loaded = load(server, connection, thread, info, &config);
    let response = thread_response(&loaded, &config, Vec::new());
    let started = ServerNotification::ThreadStarted(wire::ThreadStartedNotification {
        thread: response.thread.clone(),
    });
    // The response goes first, then `thread/started`.
    Ok(Answer {
        result: to_value(&response),
        then: vec![started],
    })
}

/// The session file of a thread, or Codex's error.
fn rollout_of(server: &Server, id: &ThreadId) -> Result<PathBuf, String> {
    osprey_rollout::find_rollout_by_id(&server.home, id)
        .map_err(|e| format!("the sessions folder could not be read: {e}"))?
        .ok_or_else(|| format!("no rollout found for thread id {id}"))
}

fn turns_of(path: Option<&Path>) -> Vec<wire::Turn> {
    path.and_then(|p| osprey_rollout::read_rollout(p).ok())
        .map(|c| history::turns_from(&c))
        .unwrap_or_default()
}

pub(crate) async fn resume(
    server: &Arc<Server>,
    connection: &Arc<Connection>,
    params: wire::ThreadResumeParams,
) -> Reply {
    let id = parse_thread_id(&params.thread_id)?;
    let with_turns = !params.exclude_turns.unwrap_or(false);
    if let Some(loaded) = server.loaded(&id) {
        // Already running: subscribe and report its settings as they are (a resume does
        // not reset a running thread; `turn/start` overrides change it).
        loaded.subscribe(connection);
        let turns = if with_turns {
            turns_of(loaded.info.path.as_deref())
        } else {
            Vec::new()
        };
        return answer(&thread_response(&loaded, &loaded.config, turns));
    }
    let path = rollout_of(server, &id)?;
    let contents = osprey_rollout::read_rollout(&path)
        .map_err(|e| format!("the session file {} could not be read: {e}", path.display()))?;
    let overrides = with_recorded_settings(&params.overrides, &contents);
    let BuiltConfig { config, warnings } =
        thread_config::build(server, &overrides, Some(&contents.meta.cwd))?;
    let thread = server
        .manager
        .resume_thread(config.clone(), &path)
        .await
        .map_err(|e| format!("thread {id} could not be resumed: {e}"))?;
    config_warnings(connection, warnings);
    let mut info = history::info_from(&contents, false);
    info.model = config.model.clone();
    info.model_provider = config.model_provider_id.clone();
    info.cwd = config.cwd.clone();
    let loaded = load(server, connection, thread, info, &config);
    let turns = if with_turns {
        history::turns_from(&contents)
    } else {
        Vec::new()
    };
    answer(&thread_response(&loaded, &config, turns))
}

/// The overrides, with the approval policy, sandbox and model the thread last ran with
/// where the params leave them out (as `osprey exec resume` restores them).
fn with_recorded_settings(
    overrides: &wire::ThreadOverrides,
    contents: &osprey_rollout::RolloutContents,
) -> wire::ThreadOverrides {
    let mut overrides = overrides.clone();
    if let Some(last) = contents.last_turn_context() {
        if overrides.approval_policy.is_none() {
            overrides.approval_policy = Some(convert::wire_approval_policy(last.approval_policy));
        }
        if overrides.sandbox.is_none() {
            overrides.sandbox = Some(convert::wire_sandbox_mode(last.sandbox_policy.mode()));
        }
        if overrides.model.is_none() && overrides.model_provider.is_none() {
            overrides.model = Some(last.model.clone());
        }
    }
    overrides
}

/// `lastTurnId` as the number of turns to keep.
fn turns_to_keep(path: &Path, last_turn_id: Option<&str>) -> Result<Option<usize>, String> {
    let Some(last) = last_turn_id else {
        return Ok(None);
    };
    let contents = osprey_rollout::read_rollout(path)
        .map_err(|e| format!("the session file {} could not be read: {e}", path.display()))?;
    history::turns_from(&contents)
        .iter()
        .position(|t| t.id == last)
        .map(|index| Some(index + 1))
        .ok_or_else(|| format!("turn not found: {last} is not a turn of this thread"))
}

pub(crate) async fn fork(
    server: &Arc<Server>,
    connection: &Arc<Connection>,
    params: wire::ThreadForkParams,
) -> Reply {
    let id = parse_thread_id(&params.thread_id)?;
    let path = rollout_of(server, &id)?;
    let keep = turns_to_keep(&path, params.last_turn_id.as_deref())?;
    let source_cwd = osprey_rollout::read_rollout(&path).ok().map(|c| c.meta.cwd);
    let BuiltConfig { config, warnings } =
        thread_config::build(server, &params.overrides, source_cwd.as_deref())?;
    let thread = server
        .manager
        .fork_thread(config.clone(), &path, keep)
        .await
        .map_err(|e| format!("thread {id} could not be forked: {e}"))?;
    config_warnings(connection, warnings);
    let info = info_for(server, &thread, &config, Some(id), false);
    let loaded = load(server, connection, thread, info, &config);
    let turns = if params.exclude_turns.unwrap_or(false) {
        Vec::new()
    } else {
        turns_of(loaded.info.path.as_deref())
    };
    let response = thread_response(&loaded, &config, turns);
    let started = ServerNotification::ThreadStarted(wire::ThreadStartedNotification {
        thread: response.thread.clone(),
    });
    Ok(Answer {
        result: to_value(&response),
        then: vec![started],
    })
}

pub(crate) fn list(server: &Server, params: wire::ThreadListParams) -> Reply {
    let mut sessions = if params.archived.unwrap_or(false) {
        history::list_archived(&server.home)
    } else {
        osprey_rollout::list_sessions(&server.home, &ListOptions::default())
            .map_err(|e| format!("the sessions folder could not be read: {e}"))?
    };
    let cwds: Option<Vec<PathBuf>> = params.cwd.as_ref().map(|filter| match filter {
        wire::CwdFilter::One(one) => vec![PathBuf::from(one)],
        wire::CwdFilter::Many(many) => many.iter().map(PathBuf::from).collect(),
    });
    let search = params.search_term.as_deref().map(str::to_lowercase);
    // Sub-agent threads are listed only when a `subAgent…` source kind is asked for.
    let with_subagents = params
        .source_kinds
        .as_ref()
        .is_some_and(|kinds| kinds.iter().any(|k| k.starts_with("subAgent")));
    sessions.retain(|s| with_subagents || !history::is_subagent_file(&s.path));
    sessions.retain(|s| {
        cwds.as_ref().is_none_or(|c| c.contains(&s.cwd))
            && params
                .model_providers
                .as_ref()
                .is_none_or(|p| s.model_provider.as_ref().is_some_and(|m| p.contains(m)))
            && search.as_ref().is_none_or(|term| {
                s.first_user_message
                    .as_deref()
                    .is_some_and(|m| m.to_lowercase().contains(term))
            })
    });
    match params.sort_key.as_deref() {
        None | Some("created_at") => history::sort_newest_first(&mut sessions),
        Some("updated_at") => history::sort_recently_updated_first(&mut sessions),
        Some(other) => {
            return Err(format!(
                "Invalid request: unknown variant `{other}`, expected `created_at` or `updated_at`"
            ));
        }
    }
    if params.sort_direction.as_deref() == Some("asc") {
        sessions.reverse();
    }
    let page = history::page_after(&sessions, params.cursor.as_deref())?;
    let limit = params.limit.map_or(DEFAULT_PAGE, |l| l.max(1) as usize);
    let shown = &page[..page.len().min(limit)];
    let next_cursor = (page.len() > limit)
        .then(|| shown.last().map(history::cursor_of))
        .flatten();
    let data = shown
        .iter()
        .map(|s| match server.loaded(&s.id) {
            Some(loaded) => loaded.to_wire(Vec::new()),
            // The page's session files are read whole (model, originator, source and
            // repository come from them); a file that cannot be read shows what the listing
            // knows.
            None => match osprey_rollout::read_rollout(&s.path) {
                Ok(contents) => history::info_from(&contents, false)
                    .to_wire(wire::ThreadStatus::NotLoaded, Vec::new()),
                Err(_) => history::summary_thread(s, &server.options.version),
            },
        })
        .collect();
    answer(&wire::ThreadListResponse {
        data,
        next_cursor,
        backwards_cursor: None,
    })
}

pub(crate) fn loaded_list(server: &Server, params: wire::ThreadLoadedListParams) -> Reply {
    let mut ids: Vec<String> = server
        .loaded_ids()
        .iter()
        .map(ThreadId::to_string)
        .collect();
    ids.sort();
    let start = match &params.cursor {
        Some(cursor) => ids.iter().position(|id| id > cursor).unwrap_or(ids.len()),
        None => 0,
    };
    let limit = params.limit.map_or(usize::MAX, |l| l.max(1) as usize);
    let page: Vec<String> = ids[start..].iter().take(limit).cloned().collect();
    let next_cursor = (start + page.len() < ids.len())
        .then(|| page.last().cloned())
        .flatten();
    answer(&wire::ThreadLoadedListResponse {
        data: page,
        next_cursor,
    })
}

pub(crate) fn read(
    server: &Server,
    connection: &Connection,
    params: wire::ThreadReadParams,
) -> Reply {
    let id = parse_thread_id(&params.thread_id)?;
    let include_turns = params.include_turns.unwrap_or(false);
    if include_turns {
        connection.notify(&ServerNotification::DeprecationNotice(NoticeNotification {
            summary: "thread/read with includeTurns returns the whole history at once; long threads make large responses".to_owned(),
            details: None,
        }));
    }
    if let Some(loaded) = server.loaded(&id) {
        let turns = if include_turns {
            turns_of(loaded.info.path.as_deref())
        } else {
            Vec::new()
        };
        return answer(&wire::ThreadReadResponse {
            thread: loaded.to_wire(turns),
        });
    }
    // Codex's words for an id that is neither loaded nor recorded.
    let path = match rollout_of(server, &id) {
        Ok(path) => path,
        Err(_) => history::find_archived(&server.home, &id)
            .ok_or_else(|| format!("thread not loaded: {id}"))?,
    };
    let contents = osprey_rollout::read_rollout(&path)
        .map_err(|e| format!("the session file {} could not be read: {e}", path.display()))?;
    let turns = if include_turns {
        history::turns_from(&contents)
    } else {
        Vec::new()
    };
    answer(&wire::ThreadReadResponse {
        thread: history::info_from(&contents, false).to_wire(ThreadStatus::NotLoaded, turns),
    })
}

/// Archiving interrupts a running turn, unloads the thread and moves its session file to
/// `archived_sessions/`.
pub(crate) async fn archive(server: &Arc<Server>, params: wire::ThreadIdParams) -> Reply {
    let id = parse_thread_id(&params.thread_id)?;
    let path = rollout_of(server, &id)?;
    let subscribers = match server.loaded(&id) {
        Some(loaded) => {
            let subscribers = loaded.subscribers();
            server.shutdown_thread(&loaded).await;
            subscribers
        }
        None => Vec::new(),
    };
    let dir = history::archived_dir(&server.home);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("{} could not be created: {e}", dir.display()))?;
    let name = path
        .file_name()
        .ok_or_else(|| format!("{} has no file name", path.display()))?;
    std::fs::rename(&path, dir.join(name)).map_err(|e| {
        format!(
            "the session file {} could not be moved to {}: {e}",
            path.display(),
            dir.display()
        )
    })?;
    let note = ServerNotification::ThreadArchived(wire::ThreadIdNotification {
        thread_id: id.to_string(),
    });
    for connection in subscribers {
        connection.notify(&note);
    }
    answer(&wire::EmptyResponse {})
}

pub(crate) fn unarchive(
    server: &Server,
    connection: &Connection,
    params: wire::ThreadIdParams,
) -> Reply {
    let id = parse_thread_id(&params.thread_id)?;
    let archived = history::find_archived(&server.home, &id)
        .ok_or_else(|| format!("no archived thread with id {id}"))?;
    let contents = osprey_rollout::read_rollout(&archived).map_err(|e| {
        format!(
            "the session file {} could not be read: {e}",
            archived.display()
        )
    })?;
    let created = chrono::DateTime::parse_from_rfc3339(&contents.meta.timestamp)
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|_| chrono::Utc::now());
    let day_dir = osprey_rollout::rollout_path(&server.home, created, &id)
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "the sessions folder has no parent".to_owned())?;
    std::fs::create_dir_all(&day_dir)
        .map_err(|e| format!("{} could not be created: {e}", day_dir.display()))?;
    let name = archived
        .file_name()
        .ok_or_else(|| format!("{} has no file name", archived.display()))?;
    std::fs::rename(&archived, day_dir.join(name)).map_err(|e| {
        format!(
            "the session file could not be moved back to {}: {e}",
            day_dir.display()
        )
    })?;
    connection.notify(&ServerNotification::ThreadUnarchived(
        wire::ThreadIdNotification {
            thread_id: id.to_string(),
        },
    ));
    answer(&wire::EmptyResponse {})
}

pub(crate) async fn unsubscribe(
    server: &Arc<Server>,
    connection: &Connection,
    params: wire::ThreadIdParams,
) -> Reply {
    let status = match loaded_thread(server, &params.thread_id) {
        Err(_) => wire::ThreadUnsubscribeStatus::NotLoaded,
        Ok(loaded) => {
            if loaded.unsubscribe(connection.id) {
                server.unload_if_unwatched(&loaded).await;
                wire::ThreadUnsubscribeStatus::Unsubscribed
            } else {
                wire::ThreadUnsubscribeStatus::NotSubscribed
            }
        }
    };
    answer(&wire::ThreadUnsubscribeResponse { status })
}
