//! The threads' reducers: sub-agents' events into their own transcripts, switching the
//! watched thread, and the statuses the `/agent` picker shows.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use osprey_app_server_protocol::{RequestId, ServerNotification, ServerRequest, method};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::app_client::ServerEvent;
use crate::state::{AppEvent, PickerKind};

const MAIN: &str = "main-thread";
const PLANCK: &str = "child-planck";
const GOODALL: &str = "child-goodall";

fn note(state: &mut AppState, method: &str, params: Value) -> Vec<Action> {
    let n = ServerNotification::from_parts(method, Some(params)).unwrap();
    state.apply(
        AppEvent::Server(ServerEvent::Notification(Box::new(n))),
        Instant::now(),
    )
}

fn ask(state: &mut AppState, id: i64, thread: &str) {
    let request = ServerRequest::from_parts(
        method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
        Some(json!({"kind": "command", "threadId": thread, "turnId": "t",
                    "itemId": format!("c{id}"), "startedAtMs": 0, "environmentId": null,
                    "command": "touch x", "cwd": "/work"})),
    )
    .unwrap();
    state.apply(
        AppEvent::Server(ServerEvent::Request {
            id: RequestId::Integer(id),
            request: Box::new(request),
        }),
        Instant::now(),
    );
}

fn ready() -> AppState {
    let mut state = AppState::new();
    state.apply(
        AppEvent::ThreadReady {
            thread_id: MAIN.into(),
            model: "mock-model".into(),
            cwd: "/work".into(),
            turns: Vec::new(),
            settings: Default::default(),
        },
        Instant::now(),
    );
    state
}

fn thread_started(state: &mut AppState, id: &str, nickname: Option<&str>, role: Option<&str>) {
    let thread = json!({"id": id, "sessionId": MAIN, "forkedFromId": null,
        "parentThreadId": MAIN, "preview": "", "ephemeral": false, "historyMode": "full",
        "modelProvider": "mock", "model": "mock-model", "reasoningEffort": null,
        "createdAt": 0, "updatedAt": 0, "recencyAt": null, "status": {"type": "idle"},
        "path": null, "cwd": "/work", "cliVersion": "0.0.0", "originator": null,
        "source": "cli", "threadSource": "subagent", "agentNickname": nickname,
        "agentRole": role, "gitInfo": null, "name": null, "turns": []});
    note(state, method::THREAD_STARTED, json!({"thread": thread}));
}

fn turn(state: &mut AppState, thread: &str, method: &str, status: &str) -> Vec<Action> {
    note(
        state,
        method,
        json!({"threadId": thread, "turn": {"id": format!("turn-{thread}"), "rootTurnId": null,
            "items": [], "itemsView": "notLoaded", "status": status, "error": null,
            "startedAt": null, "completedAt": null, "durationMs": null}}),
    )
}

fn agent_message(id: &str, text: &str) -> Value {
    json!({"type": "agentMessage", "id": id, "text": text, "phase": null, "moderation": null,
           "memoryCitation": null, "delivery": null, "questions": null})
}

fn item(state: &mut AppState, thread: &str, method: &str, item: Value) {
    let at = if method == method::ITEM_STARTED {
        "startedAtMs"
    } else {
        "completedAtMs"
    };
    note(
        state,
        method,
        json!({"item": item, "threadId": thread, "turnId": format!("turn-{thread}"), at: 0}),
    );
}

fn delta(state: &mut AppState, thread: &str, item_id: &str, text: &str) {
    note(
        state,
        method::ITEM_AGENT_MESSAGE_DELTA,
        json!({"threadId": thread, "turnId": format!("turn-{thread}"), "itemId": item_id,
               "delta": text}),
    );
}

