//! The app loop: reads keys and server events, feeds them to the state's reducers, carries
//! out the actions they return through the [`AppClient`], and draws — only when something
//! changed (plus once a second while a turn runs, for its timer). An idle screen is not
//! redrawn at all.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossterm::event::Event;
use osprey_app_server::ServerOptions;
use osprey_app_server_protocol::{
    ClientRequest, CommandExecutionRequestApprovalResponse, CwdFilter,
    FileChangeRequestApprovalResponse, ListMcpServerStatusParams, ListMcpServerStatusResponse,
    McpServerStatusDetail, ModelListParams, ModelListResponse, ServerResponse, ThreadForkParams,
    ThreadIdParams, ThreadListParams, ThreadListResponse, ThreadOverrides, ThreadResumeParams,
    ThreadShellCommandParams, ThreadStartParams, ThreadStartResponse, TurnInterruptParams,
    TurnStartParams, UserInput,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::app_client::{AppClient, ServerEvent};
use crate::cli::{ResumeTarget, TuiCli};
use crate::frame_log::{Cause, FrameLog};
use crate::git;
use crate::render::popup::pager_view;
use crate::render::{cells::cell_lines, live_lines};
use crate::state::clipboard::ClipboardPaste;
use crate::state::{Action, Answer, AppEvent, AppState, SessionRow, ThreadSettings};
use crate::terminal::{self, Tui};

/// How long the exit waits for the session to be saved.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// Runs the interactive UI until the person quits. Returns the process exit code.
pub async fn run_main(cli: TuiCli, server: ServerOptions) -> i32 {
    let mut stderr = std::io::stderr();
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        let _ = writeln!(
            stderr,
            "Error: the interactive UI needs a terminal on stdin and stdout; for scripts and pipes use `osprey exec \"task\"`"
        );
        return 1;
    }
    let cwd = match &cli.cd {
        Some(dir) => server.process_cwd.join(dir),
        None => server.process_cwd.clone(),
    };
    if !cwd.is_dir() {
        let _ = writeln!(
            stderr,
            "Error: -C {}: no such directory; give an existing folder to work in",
            cwd.display()
        );
        return 1;
    }
    let version = server.version.clone();
    let settings = crate::settings::load(&server.env);
    let theme = crate::render::theme::Theme::decided(
        settings.as_ref().map(|s| s.theme).unwrap_or_default(),
        &server.env,
    );
    // Colours matter only when they are written; some terminals print what they ignore.
    let ask_terminal = server.env.get("NO_COLOR").is_none_or(|v| v.is_empty())
        && crate::background::worth_asking(server.env.get("TERM").map(String::as_str));
    let trust = crate::trust::question(&server.env, &cwd);
    let history_path = crate::history::path(&server.env);
    let test_panic = test_panic_requested(&server.env);
    let (server_tx, server_rx) = mpsc::unbounded_channel();
    let connected = match &cli.remote {
        Some(url) => match remote_token(&cli, &server.env) {
            Ok(token) => AppClient::connect_remote(url, token.as_deref(), server_tx)
                .await
                .map(|client| (client, None)),
            Err(e) => Err(e),
        },
        None => AppClient::start_in_process(server, server_tx)
            .map(|(client, handle)| (client, Some(handle))),
    };
    let (client, handle) = match connected {
        Ok(connected) => connected,
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            return 1;
        }
    };
    // A remote server loads its own configuration: the trust question is its business.
    let trust = trust.filter(|_| cli.remote.is_none());
    if let Err(e) = terminal::enter() {
        terminal::restore();
        let _ = writeln!(stderr, "Error: could not set up the terminal: {e}");
        return 1;
    }
    terminal::install_panic_hook();
    // `theme = "auto"` and nothing in the environment: the terminal is asked, before its
    // input reader starts (the keys read meanwhile are handed on).
    let probe = match theme {
        None if ask_terminal => crate::background::probe(),
        _ => crate::background::Probe::default(),
    };
    let theme = theme
        .or(probe
            .background
            .map(crate::render::theme::Theme::for_background))
        .unwrap_or_default();
    let mut state = AppState::new();
    let mut history_file = None;
    match settings {
        Ok(settings) => {
            state.alt_screen = cli.alt_screen || settings.alternate_screen;
            state.share_shell_output = settings.share_shell_output;
            state.hide_reasoning = settings.hide_agent_reasoning;
            if !settings.no_history {
                history_file = history_path;
            }
        }
        Err(message) => {
            state.alt_screen = cli.alt_screen;
            state.history.push(crate::state::Cell::Warning {
                message: format!("{message}; the [tui] settings are ignored"),
            });
        }
    }
    if let Some(path) = &history_file {
        state.composer.seed_history(crate::history::load(path));
    }
    let startup = Startup {
        trust,
        history_file,
        test_panic,
        theme,
        probe,
    };
    let result = event_loop(state, startup, &client, server_rx, &cli, &cwd, &version).await;
    terminal::restore();
    if let Some(handle) = handle {
        let _ = tokio::time::timeout(SHUTDOWN_WAIT, handle.shutdown_all()).await;
    }
    let mut stdout = std::io::stdout();
    match result {
        Ok(state) => {
            if let Some(usage) = state.status.usage.filter(|u| u.total_tokens > 0) {
                let _ = writeln!(
                    stdout,
                    "Token usage: total={} input={} output={}",
                    usage.total_tokens, usage.input_tokens, usage.output_tokens
                );
            }
            if let Some(id) = &state.thread_id {
                // A remote server holds the session: resuming goes through it again.
                let remote = cli
                    .remote
                    .as_ref()
                    .map(|url| format!(" --remote {url}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    stdout,
                    "To continue this session, run: osprey resume {id}{remote}"
                );
            }
            0
        }
        Err(e) => {
            let _ = writeln!(stderr, "Error: the terminal failed: {e}");
            1
        }
    }
}

