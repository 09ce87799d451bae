//! Snapshots of every cell kind, the composer, the approval overlays and the status line,
//! drawn through ratatui's test backend at 80×24 and 120×40.

use std::time::{Duration, Instant};

use osprey_app_server_protocol::{
    CommandExecutionSource, CommandExecutionStatus, FileUpdateChange, PatchApplyStatus,
    PatchChangeKind, RequestId,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::text::Line;

use super::*;
use crate::state::{ApprovalKind, Cell, ExecCell, PendingApproval, Status};

/// The screen after drawing `lines` from the top, as text.
fn screen(lines: &[Line<'static>], width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|frame| draw_lines(lines, frame.area(), frame.buffer_mut()))
        .unwrap();
    let buffer = terminal.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let mut row = String::new();
        for x in 0..width {
            row.push_str(buffer[(x, y)].symbol());
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

fn both_sizes(name: &str, lines_at: impl Fn(usize) -> Vec<Line<'static>>) {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let lines = lines_at(usize::from(w));
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(&lines, w, h));
    }
}

const ANSWER: &str = "## Summary\n\nThe **TUI** renders `markdown` as you would expect:\n\n\
- headings keep their `#`\n- lists become bullets\n  1. nested and numbered\n\n\
| crate | owns | must not depend on |\n|---|---|---|\n\
| `tui` | the interactive terminal UI, a client of the app-server protocol | core, exec |\n\
| `app-server` | JSON-RPC server for editors and for the TUI in process | tui, exec |\n\n\
```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\nSee [the docs](https://example.com/tui).\n";

fn exec(status: CommandExecutionStatus, output: &str, exit: Option<i32>) -> Cell {
    Cell::Exec(ExecCell {
        command: "cargo test -p osprey-tui".into(),
        source: CommandExecutionSource::Agent,
        status,
        output: output.into(),
        exit_code: exit,
        duration_ms: exit.map(|_| 4200),
    })
}

fn update_change() -> FileUpdateChange {
    FileUpdateChange {
        path: "src/notes.txt".into(),
        kind: PatchChangeKind::Update { move_path: None },
        diff: "--- a/src/notes.txt\n+++ b/src/notes.txt\n@@ -1,3 +1,3 @@\n hello\n-world\n+osprey world\n+added line\n"
            .into(),
    }
}

#[test]
fn user_message() {
    both_sizes("user_message", |w| {
        cells::cell_lines(
            &Cell::User {
                text: "Explain the crate map,\nthen make the notes file.".into(),
            },
            w,
        )
    });
}

#[test]
fn agent_message_with_a_table_and_code() {
    both_sizes("agent_markdown", |w| {
        cells::cell_lines(
            &Cell::Agent {
                text: ANSWER.into(),
                streaming: false,
            },
            w,
        )
    });
}

#[test]
fn reasoning_summary() {
    both_sizes("reasoning", |w| {
        cells::cell_lines(
            &Cell::Reasoning {
                text: "**Planning the change**\n\nI will read the crate map first.".into(),
            },
            w,
        )
    });
}

#[test]
fn command_running_and_finished() {
    both_sizes("exec_cells", |w| {
        let many: String = (1..=9).map(|n| format!("output line {n}\n")).collect();
        let mut lines = cells::cell_lines(
            &exec(
                CommandExecutionStatus::InProgress,
                "Compiling osprey-tui\n",
                None,
            ),
            w,
        );
        lines.extend(cells::cell_lines(
            &exec(CommandExecutionStatus::Completed, &many, Some(0)),
            w,
        ));
        lines.extend(cells::cell_lines(
            &exec(
                CommandExecutionStatus::Failed,
                "error: no such test\n",
                Some(101),
            ),
            w,
        ));
        lines.extend(cells::cell_lines(
            &Cell::Exec(ExecCell {
                command: "echo hi".into(),
                source: CommandExecutionSource::UserShell,
                status: CommandExecutionStatus::Completed,
                output: String::new(),
                exit_code: Some(0),
                duration_ms: Some(15),
            }),
            w,
        ));
        lines
    });
}

#[test]
fn file_change_with_diff() {
    both_sizes("file_change", |w| {
        cells::cell_lines(
            &Cell::FileChange {
                changes: vec![
                    update_change(),
                    FileUpdateChange {
                        path: "docs/new.md".into(),
                        kind: PatchChangeKind::Add,
                        diff: "# New\n".into(),
                    },
                ],
                status: PatchApplyStatus::Completed,
            },
            w,
        )
    });
}

#[test]
fn errors_warnings_notices_and_turn_ends() {
    both_sizes("notes", |w| {
        let mut lines = Vec::new();
        for cell in [
            Cell::Error {
                message: "the model server at http://127.0.0.1:9/v1 refused the connection; check model_providers.mock.base_url".into(),
            },
            Cell::Warning {
                message: "retrying in 2s (1 of 3)".into(),
            },
            Cell::Notice {
                text: "✔ You approved Osprey to run touch notes.txt this time".into(),
            },
            Cell::TurnEnd {
                seconds: 8,
                interrupted: false,
            },
            Cell::TurnEnd {
                seconds: 75,
                interrupted: true,
            },
        ] {
            lines.extend(cells::cell_lines(&cell, w));
        }
        lines
    });
}

#[test]
fn composer_empty_and_multi_line() {
    both_sizes("composer", |w| {
        let mut state = crate::state::AppState::new();
        let (mut lines, _) = bottom::composer_lines(&state.composer, w);
        lines.push(Line::default());
        state
            .composer
            .set_text("first line\nsecond line, which is long enough to wrap when the terminal is only eighty columns wide\n");
        let (more, cursor) = bottom::composer_lines(&state.composer, w);
        lines.extend(more);
        lines.push(Line::from(format!("cursor at {cursor:?}")));
        lines
    });
}

fn command_approval() -> PendingApproval {
    PendingApproval {
        id: RequestId::Integer(0),
        kind: ApprovalKind::Command {
            command: "mkdir -p /home/user/projects/osprey/target/some/very/deeply/nested/output/directory && touch /home/user/projects/osprey/target/some/very/deeply/nested/output/directory/marker".into(),
            cwd: Some("/home/user/projects/osprey".into()),
            reason: Some("Create the output directory outside the workspace".into()),
            proposed_prefix: Some(vec!["mkdir".into(), "-p".into()]),
            session_allowed: true,
            sandbox_denial: None,
        },
        selected: 0,
        from_agent: None,
    }
}

#[test]
fn command_approval_overlay() {
    both_sizes("command_approval", |w| {
        bottom::approval_lines(&command_approval(), w)
    });
}

#[test]
fn sub_agent_command_approval_overlay() {
    let approval = PendingApproval {
        from_agent: Some("01a2342c-34e8-7287-8117-5a6683027c94".into()),
        ..command_approval()
    };
    both_sizes("sub_agent_command_approval", |w| {
        bottom::approval_lines(&approval, w)
    });
}

#[test]
fn sandbox_denial_rerun_overlay() {
    let approval = PendingApproval {
        id: RequestId::Integer(2),
        kind: ApprovalKind::Command {
            command: "touch /usr/local/share/marker".into(),
            cwd: Some("/home/user/projects/osprey".into()),
            reason: Some("the sandbox blocked it (touch: cannot touch '/usr/local/share/marker': Read-only file system); run it again without the sandbox?".into()),
            proposed_prefix: None,
            session_allowed: true,
            sandbox_denial: Some(
                "touch: cannot touch '/usr/local/share/marker': Read-only file system".into(),
            ),
        },
        selected: 0,
        from_agent: None,
    };
    both_sizes("sandbox_denial_approval", |w| {
        bottom::approval_lines(&approval, w)
    });
}

#[test]
fn patch_approval_overlay() {
    both_sizes("patch_approval", |w| {
        let approval = PendingApproval {
            id: RequestId::Integer(1),
            kind: ApprovalKind::Patch {
                reason: Some("Update the notes".into()),
                grant_root: None,
                changes: vec![update_change()],
            },
            selected: 1,
            from_agent: None,
        };
        bottom::approval_lines(&approval, w)
    });
}

#[test]
fn status_line_idle_and_working() {
    both_sizes("status", |w| {
        let status = Status {
            model: "gpt-5.5".into(),
            cwd: "/home/user/projects/osprey".into(),
            context_left_percent: Some(87),
            ..Status::default()
        };
        vec![
            bottom::status_line(&status, None, 0, false, w),
            bottom::status_line(&status, Some(Duration::from_secs(75)), 2, false, w),
            bottom::status_line(&status, None, 0, true, w),
        ]
    });
}

#[test]
fn the_live_area_keeps_the_overlay_choices_on_a_short_screen() {
    let mut state = crate::state::AppState::new();
    state.approvals.push(command_approval());
    state.active.push((
        "m1".into(),
        Cell::Agent {
            text: ANSWER.into(),
            streaming: true,
        },
    ));
    let live = live_lines(&state, Some(Duration::from_secs(3)), 80, 24);
    assert!(live.lines.len() <= 24, "{}", live.lines.len());
    let text = screen(&live.lines, 80, 24);
    assert!(text.contains("(esc)"), "{text}");
    assert!(text.contains("Working (3s"), "{text}");
    assert_eq!(
        live.cursor, None,
        "the overlay has the keys, not the composer"
    );
    let _ = Instant::now();
}

#[test]
fn a_resumed_transcript_is_drawn_as_it_was_live() {
    let turn: osprey_app_server_protocol::Turn = serde_json::from_value(serde_json::json!({
        "id": "turn-1", "rootTurnId": null, "itemsView": "full", "status": "completed",
        "error": null, "startedAt": 1, "completedAt": 9, "durationMs": 8000,
        "items": [
            {"type": "userMessage", "id": "u1", "clientId": null,
             "content": [{"type": "text", "text": "Explain the crate map"}]},
            {"type": "commandExecution", "id": "c1", "pluginId": null, "scriptPath": null,
             "command": "cat docs/architecture.md", "cwd": "/work", "processId": null,
             "source": "agent", "status": "completed", "commandActions": [],
             "aggregatedOutput": "# Architecture\n", "exitCode": 0, "durationMs": 12},
            {"type": "agentMessage", "id": "m1", "text": ANSWER, "phase": null,
             "moderation": null, "memoryCitation": null, "delivery": null, "questions": null},
        ]
    }))
    .unwrap();
    let mut state = crate::state::AppState::new();
    state.apply(
        crate::state::AppEvent::ThreadReady {
            thread_id: "th1".into(),
            model: "m".into(),
            cwd: "/work".into(),
            turns: vec![turn],
            settings: Default::default(),
        },
        Instant::now(),
    );
    let cells = state.take_unflushed().to_vec();
    both_sizes("resumed_transcript", |w| {
        cells.iter().flat_map(|c| cells::cell_lines(c, w)).collect()
    });
}

fn ready_state() -> crate::state::AppState {
    let mut state = crate::state::AppState::new();
    state.apply(
        crate::state::AppEvent::ThreadReady {
            thread_id: "th1".into(),
            model: "gpt-5.5".into(),
            cwd: "/work".into(),
            turns: Vec::new(),
            settings: Default::default(),
        },
        Instant::now(),
    );
    state
}

fn type_into(state: &mut crate::state::AppState, text: &str) {
    for c in text.chars() {
        state.on_key(
            crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Char(c),
                crossterm::event::KeyModifiers::NONE,
            ),
            Instant::now(),
        );
    }
}

#[test]
fn slash_popup_above_the_composer() {
    let mut state = ready_state();
    type_into(&mut state, "/");
    both_sizes("slash_popup", |w| live_lines(&state, None, w, 24).lines);
    type_into(&mut state, "m");
    both_sizes("slash_popup_filtered", |w| {
        live_lines(&state, None, w, 24).lines
    });
}

#[test]
fn permissions_picker() {
    let mut state = ready_state();
    type_into(&mut state, "/permissions");
    state.on_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Enter,
            crossterm::event::KeyModifiers::NONE,
        ),
        Instant::now(),
    );
    both_sizes("permissions_picker", |w| {
        live_lines(&state, None, w, 24).lines
    });
}