fn texts(cells: &[Cell]) -> Vec<String> {
    cells
        .iter()
        .filter_map(|c| match c {
            Cell::Agent { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn status_of(state: &AppState, id: &str) -> AgentStatus {
    state
        .agent_rows()
        .into_iter()
        .find(|r| r.id == id)
        .map(|r| r.status)
        .unwrap()
}

fn press(state: &mut AppState, code: KeyCode) -> Vec<Action> {
    state.on_key(KeyEvent::from(code), Instant::now())
}

fn run(state: &mut AppState, command: &str) -> Vec<Action> {
    for c in command.chars() {
        press(state, KeyCode::Char(c));
    }
    // Enter runs the popup's selected command (the draft is a bare `/word`).
    press(state, KeyCode::Enter)
}

#[test]
fn two_childrens_events_go_to_their_own_transcripts() {
    let mut state = ready();
    turn(&mut state, MAIN, method::TURN_STARTED, "inProgress");
    thread_started(&mut state, PLANCK, Some("Planck"), Some("explorer"));
    thread_started(&mut state, GOODALL, Some("Goodall"), None);
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    turn(&mut state, GOODALL, method::TURN_STARTED, "inProgress");
    // Interleaved: a delta of each, a main answer, then each child's completed message.
    delta(&mut state, PLANCK, "p1", "Planck is ");
    delta(&mut state, GOODALL, "g1", "Goodall is ");
    item(
        &mut state,
        MAIN,
        method::ITEM_COMPLETED,
        agent_message("m1", "main words"),
    );
    delta(&mut state, PLANCK, "p1", "reading");
    item(
        &mut state,
        GOODALL,
        method::ITEM_COMPLETED,
        agent_message("g1", "Goodall is done"),
    );
    turn(&mut state, GOODALL, method::TURN_COMPLETED, "completed");

    assert_eq!(texts(&state.history), vec!["main words"]);
    assert!(state.active.is_empty(), "{:?}", state.active);
    assert!(state.turn.is_some(), "the main turn still runs");
    assert_eq!(
        state
            .agent_rows()
            .iter()
            .map(|r| (r.name.as_str(), r.status))
            .collect::<Vec<_>>(),
        vec![
            ("Main thread", AgentStatus::Running),
            ("Planck [explorer]", AgentStatus::Running),
            ("Goodall", AgentStatus::Done),
        ]
    );

    state.watch(Some(PLANCK.into()));
    assert_eq!(texts(&state.history), Vec::<String>::new());
    assert_eq!(
        state.active,
        vec![(
            "p1".to_owned(),
            Cell::Agent {
                text: "Planck is reading".into(),
                streaming: true
            }
        )]
    );
    assert!(state.turn.is_some(), "Planck's turn runs");

    state.watch(Some(GOODALL.into()));
    assert_eq!(texts(&state.history), vec!["Goodall is done"]);
    assert!(
        matches!(state.history.last(), Some(Cell::TurnEnd { .. })),
        "Goodall's own turn end: {:?}",
        state.history
    );
    assert!(state.turn.is_none());

    state.watch(None);
    assert_eq!(texts(&state.history), vec!["main words"]);
    assert!(state.turn.is_some());
}

#[test]
fn watching_prints_a_header_and_the_whole_transcript_then_streams_live() {
    let mut state = ready();
    item(
        &mut state,
        MAIN,
        method::ITEM_COMPLETED,
        agent_message("m1", "main words"),
    );
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    item(
        &mut state,
        PLANCK,
        method::ITEM_COMPLETED,
        agent_message("p1", "first"),
    );
    assert_eq!(texts(&state.take_unflushed()), vec!["main words"]);

    state.watch(Some(PLANCK.into()));
    let shown = state.take_unflushed();
    assert_eq!(
        shown.first(),
        Some(&Cell::ThreadHeader(ThreadHeader {
            agent: Some("Planck".into()),
            id: Some(PLANCK.into()),
        }))
    );
    assert_eq!(texts(&shown), vec!["first"]);
    assert_eq!(state.thread_header(), shown.first().cloned());
    // Live: the next message of the watched child reaches the scrollback at once.
    item(
        &mut state,
        PLANCK,
        method::ITEM_COMPLETED,
        agent_message("p2", "second"),
    );
    assert_eq!(texts(&state.take_unflushed()), vec!["second"]);
    // The main thread's meanwhile does not.
    item(
        &mut state,
        MAIN,
        method::ITEM_COMPLETED,
        agent_message("m2", "main again"),
    );
    assert_eq!(state.take_unflushed(), Vec::<Cell>::new());

    state.watch(None);
    let shown = state.take_unflushed();
    assert_eq!(
        shown.first(),
        Some(&Cell::ThreadHeader(ThreadHeader {
            agent: None,
            id: None
        }))
    );
    assert_eq!(texts(&shown), vec!["main words", "main again"]);
}

#[test]
fn the_composer_sends_to_the_watched_sub_agent_and_esc_interrupts_it() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    state.watch(Some(PLANCK.into()));
    for c in "go on".chars() {
        press(&mut state, KeyCode::Char(c));
    }
    let actions = press(&mut state, KeyCode::Enter);
    assert!(
        matches!(actions.as_slice(), [Action::StartTurn { thread_id, text, .. }]
            if thread_id == PLANCK && text == "go on"),
        "{actions:?}"
    );
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    assert_eq!(
        press(&mut state, KeyCode::Esc),
        vec![Action::Interrupt {
            thread_id: PLANCK.into(),
            turn_id: format!("turn-{PLANCK}"),
        }]
    );
    // Back on the main thread, messages go to it again.
    state.watch(None);
    for c in "hello".chars() {
        press(&mut state, KeyCode::Char(c));
    }
    let actions = press(&mut state, KeyCode::Enter);
    assert!(
        matches!(actions.as_slice(), [Action::StartTurn { thread_id, .. }] if thread_id == MAIN),
        "{actions:?}"
    );
}

#[test]
fn a_message_queued_for_a_sub_agent_is_sent_to_it_when_its_turn_ends_unwatched() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    state.watch(Some(PLANCK.into()));
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    for c in "and then".chars() {
        press(&mut state, KeyCode::Char(c));
    }
    assert_eq!(press(&mut state, KeyCode::Enter), vec![]);
    assert_eq!(state.queued, vec!["and then".to_owned()]);
    state.watch(None);
    assert!(state.queued.is_empty(), "the queue is Planck's");
    let actions = turn(&mut state, PLANCK, method::TURN_COMPLETED, "completed");
    assert!(
        matches!(actions.as_slice(), [Action::StartTurn { thread_id, text, .. }]
            if thread_id == PLANCK && text == "and then"),
        "{actions:?}"
    );
}

#[test]
fn statuses_follow_turns_approvals_thread_status_and_collab_states() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Starting);
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Running);
    ask(&mut state, 7, PLANCK);
    assert_eq!(status_of(&state, PLANCK), AgentStatus::WaitingForApproval);
    assert_eq!(status_of(&state, MAIN), AgentStatus::Idle);
    note(
        &mut state,
        method::SERVER_REQUEST_RESOLVED,
        json!({"threadId": PLANCK, "requestId": 7}),
    );
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Running);
    turn(&mut state, PLANCK, method::TURN_COMPLETED, "failed");
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Errored);
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    turn(&mut state, PLANCK, method::TURN_COMPLETED, "interrupted");
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Interrupted);
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    turn(&mut state, PLANCK, method::TURN_COMPLETED, "completed");
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Done);
    note(
        &mut state,
        method::THREAD_STATUS_CHANGED,
        json!({"threadId": PLANCK, "status": {"type": "idle"}}),
    );
    assert_eq!(
        status_of(&state, PLANCK),
        AgentStatus::Done,
        "idle keeps it"
    );
    note(
        &mut state,
        method::THREAD_STATUS_CHANGED,
        json!({"threadId": PLANCK, "status": {"type": "notLoaded"}}),
    );
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Closed);

    // Codex's server announces no child: a collab call's receivers and states name it.
    let wait = json!({"type": "collabAgentToolCall", "id": "call_wait", "tool": "wait",
        "status": "completed", "senderThreadId": MAIN, "receiverThreadIds": [GOODALL],
        "prompt": null, "model": null, "reasoningEffort": null,
        "agentsStates": {GOODALL: {"status": "errored", "message": "tool timeout"}},
        "startedAtMs": 1, "completedAtMs": 2});
    item(&mut state, MAIN, method::ITEM_COMPLETED, wait);
    assert_eq!(status_of(&state, GOODALL), AgentStatus::Errored);
    assert_eq!(state.agent_rows()[2].name, "Sub-agent");

    // The main thread's own row: running, then asking.
    turn(&mut state, MAIN, method::TURN_STARTED, "inProgress");
    assert_eq!(status_of(&state, MAIN), AgentStatus::Running);
    ask(&mut state, 8, MAIN);
    assert_eq!(status_of(&state, MAIN), AgentStatus::WaitingForApproval);
}