/// The token `--remote-auth-token-env` names, read from the environment.
fn remote_token(
    cli: &TuiCli,
    env: &std::collections::HashMap<String, String>,
) -> Result<Option<String>, crate::app_client::ClientError> {
    let Some(var) = &cli.remote_auth_token_env else {
        return Ok(None);
    };
    match env.get(var).map(|t| t.trim()) {
        Some(token) if !token.is_empty() => Ok(Some(token.to_owned())),
        _ => Err(crate::app_client::ClientError::Connect(format!(
            "--remote-auth-token-env {var}: the variable is not set or empty; export it with \
             the contents of the server's --ws-token-file"
        ))),
    }
}

/// What the loop starts with besides the state: the trust question to ask first, and
/// where sent messages are saved.
struct Startup {
    trust: Option<crate::trust::TrustQuestion>,
    history_file: Option<std::path::PathBuf>,
    /// F12 panics (debug builds with `OSPREY_TUI_TEST_PANIC=1` only).
    test_panic: bool,
    /// The background the colours are drawn for.
    theme: crate::render::theme::Theme,
    /// The terminal's answer to the background question: the keys read meanwhile, and
    /// whether a late reply is to be filtered out of the keys.
    probe: crate::background::Probe,
}

/// Debug builds only: `OSPREY_TUI_TEST_PANIC=1` makes F12 panic, so the end-to-end tests can
/// check that a panic gives the terminal back. A release build never panics on a key.
#[cfg(debug_assertions)]
fn test_panic_requested(env: &std::collections::HashMap<String, String>) -> bool {
    env.get("OSPREY_TUI_TEST_PANIC").is_some_and(|v| v == "1")
}

#[cfg(not(debug_assertions))]
fn test_panic_requested(_env: &std::collections::HashMap<String, String>) -> bool {
    false
}