#[test]
fn session_picker_with_a_search() {
    let mut state = ready_state();
    state.apply(
        crate::state::AppEvent::PickSession { fork: false },
        Instant::now(),
    );
    type_into(&mut state, "tab");
    state.apply(
        crate::state::AppEvent::Sessions {
            query: crate::state::sessions::SessionQuery {
                search: "tab".into(),
                ..Default::default()
            },
            threads: vec![
                crate::state::SessionRow {
                    id: "a".into(),
                    preview: "lay out the markdown tables".into(),
                    updated_at: 1000,
                    created_at: 900,
                },
                crate::state::SessionRow {
                    id: "b".into(),
                    preview: "why is the table test slow".into(),
                    updated_at: 1000 - 7200,
                    created_at: 0,
                },
            ],
            now: 1011,
        },
        Instant::now(),
    );
    both_sizes("session_picker", |w| live_lines(&state, None, w, 24).lines);
}

#[test]
fn session_picker_of_archived_sessions_everywhere() {
    let mut state = ready_state();
    state.apply(
        crate::state::AppEvent::PickSession { fork: false },
        Instant::now(),
    );
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let tab = KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE);
    let right = KeyEvent::new(KeyCode::Right, KeyModifiers::NONE);
    for key in [tab, right, tab, right] {
        state.on_key(key, Instant::now());
    }
    state.apply(
        crate::state::AppEvent::Sessions {
            query: crate::state::sessions::SessionQuery {
                all_dirs: true,
                archived: true,
                ..Default::default()
            },
            threads: Vec::new(),
            now: 1011,
        },
        Instant::now(),
    );
    both_sizes("session_picker_archived", |w| {
        live_lines(&state, None, w, 24).lines
    });
}

