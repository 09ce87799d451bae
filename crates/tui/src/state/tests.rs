use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use osprey_app_server_protocol::{
    CommandExecutionApprovalDecision, FileChangeApprovalDecision, RequestId, ServerNotification,
    ServerRequest, TurnPlanStepStatus, method,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;
use crate::app_client::ServerEvent;
use crate::state::sessions::SessionQuery;

fn note(method: &str, params: Value) -> AppEvent {
    AppEvent::Server(ServerEvent::Notification(Box::new(
        ServerNotification::from_parts(method, Some(params)).unwrap(),
    )))
}

fn request(id: i64, method: &str, params: Value) -> AppEvent {
    AppEvent::Server(ServerEvent::Request {
        id: RequestId::Integer(id),
        request: Box::new(ServerRequest::from_parts(method, Some(params)).unwrap()),
    })
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn type_text(state: &mut AppState, text: &str, now: Instant) {
    for c in text.chars() {
        assert_eq!(state.on_key(key(KeyCode::Char(c)), now), vec![]);
    }
}

fn ready() -> AppState {
    let mut state = AppState::new();
    let actions = state.apply(
        AppEvent::ThreadReady {
            thread_id: "th1".into(),
            model: "mock-model".into(),
            cwd: "/work".into(),
            turns: Vec::new(),
            settings: Default::default(),
        },
        Instant::now(),
    );
    assert_eq!(actions, vec![]);
    state
}

pub fn agent_item(id: &str, text: &str) -> Value {
    json!({"type": "agentMessage", "id": id, "text": text, "phase": null, "moderation": null,
           "memoryCitation": null, "delivery": null, "questions": null})
}

pub fn exec_item(id: &str, status: &str, output: Option<&str>, exit: Option<i32>) -> Value {
    json!({"type": "commandExecution", "id": id, "pluginId": null, "scriptPath": null,
           "command": "touch notes.txt", "cwd": "/work", "processId": null, "source": "agent",
           "status": status, "commandActions": [], "aggregatedOutput": output,
           "exitCode": exit, "durationMs": exit.map(|_| 1200)})
}

fn turn(id: &str, status: &str) -> Value {
    json!({"threadId": "th1", "turn": {"id": id, "rootTurnId": null, "items": [],
           "itemsView": "notLoaded", "status": status, "error": null, "startedAt": null,
           "completedAt": null, "durationMs": null}})
}

fn started(item: Value) -> AppEvent {
    note(
        method::ITEM_STARTED,
        json!({"item": item, "threadId": "th1", "turnId": "t1", "startedAtMs": 0}),
    )
}

fn completed(item: Value) -> AppEvent {
    note(
        method::ITEM_COMPLETED,
        json!({"item": item, "threadId": "th1", "turnId": "t1", "completedAtMs": 0}),
    )
}

#[test]
fn enter_submits_and_the_modified_enters_insert_newlines() {
    let now = Instant::now();
    let mut state = ready();
    type_text(&mut state, "one", now);
    for newline in [
        KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT),
        KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT),
        ctrl('j'),
    ] {
        assert_eq!(state.on_key(newline, now), vec![]);
    }
    type_text(&mut state, "two", now);
    assert_eq!(state.composer.text(), "one\n\n\ntwo");
    assert_eq!(
        state.on_key(key(KeyCode::Enter), now),
        vec![Action::StartTurn {
            thread_id: "th1".into(),
            text: "one\n\n\ntwo".into(),
            overrides: Default::default(),
            images: Vec::new(),
        }]
    );
    assert!(state.composer.is_empty());
    assert!(state.turn.is_some(), "working from the moment it is sent");
}

#[test]
fn a_prompt_given_before_the_thread_is_ready_is_sent_when_it_is() {
    let now = Instant::now();
    let mut state = AppState::new();
    assert_eq!(state.submit_text("hello".into(), now), vec![]);
    let actions = state.apply(
        AppEvent::ThreadReady {
            thread_id: "th1".into(),
            model: "m".into(),
            cwd: "/w".into(),
            turns: Vec::new(),
            settings: Default::default(),
        },
        now,
    );
    assert_eq!(
        actions,
        vec![Action::StartTurn {
            thread_id: "th1".into(),
            text: "hello".into(),
            overrides: Default::default(),
            images: Vec::new(),
        }]
    );
}

#[test]
fn bang_runs_a_local_shell_command_and_a_bare_bang_explains() {
    let now = Instant::now();
    let mut state = ready();
    type_text(&mut state, "!", now);
    assert_eq!(state.on_key(key(KeyCode::Enter), now), vec![]);
    assert!(
        matches!(state.history.last(), Some(Cell::Notice { text }) if text.contains("Prefix a command with !")),
        "{:?}",
        state.history
    );
    type_text(&mut state, "!echo hi", now);
    assert_eq!(
        state.on_key(key(KeyCode::Enter), now),
        vec![Action::ShellCommand {
            thread_id: "th1".into(),
            command: "echo hi".into(),
            share_with_model: false,
        }]
    );
    state.turn = None;
    type_text(&mut state, "!!echo shared", now);
    assert_eq!(
        state.on_key(key(KeyCode::Enter), now),
        vec![Action::ShellCommand {
            thread_id: "th1".into(),
            command: "echo shared".into(),
            share_with_model: true,
        }],
        "!! shares the command and its output with the model"
    );
}

