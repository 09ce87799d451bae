//! Sub-agents end to end at the core level: a parent thread spawns children through the
//! collaboration tools, the mock model answers each thread from its own script (routed by
//! the sub-agent headers), and the outputs, notifications, limits and shutdowns are checked.

use super::harness::*;
use osprey_core::{SpawnedThread, ThreadManager};
use osprey_protocol::{AbortReason, Event, EventMsg, ItemStatus, Op, ThreadItem};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::time::Duration;

const BASE_CONFIG: &str = "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\
                           tools.shell_type = \"shell_command\"\n";

fn call(id: &str, name: &str, args: Value) -> SseEvent {
    ev_function_call(id, name, &args.to_string())
}

fn answer(text: &str) -> MockResponse {
    sse_turn(vec![ev_assistant_message("m", text)])
}

fn shell(id: &str, command: &str) -> MockResponse {
    sse_turn(vec![call(id, "shell_command", json!({"command": command}))])
}

/// Reads every event a thread has sent until it is idle after a turn's end (or `limit`).
async fn events_until_turn_end(thread: &osprey_core::OspreyThread, limit: Duration) -> Vec<Event> {
    let mut events = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(limit, thread.next_event()).await {
        let end = matches!(
            event.msg,
            EventMsg::TurnCompleted { .. }
                | EventMsg::TurnFailed { .. }
                | EventMsg::TurnAborted { .. }
        );
        events.push(event);
        if end {
            break;
        }
    }
    events
}

fn collab_items(events: &[Event]) -> Vec<ThreadItem> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ItemCompleted {
                item: item @ ThreadItem::CollabAgentToolCall { .. },
            } => Some(item.clone()),
            _ => None,
        })
        .collect()
}