#[test]
fn status_cell() {
    let cell = Cell::Facts {
        title: "Osprey status".into(),
        rows: vec![
            ("Model".into(), "gpt-5.5 (reasoning medium)".into()),
            ("Directory".into(), "/work".into()),
            (
                "AGENTS.md".into(),
                "/work/AGENTS.md\n/work/crates/tui/AGENTS.md".into(),
            ),
            ("Context window".into(), "97% left (7K used / 258K)".into()),
        ],
    };
    both_sizes("status_cell", |w| cells::cell_lines(&cell, w));
}

#[test]
fn mcp_servers_cell() {
    let server = |name: &str, tools: &[&str]| osprey_app_server_protocol::McpServerStatus {
        name: name.into(),
        tools: tools
            .iter()
            .map(|t| ((*t).to_owned(), serde_json::json!({"name": t})))
            .collect(),
        resources: Vec::new(),
        resource_templates: Vec::new(),
        auth_status: osprey_app_server_protocol::McpAuthStatus::Unsupported,
        enabled: true,
        startup_error: None,
    };
    let mut crashing = server("crashing", &[]);
    crashing.startup_error = Some(
        "`sh -c exit 3` exited with status 3; its stderr ended with: the database is gone".into(),
    );
    let mut off = server("off", &[]);
    off.enabled = false;
    let servers = vec![
        crashing,
        server(
            "everything",
            &[
                "echo",
                "get-sum",
                "get-env",
                "get-tiny-image",
                "get-annotated-message",
                "get-structured-content",
                "toggle-simulated-logging",
                "trigger-long-running-operation",
            ],
        ),
        off,
    ];
    let cell = Cell::Facts {
        title: "MCP servers".into(),
        rows: crate::state::mcp_status::server_rows(&servers),
    };
    both_sizes("mcp_servers_cell", |w| cells::cell_lines(&cell, w));
}

