//! The app loop: reads keys and server events, feeds them to the state's reducers, carries
//! out the actions they return through the [`AppClient`], and draws — only when something
//! changed (plus once a second while a turn runs, for its timer). An idle screen is not
//! redrawn at all.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use osprey_app_server::ServerOptions;
use osprey_app_server_protocol::{
    ClientRequest, CommandExecutionRequestApprovalResponse, CwdFilter,
    FileChangeRequestApprovalResponse, ServerResponse, ThreadListParams, ThreadListResponse,
    ThreadResumeParams, ThreadShellCommandParams, ThreadStartParams, ThreadStartResponse,
    TurnInterruptParams, TurnStartParams, UserInput,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::app_client::{AppClient, ServerEvent};
use crate::cli::{ResumeTarget, TuiCli};
use crate::render::{cells::cell_lines, live_lines};
use crate::state::{Action, Answer, AppEvent, AppState};
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
    let (server_tx, server_rx) = mpsc::unbounded_channel();
    let (client, handle) = match AppClient::start_in_process(server, server_tx) {
        Ok(started) => started,
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            return 1;
        }
    };
    if let Err(e) = terminal::enter() {
        terminal::restore();
        let _ = writeln!(stderr, "Error: could not set up the terminal: {e}");
        return 1;
    }
    terminal::install_panic_hook();
    let result = event_loop(&client, server_rx, &cli, &cwd, &version).await;
    terminal::restore();
    let _ = tokio::time::timeout(SHUTDOWN_WAIT, handle.shutdown_all()).await;
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
                let _ = writeln!(stdout, "To continue this session, run: osprey resume {id}");
            }
            0
        }
        Err(e) => {
            let _ = writeln!(stderr, "Error: the terminal failed: {e}");
            1
        }
    }
}

async fn event_loop(
    client: &AppClient,
    mut server_rx: mpsc::UnboundedReceiver<ServerEvent>,
    cli: &TuiCli,
    cwd: &std::path::Path,
    version: &str,
) -> std::io::Result<AppState> {
    let mut state = AppState::new();
    let mut tui = Tui::new(3)?;
    let (app_tx, mut app_rx) = mpsc::unbounded_channel::<AppEvent>();
    spawn_start(client.clone(), app_tx.clone(), cli, cwd, version.to_owned());
    if let Some(prompt) = cli.prompt.clone() {
        let actions = state.submit_text(prompt, Instant::now());
        perform(client, &app_tx, actions);
    }
    let mut keys = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    #[cfg(unix)]
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut dirty = true;
    loop {
        if dirty {
            frame(&mut tui, &mut state)?;
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
                Some(Ok(Event::Key(key))) => { dirty = true; state.on_key(key, now) }
                Some(Ok(Event::Paste(text))) => { dirty = true; state.on_paste(&text); Vec::new() }
                Some(Ok(Event::Resize(_, _))) => {
                    tui.resized.store(true, Ordering::SeqCst);
                    dirty = true;
                    Vec::new()
                }
                Some(Ok(_)) => Vec::new(),
                Some(Err(e)) => return Err(e),
                None => break,
            },
            Some(event) = server_rx.recv() => {
                dirty = true;
                let mut actions = state.apply(AppEvent::Server(event), now);
                // Take whatever else already arrived before drawing: one frame per burst.
                while let Ok(event) = server_rx.try_recv() {
                    actions.extend(state.apply(AppEvent::Server(event), now));
                }
                actions
            },
            Some(event) = app_rx.recv() => { dirty = true; state.apply(event, now) },
            _ = tick.tick(), if working => { dirty = true; Vec::new() },
            _ = term => { state.should_quit = true; Vec::new() },
        };
        perform(client, &app_tx, actions);
    }
    tui.clear_live()?;
    Ok(state)
}

/// Writes finished cells to the scrollback and draws the live area at the current size.
fn frame(tui: &mut Tui, state: &mut AppState) -> std::io::Result<()> {
    let size = tui.size()?;
    let width = usize::from(size.width.max(1));
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

fn spawn_start(
    client: AppClient,
    tx: mpsc::UnboundedSender<AppEvent>,
    cli: &TuiCli,
    cwd: &std::path::Path,
    version: String,
) {
    let overrides = cli.overrides(cwd);
    let resume = cli.resume.clone();
    let cwd = cwd.display().to_string();
    tokio::spawn(async move {
        let started = async {
            client
                .initialize(&version)
                .await
                .map_err(|e| e.to_string())?;
            let Some(target) = resume else {
                return client
                    .request::<ThreadStartResponse>(ClientRequest::ThreadStart(ThreadStartParams {
                        overrides,
                        ..ThreadStartParams::default()
                    }))
                    .await
                    .map_err(|e| e.to_string());
            };
            let thread_id = match target {
                ResumeTarget::Id(id) => id,
                ResumeTarget::Last => {
                    let list: ThreadListResponse = client
                        .request(ClientRequest::ThreadList(ThreadListParams {
                            limit: Some(1),
                            cwd: Some(CwdFilter::One(cwd.clone())),
                            ..ThreadListParams::default()
                        }))
                        .await
                        .map_err(|e| e.to_string())?;
                    match list.data.into_iter().next() {
                        Some(thread) => thread.id,
                        None => {
                            return Err(format!(
                                "no recorded session in {cwd}; `osprey sessions list` shows them all"
                            ));
                        }
                    }
                }
            };
            client
                .request::<ThreadStartResponse>(ClientRequest::ThreadResume(ThreadResumeParams {
                    thread_id,
                    overrides,
                    exclude_turns: None,
                }))
                .await
                .map_err(|e| e.to_string())
        };
        let event = match started.await {
            Ok(r) => AppEvent::ThreadReady {
                thread_id: r.thread.id,
                model: r.model,
                cwd: r.cwd,
                turns: r.thread.turns,
            },
            Err(e) => AppEvent::RequestFailed {
                message: format!("could not start a session: {e}; check config.toml and try again"),
            },
        };
        let _ = tx.send(event);
    });
}

/// Carries out the reducers' actions; each request runs on its own task and reports a
/// failure back as an event.
fn perform(client: &AppClient, tx: &mpsc::UnboundedSender<AppEvent>, actions: Vec<Action>) {
    for action in actions {
        let client = client.clone();
        let tx = tx.clone();
        tokio::spawn(async move {
            let result: Result<(), String> = match action {
                Action::StartTurn { thread_id, text } => client
                    .request::<Value>(ClientRequest::TurnStart(TurnStartParams {
                        thread_id,
                        input: vec![UserInput::Text {
                            text,
                            text_elements: Some(Vec::new()),
                        }],
                        cwd: None,
                        approval_policy: None,
                        sandbox_policy: None,
                        model: None,
                        effort: None,
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
                Action::Quit => Ok(()),
            };
            if let Err(message) = result {
                let _ = tx.send(AppEvent::RequestFailed { message });
            }
        });
    }
}