fn output_json(request: &CapturedRequest, call_id: &str) -> Value {
    let text = request
        .output_for(call_id)
        .unwrap_or_else(|| panic!("no output for {call_id}"));
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

async fn next_child(
    spawned: &mut tokio::sync::mpsc::UnboundedReceiver<SpawnedThread>,
) -> SpawnedThread {
    tokio::time::timeout(Duration::from_secs(10), spawned.recv())
        .await
        .expect("a child within 10 s")
        .expect("the manager is alive")
}

/// What each test starts from: a home whose config points at `server` (`BASE_CONFIG` plus
/// `extra`), a git repo, a manager with a subscription to its sub-agents, and a parent thread.
struct Family {
    home: TempHome,
    repo: tempfile::TempDir,
    manager: ThreadManager,
    spawned: tokio::sync::mpsc::UnboundedReceiver<SpawnedThread>,
    parent: std::sync::Arc<osprey_core::OspreyThread>,
}

async fn family(server: &MockModelServer, extra: &str) -> Family {
    let home = TempHome::for_server(server, WireApi::Responses);
    home.write_config(&format!("{BASE_CONFIG}{extra}"));
    let repo = temp_git_repo();
    let manager = manager(&home);
    let spawned = manager.subscribe_spawned();
    let parent = manager
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    Family {
        home,
        repo,
        manager,
        spawned,
        parent,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_spawns_two_children_waits_for_each_closes_them_and_answers() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![
                call(
                    "spawn_a",
                    "spawn_agent",
                    json!({"message": "Run echo A and report."}),
                ),
                call(
                    "spawn_b",
                    "spawn_agent",
                    json!({"message": "Run echo B and report."}),
                ),
            ]),
            sse_turn(vec![call(
                "wait_a",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 30000}),
            )]),
            sse_turn(vec![call(
                "wait_b",
                "wait_agent",
                json!({"targets": ["{{agent:Goodall}}"], "timeout_ms": 30000}),
            )]),
            sse_turn(vec![
                call(
                    "close_a",
                    "close_agent",
                    json!({"target": "{{agent:Planck}}"}),
                ),
                call(
                    "close_b",
                    "close_agent",
                    json!({"target": "{{agent:Goodall}}"}),
                ),
                call(
                    "close_x",
                    "close_agent",
                    json!({"target": "00000000-0000-0000-0000-000000000000"}),
                ),
            ]),
            answer("Both children finished."),
        ],
        vec![
            ("Planck", vec![shell("a1", "echo A-out"), answer("A done")]),
            ("Goodall", vec![shell("b1", "echo B-out"), answer("B done")]),
        ],
    )
    .await;
    let Family {
        home: _home,
        repo,
        manager,
        mut spawned,
        parent,
    } = family(&server, "").await;
    let events = run_turn(&parent, "spawn two agents", vec![]).await;
    assert!(
        matches!(events.last().map(|e| &e.msg), Some(EventMsg::TurnCompleted { last_agent_message: Some(m), .. }) if m == "Both children finished."),
        "{events:#?}"
    );
    let a = next_child(&mut spawned).await;
    let b = next_child(&mut spawned).await;
    assert_eq!(
        (a.nickname.as_str(), b.nickname.as_str()),
        ("Planck", "Goodall")
    );
    assert_eq!(a.parent_thread_id, parent.id());
    assert_eq!(a.depth, 1);
    let (a_id, b_id) = (a.thread_id.to_string(), b.thread_id.to_string());

    let root = server.root_requests();
    let last = root.last().unwrap();
    assert_eq!(
        output_json(last, "spawn_a"),
        json!({"agent_id": a_id, "nickname": "Planck"})
    );
    assert_eq!(
        output_json(last, "wait_a"),
        json!({"status": {a_id.clone(): {"completed": "A done"}}, "timed_out": false})
    );
    assert_eq!(
        output_json(last, "wait_b"),
        json!({"status": {b_id.clone(): {"completed": "B done"}}, "timed_out": false})
    );
    assert_eq!(
        output_json(last, "close_a"),
        json!({"previous_status": {"completed": "A done"}})
    );
    assert_eq!(
        output_json(last, "close_b"),
        json!({"previous_status": {"completed": "B done"}})
    );
    assert_eq!(
        output_json(last, "close_x"),
        json!("agent with id 00000000-0000-0000-0000-000000000000 not found")
    );
    // The model learns of each finished child without waiting, as Codex's v1 does.
    let notification = format!(
        "<subagent_notification>\n{}\n</subagent_notification>",
        json!({"agent_path": a_id, "status": {"completed": "A done"}})
    );
    assert!(
        last.user_texts().contains(&notification),
        "{:#?}",
        last.user_texts()
    );
    // The parent is offered the tools; the children (at the depth limit) are not.
    let tools = root[0].tool_names();
    for name in [
        "spawn_agent",
        "send_input",
        "wait_agent",
        "close_agent",
        "resume_agent",
    ] {
        assert!(tools.contains(&name.to_string()), "{tools:?}");
    }
    let child_requests = server.requests_for("Planck");
    assert_eq!(child_requests.len(), 2);
    assert!(
        !child_requests[0]
            .tool_names()
            .contains(&"spawn_agent".to_string())
    );
    assert_eq!(
        child_requests[0].header("x-openai-subagent"),
        Some("collab_spawn")
    );
    assert_eq!(
        child_requests[0].header("x-codex-parent-thread-id"),
        Some(parent.id().to_string().as_str())
    );
    // Each child's requests name its own thread (so a server can tell the children apart),
    // its tree's root, and the parent turn that spawned it, as Codex's turn metadata does.
    let parent_turn = events
        .iter()
        .find_map(|e| e.turn_id.clone())
        .expect("the parent's events carry its turn id")
        .0;
    for (nickname, child_id) in [("Planck", &a_id), ("Goodall", &b_id)] {
        for request in server.requests_for(nickname) {
            let metadata: Value =
                serde_json::from_str(request.header("x-codex-turn-metadata").unwrap()).unwrap();
            assert_eq!(
                (
                    &metadata["thread_id"],
                    &metadata["session_id"],
                    &metadata["parent_thread_id"],
                    &metadata["parent_turn_id"],
                    &metadata["root_turn_id"],
                    &metadata["thread_source"],
                ),
                (
                    &json!(child_id),
                    &json!(parent.id().to_string()),
                    &json!(parent.id().to_string()),
                    &json!(parent_turn),
                    &json!(parent_turn),
                    &json!("subagent"),
                ),
                "{nickname}: {metadata}"
            );
            assert_eq!(request.thread_id().as_deref(), Some(child_id.as_str()));
            assert_eq!(request.header("thread-id"), Some(child_id.as_str()));
            let root = parent.id().to_string();
            assert_eq!(request.header("session-id"), Some(root.as_str()));
        }
    }
    assert_eq!(
        child_requests[0].user_texts().last().unwrap(),
        "Run echo A and report."
    );
    assert!(
        child_requests[1]
            .output_for("a1")
            .unwrap()
            .contains("A-out")
    );

    let items = collab_items(&events);
    let statuses: Vec<ItemStatus> = items
        .iter()
        .map(|i| match i {
            ThreadItem::CollabAgentToolCall { status, .. } => *status,
            _ => unreachable!(),
        })
        .collect();
    use ItemStatus::{Completed, Failed};
    assert_eq!(
        statuses,
        [
            Completed, Completed, Completed, Completed, Completed, Completed, Failed
        ]
    );

    // Each child has its own session file naming its parent; it resumes on its own.
    let a_events = events_until_turn_end(&a.thread, Duration::from_secs(5)).await;
    let Some(EventMsg::ThreadStarted {
        rollout_path: Some(path),
        ..
    }) = a_events.first().map(|e| &e.msg)
    else {
        panic!("the child's first event is its start: {a_events:#?}");
    };
    let meta: Value = serde_json::from_str(
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        meta["payload"]["parent_thread_id"],
        json!(parent.id().to_string())
    );
    assert_eq!(meta["payload"]["agent_nickname"], json!("Planck"));
    assert_eq!(
        meta["payload"]["source"]["subagent"]["thread_spawn"]["depth"],
        json!(1)
    );
    assert!(
        a_events.iter().any(|e| matches!(&e.msg, EventMsg::ItemCompleted { item: ThreadItem::CommandExecution { aggregated_output, .. } } if aggregated_output.contains("A-out"))),
        "{a_events:#?}"
    );
    server.verify();
    drop(manager);
    let path = path.clone();

    let resumed_server = MockModelServer::start(vec![answer("A resumed")]).await;
    let resumed_home = TempHome::for_server(&resumed_server, WireApi::Responses);
    resumed_home.write_config(BASE_CONFIG);
    let fresh = super::harness::manager(&resumed_home);
    let child = fresh
        .resume_thread(config(&resumed_home, repo.path()), &path)
        .await
        .unwrap();
    assert_eq!(child.id(), a.thread_id);
    run_turn(&child, "and now?", vec![]).await;
    let history = resumed_server.single_request().user_texts();
    assert!(
        history.contains(&"Run echo A and report.".to_string()),
        "{history:?}"
    );
    resumed_server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_agent_times_out_while_the_child_is_still_working() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "spawn",
                "spawn_agent",
                json!({"message": "slow work"}),
            )]),
            sse_turn(vec![call(
                "wait",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 300}),
            )]),
            sse_turn(vec![call(
                "close",
                "close_agent",
                json!({"target": "{{agent:Planck}}"}),
            )]),
            answer("gave up"),
        ],
        vec![(
            "Planck",
            vec![MockResponse::delayed(
                Duration::from_secs(3),
                answer("late"),
            )],
        )],
    )
    .await;
    let Family {
        home: _home,
        repo: _repo,
        manager: _manager,
        spawned: _spawned,
        parent,
    } = family(&server, "[agents]\nmin_wait_timeout_ms = 50\n").await;
    let started = std::time::Instant::now();
    run_turn(&parent, "go", vec![]).await;
    let last = server.root_requests().pop().unwrap();
    assert_eq!(
        output_json(&last, "wait"),
        json!({"status": {}, "timed_out": true})
    );
    assert_eq!(
        output_json(&last, "close"),
        json!({"previous_status": "running"})
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_refuse_a_second_child_and_give_children_no_collaboration_tools() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![
                call("one", "spawn_agent", json!({"message": "first"})),
                call("two", "spawn_agent", json!({"message": "second"})),
            ]),
            sse_turn(vec![call(
                "wait",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"]}),
            )]),
            answer("done"),
        ],
        vec![(
            "Planck",
            vec![
                sse_turn(vec![call(
                    "nested",
                    "spawn_agent",
                    json!({"message": "grandchild"}),
                )]),
                answer("first done"),
            ],
        )],
    )
    .await;
    let Family {
        home: _home,
        repo: _repo,
        manager: _manager,
        spawned: _spawned,
        parent,
    } = family(
        &server,
        "[agents]\nmax_concurrent_threads_per_session = 1\n",
    )
    .await;
    run_turn(&parent, "go", vec![]).await;
    let last = server.root_requests().pop().unwrap();
    assert_eq!(
        output_json(&last, "two"),
        json!("collab spawn failed: agent thread limit reached")
    );
    let child = server.requests_for("Planck").pop().unwrap();
    assert_eq!(
        child.output_for("nested").as_deref(),
        Some("unsupported call: spawn_agent")
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_a_waiting_parent_interrupts_its_children() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "spawn",
                "spawn_agent",
                json!({"message": "sleep"}),
            )]),
            sse_turn(vec![call(
                "wait",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"], "timeout_ms": 600000}),
            )]),
        ],
        vec![("Planck", vec![shell("s", "echo sleeping; sleep 60")])],
    )
    .await;
    let Family {
        home: _home,
        repo: _repo,
        manager: _manager,
        mut spawned,
        parent,
    } = family(&server, "").await;
    parent.submit(user_turn("go")).await.unwrap();
    let child = next_child(&mut spawned).await;
    // Wait until the child's command runs and the parent is waiting for it.
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), child.thread.next_event())
            .await
            .unwrap()
            .unwrap();
        if matches!(&event.msg, EventMsg::CommandOutputDelta { chunk, .. } if chunk.contains("sleeping"))
        {
            break;
        }
    }
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), parent.next_event())
            .await
            .unwrap()
            .unwrap();
        if matches!(event.msg, EventMsg::CollabWaitingBegin { .. }) {
            break;
        }
    }
    let started = std::time::Instant::now();
    parent.submit(Op::Interrupt).await.unwrap();
    let parent_end = events_until_turn_end(&parent, Duration::from_secs(10)).await;
    assert!(
        matches!(
            parent_end.last().map(|e| &e.msg),
            Some(EventMsg::TurnAborted {
                reason: AbortReason::Interrupted
            })
        ),
        "{parent_end:#?}"
    );
    let child_end = events_until_turn_end(&child.thread, Duration::from_secs(10)).await;
    assert!(
        matches!(
            child_end.last().map(|e| &e.msg),
            Some(EventMsg::TurnAborted {
                reason: AbortReason::Interrupted
            })
        ),
        "{child_end:#?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    parent.submit(Op::Shutdown).await.unwrap();
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_agent_is_reopened_by_resume_agent_and_takes_input_again() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "spawn",
                "spawn_agent",
                json!({"message": "first task"}),
            )]),
            sse_turn(vec![call(
                "wait1",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"]}),
            )]),
            sse_turn(vec![call(
                "close",
                "close_agent",
                json!({"target": "{{agent:Planck}}"}),
            )]),
            sse_turn(vec![call(
                "send_closed",
                "send_input",
                json!({"target": "{{agent:Planck}}", "message": "too early"}),
            )]),
            sse_turn(vec![call(
                "resume",
                "resume_agent",
                json!({"id": "{{agent:Planck}}"}),
            )]),
            sse_turn(vec![call(
                "send",
                "send_input",
                json!({"target": "{{agent:Planck}}", "message": "second task"}),
            )]),
            sse_turn(vec![call(
                "wait2",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"]}),
            )]),
            answer("done twice"),
        ],
        vec![("Planck", vec![answer("first done"), answer("second done")])],
    )
    .await;
    let Family {
        home: _home,
        repo: _repo,
        manager,
        mut spawned,
        parent,
    } = family(&server, "").await;
    run_turn(&parent, "go", vec![]).await;
    let last = server.root_requests().pop().unwrap();
    let id = output_json(&last, "spawn")["agent_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        output_json(&last, "send_closed"),
        json!(format!(
            "agent with id {id} is closed; reopen it with resume_agent before sending it input"
        ))
    );
    assert_eq!(
        output_json(&last, "resume"),
        json!({"status": {"completed": "first done"}})
    );
    assert_eq!(
        output_json(&last, "wait2"),
        json!({"status": {id: {"completed": "second done"}}, "timed_out": false})
    );
    let first = next_child(&mut spawned).await;
    let reopened = next_child(&mut spawned).await;
    assert_eq!(first.thread_id, reopened.thread_id);
    // Regression: the cleanup that follows the closed handle's end (a front end's pump)
    // used to forget the thread by id, dropping the reopened agent that now holds that id.
    // Only the handle it was given may go.
    assert!(!manager.remove_handle(&first.thread));
    let held = manager
        .get(first.thread_id)
        .expect("the reopened agent is held");
    assert!(std::sync::Arc::ptr_eq(&held, &reopened.thread));
    // The reopened agent continued its own history.
    let second = server.requests_for("Planck").pop().unwrap();
    let texts = second.user_texts();
    assert!(
        texts.contains(&"first task".to_string()) && texts.contains(&"second task".to_string()),
        "{texts:?}"
    );
    server.verify();
}

