//! The safety policy end to end: forbidden commands hidden behind shell tricks never run,
//! under any approval policy; ordinary scripts keep working under `never`.

use super::common::*;
use osprey_test_support::*;
use serde_json::json;

/// Ways a model might hide `rm` from a naive check.
const BYPASSES: &[&str] = &[
    "rm victim.txt",
    "bash -c 'rm victim.txt'",
    "sh -c \"rm victim.txt\"",
    "bash -c \"bash -c 'rm victim.txt'\"",
    "env X=1 rm victim.txt",
    "env -i rm victim.txt",
    "/bin/rm victim.txt",
    "/usr/bin/rm victim.txt",
    "\\rm victim.txt",
    "r''m victim.txt",
    "\"rm\" victim.txt",
    "r\"m\" victim.txt",
    "$(echo rm) victim.txt",
    "`echo rm` victim.txt",
    "true; rm victim.txt",
    "true && rm victim.txt",
    "false || rm victim.txt",
    "echo x | rm victim.txt",
    "true\nrm victim.txt",
    "echo victim.txt | xargs rm",
    "echo victim.txt | xargs -n1 rm",
    "eval 'rm victim.txt'",
    "eval \"$(echo rm) victim.txt\"",
    "x=rm; $x victim.txt",
    "(rm victim.txt)",
    "{ rm victim.txt; }",
    "timeout 5 rm victim.txt",
    "nice -n 5 rm victim.txt",
    "nohup rm victim.txt",
    "command rm victim.txt",
    "exec rm victim.txt",
    "time rm victim.txt",
    "f() { rm victim.txt; }; f",
    "echo $(rm victim.txt)",
    "echo `rm victim.txt`",
    "cat <(rm victim.txt)",
    "if true; then rm victim.txt; fi",
    "for f in victim.txt; do rm \"$f\"; done",
    "while true; do rm victim.txt; break; done",
    "case x in x) rm victim.txt;; esac",
    "alias r=rm\nr victim.txt",
    "source /dev/stdin <<< 'rm victim.txt'",
    "bash <<< 'rm victim.txt'",
    "RM=rm; ${RM} victim.txt",
];

async fn run_bypasses(approval: &str) {
    let repo = temp_git_repo();
    let victim = repo.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let calls: Vec<SseEvent> = BYPASSES
        .iter()
        .enumerate()
        .map(|(i, cmd)| {
            ev_function_call(
                &format!("call_{i}"),
                "exec_command",
                &json!({"cmd": cmd}).to_string(),
            )
        })
        .collect();
    let server = MockModelServer::start(vec![
        sse_turn(calls),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config(&format!(
        "approval_policy = \"{approval}\"\nsandbox_mode = \"danger-full-access\"\n"
    ));
    std::fs::create_dir_all(home.path().join("rules")).unwrap();
    std::fs::write(
        home.path().join("rules/safety.rules"),
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no deleting\")\n",
    )
    .unwrap();
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "delete it"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(victim.exists(), "victim.txt was deleted under {approval}");
    let request = &server.requests()[1];
    for (i, cmd) in BYPASSES.iter().enumerate() {
        let output = request.output_for(&format!("call_{i}")).unwrap();
        assert!(
            output.contains("not run") || output.contains("declined"),
            "under {approval}, {cmd:?} was not refused: {output}"
        );
    }
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_commands_never_run_under_never() {
    run_bypasses("never").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_commands_never_run_under_on_request() {
    run_bypasses("on-request").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_commands_never_run_under_on_failure() {
    run_bypasses("on-failure").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_commands_never_run_under_untrusted() {
    run_bypasses("untrusted").await;
}

/// Ordinary scripts a model writes every day.
const LEGIT: &[&str] = &[
    "for f in *.txt; do wc -l \"$f\"; done",
    "echo hi > out.txt && cat out.txt",
    "ls | wc -l",
    "mkdir -p sub && cd sub && printf 'all:\\n\\t@echo built\\n' > Makefile && make",
    "grep -c line a.txt || true",
    "cat a.txt | sort | uniq -c | head -n 3",
    "x=$(wc -l < a.txt); echo \"lines: $x\"",
    "test -f a.txt && echo present",
    "find . -name '*.txt' -type f | sort",
    "git status --short",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_scripts_run_under_never() {
    let repo = temp_git_repo();
    std::fs::write(repo.path().join("a.txt"), "line one\nline two\n").unwrap();
    let calls: Vec<SseEvent> = LEGIT
        .iter()
        .enumerate()
        .map(|(i, cmd)| {
            ev_function_call(
                &format!("call_{i}"),
                "exec_command",
                &json!({"cmd": cmd}).to_string(),
            )
        })
        .collect();
    let server = MockModelServer::start(vec![
        sse_turn(calls),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n");
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "work"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let request = &server.requests()[1];
    for (i, cmd) in LEGIT.iter().enumerate() {
        let output = request.output_for(&format!("call_{i}")).unwrap();
        assert!(
            output.contains("Process exited with code 0"),
            "{cmd:?} should run under never: {output}"
        );
    }
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_runs_read_only_commands_and_asks_for_the_rest() {
    let repo = temp_git_repo();
    let server = MockModelServer::start(vec![
        sse_turn(vec![
            ev_function_call("read", "exec_command", &json!({"cmd": "ls -a"}).to_string()),
            ev_function_call(
                "write",
                "exec_command",
                &json!({"cmd": "touch made.txt"}).to_string(),
            ),
        ]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n");
    let out = osprey_async(&home, repo.path(), &["exec", "--json", "look"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let request = &server.requests()[1];
    assert!(
        request
            .output_for("read")
            .unwrap()
            .contains("Process exited with code 0")
    );
    let write = request.output_for("write").unwrap();
    assert!(
        write.contains("declined"),
        "exec declines approval requests: {write}"
    );
    assert!(!repo.path().join("made.txt").exists());
    let events = jsonl(&out);
    assert!(
        events
            .iter()
            .any(|e| e["item"]["type"] == "command_execution" && e["item"]["status"] == "declined"),
        "a declined command item is reported: {events:?}"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_rules_file_is_reported_and_makes_commands_ask() {
    let repo = temp_git_repo();
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_1",
            "exec_command",
            &json!({"cmd": "touch made.txt"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n");
    std::fs::create_dir_all(home.path().join("rules")).unwrap();
    std::fs::write(
        home.path().join("rules/bad.rules"),
        "prefix_rule(pattern=[\"rm\"\n",
    )
    .unwrap();
    let out = osprey_async(&home, repo.path(), &["exec", "hi"], "").await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("bad.rules:"),
        "names the file with a position: {err}"
    );
    assert!(
        !repo.path().join("made.txt").exists(),
        "a broken file never allows everything"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignore_rules_skips_rules_files() {
    let repo = temp_git_repo();
    std::fs::write(repo.path().join("victim.txt"), "x").unwrap();
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_1",
            "exec_command",
            &json!({"cmd": "rm victim.txt"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n");
    std::fs::create_dir_all(home.path().join("rules")).unwrap();
    std::fs::write(
        home.path().join("rules/safety.rules"),
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\")\n",
    )
    .unwrap();
    let out = osprey_async(
        &home,
        repo.path(),
        &["exec", "--ignore-rules", "--json", "rm"],
        "",
    )
    .await;
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(
        !repo.path().join("victim.txt").exists(),
        "without rules, rm ran"
    );
    server.verify();
}