#[test]
fn ctrl_c_interrupts_a_turn_clears_a_draft_and_quits_on_the_second_idle_press() {
    let now = Instant::now();
    let mut state = ready();
    type_text(&mut state, "hi", now);
    state.on_key(key(KeyCode::Enter), now);
    // No turn id yet: nothing to interrupt.
    assert_eq!(state.on_key(ctrl('c'), now), vec![]);
    state.apply(note(method::TURN_STARTED, turn("t1", "inProgress")), now);
    assert_eq!(
        state.on_key(ctrl('c'), now),
        vec![Action::Interrupt {
            thread_id: "th1".into(),
            turn_id: "t1".into()
        }]
    );
    assert_eq!(
        state.on_key(key(KeyCode::Esc), now),
        vec![Action::Interrupt {
            thread_id: "th1".into(),
            turn_id: "t1".into()
        }],
        "Esc interrupts too"
    );
    state.apply(note(method::TURN_COMPLETED, turn("t1", "interrupted")), now);
    assert_eq!(
        state.history.last(),
        Some(&Cell::TurnEnd {
            seconds: 0,
            interrupted: true
        })
    );
    type_text(&mut state, "draft", now);
    assert_eq!(state.on_key(ctrl('c'), now), vec![]);
    assert!(
        state.composer.is_empty(),
        "the first press clears the draft"
    );
    assert_eq!(state.on_key(ctrl('c'), now), vec![]);
    assert!(state.quit_armed);
    assert_eq!(state.on_key(ctrl('c'), now), vec![Action::Quit]);
    assert!(state.should_quit);
}

#[test]
fn a_message_typed_during_a_turn_is_queued_and_sent_when_it_ends() {
    let now = Instant::now();
    let mut state = ready();
    type_text(&mut state, "first", now);
    state.on_key(key(KeyCode::Enter), now);
    state.apply(note(method::TURN_STARTED, turn("t1", "inProgress")), now);
    type_text(&mut state, "second", now);
    assert_eq!(state.on_key(key(KeyCode::Enter), now), vec![]);
    assert_eq!(state.queued, vec!["second".to_owned()]);
    let actions = state.apply(
        note(method::TURN_COMPLETED, turn("t1", "completed")),
        now + Duration::from_secs(3),
    );
    assert_eq!(
        actions,
        vec![Action::StartTurn {
            thread_id: "th1".into(),
            text: "second".into(),
            overrides: Default::default(),
            images: Vec::new(),
        }]
    );
    assert!(state.queued.is_empty());
}

#[test]
fn deltas_stream_into_a_live_cell_that_moves_to_history_when_complete() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(started(agent_item("m1", "")), now);
    for delta in ["Hel", "lo **wor", "ld**"] {
        state.apply(
            note(
                method::ITEM_AGENT_MESSAGE_DELTA,
                json!({"threadId": "th1", "turnId": "t1", "itemId": "m1", "delta": delta}),
            ),
            now,
        );
    }
    assert_eq!(
        state.active,
        vec![(
            "m1".to_owned(),
            Cell::Agent {
                text: "Hello **world**".into(),
                streaming: true
            }
        )]
    );
    assert!(state.history.is_empty());
    state.apply(completed(agent_item("m1", "Hello **world**")), now);
    assert!(state.active.is_empty());
    assert_eq!(
        state.take_unflushed(),
        &[Cell::Agent {
            text: "Hello **world**".into(),
            streaming: false
        }]
    );
    assert_eq!(state.take_unflushed(), &[], "flushed once");
}

#[test]
fn command_output_is_live_and_the_completed_item_has_the_exit_code() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(started(exec_item("c1", "inProgress", None, None)), now);
    state.apply(
        note(
            method::ITEM_COMMAND_EXECUTION_OUTPUT_DELTA,
            json!({"threadId": "th1", "turnId": "t1", "itemId": "c1", "delta": "line 1\n"}),
        ),
        now,
    );
    assert!(
        matches!(&state.active[0].1, Cell::Exec(e) if e.output == "line 1\n"),
        "{:?}",
        state.active
    );
    state.apply(
        completed(exec_item("c1", "completed", Some("line 1\n"), Some(0))),
        now,
    );
    assert!(
        matches!(&state.history[0], Cell::Exec(e) if e.exit_code == Some(0) && e.duration_ms == Some(1200)),
        "{:?}",
        state.history
    );
}

fn command_approval(prefix: Option<Vec<&str>>, session: bool) -> AppEvent {
    let mut decisions = vec![json!("accept")];
    if session {
        decisions.push(json!("acceptForSession"));
    }
    decisions.push(json!("cancel"));
    request(
        0,
        method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
        json!({"kind": "command", "threadId": "th1", "turnId": "t1", "itemId": "c1",
               "startedAtMs": 0, "environmentId": null, "reason": "needs a file",
               "command": "touch notes.txt", "cwd": "/work",
               "proposedExecpolicyAmendment": prefix, "availableDecisions": decisions}),
    )
}

#[test]
fn approval_keys_answer_with_the_matching_decision() {
    let now = Instant::now();
    let cases: Vec<(KeyEvent, CommandExecutionApprovalDecision)> = vec![
        (
            key(KeyCode::Char('y')),
            CommandExecutionApprovalDecision::Accept,
        ),
        (
            key(KeyCode::Char('s')),
            CommandExecutionApprovalDecision::AcceptForSession,
        ),
        (
            key(KeyCode::Char('p')),
            CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment {
                execpolicy_amendment: vec!["touch".into()],
            },
        ),
        (
            key(KeyCode::Char('n')),
            CommandExecutionApprovalDecision::Decline,
        ),
        (key(KeyCode::Esc), CommandExecutionApprovalDecision::Cancel),
        (ctrl('c'), CommandExecutionApprovalDecision::Cancel),
    ];
    for (k, decision) in cases {
        let mut state = ready();
        state.apply(command_approval(Some(vec!["touch"]), true), now);
        type_text(&mut state, "", now);
        assert_eq!(
            state.on_key(k, now),
            vec![Action::Answer {
                id: RequestId::Integer(0),
                answer: Answer::Command(decision.clone())
            }],
            "{k:?}"
        );
        assert!(state.approvals.is_empty());
        assert!(
            state.composer.is_empty(),
            "keys went to the overlay, not the draft"
        );
        assert!(matches!(state.history.last(), Some(Cell::Notice { .. })));
    }
}