/// As in Codex 0.171's capture: the parent is notified once, when the child first finishes;
/// the child's later turn (after `send_input`) is learnt through `wait_agent` only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_finishes_twice_is_notified_once() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "spawn",
                "spawn_agent",
                json!({"message": "one"}),
            )]),
            sse_turn(vec![call(
                "wait1",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"]}),
            )]),
            sse_turn(vec![call(
                "send",
                "send_input",
                json!({"target": "{{agent:Planck}}", "message": "two"}),
            )]),
            sse_turn(vec![call(
                "wait2",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"]}),
            )]),
            // Time for a second notification to be queued, were there one.
            shell("pause", "sleep 0.3"),
            answer("done"),
        ],
        vec![("Planck", vec![answer("first"), answer("second")])],
    )
    .await;
    let Family {
        home: _home,
        repo: _repo,
        manager: _manager,
        spawned: _spawned,
        parent,
    } = family(&server, "").await;
    run_turn(&parent, "go", vec![]).await;
    let last = server.root_requests().pop().unwrap();
    assert_eq!(
        output_json(&last, "wait2")["status"]
            .as_object()
            .and_then(|s| s.values().next().cloned()),
        Some(json!({"completed": "second"}))
    );
    let notifications: Vec<String> = last
        .user_texts()
        .into_iter()
        .filter(|t| t.starts_with("<subagent_notification>"))
        .collect();
    assert_eq!(notifications.len(), 1, "{notifications:#?}");
    assert!(
        notifications[0].contains(r#"{"completed":"first"}"#),
        "{notifications:#?}"
    );
    server.verify();
}