#[test]
fn a_sub_agents_turn_end_leaves_the_other_threads_approvals_asking() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    turn(&mut state, MAIN, method::TURN_STARTED, "inProgress");
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    ask(&mut state, 1, MAIN);
    ask(&mut state, 2, PLANCK);
    turn(&mut state, PLANCK, method::TURN_COMPLETED, "interrupted");
    assert_eq!(
        state
            .approvals
            .iter()
            .map(|a| a.id.clone())
            .collect::<Vec<_>>(),
        vec![RequestId::Integer(1)]
    );
    turn(&mut state, MAIN, method::TURN_COMPLETED, "interrupted");
    assert!(state.approvals.is_empty());
}

#[test]
fn a_sub_agents_usage_is_not_the_sessions() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    let usage = |thread: &str, total: i64| {
        let b = json!({"totalTokens": total, "inputTokens": total, "cachedInputTokens": 0,
                       "outputTokens": 0, "reasoningOutputTokens": 0});
        json!({"threadId": thread, "turnId": "t",
               "tokenUsage": {"total": b, "last": b, "modelContextWindow": 1000}})
    };
    note(
        &mut state,
        method::THREAD_TOKEN_USAGE_UPDATED,
        usage(MAIN, 100),
    );
    note(
        &mut state,
        method::THREAD_TOKEN_USAGE_UPDATED,
        usage(PLANCK, 900),
    );
    state.watch(Some(PLANCK.into()));
    note(
        &mut state,
        method::THREAD_TOKEN_USAGE_UPDATED,
        usage(PLANCK, 950),
    );
    assert_eq!(state.status.usage.map(|u| u.total_tokens), Some(100));
    assert_eq!(state.status.context_left_percent, Some(90));
}