#[test]
fn p_and_s_are_offered_only_when_the_request_allows_them() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(command_approval(None, false), now);
    assert_eq!(state.on_key(key(KeyCode::Char('p')), now), vec![]);
    assert_eq!(state.on_key(key(KeyCode::Char('s')), now), vec![]);
    assert_eq!(state.approvals.len(), 1, "still asking");
    // Down twice then Enter: the third choice (no, tell the model).
    state.on_key(key(KeyCode::Down), now);
    assert_eq!(
        state.on_key(key(KeyCode::Enter), now),
        vec![Action::Answer {
            id: RequestId::Integer(0),
            answer: Answer::Command(CommandExecutionApprovalDecision::Decline)
        }]
    );
}

#[test]
fn a_patch_approval_carries_the_file_change_and_a_accepts_for_the_session() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(
        started(json!({"type": "fileChange", "id": "p1", "status": "inProgress",
                       "changes": [{"path": "/work/notes.md", "kind": {"type": "add"}, "diff": "# Notes\n"}]})),
        now,
    );
    state.apply(
        request(
            1,
            method::ITEM_FILE_CHANGE_REQUEST_APPROVAL,
            json!({"threadId": "th1", "turnId": "t1", "itemId": "p1", "startedAtMs": 0,
                   "reason": null, "grantRoot": null}),
        ),
        now,
    );
    match &state.approvals[0].kind {
        ApprovalKind::Patch { changes, .. } => assert_eq!(changes[0].path, "/work/notes.md"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        state.on_key(key(KeyCode::Char('a')), now),
        vec![Action::Answer {
            id: RequestId::Integer(1),
            answer: Answer::Patch(FileChangeApprovalDecision::AcceptForSession)
        }]
    );
}

#[test]
fn a_resolved_request_closes_its_overlay() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(command_approval(None, true), now);
    state.apply(
        note(
            method::SERVER_REQUEST_RESOLVED,
            json!({"threadId": "th1", "requestId": 0}),
        ),
        now,
    );
    assert!(state.approvals.is_empty());
}

#[test]
fn token_usage_sets_the_context_left() {
    let now = Instant::now();
    let mut state = ready();
    let usage = json!({"totalTokens": 2500, "inputTokens": 2000, "cachedInputTokens": 0,
                       "outputTokens": 500, "reasoningOutputTokens": 0});
    state.apply(
        note(
            method::THREAD_TOKEN_USAGE_UPDATED,
            json!({"threadId": "th1", "turnId": "t1", "tokenUsage":
                   {"total": usage, "last": usage, "modelContextWindow": 10000}}),
        ),
        now,
    );
    assert_eq!(state.status.context_left_percent, Some(75));
    assert_eq!(state.status.usage.map(|u| u.total_tokens), Some(2500));
}

#[test]
fn a_failed_turn_start_stops_the_working_state() {
    let now = Instant::now();
    let mut state = ready();
    type_text(&mut state, "hi", now);
    state.on_key(key(KeyCode::Enter), now);
    state.apply(
        AppEvent::RequestFailed {
            message: "could not send the message: boom".into(),
        },
        now,
    );
    assert!(state.turn.is_none());
    assert!(matches!(state.history.last(), Some(Cell::Error { .. })));
}

#[test]
fn a_prompt_after_a_failed_start_says_it_was_not_sent() {
    let now = Instant::now();
    let mut state = AppState::new();
    state.apply(
        AppEvent::RequestFailed {
            message: "could not start a session: no API key".into(),
        },
        now,
    );
    assert_eq!(state.submit_text("hello".into(), now), vec![]);
    assert!(
        matches!(state.history.last(), Some(Cell::Error { message }) if message.starts_with("not sent")),
        "{:?}",
        state.history
    );
    assert!(state.turn.is_none());
}

#[test]
fn an_empty_finished_answer_leaves_no_cell() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(started(agent_item("m1", "")), now);
    state.apply(completed(agent_item("m1", "  ")), now);
    assert!(state.active.is_empty());
    assert_eq!(state.history, vec![]);
}

#[test]
fn a_resumed_thread_replays_its_turns_as_cells() {
    let turn: osprey_app_server_protocol::Turn = serde_json::from_value(json!({
        "id": "turn-1", "rootTurnId": null, "itemsView": "full", "status": "interrupted",
        "error": null, "startedAt": 1, "completedAt": 4, "durationMs": 3000,
        "items": [
            {"type": "userMessage", "id": "u1", "clientId": null,
             "content": [{"type": "text", "text": "earlier question"}]},
            agent_item("m1", "earlier **answer**"),
        ]
    }))
    .unwrap();
    let mut state = AppState::new();
    state.apply(
        AppEvent::ThreadReady {
            thread_id: "th1".into(),
            model: "m".into(),
            cwd: "/w".into(),
            turns: vec![turn],
            settings: Default::default(),
        },
        Instant::now(),
    );
    assert_eq!(
        state.history,
        vec![
            Cell::User {
                text: "earlier question".into()
            },
            Cell::Agent {
                text: "earlier **answer**".into(),
                streaming: false
            },
            Cell::TurnEnd {
                seconds: 3,
                interrupted: true
            },
        ]
    );
}

fn enter(state: &mut AppState) -> Vec<Action> {
    state.on_key(key(KeyCode::Enter), Instant::now())
}

/// Types a slash command and presses Enter.
fn slash(state: &mut AppState, text: &str) -> Vec<Action> {
    type_text(state, text, Instant::now());
    enter(state)
}

fn model(id: &str, efforts: &[&str]) -> osprey_app_server_protocol::Model {
    serde_json::from_value(json!({
        "id": id, "model": id, "displayName": id, "description": format!("{id} model"),
        "supportedReasoningEfforts": efforts.iter()
            .map(|e| json!({"reasoningEffort": e, "description": format!("{e} effort")}))
            .collect::<Vec<_>>(),
        "defaultReasoningEffort": efforts.first(), "isDefault": false,
    }))
    .unwrap()
}