/// Spawn, let finish, wait, close — 200 times in one thread: no status is lost between a
/// child's finish and the parent's subscription (each wait must return the child's answer,
/// never a timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_finish_wait_two_hundred_times_loses_no_status() {
    const ROUNDS: usize = 200;
    let names: Vec<String> = (0..ROUNDS).map(nickname).collect();
    let mut script = Vec::new();
    for (round, name) in names.iter().enumerate() {
        script.push(sse_turn(vec![call(
            &format!("spawn{round}"),
            "spawn_agent",
            json!({"message": format!("task {round}")}),
        )]));
        script.push(sse_turn(vec![
            call(
                &format!("wait{round}"),
                "wait_agent",
                json!({"targets": [format!("{{{{agent:{name}}}}}")], "timeout_ms": 20000}),
            ),
            call(
                &format!("close{round}"),
                "close_agent",
                json!({"target": format!("{{{{agent:{name}}}}}")}),
            ),
        ]));
    }
    script.push(answer("all rounds done"));
    let routes: Vec<(&str, Vec<MockResponse>)> = names
        .iter()
        .enumerate()
        .map(|(round, name)| (name.as_str(), vec![answer(&format!("done {round}"))]))
        .collect();
    let server = MockModelServer::start_routed(script, routes).await;
    let Family {
        home: _home,
        repo: _repo,
        manager: _manager,
        spawned: _spawned,
        parent,
    } = family(&server, "[agents]\nmin_wait_timeout_ms = 1\n").await;
    let events = run_turn(&parent, "go", vec![]).await;
    assert!(
        matches!(
            events.last().map(|e| &e.msg),
            Some(EventMsg::TurnCompleted { .. })
        ),
        "{:#?}",
        events.last()
    );
    let last = server.root_requests().pop().unwrap();
    for round in 0..ROUNDS {
        let wait = output_json(&last, &format!("wait{round}"));
        assert_eq!(wait["timed_out"], json!(false), "round {round}: {wait}");
        let status: Vec<&Value> = wait["status"].as_object().unwrap().values().collect();
        assert_eq!(
            status,
            [&json!({"completed": format!("done {round}")})],
            "round {round}"
        );
    }
    server.verify();
}