async fn event_loop(
    mut state: AppState,
    startup: Startup,
    client: &AppClient,
    mut server_rx: mpsc::UnboundedReceiver<ServerEvent>,
    cli: &TuiCli,
    cwd: &std::path::Path,
    version: &str,
) -> std::io::Result<AppState> {
    let Startup {
        trust,
        history_file,
        test_panic,
        theme,
        probe,
    } = startup;
    // The F12 panic test exists only in debug builds.
    #[cfg(not(debug_assertions))]
    let _ = test_panic;
    let mut tui = Tui::new(3)?;
    tui.theme = theme;
    let (app_tx, mut app_rx) = mpsc::unbounded_channel::<AppEvent>();
    let ctx = Ctx {
        client: client.clone(),
        tx: app_tx.clone(),
        overrides: cli.overrides(cwd),
        cwd: cwd.display().to_string(),
        images: std::sync::Arc::default(),
        inline_images: cli.remote.is_some(),
    };
    // A project config not yet trusted: the session starts once the person answered.
    match &trust {
        Some(question) => state.trust = Some((question.root.display().to_string(), 0)),
        None => spawn_start(&ctx, cli, version.to_owned()),
    }
    if let Some(prompt) = cli.prompt.clone() {
        let actions = state.submit_text(prompt, Instant::now());
        perform(&ctx, actions);
    }
    let mut keys = crate::keys::Keys::new(&probe.other, probe.late_reply);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    #[cfg(unix)]
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut dirty = true;
    let (mut frames, problem) = FrameLog::from_env();
    if let Some(message) = problem {
        state.history.push(crate::state::Cell::Warning { message });
    }
    loop {
        if dirty {
            let started = Instant::now();
            frame(&mut tui, &mut state)?;
            frames.framed(started);
            dirty = false;
        }
        if state.should_quit {
            break;
        }
        let now = Instant::now();
        let working = state.turn.is_some();
        #[cfg(unix)]
        let term = sigterm.recv();
        #[cfg(not(unix))]
        let term = std::future::pending::<Option<()>>();
        let actions = tokio::select! {
            event = keys.next() => match event {
                Some(Ok(Event::Key(key))) => {
                    #[cfg(debug_assertions)]
                    if test_panic && key.code == crossterm::event::KeyCode::F(12) {
                        panic!("F12 pressed with OSPREY_TUI_TEST_PANIC=1 (a test of the panic hook)");
                    }
                    dirty = true;
                    frames.input(Cause::Key, Instant::now());
                    state.on_key(key, now)
                }
                Some(Ok(Event::Paste(text))) => {
                    dirty = true;
                    frames.input(Cause::Key, Instant::now());
                    match image_path(&text, cwd) {
                        Some(path) => state.attach_image(&path),
                        None => state.on_paste(&text),
                    }
                    Vec::new()
                }
                Some(Ok(Event::Resize(_, _))) => {
                    tui.resized.store(true, Ordering::SeqCst);
                    dirty = true;
                    frames.input(Cause::Key, Instant::now());
                    Vec::new()
                }
                Some(Ok(_)) => Vec::new(),
                Some(Err(e)) => return Err(e),
                None => break,
            },
            Some(event) = server_rx.recv() => {
                dirty = true;
                frames.input(Cause::Server, Instant::now());
                let mut actions = state.apply(AppEvent::Server(event), now);
                // Take whatever else already arrived before drawing: one frame per burst.
                while let Ok(event) = server_rx.try_recv() {
                    actions.extend(state.apply(AppEvent::Server(event), now));
                }
                actions
            },
            Some(event) = app_rx.recv() => {
                dirty = true;
                frames.input(Cause::App, Instant::now());
                state.apply(event, now)
            },
            _ = tick.tick(), if working => {
                dirty = true;
                frames.input(Cause::Tick, Instant::now());
                Vec::new()
            },
            _ = term => { state.should_quit = true; Vec::new() },
        };
        let (edits, actions): (Vec<_>, Vec<_>) = actions
            .into_iter()
            .partition(|a| matches!(a, Action::EditDraft { .. }));
        for edit in edits {
            if let Action::EditDraft { text } = edit {
                // The editor reads the keys now: stop the reader, start a new one after.
                keys.pause();
                let result = crate::editor::edit(&mut tui, &text, cwd).await;
                keys.resume();
                state.finish_edit(result);
                dirty = true;
            }
        }
        let (answers, actions): (Vec<_>, Vec<_>) = actions
            .into_iter()
            .partition(|a| matches!(a, Action::Trust { .. }));
        for answer in answers {
            if let (Action::Trust { trusted }, Some(question)) = (answer, &trust) {
                if let Err(message) = crate::trust::record(question, trusted) {
                    state.history.push(crate::state::Cell::Warning { message });
                }
                spawn_start(&ctx, cli, version.to_owned());
            }
        }
        if let Some(path) = &history_file {
            for action in &actions {
                if let Action::StartTurn {
                    thread_id, text, ..
                } = action
                    && let Err(e) = crate::history::append(path, thread_id, unix_now(), text)
                {
                    state.history.push(crate::state::Cell::Warning {
                        message: format!("could not save the message in {}: {e}", path.display()),
                    });
                    dirty = true;
                }
            }
        }
        perform(&ctx, actions);
    }
    // Clipboard images were read into the model's history when their turns started.
    ctx.images.close();
    tui.leave_fullscreen()?;
    tui.clear_live()?;
    Ok(state)
}

