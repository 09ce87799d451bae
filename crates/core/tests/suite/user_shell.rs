//! The person's own shell commands (`Op::RunUserShellCommand`): a task with one command item
//! of source `User`, shared with the model only when asked, stopped by an interrupt.

use super::harness::*;
use osprey_core::OspreyThread;
use osprey_protocol::{
    AbortReason, CommandSource, Event, EventMsg, ItemStatus, Op, ThreadItem, TurnId,
};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn shell(command: &str, share_with_model: bool) -> Op {
    Op::RunUserShellCommand {
        command: command.into(),
        timeout_ms: None,
        share_with_model,
    }
}

async fn next(thread: &Arc<OspreyThread>) -> Event {
    tokio::time::timeout(Duration::from_secs(30), thread.next_event())
        .await
        .expect("an event within 30 s")
        .expect("thread open")
}

/// Events up to the end of the turn (ThreadStarted and warnings before it skipped).
async fn turn_events(thread: &Arc<OspreyThread>) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        let event = next(thread).await;
        if event.turn_id.is_none() {
            continue;
        }
        let end = matches!(
            event.msg,
            EventMsg::TurnCompleted { .. }
                | EventMsg::TurnFailed { .. }
                | EventMsg::TurnAborted { .. }
        );
        events.push(event);
        if end {
            return events;
        }
    }
}

/// A thread whose login shell reads the temporary home's (absent) profile files, not the
/// machine user's, so outputs are exactly what the commands print.
async fn start(server: &MockModelServer) -> (TempHome, tempfile::TempDir, Arc<OspreyThread>) {
    let home = TempHome::for_server(server, WireApi::Responses);
    let repo = temp_git_repo();
    let home_dir = home.path().display().to_string();
    let thread = manager_with_env(&home, &[("HOME", &home_dir)])
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    (home, repo, thread)
}

