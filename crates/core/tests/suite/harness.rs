//! A front end in miniature: start a thread, answer approvals with a script, collect events.

use osprey_config::Config;
use osprey_core::{OspreyThread, ThreadManager};
use osprey_protocol::{Event, EventMsg, Op, ReviewDecision, UserInput};
use osprey_test_support::TempHome;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub fn manager(home: &TempHome) -> ThreadManager {
    manager_with_env(home, &[])
}

/// [`manager`] with more variables in the thread's environment (`HOME` for login shells
/// that must not read the real user's profile files).
pub fn manager_with_env(home: &TempHome, extra: &[(&str, &str)]) -> ThreadManager {
    let env: HashMap<String, String> = home
        .env()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string_lossy().into_owned()))
        .chain([
            (
                "PATH".to_string(),
                std::env::var("PATH").unwrap_or_default(),
            ),
            ("SHELL".to_string(), "/bin/bash".to_string()),
        ])
        .chain(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    ThreadManager::new(env)
}

/// The `osprey` binary built next to this test.
pub fn osprey_exe() -> std::path::PathBuf {
    osprey_test_support::workspace_binary("osprey")
}

pub fn config(home: &TempHome, cwd: &Path) -> Config {
    Config::for_tests(home.path(), cwd).expect("test config loads")
}

/// Submits one turn and answers each approval request with the next decision.
/// Returns every event up to the end of the turn.
/// A user turn with these inputs and every setting left as the thread has it.
pub fn turn_with(items: Vec<UserInput>) -> Op {
    Op::UserTurn {
        items,
        cwd: None,
        approval_policy: None,
        sandbox_policy: None,
        model: None,
        effort: None,
        output_schema: None,
    }
}

/// A user turn with one text.
pub fn user_turn(text: &str) -> Op {
    turn_with(vec![UserInput::Text {
        text: text.to_owned(),
    }])
}

pub async fn run_turn(
    thread: &Arc<OspreyThread>,
    prompt: &str,
    mut decisions: Vec<ReviewDecision>,
) -> Vec<Event> {
    thread
        .submit(turn_with(vec![UserInput::Text {
            text: prompt.to_string(),
        }]))
        .await
        .unwrap();
    let mut events = Vec::new();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), thread.next_event())
            .await
            .expect("an event within 30 s")
            .expect("thread open");
        let done = matches!(
            event.msg,
            EventMsg::TurnCompleted { .. }
                | EventMsg::TurnFailed { .. }
                | EventMsg::TurnAborted { .. }
        );
        if let EventMsg::ApprovalRequested(request) = &event.msg {
            assert!(
                !decisions.is_empty(),
                "unexpected approval request: {request:?}"
            );
            let decision = decisions.remove(0);
            thread
                .submit(Op::ResolveApproval {
                    id: request.id.clone(),
                    decision,
                })
                .await
                .unwrap();
        }
        events.push(event);
        if done {
            break;
        }
    }
    assert!(
        decisions.is_empty(),
        "approvals expected but not requested: {decisions:?}"
    );
    events
}

pub fn approval_count(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::ApprovalRequested(_)))
        .count()
}

/// Every session file under `dir`, concatenated.
pub fn rollout_text(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&rollout_text(&path));
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            text.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    text
}