#[test]
fn the_slash_popup_filters_as_typed_and_enter_runs_the_selected_command() {
    let mut state = ready();
    type_text(&mut state, "/", Instant::now());
    assert_eq!(state.popup_entries().len(), slash::COMMANDS.len());
    type_text(&mut state, "st", Instant::now());
    let names: Vec<_> = state.popup_entries().iter().map(|e| e.name).collect();
    assert_eq!(names, vec!["status"]);
    assert_eq!(enter(&mut state), vec![Action::ProbeStatus]);
    assert!(state.composer.is_empty());
    // ↓ moves the selection; Tab completes the name.
    type_text(&mut state, "/m", Instant::now());
    state.on_key(key(KeyCode::Down), Instant::now());
    assert_eq!(state.popup_selected, 1);
    state.on_key(key(KeyCode::Tab), Instant::now());
    assert_eq!(state.composer.text(), "/mcp ");
    assert!(
        state.popup_entries().is_empty(),
        "closed once a space follows"
    );
}

#[test]
fn an_unknown_command_says_so_and_a_path_is_sent_as_a_message() {
    let mut state = ready();
    assert_eq!(slash(&mut state, "/foo"), vec![]);
    assert_eq!(
        state.history.last(),
        Some(&Cell::Error {
            message: "Unrecognized command '/foo'. Type \"/\" for a list of supported commands."
                .into()
        })
    );
    let actions = slash(&mut state, "/tmp/x is slow");
    assert!(matches!(&actions[..], [Action::StartTurn { text, .. }] if text == "/tmp/x is slow"));
}