/// The nicknames children get, in order (as the core hands them out).
fn nickname(n: usize) -> String {
    const NAMES: [&str; 30] = [
        "Planck",
        "Goodall",
        "Cicero",
        "Laplace",
        "Parfit",
        "Kant",
        "Dalton",
        "Nash",
        "Pauli",
        "Harvey",
        "Curie",
        "Noether",
        "Turing",
        "Hypatia",
        "Darwin",
        "Lovelace",
        "Euler",
        "Faraday",
        "Bohr",
        "Hume",
        "Arendt",
        "Galileo",
        "Kepler",
        "Mendel",
        "Pascal",
        "Ramanujan",
        "Socrates",
        "Tesla",
        "Volta",
        "Wittgenstein",
    ];
    match n / NAMES.len() {
        0 => NAMES[n % NAMES.len()].to_string(),
        round => format!("{} {}", NAMES[n % NAMES.len()], round + 1),
    }
}

/// Codex's `is_final` leaves `interrupted` out: after `send_input` with `interrupt: true`
/// the child goes on with the new input, so `wait_agent` waits for that turn's answer and
/// the parent is told of it — not of the interrupted turn (both used to stop at
/// `interrupted`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_child_is_waited_for_until_its_next_turn_ends() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "spawn",
                "spawn_agent",
                json!({"message": "long work"}),
            )]),
            // Time for the child to start its long command.
            shell("pause", "sleep 1"),
            sse_turn(vec![call(
                "send",
                "send_input",
                json!({"target": "{{agent:Planck}}", "message": "stop; do this", "interrupt": true}),
            )]),
            sse_turn(vec![call(
                "wait",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"]}),
            )]),
            // Time for the notification to be queued.
            shell("pause2", "sleep 0.3"),
            answer("done"),
        ],
        vec![(
            "Planck",
            vec![shell("s", "echo sleeping; sleep 60"), answer("switched")],
        )],
    )
    .await;
    let Family {
        home: _home,
        repo: _repo,
        manager: _manager,
        spawned: _spawned,
        parent,
    } = family(&server, "").await;
    let started = std::time::Instant::now();
    run_turn(&parent, "go", vec![]).await;
    let last = server.root_requests().pop().unwrap();
    assert_eq!(
        output_json(&last, "wait")["status"]
            .as_object()
            .and_then(|s| s.values().next().cloned()),
        Some(json!({"completed": "switched"}))
    );
    let notifications: Vec<String> = last
        .user_texts()
        .into_iter()
        .filter(|t| t.starts_with("<subagent_notification>"))
        .collect();
    assert_eq!(notifications.len(), 1, "{notifications:#?}");
    assert!(
        notifications[0].contains(r#"{"completed":"switched"}"#),
        "{notifications:#?}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    server.verify();
}

/// Reopening takes a slot under the concurrency limit, as Codex's `resume_agent` reserves a
/// spawn slot: with the limit full, the closed agent stays closed (it used to be reopened
/// over the limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_agent_is_refused_when_the_limit_is_full() {
    let server = MockModelServer::start_routed(
        vec![
            sse_turn(vec![call(
                "one",
                "spawn_agent",
                json!({"message": "first"}),
            )]),
            sse_turn(vec![call(
                "wait1",
                "wait_agent",
                json!({"targets": ["{{agent:Planck}}"]}),
            )]),
            sse_turn(vec![call(
                "close",
                "close_agent",
                json!({"target": "{{agent:Planck}}"}),
            )]),
            sse_turn(vec![call(
                "two",
                "spawn_agent",
                json!({"message": "second"}),
            )]),
            sse_turn(vec![call(
                "wait2",
                "wait_agent",
                json!({"targets": ["{{agent:Goodall}}"]}),
            )]),
            sse_turn(vec![call(
                "resume",
                "resume_agent",
                json!({"id": "{{agent:Planck}}"}),
            )]),
            answer("done"),
        ],
        vec![
            ("Planck", vec![answer("first done")]),
            ("Goodall", vec![answer("second done")]),
        ],
    )
    .await;
    let Family {
        home: _home,
        repo: _repo,
        manager,
        mut spawned,
        parent,
    } = family(
        &server,
        "[agents]\nmax_concurrent_threads_per_session = 1\n",
    )
    .await;
    run_turn(&parent, "go", vec![]).await;
    let last = server.root_requests().pop().unwrap();
    assert_eq!(
        output_json(&last, "two")["nickname"],
        json!("Goodall"),
        "a closed agent frees its slot"
    );
    assert_eq!(
        output_json(&last, "resume"),
        json!("collab tool failed: agent thread limit reached")
    );
    let planck = next_child(&mut spawned).await;
    let goodall = next_child(&mut spawned).await;
    assert_ne!(planck.thread_id, goodall.thread_id);
    // Planck was not reopened.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), spawned.recv())
            .await
            .is_err()
    );
    assert!(manager.get(planck.thread_id).is_none());
    server.verify();
}