#[test]
fn diff_pager() {
    let pager = crate::state::Pager {
        title: "/diff".into(),
        content: crate::state::PagerContent::Diff(
            "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,3 @@\n hello\n-world\n+osprey world\n+added line\n"
                .into(),
        ),
        scroll: 0,
    };
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let (lines, scroll) = popup::pager_view(&pager, &[], usize::from(w), usize::from(h));
        assert_eq!(scroll, 0);
        insta::assert_snapshot!(format!("diff_pager_{w}x{h}"), screen(&lines, w, h));
    }
}

#[test]
fn the_pager_clamps_its_scroll_to_the_content() {
    let pager = crate::state::Pager {
        title: "Transcript".into(),
        content: crate::state::PagerContent::Transcript,
        scroll: usize::MAX,
    };
    let history: Vec<Cell> = (0..30)
        .map(|i| Cell::User {
            text: format!("message {i}"),
        })
        .collect();
    let (lines, scroll) = popup::pager_view(&pager, &history, 80, 24);
    // 30 cells of two lines each; 20 rows of room.
    assert_eq!(scroll, 60 - 20);
    let text = screen(&lines, 80, 24);
    assert!(text.contains("› message 29"), "{text}");
    assert!(text.contains("100%"), "{text}");
}

#[test]
fn history_search_and_a_paste_placeholder_in_the_composer() {
    let mut state = ready_state();
    state.composer.set_text("cargo test -p osprey-tui");
    state.composer.take();
    state.composer.paste(&"z".repeat(1500));
    both_sizes("composer_paste_placeholder", |w| {
        live_lines(&state, None, w, 24).lines
    });
    state.on_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('r'),
            crossterm::event::KeyModifiers::CONTROL,
        ),
        Instant::now(),
    );
    type_into(&mut state, "test");
    both_sizes("composer_history_search", |w| {
        live_lines(&state, None, w, 24).lines
    });
}