#[test]
fn status_shows_the_sessions_facts() {
    let mut state = AppState::new();
    state.apply(
        AppEvent::ThreadReady {
            thread_id: "th1".into(),
            model: "gpt-5.5".into(),
            cwd: "/work".into(),
            turns: Vec::new(),
            settings: ThreadSettings {
                provider: "mock".into(),
                approval: Some(osprey_app_server_protocol::AskForApproval::OnRequest),
                sandbox: Some(picker::PresetSandbox::WorkspaceWrite.policy()),
                effort: Some("medium".into()),
            },
        },
        Instant::now(),
    );
    assert_eq!(slash(&mut state, "/status"), vec![Action::ProbeStatus]);
    state.apply(
        AppEvent::StatusProbed {
            agents_files: vec!["/work/AGENTS.md".into()],
        },
        Instant::now(),
    );
    let Some(Cell::Facts { rows, .. }) = state.history.last() else {
        panic!("no status cell: {:?}", state.history);
    };
    let row = |label: &str| {
        rows.iter()
            .find(|(l, _)| l == label)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(row("Model"), "gpt-5.5 (reasoning medium)");
    assert_eq!(row("Model provider"), "mock");
    assert_eq!(row("Permissions"), "Approve in workspace");
    assert_eq!(row("AGENTS.md"), "/work/AGENTS.md");
    assert_eq!(row("Session"), "th1");
}

#[test]
fn permissions_presets_apply_to_the_next_turns() {
    let mut state = ready();
    assert_eq!(slash(&mut state, "/approvals"), vec![]);
    let picker = state.picker.as_ref().unwrap();
    assert_eq!(picker.kind, PickerKind::Permissions);
    assert_eq!(picker.items.len(), 4);
    for _ in 0..3 {
        state.on_key(key(KeyCode::Down), Instant::now());
    }
    assert_eq!(enter(&mut state), vec![]);
    assert!(state.picker.is_none());
    let actions = slash(&mut state, "hello");
    let [Action::StartTurn { overrides, .. }] = &actions[..] else {
        panic!("{actions:?}");
    };
    assert_eq!(
        overrides.approval,
        Some(osprey_app_server_protocol::AskForApproval::Never)
    );
    assert_eq!(
        overrides.sandbox,
        Some(osprey_app_server_protocol::SandboxPolicy::DangerFullAccess)
    );
}

#[test]
fn model_then_effort_apply_to_the_next_turns() {
    let mut state = ready();
    assert_eq!(slash(&mut state, "/model"), vec![Action::ListModels]);
    assert!(state.picker.as_ref().unwrap().loading);
    state.apply(
        AppEvent::Models(vec![
            model("mock-model", &[]),
            model("big", &["low", "high"]),
        ]),
        Instant::now(),
    );
    let picker = state.picker.as_ref().unwrap();
    assert_eq!(picker.items[0].label, "mock-model (current)");
    assert_eq!(picker.selected, 0, "the current model is selected");
    state.on_key(key(KeyCode::Down), Instant::now());
    enter(&mut state);
    let picker = state.picker.as_ref().unwrap();
    assert_eq!(
        picker.kind,
        PickerKind::Effort {
            model: "big".into()
        }
    );
    state.on_key(key(KeyCode::Down), Instant::now());
    enter(&mut state);
    assert!(state.picker.is_none());
    assert_eq!(state.status.model, "big");
    let actions = slash(&mut state, "hi");
    let [Action::StartTurn { overrides, .. }] = &actions[..] else {
        panic!("{actions:?}");
    };
    assert_eq!(overrides.model.as_deref(), Some("big"));
    assert_eq!(overrides.effort.as_deref(), Some("high"));
}

#[test]
fn thread_changing_commands_wait_for_an_idle_thread() {
    let mut state = ready();
    slash(&mut state, "working");
    assert_eq!(slash(&mut state, "/new"), vec![]);
    assert!(
        matches!(state.history.last(), Some(Cell::Notice { text }) if text.contains("'/new' is disabled"))
    );
    let mut idle = ready();
    assert_eq!(slash(&mut idle, "/new"), vec![Action::NewThread]);
    assert_eq!(
        slash(&mut idle, "/fork"),
        vec![Action::OpenThread {
            thread_id: "th1".into(),
            fork: true,
            replay: false
        }]
    );
    assert_eq!(
        slash(&mut idle, "/compact"),
        vec![Action::Compact {
            thread_id: "th1".into()
        }]
    );
    assert!(idle.turn.is_some(), "compaction runs as a turn");
    let mut quitting = ready();
    assert_eq!(slash(&mut quitting, "/quit"), vec![Action::Quit]);
    assert!(quitting.should_quit);
}

#[test]
fn copy_takes_the_last_answers_markdown() {
    let mut state = ready();
    assert_eq!(slash(&mut state, "/copy"), vec![]);
    assert!(
        matches!(state.history.last(), Some(Cell::Notice { text }) if text.starts_with("Nothing to copy"))
    );
    state.history.push(Cell::Agent {
        text: "**first**".into(),
        streaming: false,
    });
    state.history.push(Cell::Agent {
        text: "## second".into(),
        streaming: false,
    });
    assert_eq!(
        slash(&mut state, "/copy"),
        vec![Action::Copy {
            text: "## second".into()
        }]
    );
}

#[test]
fn init_asks_the_model_unless_agents_md_exists() {
    let mut state = ready();
    assert_eq!(slash(&mut state, "/init"), vec![Action::ProbeInit]);
    assert_eq!(
        state.apply(AppEvent::InitProbed { exists: true }, Instant::now()),
        vec![]
    );
    let actions = state.apply(AppEvent::InitProbed { exists: false }, Instant::now());
    assert!(matches!(&actions[..], [Action::StartTurn { text, .. }] if text.contains("AGENTS.md")));
}

#[test]
fn the_session_picker_searches_through_thread_list_and_opens_the_choice() {
    let mut state = ready();
    assert_eq!(
        slash(&mut state, "/resume"),
        vec![Action::ListSessions {
            query: SessionQuery {
                search: String::new(),
                ..Default::default()
            }
        }]
    );
    assert_eq!(
        state.on_key(key(KeyCode::Char('a')), Instant::now()),
        vec![Action::ListSessions {
            query: SessionQuery {
                search: "a".into(),
                ..Default::default()
            }
        }]
    );
    assert_eq!(
        state.on_key(key(KeyCode::Char('b')), Instant::now()),
        vec![Action::ListSessions {
            query: SessionQuery {
                search: "ab".into(),
                ..Default::default()
            }
        }]
    );
    let row = |id: &str, preview: &str| SessionRow {
        id: id.into(),
        preview: preview.into(),
        updated_at: 1000,
        created_at: 10,
    };
    // A late answer to an older search is dropped.
    state.apply(
        AppEvent::Sessions {
            query: SessionQuery {
                search: "a".into(),
                ..Default::default()
            },
            threads: vec![row("old", "a")],
            now: 1030,
        },
        Instant::now(),
    );
    assert!(state.picker.as_ref().unwrap().items.is_empty());
    state.apply(
        AppEvent::Sessions {
            query: SessionQuery {
                search: "ab".into(),
                ..Default::default()
            },
            threads: vec![row("th1", "this one"), row("t2", "abc task\nmore")],
            now: 1030,
        },
        Instant::now(),
    );
    let picker = state.picker.as_ref().unwrap();
    assert_eq!(picker.items.len(), 1, "the open thread is not offered");
    assert_eq!(picker.items[0].label, "30s ago");
    assert_eq!(picker.items[0].description, "abc task");
    assert_eq!(
        enter(&mut state),
        vec![Action::OpenThread {
            thread_id: "t2".into(),
            fork: false,
            replay: true
        }]
    );
}

#[test]
fn the_session_pickers_options_relist_and_ctrl_a_archives() {
    let mut state = ready();
    slash(&mut state, "/resume");
    let now = Instant::now();
    let press = |state: &mut AppState, code: KeyCode| state.on_key(key(code), now);
    // ←/→ do nothing until Tab focuses a group.
    assert_eq!(press(&mut state, KeyCode::Right), vec![]);
    assert_eq!(press(&mut state, KeyCode::Tab), vec![]);
    let all = SessionQuery {
        all_dirs: true,
        ..Default::default()
    };
    assert_eq!(
        press(&mut state, KeyCode::Right),
        vec![Action::ListSessions { query: all.clone() }]
    );
    assert_eq!(press(&mut state, KeyCode::Right), vec![], "already All");
    press(&mut state, KeyCode::Tab);
    press(&mut state, KeyCode::Tab);
    let created = SessionQuery {
        by_created: true,
        ..all
    };
    assert_eq!(
        press(&mut state, KeyCode::Right),
        vec![Action::ListSessions {
            query: created.clone()
        }]
    );
    // Typing still searches, within the options.
    let searched = SessionQuery {
        search: "x".into(),
        ..created
    };
    assert_eq!(
        press(&mut state, KeyCode::Char('x')),
        vec![Action::ListSessions {
            query: searched.clone()
        }]
    );
    state.apply(
        AppEvent::Sessions {
            query: searched,
            threads: vec![
                SessionRow {
                    id: "t1".into(),
                    preview: "x one".into(),
                    updated_at: 1000,
                    created_at: 400,
                },
                SessionRow {
                    id: "t2".into(),
                    preview: "x two".into(),
                    updated_at: 1000,
                    created_at: 700,
                },
            ],
            now: 1000,
        },
        now,
    );
    let picker = state.picker.as_ref().unwrap();
    assert_eq!(
        picker.items[0].label, "10m ago",
        "Sort: Created shows the age"
    );
    assert_eq!(
        state.on_key(ctrl('a'), now),
        vec![Action::ArchiveSession {
            thread_id: "t1".into(),
            archive: true
        }]
    );
    state.apply(
        AppEvent::SessionArchived {
            thread_id: "t1".into(),
            archived: true,
        },
        now,
    );
    let picker = state.picker.as_ref().unwrap();
    let left: Vec<&str> = picker.items.iter().map(|i| i.value.as_str()).collect();
    assert_eq!(left, ["t2"]);
    // In Status: Archived, Ctrl+A brings a session back.
    press(&mut state, KeyCode::BackTab);
    press(&mut state, KeyCode::Right);
    let query = state.picker.as_ref().unwrap().sessions.clone().unwrap();
    assert!(query.archived, "{query:?}");
    state.apply(
        AppEvent::Sessions {
            query,
            threads: vec![SessionRow {
                id: "t1".into(),
                preview: "x one".into(),
                updated_at: 1000,
                created_at: 400,
            }],
            now: 1000,
        },
        now,
    );
    assert_eq!(
        state.on_key(ctrl('a'), now),
        vec![Action::ArchiveSession {
            thread_id: "t1".into(),
            archive: false
        }]
    );
}

#[test]
fn esc_on_the_startup_session_picker_starts_a_new_session() {
    let mut state = AppState::new();
    assert_eq!(
        state.apply(AppEvent::PickSession { fork: true }, Instant::now()),
        vec![Action::ListSessions {
            query: SessionQuery {
                search: String::new(),
                ..Default::default()
            }
        }]
    );
    assert_eq!(
        state.on_key(key(KeyCode::Esc), Instant::now()),
        vec![Action::NewThread]
    );
}

#[test]
fn the_pager_scrolls_and_closes() {
    let mut state = ready();
    state.screen_rows = 24;
    state.apply(AppEvent::Diff("+a\n-b\n".into()), Instant::now());
    let pager = state.pager.as_ref().unwrap();
    assert_eq!(pager.scroll, 0);
    state.on_key(key(KeyCode::PageDown), Instant::now());
    assert_eq!(state.pager.as_ref().unwrap().scroll, 20);
    state.on_key(key(KeyCode::Home), Instant::now());
    assert_eq!(state.pager.as_ref().unwrap().scroll, 0);
    state.on_key(key(KeyCode::Char('q')), Instant::now());
    assert!(state.pager.is_none());
    state.on_key(ctrl('t'), Instant::now());
    assert_eq!(
        state.pager.as_ref().map(|p| &p.content),
        Some(&PagerContent::Transcript)
    );
    state.on_key(key(KeyCode::Esc), Instant::now());
    assert!(state.pager.is_none());
    // No changes: a note instead of an empty pager.
    state.apply(AppEvent::Diff(String::new()), Instant::now());
    assert!(state.pager.is_none());
}

#[test]
fn ctrl_r_searches_the_history_and_enter_puts_the_match_in_the_draft() {
    let mut state = ready();
    slash(&mut state, "explain the tables");
    state.apply(
        note(method::TURN_COMPLETED, turn("t1", "completed")),
        Instant::now(),
    );
    state.on_key(ctrl('r'), Instant::now());
    type_text(&mut state, "tab", Instant::now());
    assert_eq!(state.composer.search().and_then(|s| s.hit), Some(0));
    assert_eq!(enter(&mut state), vec![], "Enter accepts, it does not send");
    assert_eq!(state.composer.text(), "explain the tables");
}

#[test]
fn a_large_paste_is_sent_whole_and_images_go_before_the_text() {
    let mut state = ready();
    let big = "y".repeat(2000);
    state.on_paste(&big);
    assert_eq!(state.composer.text(), "[Pasted Content 2000 chars]");
    state.attach_image("/tmp/shot.png");
    let actions = enter(&mut state);
    let [Action::StartTurn { text, images, .. }] = &actions[..] else {
        panic!("{actions:?}");
    };
    assert_eq!(text, &format!("{big}[Image #1]"));
    assert_eq!(images, &vec!["/tmp/shot.png".to_owned()]);
}

#[test]
fn at_completes_a_file_path_from_the_index() {
    let mut state = ready();
    type_text(&mut state, "look at ", Instant::now());
    assert_eq!(
        state.on_key(key(KeyCode::Char('@')), Instant::now()),
        vec![Action::IndexFiles],
        "the files are indexed once, when first needed"
    );
    state.apply(
        AppEvent::Files(vec![
            "README.md".into(),
            "crates/tui/src/state/mod.rs".into(),
            "my notes.txt".into(),
        ]),
        Instant::now(),
    );
    type_text(&mut state, "stmod", Instant::now());
    assert_eq!(
        state.mention.as_ref().map(|m| m.matches.clone()),
        Some(vec!["crates/tui/src/state/mod.rs".to_owned()])
    );
    state.on_key(key(KeyCode::Tab), Instant::now());
    assert_eq!(
        state.composer.text(),
        "look at crates/tui/src/state/mod.rs "
    );
    assert!(state.mention.is_none());
    // A path with a space is quoted; Esc closes the popup for that word.
    type_text(&mut state, "@notes", Instant::now());
    enter(&mut state);
    assert!(state.composer.text().ends_with("\"my notes.txt\" "));
    type_text(&mut state, "@read", Instant::now());
    state.on_key(key(KeyCode::Esc), Instant::now());
    assert!(state.mention.is_none());
    type_text(&mut state, "m", Instant::now());
    assert!(state.mention.is_none(), "stays closed for this word");
}

fn plan_step(text: &str, status: TurnPlanStepStatus) -> plan::PlanStep {
    plan::PlanStep {
        text: text.into(),
        status,
    }
}

fn plan_update(thread: &str, explanation: Value, statuses: [&str; 2]) -> AppEvent {
    note(
        method::TURN_PLAN_UPDATED,
        json!({"threadId": thread, "turnId": "t1", "explanation": explanation,
               "plan": [{"step": "Read the code", "status": statuses[0]},
                        {"step": "Fix the bug", "status": statuses[1]}]}),
    )
}

#[test]
fn each_plan_update_is_its_own_cell_and_a_resumed_plan_is_the_same_cell() {
    let mut state = ready();
    let now = Instant::now();
    state.apply(
        plan_update(
            "th1",
            json!("Starting with the code."),
            ["inProgress", "pending"],
        ),
        now,
    );
    state.apply(
        plan_update("th1", Value::Null, ["completed", "inProgress"]),
        now,
    );
    // A sub-agent's plan streams on the same connection under its own thread id.
    state.apply(
        plan_update("agent-7", Value::Null, ["completed", "completed"]),
        now,
    );
    let live = vec![
        Cell::Plan(plan::PlanCell {
            explanation: Some("Starting with the code.".into()),
            steps: vec![
                plan_step("Read the code", TurnPlanStepStatus::InProgress),
                plan_step("Fix the bug", TurnPlanStepStatus::Pending),
            ],
        }),
        Cell::Plan(plan::PlanCell {
            explanation: None,
            steps: vec![
                plan_step("Read the code", TurnPlanStepStatus::Completed),
                plan_step("Fix the bug", TurnPlanStepStatus::InProgress),
            ],
        }),
    ];
    assert_eq!(state.history, live);
    assert!(
        state.active.is_empty(),
        "a plan is finished when it arrives"
    );

    // The same two calls as the app server's history gives them back.
    let turn: osprey_app_server_protocol::Turn = serde_json::from_value(json!({
        "id": "turn-1", "rootTurnId": null, "itemsView": "full", "status": "completed",
        "error": null, "startedAt": 1, "completedAt": 2, "durationMs": 1000,
        "items": [
            {"type": "plan", "id": "plan-update-1",
             "text": "Starting with the code.\n\n- [~] Read the code\n- [ ] Fix the bug"},
            {"type": "plan", "id": "plan-update-2",
             "text": "- [x] Read the code\n- [~] Fix the bug"},
        ]
    }))
    .unwrap();
    let mut resumed = AppState::new();
    resumed.apply(
        AppEvent::ThreadReady {
            thread_id: "th1".into(),
            model: "m".into(),
            cwd: "/w".into(),
            turns: vec![turn],
            settings: Default::default(),
        },
        now,
    );
    assert_eq!(resumed.history[..2], live[..]);
}

#[test]
fn plan_mcp_and_compaction_items_become_cells() {
    let mut state = ready();
    state.apply(
        completed(json!({"type": "plan", "id": "p1", "text": "- [x] one\n- [ ] two"})),
        Instant::now(),
    );
    state.apply(
        completed(
            json!({"type": "mcpToolCall", "id": "x1", "server": "docs", "environmentId": null,
            "tool": "search", "status": "completed", "arguments": {"q": "tui"},
            "appContext": null, "mcpAppUi": null, "pluginId": null, "readOnlyHint": null,
            "result": {"content": [{"type": "text", "text": "found it"}]},
            "error": null, "durationMs": 12}),
        ),
        Instant::now(),
    );
    state.apply(
        completed(json!({"type": "contextCompaction", "id": "c1"})),
        Instant::now(),
    );
    assert_eq!(
        state.history,
        vec![
            Cell::Plan(plan::PlanCell {
                explanation: None,
                steps: vec![
                    plan_step("one", TurnPlanStepStatus::Completed),
                    plan_step("two", TurnPlanStepStatus::Pending),
                ],
            }),
            Cell::Mcp(cells::McpCell {
                server: "docs".into(),
                tool: "search".into(),
                arguments: r#"{"q":"tui"}"#.into(),
                status: osprey_app_server_protocol::McpToolCallStatus::Completed,
                result: Some("found it".into()),
                error: None,
                duration_ms: Some(12),
            }),
            Cell::Compaction,
        ]
    );
}

fn mcp_server(name: &str, tools: &[&str]) -> osprey_app_server_protocol::McpServerStatus {
    osprey_app_server_protocol::McpServerStatus {
        name: name.to_owned(),
        tools: tools
            .iter()
            .map(|t| {
                (
                    (*t).to_owned(),
                    json!({"name": t, "inputSchema": {"type": "object"}}),
                )
            })
            .collect(),
        resources: Vec::new(),
        resource_templates: Vec::new(),
        auth_status: osprey_app_server_protocol::McpAuthStatus::Unsupported,
        enabled: true,
        startup_error: None,
    }
}

#[test]
fn mcp_lists_each_servers_tools_and_why_others_do_not_run() {
    let mut state = ready();
    assert_eq!(
        slash(&mut state, "/mcp"),
        vec![Action::ListMcpServers {
            thread_id: state.thread_id.clone()
        }]
    );
    let mut broken = mcp_server("broken", &[]);
    broken.startup_error = Some("`sh` exited with status 3: the database is gone".into());
    let mut off = mcp_server("off", &[]);
    off.enabled = false;
    let mut token = mcp_server("remote", &["search"]);
    token.auth_status = osprey_app_server_protocol::McpAuthStatus::BearerToken;
    state.apply(
        AppEvent::McpServers(vec![
            broken,
            mcp_server("docs", &["read_doc", "list_docs"]),
            off,
            token,
        ]),
        Instant::now(),
    );
    let Some(Cell::Facts { rows, .. }) = state.history.last() else {
        panic!("{:?}", state.history);
    };
    assert_eq!(
        rows,
        &vec![
            (
                "broken".to_owned(),
                "failed to start: `sh` exited with status 3: the database is gone".to_owned()
            ),
            (
                "docs".to_owned(),
                "running · 2 tools\nlist_docs, read_doc".to_owned()
            ),
            (
                "off".to_owned(),
                "disabled (enabled = false in its [mcp_servers] entry)".to_owned()
            ),
            (
                "remote".to_owned(),
                "running · 1 tool · bearer token\nsearch".to_owned()
            ),
        ]
    );

    state.apply(AppEvent::McpServers(Vec::new()), Instant::now());
    let Some(Cell::Facts { rows, .. }) = state.history.last() else {
        panic!("{:?}", state.history);
    };
    assert!(rows[0].1.contains("none configured"), "{rows:?}");
}

#[test]
fn hidden_reasoning_leaves_no_cell() {
    let mut state = ready();
    state.hide_reasoning = true;
    state.apply(
        note(
            method::ITEM_REASONING_SUMMARY_TEXT_DELTA,
            json!({"threadId": "th1", "turnId": "t1", "itemId": "r1", "delta": "thinking",
                   "summaryIndex": 0}),
        ),
        Instant::now(),
    );
    state.apply(
        completed(json!({"type": "reasoning", "id": "r1", "summary": ["thinking"], "content": []})),
        Instant::now(),
    );
    assert!(state.active.is_empty());
    assert_eq!(state.history, vec![]);
}

#[test]
fn the_trust_question_is_answered_with_one_key() {
    let mut state = AppState::new();
    state.trust = Some(("/p".into(), 0));
    assert_eq!(
        state.on_key(key(KeyCode::Char('x')), Instant::now()),
        vec![]
    );
    state.on_key(key(KeyCode::Down), Instant::now());
    assert_eq!(
        state.on_key(key(KeyCode::Enter), Instant::now()),
        vec![Action::Trust { trusted: false }]
    );
    assert!(state.trust.is_none());
    state.trust = Some(("/p".into(), 1));
    assert_eq!(
        state.on_key(key(KeyCode::Char('1')), Instant::now()),
        vec![Action::Trust { trusted: true }]
    );
}

#[test]
fn ctrl_g_hands_out_the_expanded_draft_and_takes_the_edit_back() {
    let now = Instant::now();
    let mut state = ready();
    type_text(&mut state, "fix ", now);
    let long = "x".repeat(1500);
    state.on_paste(&long);
    assert!(state.composer.text().contains("[Pasted Content"));
    let actions = state.on_key(ctrl('g'), now);
    assert_eq!(
        actions,
        vec![Action::EditDraft {
            text: format!("fix {long}")
        }]
    );
    // A failed edit keeps the draft and says why.
    let before = state.composer.text().to_owned();
    state.finish_edit(Err(
        "the editor `vim` exited with status 1; the draft is unchanged".into(),
    ));
    assert_eq!(state.composer.text(), before);
    assert!(matches!(
        state.history.last(),
        Some(Cell::Warning { message }) if message.contains("status 1")
    ));
    // The edited text replaces the draft (its final newline dropped) and is what is sent.
    state.finish_edit(Ok("fix the parser\n".into()));
    assert_eq!(state.composer.text(), "fix the parser");
    let sent = state.on_key(key(KeyCode::Enter), now);
    assert!(
        sent.iter()
            .any(|a| matches!(a, Action::StartTurn { text, .. } if text == "fix the parser")),
        "{sent:?}"
    );
}

#[test]
fn a_sub_agent_call_from_the_wire_becomes_a_collab_cell() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(note(method::TURN_STARTED, turn("t1", "inProgress")), now);
    // As Codex 0.171's app server sends it (captures/appserver-collab-v1.jsonl).
    let item = json!({"type": "collabAgentToolCall", "id": "call_wait", "tool": "wait",
        "status": "completed", "senderThreadId": "th1",
        "receiverThreadIds": ["01a230c9-963e-76e1-acc8-47e827c94a9a"], "prompt": null,
        "model": null, "reasoningEffort": null,
        "agentsStates": {"01a230c9-963e-76e1-acc8-47e827c94a9a":
            {"status": "completed", "message": "child finished"}},
        "startedAtMs": 1, "completedAtMs": 2});
    state.apply(completed(item), now);
    let found = state.history.iter().any(|cell| {
        matches!(cell, Cell::Collab(call)
            if call.receivers.len() == 1
                && call.states.first().is_some_and(|s| s.status == "completed"
                    && s.message.as_deref() == Some("child finished")))
    });
    assert!(found, "{:?}", state.history);
}

