//! End to end with the real model and no key, server or config: "create hello.py that
//! prints hello, then run it", driven by a minimal agent loop over the adapter (the same
//! loop the core runs, reduced to write_file and shell_command).

use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use osprey_local_model::{LocalModelAdapter, LocalModelOptions, fetch_model};
use osprey_model::{Prompt, ResponseEvent, WireAdapter};
use osprey_process::{ExecExpiration, ExecRequest, OutputCaps, run_to_completion};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use serde_json::{Value, json};

use super::common::model_file;

fn shell_command_spec() -> Value {
    json!({"type": "function", "name": "shell_command",
        "description": "Run a script in bash and return its exit code and output.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string", "description": "The script to run."}},
            "required": ["command"]}})
}

async fn shell(args: &str, cwd: &Path) -> (String, Option<i32>) {
    let Ok(args) = serde_json::from_str::<Value>(args) else {
        return ("shell_command needs {\"command\": string}".into(), None);
    };
    let mut req = ExecRequest::new("bash", cwd);
    req.args = vec![
        "-c".into(),
        args["command"].as_str().unwrap_or_default().into(),
    ];
    req.env = std::env::vars().collect();
    let out = run_to_completion(
        req,
        ExecExpiration::timeout(Duration::from_secs(30)),
        OutputCaps::new(4096, 4096),
        None,
    )
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.output.to_bytes()).into_owned();
    (
        format!(
            "Exit code: {}\nOutput:\n{text}",
            out.exit_code.unwrap_or(-1)
        ),
        out.exit_code,
    )
}

/// The test loop's `write_file`: writes `content` to `path` under `cwd`. (The agent's real
/// one goes through the patch path in osprey-core.)
fn write_file(args: &str, cwd: &Path) -> String {
    let Ok(args) = serde_json::from_str::<Value>(args) else {
        return "write_file needs {\"path\": string, \"content\": string}".into();
    };
    let (Some(path), Some(content)) = (args["path"].as_str(), args["content"].as_str()) else {
        return "write_file needs {\"path\": string, \"content\": string}".into();
    };
    let target = cwd.join(path);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&target, content).unwrap();
    let lines = content.lines().count();
    format!(
        "Wrote {} ({} bytes, {lines} lines).",
        target.display(),
        content.len()
    )
}

/// What a task run left behind.
struct Run {
    work: tempfile::TempDir,
    transcript: String,
    commands_ok: usize,
    seconds: f64,
    fetch_seconds: f64,
}

/// Runs `task` with the local model and the two tools until it answers without a call
/// (at most 8 responses).
async fn run_task(task: &str) -> Run {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let started = Instant::now();
    // The model comes through fetch_model, served from the machine cache.
    let path = fetch_model(home.path(), &mut |_| {}).await.unwrap();
    let fetch_seconds = started.elapsed().as_secs_f64();
    let options = LocalModelOptions::for_home(home.path());
    let adapter = tokio::task::spawn_blocking(move || LocalModelAdapter::new(&path, options))
        .await
        .unwrap()
        .unwrap();
    let mut prompt = Prompt {
        model: "local".into(),
        input: vec![ResponseItem::user_text(format!(
            "Working directory: {}\nTask: {task}",
            work.path().display()
        ))],
        tools: vec![osprey_local_model::write_file_spec(), shell_command_spec()],
        ..Prompt::default()
    };
    let mut commands_ok = 0;
    let mut transcript = String::new();
    for _turn in 0..8 {
        let mut stream = adapter.stream(&prompt).await.unwrap();
        let mut calls = Vec::new();
        while let Some(event) = stream.next().await {
            if let ResponseEvent::OutputItemDone(item) = event.unwrap() {
                transcript.push_str(&format!("{item:?}\n"));
                if let ResponseItem::FunctionCall {
                    name,
                    arguments,
                    call_id,
                    ..
                } = &item
                {
                    calls.push((name.clone(), arguments.clone(), call_id.clone()));
                }
                prompt.input.push(item);
            }
        }
        if calls.is_empty() {
            break;
        }
        for (name, args, call_id) in calls {
            let output = match name.as_str() {
                "write_file" => write_file(&args, work.path()),
                "shell_command" => {
                    let (text, code) = shell(&args, work.path()).await;
                    if code == Some(0) {
                        commands_ok += 1;
                    }
                    text
                }
                other => format!("unknown tool {other}"),
            };
            transcript.push_str(&format!("-> {output}\n"));
            prompt.input.push(ResponseItem::FunctionCallOutput {
                call_id,
                output: FunctionCallOutputPayload::from(output),
            });
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{task}: {seconds:.1} s (fetch from the machine cache {fetch_seconds:.1} s)\n{transcript}"
    );
    Run {
        work,
        transcript,
        commands_ok,
        seconds,
        fetch_seconds,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn hello_py_task_completes_offline() {
    if model_file().is_none() {
        return;
    }
    let run = run_task("create hello.py that prints hello, then run it").await;
    eprintln!(
        "hello.py task: {:.1} s (fetch {:.1} s)",
        run.seconds, run.fetch_seconds
    );
    let transcript = &run.transcript;
    assert!(
        run.work.path().join("hello.py").is_file(),
        "hello.py was not created:\n{transcript}"
    );
    let (out, code) = shell(r#"{"command": "python3 hello.py"}"#, run.work.path()).await;
    assert_eq!(code, Some(0), "{out}");
    assert!(out.to_lowercase().contains("hello"), "{out}");
    assert!(
        run.commands_ok >= 1,
        "no command ran successfully:\n{transcript}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a model-quality task: the 1.5B model passes it only sometimes, so it belongs to \
            the task-set benchmark (cargo test -- --ignored), not to the CI suite"]
async fn add_function_with_a_passing_test() {
    if model_file().is_none() {
        return;
    }
    let run = run_task(
        "create add.py with a function add(a, b) that returns a + b, and test_add.py that \
         imports it and asserts add(2, 3) == 5; then run python3 test_add.py",
    )
    .await;
    let transcript = &run.transcript;
    let (out, code) = shell(r#"{"command": "python3 test_add.py && python3 -c 'from add import add; assert add(40, 2) == 42'"}"#, run.work.path()).await;
    assert_eq!(code, Some(0), "{out}\n{transcript}");
    assert!(
        run.commands_ok >= 1,
        "no command ran successfully:\n{transcript}"
    );
}