#[test]
fn at_file_popup() {
    let mut state = ready_state();
    state.apply(
        crate::state::AppEvent::Files(vec![
            "crates/tui/src/app.rs".into(),
            "crates/tui/src/state/mod.rs".into(),
            "docs/tui.md".into(),
        ]),
        Instant::now(),
    );
    type_into(&mut state, "explain @tui");
    both_sizes("at_file_popup", |w| live_lines(&state, None, w, 24).lines);
}

#[test]
fn plan_mcp_call_and_compaction_cells() {
    let cells = [
        Cell::Plan(crate::state::plan::PlanCell::from_text(
            "- [x] read the crate map\n- [~] write the slash popup\n- [ ] update docs/tui.md",
        )),
        Cell::Mcp(crate::state::cells::McpCell {
            server: "docs".into(),
            tool: "search".into(),
            arguments: r#"{"query":"ratatui inline viewport"}"#.into(),
            status: osprey_app_server_protocol::McpToolCallStatus::Completed,
            result: Some("Viewport::Inline(height)\nTerminal::insert_before".into()),
            error: None,
            duration_ms: Some(320),
        }),
        Cell::Mcp(crate::state::cells::McpCell {
            server: "docs".into(),
            tool: "fetch".into(),
            arguments: "{}".into(),
            status: osprey_app_server_protocol::McpToolCallStatus::Failed,
            result: None,
            error: Some("server docs is not running".into()),
            duration_ms: None,
        }),
        Cell::Compaction,
    ];
    both_sizes("plan_mcp_compaction", |w| {
        cells.iter().flat_map(|c| cells::cell_lines(c, w)).collect()
    });
}

#[test]
fn the_transcript_pager_shows_a_folded_output_whole() {
    let output: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let cell = exec(CommandExecutionStatus::Completed, &output, Some(0));
    let folded = screen(&cells::cell_lines(&cell, 80), 80, 24);
    assert!(
        folded.contains("… +7 lines (ctrl+t shows the whole output)"),
        "{folded}"
    );
    assert!(!folded.contains("line 1\n"), "{folded}");
    let full = screen(&cells::cell_lines_full(&cell, 80), 80, 24);
    assert!(
        full.contains("line 1\n") && full.contains("line 12"),
        "{full}"
    );
    assert!(!full.contains("… +"), "{full}");
}

#[test]
fn trust_question() {
    let mut state = crate::state::AppState::new();
    state.trust = Some(("/home/user/projects/osprey".into(), 0));
    both_sizes("trust_question", |w| live_lines(&state, None, w, 24).lines);
}

