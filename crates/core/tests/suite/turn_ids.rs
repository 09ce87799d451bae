//! `OspreyThread::start_turn` answers with the id the turn's events carry, before any of
//! them is read; the manager forgets threads on request.

use super::harness::*;
use osprey_core::CoreError;
use osprey_protocol::{Event, EventMsg, Op, SandboxPolicy, ThreadItem, TurnId, UserInput};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use std::sync::Arc;
use std::time::Duration;

/// Every event up to the `count`-th end of a turn.
async fn events_until_ends(thread: &Arc<osprey_core::OspreyThread>, count: usize) -> Vec<Event> {
    let mut events = Vec::new();
    let mut ends = 0;
    while ends < count {
        let event = tokio::time::timeout(Duration::from_secs(30), thread.next_event())
            .await
            .expect("an event within 30 s")
            .expect("thread open");
        if matches!(
            event.msg,
            EventMsg::TurnCompleted { .. }
                | EventMsg::TurnFailed { .. }
                | EventMsg::TurnAborted { .. }
        ) {
            ends += 1;
        }
        events.push(event);
    }
    events
}

fn started_ids(events: &[Event]) -> Vec<TurnId> {
    events
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::TurnStarted))
        .filter_map(|e| e.turn_id.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_turn_returns_the_id_the_events_carry_also_for_queued_turns() {
    let server = MockModelServer::start(vec![
        // Slow enough that the next two ops arrive while this turn runs.
        MockResponse::delayed(
            Duration::from_millis(500),
            sse_turn(vec![ev_assistant_message("m1", "first answer")]),
        ),
        sse_turn(vec![ev_assistant_message("m2", "second answer")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    // The shell command's login shell reads the temporary home's (absent) profile files.
    let home_dir = home.path().display().to_string();
    let thread = manager_with_env(&home, &[("HOME", &home_dir)])
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let first = thread.start_turn(user_turn("one")).await.unwrap();
    let second = thread.start_turn(user_turn("two")).await.unwrap();
    let shell = thread
        .start_turn(Op::RunUserShellCommand {
            command: "echo queued-shell".into(),
            timeout_ms: None,
            share_with_model: false,
        })
        .await
        .unwrap();
    assert!(
        first != second && second != shell,
        "{first} {second} {shell}"
    );
    let events = events_until_ends(&thread, 3).await;
    assert_eq!(
        started_ids(&events),
        vec![first.clone(), second.clone(), shell.clone()],
        "the turns ran in order, each under the id start_turn gave"
    );
    let turn_of = |wanted: &dyn Fn(&EventMsg) -> bool| {
        events
            .iter()
            .find(|e| wanted(&e.msg))
            .and_then(|e| e.turn_id.clone())
    };
    assert_eq!(
        turn_of(
            &|m| matches!(m, EventMsg::TurnCompleted { last_agent_message: Some(t), .. } if t == "first answer")
        ),
        Some(first)
    );
    assert_eq!(
        turn_of(
            &|m| matches!(m, EventMsg::TurnCompleted { last_agent_message: Some(t), .. } if t == "second answer")
        ),
        Some(second)
    );
    assert_eq!(
        turn_of(
            &|m| matches!(m, EventMsg::ItemCompleted { item: ThreadItem::CommandExecution { aggregated_output, .. } } if aggregated_output == "queued-shell\n")
        ),
        Some(shell)
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_turn_has_an_id_too() {
    let server = MockModelServer::start(vec![]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    std::fs::write(
        home.path().join("requirements.toml"),
        "allowed_sandbox_modes = [\"read-only\"]\n",
    )
    .unwrap();
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let id = thread
        .start_turn(Op::UserTurn {
            items: vec![UserInput::Text { text: "go".into() }],
            cwd: None,
            approval_policy: None,
            sandbox_policy: Some(SandboxPolicy::DangerFullAccess),
            model: None,
            effort: None,
            output_schema: None,
        })
        .await
        .unwrap();
    let events = events_until_ends(&thread, 1).await;
    let ends: Vec<(Option<TurnId>, bool)> = events
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::TurnStarted | EventMsg::TurnFailed { .. }))
        .map(|e| {
            (
                e.turn_id.clone(),
                matches!(e.msg, EventMsg::TurnFailed { .. }),
            )
        })
        .collect();
    assert_eq!(ends, vec![(Some(id.clone()), false), (Some(id), true)]);
    assert!(server.requests().is_empty());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_turn_refuses_ops_that_are_not_turns() {
    let server = MockModelServer::start(vec![]).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let thread = manager(&home)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let error = thread.start_turn(Op::Interrupt).await.unwrap_err();
    assert!(matches!(error, CoreError::NotATurn { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "`interrupt` does not start a turn: start_turn takes user_turn, compact or run_user_shell_command; send other operations with submit"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_threads_are_forgotten_but_keep_running() {
    let server = MockModelServer::start(vec![sse_turn(vec![ev_assistant_message(
        "m",
        "still here",
    )])])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let repo = temp_git_repo();
    let manager = manager(&home);
    let a = manager
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let b = manager
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let mut loaded = manager.loaded_ids();
    loaded.sort_by_key(|id| id.to_string());
    let mut both = vec![a.id(), b.id()];
    both.sort_by_key(|id| id.to_string());
    assert_eq!(loaded, both);

    let removed = manager.remove(a.id()).expect("a was loaded");
    assert_eq!(removed.id(), a.id());
    assert_eq!(manager.loaded_ids(), vec![b.id()]);
    assert!(manager.get(a.id()).is_none());
    assert!(manager.remove(a.id()).is_none(), "already forgotten");

    // The handle still drives the thread.
    let events = run_turn(&a, "are you there", vec![]).await;
    assert!(
        matches!(&events.last().unwrap().msg, EventMsg::TurnCompleted { last_agent_message: Some(t), .. } if t == "still here"),
        "{events:?}"
    );
    server.verify();
}
