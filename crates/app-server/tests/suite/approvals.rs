//! Approvals as server → client requests: the decisions, what each does to the item, the
//! model and the turn, what is remembered for the session or persisted as a rule.

use std::time::Duration;

use osprey_test_support::{
    MockModelServer, TempHome, WireApi, ev_assistant_message, ev_custom_tool_call,
    ev_function_call, sse_turn,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::client::Client;

const CMD_APPROVAL: &str = "item/commandExecution/requestApproval";
const PATCH_APPROVAL: &str = "item/fileChange/requestApproval";

fn exec(call_id: &str, cmd: &str) -> osprey_test_support::SseEvent {
    ev_function_call(call_id, "exec_command", &json!({"cmd": cmd}).to_string())
}

fn add_file(call_id: &str, name: &str, text: &str) -> osprey_test_support::SseEvent {
    ev_custom_tool_call(
        call_id,
        "apply_patch",
        &format!("*** Begin Patch\n*** Add File: {name}\n+{text}\n*** End Patch\n"),
    )
}

fn untrusted() -> Value {
    json!({"approvalPolicy": "untrusted", "sandbox": "workspace-write"})
}

async fn setup(
    script: Vec<osprey_test_support::MockResponse>,
) -> (MockModelServer, TempHome, tempfile::TempDir) {
    let server = MockModelServer::start(script).await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let work = tempfile::tempdir().unwrap();
    (server, home, work)
}

/// The id of the newest `fileChange` item that started (the one an approval is about).
fn open_file_change(client: &Client) -> Value {
    client
        .log
        .iter()
        .rev()
        .find(|m| m["method"] == "item/started" && m["params"]["item"]["type"] == "fileChange")
        .map(|m| m["params"]["item"]["id"].clone())
        .unwrap_or_else(|| panic!("no fileChange item started: {:#?}", client.log))
}

fn index_of(log: &[Value], pred: impl Fn(&Value) -> bool) -> usize {
    log.iter()
        .position(pred)
        .unwrap_or_else(|| panic!("not in the log: {log:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_with_approvals_runs_like_codex() {
    let (server, home, work) = setup(vec![
        sse_turn(vec![exec("c1", "touch notes.txt")]),
        sse_turn(vec![exec("c2", "touch notes.txt")]),
        sse_turn(vec![add_file("p1", "notes.md", "# Notes")]),
        sse_turn(vec![ev_assistant_message("m1", "Made the notes.")]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), untrusted()).await;
    let started = client.notification("thread/started").await;
    assert_eq!(started["params"]["thread"]["id"], thread.as_str());
    let turn = client.start_turn(&thread, "make the notes").await;

    let ask = client.server_request(CMD_APPROVAL).await;
    let params = &ask["params"];
    assert_eq!(params["threadId"], thread.as_str());
    assert_eq!(params["turnId"], turn.as_str());
    assert_eq!(params["itemId"], "c1");
    assert_eq!(params["kind"], "command");
    assert_eq!(params["cwd"], work.path().display().to_string());
    assert!(
        params["command"]
            .as_str()
            .unwrap()
            .contains("touch notes.txt"),
        "{params}"
    );
    let decisions = params["availableDecisions"].as_array().unwrap();
    assert!(decisions.contains(&json!("acceptForSession")), "{params}");
    assert_eq!(
        params["proposedExecpolicyAmendment"][0], "touch",
        "{params}"
    );
    assert_eq!(ask["id"], 0, "server requests count from 0");
    client
        .answer(&ask, json!({"decision": "acceptForSession"}))
        .await;
    let resolved = client.notification("serverRequest/resolved").await;
    assert_eq!(
        resolved["params"],
        json!({"threadId": thread, "requestId": 0})
    );

    let patch = client.server_request(PATCH_APPROVAL).await;
    assert_eq!(
        patch["params"]["itemId"],
        open_file_change(&client),
        "{patch}"
    );
    assert_eq!(
        patch["id"], 1,
        "c2 ran without a request: {:#?}",
        client.log
    );
    client.answer(&patch, json!({"decision": "accept"})).await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["items"][0]["text"], "Made the notes.");
    assert_eq!(done["items"][0]["type"], "agentMessage");
    assert!(work.path().join("notes.txt").exists());
    assert_eq!(
        std::fs::read_to_string(work.path().join("notes.md")).unwrap(),
        "# Notes\n"
    );

    // The item sequence: user message, three tool items, the answer.
    let items: Vec<(String, String)> = client
        .completed_items(&thread)
        .iter()
        .map(|i| {
            (
                i["type"].as_str().unwrap().to_owned(),
                i["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let kinds: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "userMessage",
            "commandExecution",
            "commandExecution",
            "fileChange",
            "agentMessage"
        ]
    );
    let user = &client.completed_items(&thread)[0];
    assert_eq!(
        user["content"],
        json!([{"type": "text", "text": "make the notes", "text_elements": []}])
    );
    let c1 = &client.completed_items(&thread)[1];
    assert_eq!(c1["status"], "completed");
    assert_eq!(c1["exitCode"], 0);
    assert!(c1["durationMs"].is_i64(), "{c1}");
    let file = &client.completed_items(&thread)[3];
    assert_eq!(file["changes"][0]["kind"], json!({"type": "add"}));
    assert!(
        file["changes"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("notes.md")
    );

    // Order around the first approval, and the turn's end.
    let log = client.log.clone();
    let waiting = index_of(&log, |m| {
        m["method"] == "thread/status/changed"
            && m["params"]["status"]["activeFlags"] == json!(["waitingOnApproval"])
    });
    let asked = index_of(&log, |m| m["method"] == CMD_APPROVAL);
    let answered = index_of(&log, |m| m["method"] == "serverRequest/resolved");
    let c1_done = index_of(&log, |m| {
        m["method"] == "item/completed" && m["params"]["item"]["id"] == "c1"
    });
    assert!(
        waiting < asked + 2 && asked < answered && answered < c1_done,
        "{log:#?}"
    );
    let diff = index_of(&log, |m| m["method"] == "turn/diff/updated");
    let idle = index_of(&log, |m| {
        m["method"] == "thread/status/changed" && m["params"]["status"]["type"] == "idle"
    });
    let end = index_of(&log, |m| m["method"] == "turn/completed");
    assert!(diff < idle && idle < end, "{log:#?}");
    let diff_text = log[diff]["params"]["diff"].as_str().unwrap();
    assert!(
        diff_text.contains("diff --git a/notes.md b/notes.md\nnew file mode 100644"),
        "{diff_text}"
    );
    assert!(diff_text.contains("+# Notes"), "{diff_text}");
    for m in &log {
        if m.get("id").is_none() {
            assert!(
                m["emittedAtMs"].is_i64(),
                "notifications carry emittedAtMs: {m}"
            );
        }
    }
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execpolicy_amendment_is_written_and_covers_later_threads() {
    let (server, home, work) = setup(vec![
        sse_turn(vec![exec("a1", "touch a.txt")]),
        sse_turn(vec![exec("a2", "touch b.txt")]),
        sse_turn(vec![ev_assistant_message("m1", "ok")]),
        sse_turn(vec![exec("a3", "touch c.txt")]),
        sse_turn(vec![ev_assistant_message("m2", "ok again")]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), untrusted()).await;
    client.start_turn(&thread, "touch things").await;
    let ask = client.server_request(CMD_APPROVAL).await;
    let amendment = ask["params"]["availableDecisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d.get("acceptWithExecpolicyAmendment").is_some())
        .cloned()
        .unwrap_or_else(|| panic!("an amendment is offered: {ask}"));
    assert_eq!(
        amendment["acceptWithExecpolicyAmendment"]["execpolicy_amendment"][0],
        "touch"
    );
    client
        .answer(&ask, json!({"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch"]}}}))
        .await;
    assert_eq!(client.turn_completed(&thread).await["status"], "completed");
    let rules = std::fs::read_to_string(home.path().join("rules/default.rules")).unwrap();
    assert!(
        rules.contains("prefix_rule(") && rules.contains("\"touch\""),
        "{rules}"
    );

    let second = client.start_thread(work.path(), untrusted()).await;
    client.start_turn(&second, "touch more").await;
    assert_eq!(client.turn_completed(&second).await["status"], "completed");
    let asked = client
        .log
        .iter()
        .filter(|m| m["method"] == CMD_APPROVAL)
        .count();
    assert_eq!(
        asked, 1,
        "later touch commands ran without asking: {:#?}",
        client.log
    );
    for name in ["a.txt", "b.txt", "c.txt"] {
        assert!(work.path().join(name).exists(), "{name}");
    }
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_approved_for_the_session_covers_its_file_only() {
    let (server, home, work) = setup(vec![
        sse_turn(vec![add_file("p1", "x.txt", "one")]),
        sse_turn(vec![ev_custom_tool_call(
            "p2",
            "apply_patch",
            "*** Begin Patch\n*** Update File: x.txt\n@@\n-one\n+two\n*** End Patch\n",
        )]),
        sse_turn(vec![add_file("p3", "y.txt", "new")]),
        sse_turn(vec![ev_assistant_message("m1", "patched")]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), untrusted()).await;
    client.start_turn(&thread, "patch").await;
    let first = client.server_request(PATCH_APPROVAL).await;
    assert_eq!(first["params"]["itemId"], open_file_change(&client));
    client
        .answer(&first, json!({"decision": "acceptForSession"}))
        .await;
    let second = client.server_request(PATCH_APPROVAL).await;
    assert_eq!(second["params"]["itemId"], open_file_change(&client));
    assert_eq!(
        second["id"], 1,
        "the update of x.txt did not ask: {:#?}",
        client.log
    );
    let adds: Vec<Value> = client
        .log
        .iter()
        .filter(|m| m["method"] == "item/started" && m["params"]["item"]["type"] == "fileChange")
        .cloned()
        .collect();
    assert_eq!(adds.len(), 3, "three patches started: {adds:#?}");
    client.answer(&second, json!({"decision": "accept"})).await;
    assert_eq!(client.turn_completed(&thread).await["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(work.path().join("x.txt")).unwrap(),
        "two\n"
    );
    assert!(work.path().join("y.txt").exists());
    // The turn diff shows x.txt from before the turn (absent) to now.
    let last_diff = client
        .log
        .iter()
        .rev()
        .find(|m| m["method"] == "turn/diff/updated")
        .unwrap()["params"]["diff"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        last_diff.contains("+++ b/x.txt\n@@ -0,0 +1 @@\n+two"),
        "{last_diff}"
    );
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_goes_on_and_cancel_ends_the_turn() {
    let (server, home, work) = setup(vec![
        sse_turn(vec![exec("d1", "touch declined.txt")]),
        sse_turn(vec![ev_assistant_message("m1", "fine, not touching it")]),
        sse_turn(vec![exec("d2", "touch cancelled.txt")]),
        sse_turn(vec![add_file("d3", "nope.txt", "x")]),
        sse_turn(vec![ev_assistant_message("m2", "ok")]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), untrusted()).await;
    client.start_turn(&thread, "one").await;
    let ask = client.server_request(CMD_APPROVAL).await;
    client.answer(&ask, json!({"decision": "decline"})).await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "completed");
    let d1 = client
        .completed_items(&thread)
        .into_iter()
        .find(|i| i["id"] == "d1")
        .unwrap();
    assert_eq!(d1["status"], "declined");
    assert!(d1["exitCode"].is_null());
    let told = server.requests()[1].output_for("d1").unwrap();
    assert!(
        told.to_lowercase().contains("declined"),
        "the model is told: {told}"
    );

    client.start_turn(&thread, "two").await;
    let ask = client.server_request(CMD_APPROVAL).await;
    client.answer(&ask, json!({"decision": "cancel"})).await;
    let done = client.turn_completed(&thread).await;
    assert_eq!(done["status"], "interrupted");
    assert!(!work.path().join("cancelled.txt").exists());
    let d2 = client
        .completed_items(&thread)
        .into_iter()
        .find(|i| i["id"] == "d2")
        .unwrap();
    assert_eq!(d2["status"], "declined");

    // A declined patch: the item is declined, the model told, the turn goes on.
    client.start_turn(&thread, "three").await;
    let ask = client.server_request(PATCH_APPROVAL).await;
    client.answer(&ask, json!({"decision": "decline"})).await;
    assert_eq!(client.turn_completed(&thread).await["status"], "completed");
    let d3 = client
        .completed_items(&thread)
        .into_iter()
        .find(|i| i["type"] == "fileChange")
        .unwrap();
    assert_eq!(d3["status"], "declined");
    assert!(!work.path().join("nope.txt").exists());
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_approval_does_not_block_interrupt_and_is_resolved_after_the_turn() {
    let (server, home, work) = setup(vec![sse_turn(vec![exec("w1", "touch waiting.txt")])]).await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client.start_thread(work.path(), untrusted()).await;
    let turn = client.start_turn(&thread, "wait").await;
    let ask = client.server_request(CMD_APPROVAL).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let result = client
        .request(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        )
        .await;
    assert_eq!(result, json!({}));
    assert_eq!(
        client.turn_completed(&thread).await["status"],
        "interrupted"
    );
    let resolved = client.notification("serverRequest/resolved").await;
    assert_eq!(resolved["params"]["requestId"], ask["id"]);
    let log = &client.log;
    let end = index_of(log, |m| m["method"] == "turn/completed");
    let res = index_of(log, |m| m["method"] == "serverRequest/resolved");
    assert!(
        end < res,
        "resolved after turn/completed, as Codex: {log:#?}"
    );
    // A late answer is ignored (logged), and the server still serves.
    client.answer(&ask, json!({"decision": "accept"})).await;
    let listed = client.request("thread/loaded/list", json!({})).await;
    assert_eq!(listed["data"], json!([thread]));
    assert!(!work.path().join("waiting.txt").exists());
    assert!(client.close().await.success());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_denial_asks_to_rerun_and_says_what_was_blocked() {
    let target = format!("/usr/osprey-denied-{}", std::process::id());
    let (server, home, work) = setup(vec![
        sse_turn(vec![exec("e1", &format!("touch {target}"))]),
        sse_turn(vec![ev_assistant_message("m1", "left it alone")]),
    ])
    .await;
    let mut client = Client::spawn(&home, work.path());
    client.initialize().await;
    let thread = client
        .start_thread(
            work.path(),
            json!({"approvalPolicy": "on-request", "sandbox": "workspace-write"}),
        )
        .await;
    client.start_turn(&thread, "touch outside").await;
    let ask = client.server_request(CMD_APPROVAL).await;
    let reason = ask["params"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        reason.contains("sandbox blocked"),
        "the denial is named: {ask}"
    );
    // Osprey's own field says what was blocked, so a client can word the rerun question.
    let denial = ask["params"]["sandboxDenial"].as_str().unwrap_or_default();
    assert!(
        !denial.is_empty() && reason.contains(denial),
        "sandboxDenial: {ask}"
    );
    client.answer(&ask, json!({"decision": "decline"})).await;
    assert_eq!(client.turn_completed(&thread).await["status"], "completed");
    assert!(
        !std::path::Path::new(&target).exists(),
        "declined: nothing ran outside the sandbox"
    );
    assert!(client.close().await.success());
    server.verify();
}
