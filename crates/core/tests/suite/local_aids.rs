//! The local model's harness aids through a whole turn, with the scripted mock standing in
//! for the embedded model (a provider factory for `local` that opens an HTTP client to the
//! mock), so the small tool profile and its inspectors are what runs.

use super::harness::*;
use async_trait::async_trait;
use osprey_config::ModelProviderInfo;
use osprey_core::{OspreyThread, ThreadManager};
use osprey_model::{ModelClient, ModelError, ModelProviderFactory};
use osprey_test_support::*;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// `local`, answered by the mock server.
struct MockAsLocal(ModelProviderInfo);

#[async_trait]
impl ModelProviderFactory for MockAsLocal {
    fn provider_id(&self) -> &str {
        osprey_config::LOCAL_PROVIDER_ID
    }

    async fn open(&self, _config: &osprey_config::Config) -> Result<ModelClient, ModelError> {
        ModelClient::new(self.0.clone(), &|_| Some(TEST_API_KEY.to_owned()))
    }
}

/// A thread in `repo` on the `local` provider (the small tool profile and its inspectors),
/// answered by the mock server `home` points at. The manager is returned so it outlives
/// the turn.
async fn local_thread(home: &TempHome, repo: &Path) -> (ThreadManager, Arc<OspreyThread>) {
    let mut config = config(home, repo);
    let mock = config.model_providers["mock"].clone();
    config.model_provider_id = osprey_config::LOCAL_PROVIDER_ID.to_owned();
    config.model_provider = config.model_providers[osprey_config::LOCAL_PROVIDER_ID].clone();
    let manager = manager(home).with_provider(Arc::new(MockAsLocal(mock)));
    let thread = manager.start_thread(config).await.expect("thread starts");
    (manager, thread)
}