/// Writes finished cells to the scrollback and draws the live area at the current size.
fn frame(tui: &mut Tui, state: &mut AppState) -> std::io::Result<()> {
    let size = tui.size()?;
    let width = usize::from(size.width.max(1));
    state.screen_rows = size.height;
    // A pager is drawn on the alternate screen; the scrollback waits until it closes.
    if let Some(pager) = &state.pager {
        let (lines, scroll) = pager_view(pager, &state.history, width, usize::from(size.height));
        if let Some(pager) = state.pager.as_mut() {
            pager.scroll = scroll;
        }
        return tui.draw_fullscreen(&lines, None);
    }
    if state.alt_screen {
        return alt_frame(tui, state, width, usize::from(size.height));
    }
    tui.leave_fullscreen()?;
    let finished: Vec<_> = state
        .take_unflushed()
        .iter()
        .flat_map(|cell| cell_lines(cell, width))
        .collect();
    tui.insert_history(finished)?;
    let live = live_lines(
        state,
        state.working_for(Instant::now()),
        width,
        usize::from(size.height),
    );
    tui.set_height(u16::try_from(live.lines.len()).unwrap_or(u16::MAX))?;
    tui.draw(&live.lines, live.cursor)
}

/// Which thread to open: a new one, a recorded one (resumed or forked), or the newest of
/// this directory.
#[derive(Debug, Clone)]
enum Open {
    New,
    Resume(ResumeTarget),
    Fork(ResumeTarget),
}

/// What the loop needs to open threads later (`/new`, `/resume`, `/fork`).
#[derive(Clone)]
struct Ctx {
    client: AppClient,
    tx: mpsc::UnboundedSender<AppEvent>,
    overrides: ThreadOverrides,
    cwd: String,
    /// Where Ctrl+V saves clipboard images; removed when the loop ends.
    images: std::sync::Arc<crate::clipboard::ImageDir>,
    /// Send images inline: the server (`--remote`) cannot read this machine's files.
    inline_images: bool,
}

/// Full-screen mode: the newest transcript lines fill the screen above the live area.
fn alt_frame(
    tui: &mut Tui,
    state: &mut AppState,
    width: usize,
    height: usize,
) -> std::io::Result<()> {
    // Nothing goes to the scrollback; the transcript is drawn here and in the Ctrl+T pager.
    let _ = state.take_unflushed();
    let live = live_lines(state, state.working_for(Instant::now()), width, height);
    let room = height.saturating_sub(live.lines.len());
    let mut tail: Vec<ratatui::text::Line<'static>> = Vec::new();
    // After a switch of the watched thread (`/agent`), its header tops its transcript.
    let header = state.thread_header();
    for cell in header.iter().chain(state.history.iter()).rev() {
        if tail.len() >= room {
            break;
        }
        let mut lines = cell_lines(cell, width);
        lines.append(&mut tail);
        tail = lines;
    }
    if tail.len() > room {
        tail.drain(..tail.len() - room);
    }
    let top = u16::try_from(tail.len()).unwrap_or(u16::MAX);
    tail.extend(live.lines);
    tui.draw_fullscreen(&tail, live.cursor.map(|(x, y)| (x, y + top)))
}