#[test]
fn the_agent_command_lists_the_threads_and_picks_one_by_number() {
    let mut state = ready();
    assert_eq!(run(&mut state, "/agent"), vec![]);
    assert!(state.picker.is_none());
    assert!(
        matches!(state.history.last(), Some(Cell::Notice { text })
            if text.starts_with("No sub-agents in this session yet")),
        "{:?}",
        state.history
    );

    thread_started(&mut state, PLANCK, Some("Planck"), Some("explorer"));
    assert_eq!(run(&mut state, "/subagents"), vec![]);
    let picker = state.picker.as_ref().unwrap();
    assert_eq!(picker.kind, PickerKind::Agent);
    assert_eq!(
        picker
            .items
            .iter()
            .map(|i| (i.label.as_str(), i.value.as_str(), i.current))
            .collect::<Vec<_>>(),
        vec![
            ("Main thread", MAIN, true),
            ("Planck [explorer]", PLANCK, false)
        ]
    );
    // A sub-agent spawned while the picker is open is listed at once.
    thread_started(&mut state, GOODALL, Some("Goodall"), None);
    assert_eq!(state.picker.as_ref().unwrap().items.len(), 3);
    press(&mut state, KeyCode::Char('2'));
    assert!(state.picker.is_none());
    assert_eq!(state.threads.watched.as_deref(), Some(PLANCK));
    // The picker opens on the watched thread; choosing the main thread comes back.
    run(&mut state, "/agent");
    assert_eq!(state.picker.as_ref().map(|p| p.selected), Some(1));
    press(&mut state, KeyCode::Up);
    press(&mut state, KeyCode::Enter);
    assert_eq!(state.threads.watched, None);
}

#[test]
fn commands_that_change_the_main_thread_wait_until_it_is_watched() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    state.watch(Some(PLANCK.into()));
    assert_eq!(run(&mut state, "/new"), vec![]);
    assert!(
        matches!(state.history.last(), Some(Cell::Notice { text })
            if text.contains("'/new' works on the main thread") && text.contains("Planck")),
        "{:?}",
        state.history
    );
    state.watch(None);
    assert_eq!(run(&mut state, "/new"), vec![Action::NewThread]);
}

#[test]
fn a_new_session_forgets_the_old_ones_sub_agents() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    state.apply(
        AppEvent::ThreadReady {
            thread_id: "another".into(),
            model: "mock-model".into(),
            cwd: "/work".into(),
            turns: Vec::new(),
            settings: Default::default(),
        },
        Instant::now(),
    );
    assert!(state.threads.agents.is_empty());
    // The old child's late events stay out of the new session's transcript.
    item(
        &mut state,
        PLANCK,
        method::ITEM_COMPLETED,
        agent_message("p1", "late"),
    );
    assert_eq!(texts(&state.history), vec!["late"; 0]);
}