/// Writes `home`'s config for a turn that needs no one: no approvals, no sandbox (the
/// writes and commands happen for real), and `local_model` (TOML lines) under
/// `[local_model]`.
fn unattended(home: &TempHome, local_model: &str) {
    home.write_config(&format!(
        "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n\
         [local_model]\n{local_model}"
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_does_not_stop_the_reads_of_its_batch() {
    let repo = temp_git_repo();
    std::fs::write(repo.path().join("a.py"), "x = 1\n").unwrap();
    std::fs::write(repo.path().join("b.py"), "y = 2\n").unwrap();
    let read = ev_function_call(
        "call_read",
        "read_file",
        &json!({"file_path": "b.py"}).to_string(),
    );
    let write = ev_function_call(
        "call_write",
        "write_file",
        &json!({"path": "a.py", "content": "x = 3\n"}).to_string(),
    );
    let server = MockModelServer::start(vec![
        sse_turn(vec![read, write]),
        sse_turn(vec![ev_assistant_message("m1", "Looked.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let _events = run_turn(&thread, "change a", Vec::new()).await;
    let requests = server.requests();
    let read_output = requests[1].output_for("call_read").unwrap();
    assert!(
        read_output.contains("y = 2"),
        "the read in the batch ran: {read_output}"
    );
    let write_output = requests[1].output_for("call_write").unwrap();
    assert!(write_output.contains("Not written"), "{write_output}");
    assert!(
        write_output.contains("x = 1"),
        "the file is shown: {write_output}"
    );
    assert!(
        !write_output.contains("y = 2"),
        "its own answer only: {write_output}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("a.py")).unwrap(),
        "x = 1\n"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_changes_one_span_through_the_patch_path_and_a_wrong_span_says_what_to_do() {
    let repo = temp_git_repo();
    let config_json = "{\n  \"name\": \"webapp\",\n  \"debug\": true,\n  \"port\": 8080\n}\n";
    std::fs::write(repo.path().join("config.json"), config_json).unwrap();
    // As read_file shows the line: its `L3: ` prefix is forgiven.
    let edit = ev_function_call(
        "call_edit",
        "edit_file",
        &json!({"path": "config.json", "old": "L3:   \"debug\": true,", "new": "  \"debug\": false,"})
            .to_string(),
    );
    let wrong = ev_function_call(
        "call_wrong",
        "edit_file",
        &json!({"path": "config.json", "old": "\"port\": 8081", "new": "\"port\": 9090"})
            .to_string(),
    );
    let server = MockModelServer::start(vec![
        sse_turn(vec![edit]),
        sse_turn(vec![wrong]),
        sse_turn(vec![ev_assistant_message("m1", "Done.")]),
        // The finish nudge says once that the last edit failed, then asks once to run
        // something (the first edit changed the file); the third answer ends the turn.
        sse_turn(vec![ev_assistant_message("m2", "Done.")]),
        sse_turn(vec![ev_assistant_message("m3", "Done.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    // The write diff (off by default) on, to see that it covers edits.
    unattended(&home, "write_diff = true\n");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let events = run_turn(&thread, "In config.json, set debug to false.", Vec::new()).await;
    assert_eq!(
        std::fs::read_to_string(repo.path().join("config.json")).unwrap(),
        config_json.replace("true", "false"),
        "only the span changed"
    );
    let file_changes = events
        .iter()
        .filter(|event| {
            matches!(
                &event.msg,
                osprey_protocol::EventMsg::ItemCompleted {
                    item: osprey_protocol::ThreadItem::FileChange { .. }
                }
            )
        })
        .count();
    assert_eq!(file_changes, 1, "the edit is a file change like a patch");
    let requests = server.requests();
    let edited = requests[1].output_for("call_edit").unwrap();
    assert!(
        edited.contains("-  \"debug\": true,\n+  \"debug\": false,"),
        "the diff note applies to edits: {edited}"
    );
    let refused = requests[2].output_for("call_wrong").unwrap();
    assert!(refused.contains("does not occur"), "{refused}");
    assert!(
        refused.contains("L4:   \"port\": 8080"),
        "closest line: {refused}"
    );
    let reminders = requests[4].user_texts();
    assert!(
        reminders[reminders.len() - 2].starts_with("Your last `edit_file` call failed"),
        "{reminders:?}"
    );
    assert!(
        reminders[reminders.len() - 1].starts_with("You changed files but ran nothing"),
        "{reminders:?}"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_write_with_only_the_keys_to_set_keeps_the_others_and_says_so() {
    let repo = temp_git_repo();
    let config_json = "{\n  \"name\": \"webapp\",\n  \"debug\": true,\n  \"port\": 8080\n}\n";
    std::fs::write(repo.path().join("config.json"), config_json).unwrap();
    let kept =
        "{\n  \"name\": \"webapp\",\n  \"debug\": false,\n  \"port\": 8080,\n  \"retries\": 3\n}\n";
    // Unread and partial: neither read-before-write nor the write as given would help.
    let partial =
        json!({"path": "config.json", "content": "{\"debug\": false, \"retries\": 3}"}).to_string();
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_partial",
            "write_file",
            &partial,
        )]),
        sse_turn(vec![ev_assistant_message("m1", "Done.")]),
        // The finish nudge asks once to run something; the second answer ends the turn.
        sse_turn(vec![ev_assistant_message("m2", "Done.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    unattended(&home, "");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let prompt = "In config.json, set debug to false and add retries with the value 3.";
    let _events = run_turn(&thread, prompt, Vec::new()).await;
    assert_eq!(
        std::fs::read_to_string(repo.path().join("config.json")).unwrap(),
        kept
    );
    let requests = server.requests();
    let result = requests[1].output_for("call_partial").unwrap();
    assert!(
        result.contains("Your content left out `name` and `port`, which config.json has"),
        "{result}"
    );
    // The write's diff is off by default.
    assert!(!result.contains("What changed"), "{result}");
    // The history keeps the call the model made.
    let call = requests[1]
        .input()
        .iter()
        .find(|item| item["type"] == "function_call")
        .unwrap();
    assert_eq!(call["arguments"], partial.as_str());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_without_the_final_line_break_shows_only_the_lines_it_changed_in_its_diff() {
    let repo = temp_git_repo();
    let old = "def average(values):\n    \"\"\"Mean of a non-empty list.\"\"\"\n    total = sum(values)\n    return total / (len(values) + 1)\n";
    std::fs::write(repo.path().join("stats.py"), old).unwrap();
    // As the model writes it: a check added, the docstring gone, no final line break.
    let content = "def average(values):\n    if not values:\n        raise ValueError('empty')\n    total = sum(values)\n    return total / (len(values) + 1)";
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_read",
            "read_file",
            &json!({"file_path": "stats.py"}).to_string(),
        )]),
        sse_turn(vec![ev_function_call(
            "call_write",
            "write_file",
            &json!({"path": "stats.py", "content": content}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "Done.")]),
        sse_turn(vec![ev_assistant_message("m2", "Done.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    unattended(&home, "write_diff = true\n");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let _events = run_turn(&thread, "Make average refuse an empty list.", Vec::new()).await;
    assert_eq!(
        std::fs::read_to_string(repo.path().join("stats.py")).unwrap(),
        format!("{content}\n")
    );
    let requests = server.requests();
    let result = requests[2].output_for("call_write").unwrap();
    assert!(
        result.contains(
            "-    \"\"\"Mean of a non-empty list.\"\"\"\n+    if not values:\n+        raise ValueError('empty')\n"
        ),
        "the diff shows the lines that changed: {result}"
    );
    // The line with the bug was not touched, and the diff must not say it was.
    assert!(!result.contains("-    return total"), "{result}");
    assert!(!result.contains("No newline"), "{result}");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_call_gets_its_earlier_result_once_and_a_second_repeat_ends_the_turn() {
    let repo = temp_git_repo();
    std::fs::create_dir_all(repo.path().join("deploy")).unwrap();
    std::fs::write(repo.path().join("deploy/service.toml"), "port = 8731\n").unwrap();
    let read = |id: &str| {
        ev_function_call(
            id,
            "read_file",
            &json!({"file_path": "deploy/service.toml"}).to_string(),
        )
    };
    let server = MockModelServer::start(vec![
        sse_turn(vec![read("call_1")]),
        sse_turn(vec![read("call_2")]),
        sse_turn(vec![read("call_3")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let events = run_turn(&thread, "Which port does the service use?", Vec::new()).await;
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "the third call ends the turn, no fourth request"
    );
    let first = requests[1].output_for("call_1").unwrap();
    assert!(first.contains("port = 8731"), "{first}");
    let nudged = requests[2].output_for("call_2").unwrap();
    assert!(
        nudged.starts_with("Not run: you already made this exact call"),
        "{nudged}"
    );
    assert!(
        nudged.contains("port = 8731"),
        "the earlier result: {nudged}"
    );
    assert!(nudged.contains("Do not repeat the call"), "{nudged}");
    let stopped = events.iter().any(|event| {
        matches!(&event.msg, osprey_protocol::EventMsg::Warning { message }
            if message.contains("repeated an earlier `read_file` call"))
    });
    assert!(stopped, "the loop guard ends the turn on the second repeat");
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_read_by_eye_is_sent_back_to_the_shell_and_the_question_keeps_its_narration() {
    let repo = temp_git_repo();
    std::fs::write(
        repo.path().join("sales.csv"),
        "region,amount\nnorth,1\nsouth,2\nnorth,3\n",
    )
    .unwrap();
    let announce = "I need to read sales.csv. Here's how I can do it:";
    let server = MockModelServer::start(vec![
        sse_turn(vec![
            ev_assistant_message("m1", announce),
            ev_function_call(
                "call_read",
                "read_file",
                &json!({"file_path": "sales.csv"}).to_string(),
            ),
        ]),
        sse_turn(vec![ev_assistant_message("m2", "3")]),
        sse_turn(vec![ev_function_call(
            "call_grep",
            "shell_command",
            &json!({"command": "grep -c north sales.csv"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m3", "2")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let question = "How many rows of sales.csv have the region north?";
    let _events = run_turn(&thread, question, Vec::new()).await;
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        4,
        "read, answer by eye, reminder → grep, answer"
    );

    let read = requests[1].output_for("call_read").unwrap();
    assert!(read.contains("north,3"), "{read}");
    assert!(
        read.contains(&format!("The question to answer: {question}")),
        "{read}"
    );
    assert!(read.contains("Do not count or add up by eye"), "{read}");
    let narrated = |request: &CapturedRequest| request.body.to_string().contains("Here's how");
    assert!(
        requests[1..].iter().all(narrated),
        "on a question that question focus handles, the announcement stays in every later request"
    );

    assert_eq!(requests[1].body["tool_choice"], json!("auto"));
    assert!(
        requests[2]
            .user_texts()
            .iter()
            .any(|text| text.contains("That figure was not computed")),
        "{:?}",
        requests[2].user_texts()
    );
    assert_eq!(
        requests[2].body["tool_choice"],
        json!({"type": "function", "name": "shell_command"}),
        "the reminder's answer must be a shell call"
    );
    let grep = requests[3].output_for("call_grep").unwrap();
    assert!(
        grep.contains("If the result above shows the answer"),
        "{grep}"
    );
    assert_eq!(requests[3].body["tool_choice"], json!("auto"));
    server.verify();

    thread.submit(osprey_protocol::Op::Shutdown).await.unwrap();
    while let Some(event) = thread.next_event().await {
        if matches!(event.msg, osprey_protocol::EventMsg::ShutdownComplete) {
            break;
        }
    }
    let rollout = rollout_text(&home.path().join("sessions"));
    assert!(
        rollout.contains(announce),
        "the session file keeps the narration"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_question_focus_the_narration_of_a_call_is_left_out_of_later_requests() {
    let repo = temp_git_repo();
    std::fs::write(repo.path().join("notes.txt"), "the port is 8731\n").unwrap();
    let announce = "I need to read notes.txt. Here's how I can do it:";
    let server = MockModelServer::start(vec![
        sse_turn(vec![
            ev_assistant_message("m1", announce),
            ev_function_call(
                "call_read",
                "read_file",
                &json!({"file_path": "notes.txt"}).to_string(),
            ),
        ]),
        sse_turn(vec![ev_assistant_message("m2", "The port is 8731.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    home.write_config("[local_model]\nquestion_focus = false\n");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let _events = run_turn(&thread, "Which port is in notes.txt?", Vec::new()).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "read, then answer");
    assert!(
        !requests[1].body.to_string().contains("Here's how"),
        "the announcement is left out of the request after the call"
    );
    assert!(requests[1].output_for("call_read").is_some());
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_error_from_a_real_python_run_says_which_file_defines_the_name() {
    let repo = temp_git_repo();
    let test_add = "import unittest\n\n\nclass TestAdd(unittest.TestCase):\n    \
                    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n";
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_add",
            "write_file",
            &json!({"path": "add.py", "content": "def add(a, b):\n    return a + b\n"}).to_string(),
        )]),
        sse_turn(vec![ev_function_call(
            "call_test",
            "write_file",
            &json!({"path": "test_add.py", "content": test_add}).to_string(),
        )]),
        sse_turn(vec![ev_function_call(
            "call_run",
            "shell_command",
            &json!({"command": "python3 -m unittest"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "Done.")]),
        sse_turn(vec![ev_assistant_message("m2", "Done.")]),
        sse_turn(vec![ev_assistant_message("m3", "Done.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    unattended(&home, "");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let request = "Create add.py with a function add(a, b) and test_add.py with a test for it.";
    let _events = run_turn(&thread, request, Vec::new()).await;
    let requests = server.requests();
    let ran = requests[3].output_for("call_run").unwrap();
    assert!(
        ran.contains("NameError: name 'add' is not defined"),
        "python3 really ran: {ran}"
    );
    assert!(
        ran.ends_with(
            "Note: `add` is defined in add.py (`def add(a, b):`), not in test_add.py. Import \
             it at the top of test_add.py: `from add import add`. Keep the lines already \
             there: edit_file with old `import unittest` and new \
             `import unittest\\nfrom add import add`."
        ),
        "{ran}"
    );
    server.verify_allow_unused();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_made_by_a_real_sed_in_one_file_names_the_files_still_to_change() {
    let repo = temp_git_repo();
    let files = [
        ("tax.py", "def calc_tax(amount):\n    return amount * 0.2\n"),
        (
            "invoice.py",
            "from tax import calc_tax\n\n\ndef total(a):\n    return a + calc_tax(a)\n",
        ),
        ("test_invoice.py", "from tax import calc_tax\n"),
    ];
    for (name, text) in files {
        std::fs::write(repo.path().join(name), text).unwrap();
    }
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_sed",
            "shell_command",
            &json!({"command": r"sed -i 's/\bcalc_tax\b/compute_tax/g' invoice.py"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "Done.")]),
        sse_turn(vec![ev_assistant_message("m2", "Done.")]),
        sse_turn(vec![ev_assistant_message("m3", "Done.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    unattended(&home, "");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let _events = run_turn(&thread, "Rename calc_tax to compute_tax.", Vec::new()).await;
    let invoice = std::fs::read_to_string(repo.path().join("invoice.py")).unwrap();
    assert!(
        invoice.contains("compute_tax(a)"),
        "sed really ran: {invoice}"
    );
    let ran = server.requests()[1].output_for("call_sed").unwrap();
    assert!(
        ran.ends_with(
            "Other files still mention `calc_tax` (removed from invoice.py): tax.py, \
             test_invoice.py. Update them too if they should change."
        ),
        "{ran}"
    );
    server.verify_allow_unused();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_unittest_run_that_found_no_tests_is_not_taken_for_a_pass() {
    let repo = temp_git_repo();
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_add",
            "write_file",
            &json!({"path": "add.py", "content": "def add(a, b):\n    return a + b\n"}).to_string(),
        )]),
        // No test file yet: unittest finds nothing to run.
        sse_turn(vec![ev_function_call(
            "call_run",
            "shell_command",
            &json!({"command": "python3 -m unittest"}).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "Done, the tests pass.")]),
        sse_turn(vec![ev_assistant_message("m2", "Done.")]),
        sse_turn(vec![ev_assistant_message("m3", "Done.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    unattended(&home, "");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let request = "Create add.py with a function add(a, b) and test_add.py with a unittest \
                   test case for it. Then run the tests with python3 -m unittest.";
    let _events = run_turn(&thread, request, Vec::new()).await;
    let requests = server.requests();
    let ran = requests[2].output_for("call_run").unwrap();
    assert!(ran.contains("Ran 0 tests"), "python3 really ran: {ran}");
    let reminder = requests[3].user_texts().pop().unwrap();
    assert!(
        reminder.starts_with(
            "The check `python3 -m unittest` ran no tests on its last run (\"Ran 0 tests in"
        ),
        "{reminder}"
    );
    assert!(
        reminder
            .ends_with("make sure the test files exist and that it finds them, then run it again."),
        "{reminder}"
    );
    assert_eq!(
        requests[3].body["tool_choice"], "required",
        "the answer to the reminder must be a call"
    );
    server.verify_allow_unused();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_line_program_with_its_arguments_inside_the_quotes_is_run_quoted_right_when_sent_again()
 {
    let repo = temp_git_repo();
    std::fs::write(
        repo.path().join("sales.csv"),
        "id,region\n1,north\n2,south\n3,north\n",
    )
    .unwrap();
    let program = "import csv, sys; print(sum(1 for r in csv.DictReader(open(sys.argv[1])) \
                   if r[sys.argv[2]] == sys.argv[3]))";
    let wrong = format!("python3 -c '{program} sales.csv region north'");
    let right = format!("python3 -c '{program}' sales.csv region north");
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call(
            "call_wrong",
            "shell_command",
            &json!({ "command": wrong }).to_string(),
        )]),
        // The model sends its own command again, under the note.
        sse_turn(vec![ev_function_call(
            "call_again",
            "shell_command",
            &json!({ "command": wrong }).to_string(),
        )]),
        sse_turn(vec![ev_assistant_message("m1", "2")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    unattended(&home, "");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let request = "How many rows of sales.csv have the region north? Reply with the number.";
    let _events = run_turn(&thread, request, Vec::new()).await;
    let requests = server.requests();
    let failed = requests[1].output_for("call_wrong").unwrap();
    assert!(
        failed.contains("SyntaxError"),
        "python3 really ran: {failed}"
    );
    assert!(
        failed.ends_with(&format!(
            "Note: `sales.csv region north` at the end of the program is inside its quotes, \
             so it was read as code; arguments go after the closing quote. Run it quoted \
             like this:\n{right}"
        )),
        "{failed}"
    );
    let worked = requests[2].output_for("call_again").unwrap();
    assert!(
        worked.contains("Process exited with code 0\n") && worked.contains("Output:\n2\n"),
        "the repeat ran quoted right, and that works: {worked}"
    );
    assert!(
        worked.contains(&format!(
            "Your call repeated a command whose result gave it quoted right, so this time it \
             ran as `{right}`."
        )),
        "{worked}"
    );
    server.verify();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_edit_sent_again_is_made_with_the_correction_its_failure_offered() {
    let repo = temp_git_repo();
    let ci = "jobs:\n  test:\n    steps:\n      - uses: actions/setup-python@v5\n        with:\n          python-version: \"3.10\"\n";
    std::fs::write(repo.path().join("ci.yml"), ci).unwrap();
    let edit =
        json!({"path": "ci.yml", "old": "python-version: 3.10", "new": "python-version: 3.12"})
            .to_string();
    let server = MockModelServer::start(vec![
        sse_turn(vec![ev_function_call("call_1", "edit_file", &edit)]),
        sse_turn(vec![ev_function_call("call_2", "edit_file", &edit)]),
        sse_turn(vec![ev_assistant_message("m1", "Done.")]),
        sse_turn(vec![ev_assistant_message("m2", "Done.")]),
    ])
    .await;
    let home = TempHome::for_server(&server, WireApi::Responses);
    unattended(&home, "");
    let (_manager, thread) = local_thread(&home, repo.path()).await;
    let _events = run_turn(
        &thread,
        "In ci.yml, change the Python version to 3.12.",
        Vec::new(),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(repo.path().join("ci.yml")).unwrap(),
        ci.replace("3.10", "3.12"),
        "the offered correction was made, quotes kept"
    );
    let requests = server.requests();
    let first = requests[1].output_for("call_1").unwrap();
    assert!(first.contains("call edit_file again with"), "{first}");
    let second = requests[2].output_for("call_2").unwrap();
    assert!(second.contains("Success."), "{second}");
    assert!(
        second.contains(
            "Your call repeated an edit_file that had failed, so this time it used the `old` and \
             `new` that failure offered: old `python-version: \"3.10\"`, new `python-version: \
             \"3.12\"`."
        ),
        "{second}"
    );
    server.verify_allow_unused();
}