fn spawn_start(ctx: &Ctx, cli: &TuiCli, version: String) {
    let ctx = ctx.clone();
    let open = match cli.resume.clone() {
        Some(ResumeTarget::Picker) => None,
        Some(target) if cli.fork => Some(Open::Fork(target)),
        Some(target) => Some(Open::Resume(target)),
        None => Some(Open::New),
    };
    let fork = cli.fork;
    tokio::spawn(async move {
        if let Err(e) = ctx.client.initialize(&version).await {
            let _ = ctx.tx.send(AppEvent::RequestFailed {
                message: format!("could not start a session: {e}; check config.toml and try again"),
            });
            return;
        }
        match open {
            Some(open) => open_thread(&ctx, open, true).await,
            // `osprey resume` / `osprey fork` without an id: the person picks.
            None => {
                let _ = ctx.tx.send(AppEvent::PickSession { fork });
            }
        }
    });
}

/// Opens a thread and reports it as `ThreadReady` (its turns only when `replay`).
async fn open_thread(ctx: &Ctx, open: Open, replay: bool) {
    let started = async {
        let overrides = ctx.overrides.clone();
        let (target, fork) = match open {
            Open::New => {
                return ctx
                    .client
                    .request::<ThreadStartResponse>(ClientRequest::ThreadStart(ThreadStartParams {
                        overrides: ThreadOverrides {
                            cwd: overrides.cwd.clone().or_else(|| Some(ctx.cwd.clone())),
                            ..overrides
                        },
                        ..ThreadStartParams::default()
                    }))
                    .await
                    .map_err(|e| e.to_string());
            }
            Open::Fork(target) => (target, true),
            Open::Resume(target) => (target, false),
        };
        let thread_id = match target {
            ResumeTarget::Id(id) => id,
            ResumeTarget::Last | ResumeTarget::Picker => {
                let list: ThreadListResponse = ctx
                    .client
                    .request(ClientRequest::ThreadList(ThreadListParams {
                        limit: Some(1),
                        cwd: Some(CwdFilter::One(ctx.cwd.clone())),
                        ..ThreadListParams::default()
                    }))
                    .await
                    .map_err(|e| e.to_string())?;
                match list.data.into_iter().next() {
                    Some(thread) => thread.id,
                    None => {
                        return Err(format!(
                            "no recorded session in {}; `osprey sessions list` shows them all",
                            ctx.cwd
                        ));
                    }
                }
            }
        };
        let request = if fork {
            ClientRequest::ThreadFork(ThreadForkParams {
                thread_id,
                last_turn_id: None,
                overrides,
                ephemeral: None,
                exclude_turns: None,
            })
        } else {
            ClientRequest::ThreadResume(ThreadResumeParams {
                thread_id,
                overrides,
                exclude_turns: None,
            })
        };
        ctx.client
            .request::<ThreadStartResponse>(request)
            .await
            .map_err(|e| e.to_string())
    };
    let event = match started.await {
        Ok(r) => AppEvent::ThreadReady {
            thread_id: r.thread.id,
            model: r.model,
            cwd: r.cwd,
            turns: if replay { r.thread.turns } else { Vec::new() },
            settings: ThreadSettings {
                provider: r.model_provider,
                approval: Some(r.approval_policy),
                sandbox: Some(r.sandbox),
                effort: r.reasoning_effort,
            },
        },
        Err(e) => AppEvent::RequestFailed {
            message: format!("could not open the session: {e}; check config.toml and try again"),
        },
    };
    let _ = ctx.tx.send(event);
}