/// Regression: a sub-agent's events (streamed on the same connection under its own thread
/// id) were shown as the parent's cells and its turn's end ended the parent's turn.
#[test]
fn another_threads_events_leave_the_transcript_and_the_turn_alone() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(note(method::TURN_STARTED, turn("t1", "inProgress")), now);
    let cells = state.history.len();
    let mut child_turn = turn("c1", "completed");
    child_turn["threadId"] = json!("child");
    state.apply(note(method::TURN_COMPLETED, child_turn), now);
    let agent = json!({"type": "agentMessage", "id": "m9", "text": "the child's words",
        "phase": null, "moderation": null, "memoryCitation": null, "delivery": null,
        "questions": null});
    state.apply(
        note(
            method::ITEM_COMPLETED,
            json!({"item": agent, "threadId": "child", "turnId": "c1", "completedAtMs": 0}),
        ),
        now,
    );
    assert_eq!(state.history.len(), cells, "{:?}", state.history);
    assert!(state.turn.is_some(), "the parent's turn still runs");
    // The parent's own events still count.
    state.apply(completed(agent_item("m1", "parent words")), now);
    assert_eq!(state.history.len(), cells + 1);
}

#[test]
fn a_sub_agents_patch_approval_names_the_agent_and_keeps_its_diff() {
    let now = Instant::now();
    let mut state = ready();
    state.apply(
        note(
            method::ITEM_STARTED,
            json!({"item": {"type": "fileChange", "id": "p7", "status": "inProgress",
                            "changes": [{"path": "/work/child.md", "kind": {"type": "add"},
                                         "diff": "# Child\n"}]},
                   "threadId": "child", "turnId": "c1", "startedAtMs": 0}),
        ),
        now,
    );
    assert!(
        state.active.is_empty(),
        "the child's item is not a parent cell"
    );
    state.apply(
        request(
            3,
            method::ITEM_FILE_CHANGE_REQUEST_APPROVAL,
            json!({"threadId": "child", "turnId": "c1", "itemId": "p7", "startedAtMs": 0,
                   "reason": null, "grantRoot": null}),
        ),
        now,
    );
    let approval = &state.approvals[0];
    assert_eq!(approval.from_agent.as_deref(), Some("child"));
    match &approval.kind {
        ApprovalKind::Patch { changes, .. } => assert_eq!(changes[0].path, "/work/child.md"),
        other => panic!("{other:?}"),
    }
}