#[test]
fn sub_agent_calls_name_the_agents_and_show_what_they_ended_with() {
    use crate::state::cells::{AgentState, CollabCell};
    use osprey_app_server_protocol::{CollabAgentTool, CollabAgentToolCallStatus};
    let child = "01a230c9-963e-76e1-acc8-47e827c94a9a".to_string();
    let other = "01a230c9-963e-76e1-acc8-47e8aaaa0001".to_string();
    let child_id = child.clone();
    let cells = [
        Cell::Collab(CollabCell {
            tool: CollabAgentTool::SpawnAgent,
            status: CollabAgentToolCallStatus::Completed,
            receivers: vec![child.clone()],
            prompt: Some("Count the crates\nand list their roles".into()),
            states: vec![AgentState {
                id: child.clone(),
                status: "pendingInit".into(),
                message: None,
            }],
            names: Default::default(),
        }),
        Cell::Collab(CollabCell {
            tool: CollabAgentTool::Wait,
            status: CollabAgentToolCallStatus::InProgress,
            receivers: vec![child.clone(), other.clone()],
            prompt: None,
            states: vec![],
            names: Default::default(),
        }),
        Cell::Collab(CollabCell {
            tool: CollabAgentTool::Wait,
            status: CollabAgentToolCallStatus::Completed,
            receivers: vec![child.clone(), other.clone()],
            prompt: None,
            states: vec![
                AgentState {
                    id: child,
                    status: "completed".into(),
                    message: Some("22 crates\n(details)".into()),
                },
                AgentState {
                    id: other,
                    status: "errored".into(),
                    message: Some("the model refused".into()),
                },
            ],
            // By then the child's thread had said its nickname; the other's had not.
            names: [(child_id, "Planck [explorer]".to_owned())].into(),
        }),
        Cell::Collab(CollabCell {
            tool: CollabAgentTool::CloseAgent,
            status: CollabAgentToolCallStatus::Failed,
            receivers: vec!["nope".into()],
            prompt: None,
            states: vec![],
            names: Default::default(),
        }),
    ];
    let text = screen(
        &cells
            .iter()
            .flat_map(|c| cells::cell_lines(c, 80))
            .collect::<Vec<_>>(),
        80,
        24,
    );
    assert!(text.contains("Spawned agent …27c94a9a"), "{text}");
    assert!(
        text.contains("Waiting for 2 agents (…27c94a9a, …aaaa0001)"),
        "{text}"
    );
    assert!(
        text.contains("Planck [explorer]: completed — 22 crates"),
        "{text}"
    );
    assert!(
        text.contains("…aaaa0001: errored — the model refused"),
        "{text}"
    );
    assert!(text.contains("Closed agent nope (failed)"), "{text}");
    both_sizes("sub_agent_calls", |w| {
        cells.iter().flat_map(|c| cells::cell_lines(c, w)).collect()
    });
}

#[test]
fn plan_update_checklist() {
    use crate::state::plan::{PlanCell, PlanStep};
    use osprey_app_server_protocol::TurnPlanStepStatus::{Completed, InProgress, Pending};
    let step = |text: &str, status| PlanStep {
        text: text.into(),
        status,
    };
    let cells = [
        Cell::Plan(PlanCell {
            explanation: Some(
                "The parser drops the last field when a line ends with a separator; I will fix \
                 it there and cover the case with a test before touching the writer."
                    .into(),
            ),
            steps: vec![
                step("Reproduce the dropped field with a failing test", Completed),
                step(
                    "Fix the parser so that a trailing separator yields an empty last field, \
                     keeping the fast path for lines without quotes",
                    InProgress,
                ),
                step("Run the whole suite", Pending),
                step("Update docs/format.md", Pending),
            ],
        }),
        Cell::Plan(PlanCell {
            explanation: None,
            steps: vec![
                step("Reproduce the dropped field with a failing test", Completed),
                step("Fix the parser", Completed),
                step("Run the whole suite", InProgress),
            ],
        }),
    ];
    both_sizes("plan_update", |w| {
        cells.iter().flat_map(|c| cells::cell_lines(c, w)).collect()
    });
}