fn command_item(
    id: &str,
    output: &str,
    exit_code: Option<i32>,
    status: ItemStatus,
    command: &str,
    cwd: PathBuf,
) -> ThreadItem {
    ThreadItem::CommandExecution {
        id: id.to_string(),
        command: command.to_string(),
        cwd,
        aggregated_output: output.to_string(),
        exit_code,
        status,
        source: CommandSource::User,
        sandbox_denial: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_shell_command_reports_its_output_and_exit_code() {
    let server = MockModelServer::start(vec![]).await;
    let (_home, repo, thread) = start(&server).await;
    // Stdout only: stdout and stderr are separate pipes, so their relative order is not
    // fixed; stderr is checked on its own below.
    let command = "echo from-user-shell; pwd; exit 3";
    let turn_id = thread.start_turn(shell(command, false)).await.unwrap();
    let events = turn_events(&thread).await;
    assert!(
        events.iter().all(|e| e.turn_id.as_ref() == Some(&turn_id)),
        "{events:?}"
    );
    let cwd = repo.path().to_path_buf();
    let id = match &events[1].msg {
        EventMsg::ItemStarted { item } => item.id().to_string(),
        other => panic!("expected the item to start: {other:?}"),
    };
    let output = format!("from-user-shell\n{}\n", cwd.display());
    let mut deltas = String::new();
    let mut shapes = Vec::new();
    for event in &events {
        match &event.msg {
            EventMsg::CommandOutputDelta { item_id, chunk } => {
                assert_eq!(item_id, &id);
                deltas.push_str(chunk);
            }
            other => shapes.push(other.clone()),
        }
    }
    assert_eq!(deltas, output, "the output streamed as it came");
    assert_eq!(
        shapes,
        vec![
            EventMsg::TurnStarted,
            EventMsg::ItemStarted {
                item: command_item(&id, "", None, ItemStatus::InProgress, command, cwd.clone())
            },
            EventMsg::ItemCompleted {
                item: command_item(
                    &id,
                    &output,
                    Some(3),
                    ItemStatus::Failed,
                    command,
                    cwd.clone()
                )
            },
            EventMsg::TurnCompleted {
                last_agent_message: None,
                usage: Default::default()
            },
        ]
    );

    // Exit 0 completes the item; stderr is part of the output.
    thread
        .start_turn(shell("echo oops >&2", false))
        .await
        .unwrap();
    let events = turn_events(&thread).await;
    assert!(
        events.iter().any(|e| matches!(
            &e.msg,
            EventMsg::ItemCompleted {
                item: ThreadItem::CommandExecution {
                    status: ItemStatus::Completed,
                    exit_code: Some(0),
                    aggregated_output,
                    ..
                }
            } if aggregated_output == "oops\n"
        )),
        "{events:?}"
    );
    assert!(server.requests().is_empty(), "the model was not asked");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_shell_command_is_in_the_next_request() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "seen")])]).await;
    let (_home, _repo, thread) = start(&server).await;
    thread
        .start_turn(shell("echo shared-marker-123", true))
        .await
        .unwrap();
    turn_events(&thread).await;
    run_turn(&thread, "what did it print?", vec![]).await;
    let request = server.single_request();
    let texts = request.user_texts();
    let record = texts
        .iter()
        .find(|t| t.starts_with("<user_shell_command>"))
        .unwrap_or_else(|| panic!("no shell command record in {texts:?}"));
    assert!(
        record.starts_with(
            "<user_shell_command>\n<command>\necho shared-marker-123\n</command>\n<result>\nExit code: 0\nDuration: "
        ),
        "{record}"
    );
    assert!(
        record
            .ends_with(" seconds\nOutput:\nshared-marker-123\n\n</result>\n</user_shell_command>"),
        "{record}"
    );
    // The thread's usual first items come before it, and the person's question after it.
    let record_at = texts.iter().position(|t| t == record).unwrap();
    assert!(
        texts[..record_at]
            .iter()
            .any(|t| t.contains("<environment_context>")),
        "{texts:?}"
    );
    assert_eq!(texts.last().map(String::as_str), Some("what did it print?"));
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unshared_shell_command_stays_out_of_the_model_history() {
    let server =
        MockModelServer::start(vec![sse_turn(vec![ev_assistant_message("m", "ok")])]).await;
    let (home, _repo, thread) = start(&server).await;
    thread
        .start_turn(shell("echo private-marker-456", false))
        .await
        .unwrap();
    turn_events(&thread).await;
    run_turn(&thread, "hello", vec![]).await;
    let body = server.single_request().body.to_string();
    assert!(!body.contains("private-marker-456"), "{body}");
    assert!(!body.contains("user_shell_command"), "{body}");
    // The session file still has the completed item, for a front end's replay.
    thread.submit(Op::Shutdown).await.unwrap();
    while let Some(event) = thread.next_event().await {
        if matches!(event.msg, EventMsg::ShutdownComplete) {
            break;
        }
    }
    let rollout = rollout_text(&home.path().join("sessions"));
    let line = rollout
        .lines()
        .find(|l| l.contains("private-marker-456"))
        .expect("the item is in the session file");
    assert!(line.contains("item_completed"), "{line}");
    assert!(!line.contains("response_item"), "{line}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_a_user_shell_command_kills_it() {
    let server = MockModelServer::start(vec![]).await;
    let (_home, _repo, thread) = start(&server).await;
    let turn_id = thread
        .start_turn(shell("sleep 30 & echo \"pid=$!\"; wait", false))
        .await
        .unwrap();
    let mut pid = None;
    let mut interrupted_at = None;
    let mut completed = None;
    let reason = loop {
        let event = next(&thread).await;
        if event.turn_id.is_none() {
            continue;
        }
        assert_eq!(event.turn_id.as_ref(), Some(&turn_id), "{event:?}");
        match event.msg {
            EventMsg::CommandOutputDelta { chunk, .. } if pid.is_none() => {
                pid = chunk
                    .trim()
                    .strip_prefix("pid=")
                    .and_then(|p| p.parse::<u32>().ok());
                assert!(pid.is_some(), "{chunk}");
                thread.submit(Op::Interrupt).await.unwrap();
                interrupted_at = Some(Instant::now());
            }
            EventMsg::ItemCompleted { item } => completed = Some(item),
            EventMsg::TurnAborted { reason } => break reason,
            EventMsg::TurnCompleted { .. } | EventMsg::TurnFailed { .. } => {
                panic!("the command should have been interrupted: {event:?}")
            }
            _ => {}
        }
    };
    assert_eq!(reason, AbortReason::Interrupted);
    assert!(
        interrupted_at.unwrap().elapsed() < Duration::from_secs(5),
        "stopped at once"
    );
    let Some(ThreadItem::CommandExecution {
        status,
        aggregated_output,
        exit_code,
        ..
    }) = completed
    else {
        panic!("the item was completed: {completed:?}")
    };
    assert_eq!(status, ItemStatus::Failed);
    assert_eq!(exit_code, None);
    assert!(aggregated_output.starts_with("pid="), "{aggregated_output}");
    let pid = pid.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_alive(pid) {
        assert!(
            Instant::now() < deadline,
            "the shell's child {pid} still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.verify();
}

/// Whether `pid` is a live process (a zombie waiting for its parent counts as gone).
fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.chars().next());
            !matches!(state, Some('Z' | 'X'))
        }
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_shell_command_stops_at_its_timeout() {
    let server = MockModelServer::start(vec![]).await;
    let (_home, _repo, thread) = start(&server).await;
    let began = Instant::now();
    let turn_id: TurnId = thread
        .start_turn(Op::RunUserShellCommand {
            command: "echo before; sleep 30".into(),
            timeout_ms: Some(300),
            share_with_model: false,
        })
        .await
        .unwrap();
    let events = turn_events(&thread).await;
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "the timeout fired"
    );
    let last = events.last().unwrap();
    assert_eq!(last.turn_id, Some(turn_id));
    assert!(
        matches!(last.msg, EventMsg::TurnCompleted { .. }),
        "{last:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            &e.msg,
            EventMsg::ItemCompleted {
                item: ThreadItem::CommandExecution {
                    status: ItemStatus::Failed,
                    aggregated_output,
                    ..
                }
            } if aggregated_output == "before\n"
        )),
        "{events:?}"
    );
    server.verify();
}