#[test]
fn a_collab_cell_names_the_agents_whose_threads_said_a_nickname() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), Some("explorer"));
    let wait = json!({"type": "collabAgentToolCall", "id": "call_wait", "tool": "wait",
        "status": "completed", "senderThreadId": MAIN, "receiverThreadIds": [PLANCK, GOODALL],
        "prompt": null, "model": null, "reasoningEffort": null,
        "agentsStates": {PLANCK: {"status": "completed", "message": "done"},
                         GOODALL: {"status": "errored", "message": null}},
        "startedAtMs": 1, "completedAtMs": 2});
    item(&mut state, MAIN, method::ITEM_COMPLETED, wait);
    let Some(Cell::Collab(call)) = state.history.last() else {
        panic!("a collab cell: {:?}", state.history.last());
    };
    assert_eq!(
        call.names,
        [(PLANCK.to_owned(), "Planck [explorer]".to_owned())].into(),
        "Goodall's thread never said a name: it keeps its id"
    );
}

#[test]
fn a_lost_connection_leaves_no_agent_running_and_no_approval_asking() {
    let mut state = ready();
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    thread_started(&mut state, GOODALL, Some("Goodall"), None);
    turn(&mut state, MAIN, method::TURN_STARTED, "inProgress");
    turn(&mut state, PLANCK, method::TURN_STARTED, "inProgress");
    turn(&mut state, GOODALL, method::TURN_STARTED, "inProgress");
    turn(&mut state, GOODALL, method::TURN_COMPLETED, "completed");
    // Watching Planck parks the main thread's view, whose turn was running.
    run(&mut state, "/agent");
    press(&mut state, KeyCode::Char('2'));
    assert_eq!(state.threads.watched.as_deref(), Some(PLANCK));
    ask(&mut state, 9, PLANCK);
    assert_eq!(state.approvals.len(), 1);

    state.apply(
        AppEvent::Server(ServerEvent::Closed {
            reason: "lost the connection".into(),
        }),
        Instant::now(),
    );
    assert!(state.approvals.is_empty(), "nobody can answer them now");
    assert_eq!(status_of(&state, PLANCK), AgentStatus::Unknown);
    assert_eq!(
        status_of(&state, GOODALL),
        AgentStatus::Done,
        "it had ended"
    );
    assert_eq!(
        status_of(&state, MAIN),
        AgentStatus::Idle,
        "the parked turn too"
    );
    assert!(state.turn.is_none());
}

#[test]
fn alt_arrows_cycle_through_the_threads_and_wrap_around() {
    let mut state = ready();
    let alt = |state: &mut AppState, code| {
        state.on_key(KeyEvent::new(code, KeyModifiers::ALT), Instant::now())
    };
    alt(&mut state, KeyCode::Right);
    assert_eq!(state.threads.watched, None);
    assert!(
        matches!(state.history.last(), Some(Cell::Notice { text })
            if text.starts_with("No sub-agents in this session yet")),
        "{:?}",
        state.history
    );
    thread_started(&mut state, PLANCK, Some("Planck"), None);
    thread_started(&mut state, GOODALL, Some("Goodall"), None);
    alt(&mut state, KeyCode::Right);
    assert_eq!(state.threads.watched.as_deref(), Some(PLANCK));
    alt(&mut state, KeyCode::Right);
    assert_eq!(state.threads.watched.as_deref(), Some(GOODALL));
    alt(&mut state, KeyCode::Right);
    assert_eq!(
        state.threads.watched, None,
        "past the last: the main thread"
    );
    alt(&mut state, KeyCode::Left);
    assert_eq!(state.threads.watched.as_deref(), Some(GOODALL), "and back");
    // A plain arrow still moves the cursor in the draft.
    state.composer.insert_char('a');
    state.composer.insert_char('b');
    state.on_key(KeyEvent::from(KeyCode::Left), Instant::now());
    state.composer.insert_char('X');
    assert_eq!(state.composer.expanded(), "aXb");
    assert_eq!(state.threads.watched.as_deref(), Some(GOODALL));
}