/// Carries out the reducers' actions; each request runs on its own task and reports a
/// failure back as an event.
fn perform(ctx: &Ctx, actions: Vec<Action>) {
    for action in actions {
        if let Action::Copy { text } = &action {
            // Written here, between frames, so it never lands inside a drawn frame.
            let notice = match copy_osc52(text) {
                Ok(()) => format!(
                    "Copied the last answer ({} characters of markdown) to the clipboard",
                    text.chars().count()
                ),
                Err(e) => format!("could not write to the terminal for /copy: {e}"),
            };
            let _ = ctx.tx.send(AppEvent::Notice(notice));
            continue;
        }
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let client = ctx.client.clone();
            let tx = ctx.tx.clone();
            let result: Result<(), String> = match action {
                Action::StartTurn {
                    thread_id,
                    text,
                    overrides,
                    images,
                } => client
                    .request::<Value>(ClientRequest::TurnStart(TurnStartParams {
                        thread_id,
                        // The images first, each named by its `[Image #N]` in the text.
                        input: crate::image_input::image_inputs(images, ctx.inline_images)
                            .into_iter()
                            .chain(std::iter::once(UserInput::Text {
                                text,
                                text_elements: Some(Vec::new()),
                            }))
                            .collect(),
                        cwd: None,
                        approval_policy: overrides.approval,
                        sandbox_policy: overrides.sandbox,
                        model: overrides.model,
                        effort: overrides.effort,
                        summary: None,
                        output_schema: None,
                    }))
                    .await
                    .map(drop)
                    .map_err(|e| format!("could not send the message: {e}")),
                Action::ShellCommand {
                    thread_id,
                    command,
                    share_with_model,
                } => client
                    .request::<Value>(ClientRequest::ThreadShellCommand(
                        ThreadShellCommandParams {
                            thread_id,
                            command,
                            timeout_ms: None,
                            share_with_model: Some(share_with_model),
                        },
                    ))
                    .await
                    .map(drop)
                    .map_err(|e| format!("could not run the command: {e}")),
                Action::Interrupt { thread_id, turn_id } => client
                    .request::<Value>(ClientRequest::TurnInterrupt(TurnInterruptParams {
                        thread_id,
                        turn_id,
                    }))
                    .await
                    .map(drop)
                    .map_err(|e| format!("could not interrupt the turn: {e}")),
                Action::Answer { id, answer } => {
                    let response = match answer {
                        Answer::Command(decision) => {
                            ServerResponse::CommandExecutionRequestApproval(
                                CommandExecutionRequestApprovalResponse { decision },
                            )
                        }
                        Answer::Patch(decision) => ServerResponse::FileChangeRequestApproval(
                            FileChangeRequestApprovalResponse { decision },
                        ),
                    };
                    client
                        .respond(id, response)
                        .await
                        .map_err(|e| format!("could not send the answer: {e}"))
                }
                Action::NewThread => {
                    open_thread(&ctx, Open::New, false).await;
                    Ok(())
                }
                Action::OpenThread {
                    thread_id,
                    fork,
                    replay,
                } => {
                    let target = ResumeTarget::Id(thread_id);
                    let open = if fork {
                        Open::Fork(target)
                    } else {
                        Open::Resume(target)
                    };
                    open_thread(&ctx, open, replay).await;
                    Ok(())
                }
                Action::ListModels => client
                    .request::<ModelListResponse>(ClientRequest::ModelList(
                        ModelListParams::default(),
                    ))
                    .await
                    .map(|list| {
                        let _ = tx.send(AppEvent::Models(list.data));
                    })
                    .map_err(|e| format!("could not list the models: {e}")),
                Action::ListSessions { query } => client
                    .request::<ThreadListResponse>(ClientRequest::ThreadList(ThreadListParams {
                        limit: Some(50),
                        cwd: (!query.all_dirs).then(|| CwdFilter::One(ctx.cwd.clone())),
                        search_term: (!query.search.is_empty()).then(|| query.search.clone()),
                        archived: query.archived.then_some(true),
                        sort_key: Some(
                            if query.by_created {
                                "created_at"
                            } else {
                                "updated_at"
                            }
                            .to_owned(),
                        ),
                        ..ThreadListParams::default()
                    }))
                    .await
                    .map(|list| {
                        let threads = list
                            .data
                            .into_iter()
                            .map(|t| SessionRow {
                                id: t.id,
                                preview: t.name.unwrap_or(t.preview),
                                updated_at: t.updated_at,
                                created_at: t.created_at,
                            })
                            .collect();
                        let _ = tx.send(AppEvent::Sessions {
                            query,
                            threads,
                            now: unix_now(),
                        });
                    })
                    .map_err(|e| format!("could not list the sessions: {e}")),
                Action::ArchiveSession { thread_id, archive } => {
                    let params = ThreadIdParams {
                        thread_id: thread_id.clone(),
                    };
                    let request = if archive {
                        ClientRequest::ThreadArchive(params)
                    } else {
                        ClientRequest::ThreadUnarchive(params)
                    };
                    client
                        .request::<Value>(request)
                        .await
                        .map(|_| {
                            let _ = tx.send(AppEvent::SessionArchived {
                                thread_id,
                                archived: archive,
                            });
                        })
                        .map_err(|e| {
                            let what = if archive { "archive" } else { "unarchive" };
                            format!("could not {what} the session: {e}")
                        })
                }
                Action::Compact { thread_id } => client
                    .request::<Value>(ClientRequest::ThreadCompactStart(ThreadIdParams {
                        thread_id,
                    }))
                    .await
                    .map(drop)
                    .map_err(|e| format!("could not compact the conversation: {e}")),
                Action::Diff => match git::diff(&ctx.cwd).await {
                    Ok(text) => {
                        let _ = tx.send(AppEvent::Diff(text));
                        Ok(())
                    }
                    Err(e) => Err(e),
                },
                Action::ProbeStatus => {
                    let agents_files = git::agents_files(std::path::Path::new(&ctx.cwd));
                    let _ = tx.send(AppEvent::StatusProbed { agents_files });
                    Ok(())
                }
                Action::ProbeInit => {
                    let exists = std::path::Path::new(&ctx.cwd).join("AGENTS.md").exists();
                    let _ = tx.send(AppEvent::InitProbed { exists });
                    Ok(())
                }
                Action::IndexFiles => {
                    let cwd = std::path::PathBuf::from(&ctx.cwd);
                    let files = tokio::task::spawn_blocking(move || git::repository_files(&cwd))
                        .await
                        .unwrap_or_default();
                    let _ = tx.send(AppEvent::Files(files));
                    Ok(())
                }
                Action::ListMcpServers { thread_id } => client
                    .request::<ListMcpServerStatusResponse>(ClientRequest::McpServerStatusList(
                        ListMcpServerStatusParams {
                            thread_id,
                            detail: Some(McpServerStatusDetail::ToolsAndAuthOnly),
                            ..ListMcpServerStatusParams::default()
                        },
                    ))
                    .await
                    .map(|list| {
                        let _ = tx.send(AppEvent::McpServers(list.data));
                    })
                    .map_err(|e| format!("could not list the MCP servers for /mcp: {e}")),
                Action::PasteClipboard => {
                    let paste = match crate::clipboard::read(crate::clipboard::WAIT).await {
                        Ok(crate::clipboard::Content::Png(png)) => match ctx.images.save(&png) {
                            Ok(path) => ClipboardPaste::Image {
                                path: path.display().to_string(),
                            },
                            Err(e) => ClipboardPaste::Unavailable {
                                reason: format!(
                                    "Ctrl+V: could not save the clipboard's image ({e}); paste \
                                     or drag the image file's path instead"
                                ),
                            },
                        },
                        // Text is pasted as a paste would be: an image file's path attaches it.
                        Ok(crate::clipboard::Content::Text(text)) => {
                            match image_path(&text, std::path::Path::new(&ctx.cwd)) {
                                Some(path) => ClipboardPaste::Image { path },
                                None => ClipboardPaste::Text(text),
                            }
                        }
                        Err(e) => ClipboardPaste::Unavailable {
                            reason: e.to_string(),
                        },
                    };
                    let _ = tx.send(AppEvent::Clipboard(paste));
                    Ok(())
                }
                Action::Copy { .. }
                | Action::Trust { .. }
                | Action::EditDraft { .. }
                | Action::Quit => Ok(()),
            };
            if let Err(message) = result {
                let _ = tx.send(AppEvent::RequestFailed { message });
            }
        });
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Puts `text` on the clipboard of the terminal (and of the machine the terminal runs on,
/// over SSH too) with OSC 52.
fn copy_osc52(text: &str) -> std::io::Result<()> {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let mut out = std::io::stdout();
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

/// A paste that is the path of one image file (as a terminal pastes a dropped file: maybe
/// quoted, maybe a `file://` URL), resolved against `cwd`.
fn image_path(text: &str, cwd: &std::path::Path) -> Option<String> {
    let text = text.trim();
    let text = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .or_else(|| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')))
        .unwrap_or(text);
    let text = text.strip_prefix("file://").unwrap_or(text);
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    let path = cwd.join(text.replace("\\ ", " "));
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let image = matches!(ext.as_str(), "png" | "jpg" | "jpeg" | "gif" | "webp");
    (image && path.is_file()).then(|| path.display().to_string())
}
