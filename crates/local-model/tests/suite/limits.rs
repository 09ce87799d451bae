//! The engine at its limits, against the real GGUF: a prompt longer than the context, a
//! request dropped while its prompt is processed, an answer cut off by the output limit.

use std::time::{Duration, Instant};

use futures::StreamExt;
use osprey_local_model::{LocalModelAdapter, LocalModelOptions, Stats};
use osprey_model::{ModelError, Prompt, ResponseEvent, ToolChoice};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};

use super::common::model_file;

fn adapter(options: LocalModelOptions) -> Option<LocalModelAdapter> {
    let path = model_file()?;
    Some(LocalModelAdapter::new(&path, options).unwrap())
}

/// `lines` numbered lines of filler text (about 14 tokens each).
fn filler(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("Line {i}: the quick brown fox jumps over the lazy dog.\n"))
        .collect()
}

/// Every event of one response, the error that ended it (if any), and its measurements.
async fn run(
    adapter: &LocalModelAdapter,
    prompt: &Prompt,
) -> (Vec<ResponseEvent>, Option<ModelError>, Stats) {
    let (mut stream, stats) = adapter.stream_with_stats(prompt).unwrap();
    let mut events = Vec::new();
    let mut error = None;
    while let Some(event) = stream.next().await {
        match event {
            Ok(event) => events.push(event),
            Err(err) => {
                error = Some(err);
                break;
            }
        }
    }
    drop(stream);
    let stats = tokio::task::spawn_blocking(move || stats.recv().unwrap())
        .await
        .unwrap();
    (events, error, stats)
}

fn shell_call(call_id: &str, command: &str) -> ResponseItem {
    ResponseItem::FunctionCall {
        id: None,
        name: "shell_command".into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
        call_id: call_id.into(),
        extra: Default::default(),
    }
}

fn output(call_id: &str, text: &str) -> ResponseItem {
    ResponseItem::FunctionCallOutput {
        call_id: call_id.into(),
        output: FunctionCallOutputPayload::from(text.to_string()),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_over_the_context_is_refused_as_too_long_unless_leaving_out_old_outputs_fits() {
    let Some(adapter) = adapter(LocalModelOptions {
        context_tokens: 1024,
        max_output_tokens: 16,
        prefix_cache_dir: None,
        ..LocalModelOptions::default()
    }) else {
        return;
    };

    // A single message longer than the whole context: refused before any token is
    // processed, as the overflow the agent compacts on.
    let long = Prompt {
        model: "local".into(),
        input: vec![ResponseItem::user_text(format!(
            "Summarise this log.\n{}",
            filler(120)
        ))],
        ..Prompt::default()
    };
    let (events, error, stats) = run(&adapter, &long).await;
    let error = error.unwrap_or_else(|| panic!("an over-long prompt was answered: {events:?}"));
    assert!(error.is_context_window_exceeded(), "{error}");
    let message = error.to_string();
    assert!(
        message
            .contains("the local model's context holds 1024 tokens ([local_model] context_tokens)"),
        "{message}"
    );
    assert!(
        !events.iter().any(|e| matches!(
            e,
            ResponseEvent::OutputItemDone(_) | ResponseEvent::Completed { .. }
        )),
        "{events:?}"
    );
    // (llama.cpp's own counter reports at least one token; its time shows nothing ran.)
    assert_eq!(
        (stats.prompt_eval_tokens, stats.llama_prompt_ms),
        (0, 0.0),
        "{stats:?}"
    );

    // A turn whose old tool output alone overflows: that output is left out, the latest one
    // kept, and the model answers.
    let conversation = Prompt {
        model: "local".into(),
        input: vec![
            ResponseItem::user_text("Look at the logs, then tell me the code word."),
            shell_call("c1", "cat build.log"),
            output("c1", &filler(120)),
            shell_call("c2", "cat code.txt"),
            output("c2", "The code word is heron."),
        ],
        ..Prompt::default()
    };
    let (events, error, stats) = run(&adapter, &conversation).await;
    assert!(error.is_none(), "{error:?}");
    assert!(
        matches!(events.last(), Some(ResponseEvent::Completed { .. })),
        "{events:?}"
    );
    assert_eq!(stats.omitted_outputs, 1, "{stats:?}");
    assert!(stats.prompt_tokens + 16 <= 1024, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_stream_during_prompt_processing_stops_it_within_a_chunk() {
    let Some(adapter) = adapter(LocalModelOptions {
        max_output_tokens: 1,
        prefix_cache_dir: None,
        ..LocalModelOptions::default()
    }) else {
        return;
    };
    let prompt = |label: &str| Prompt {
        model: "local".into(),
        input: vec![ResponseItem::user_text(format!(
            "{label}: count the lines.\n{}",
            filler(60)
        ))],
        ..Prompt::default()
    };

    // The baseline: a full evaluation of such a prompt, on this machine, now.
    let (_, error, full) = run(&adapter, &prompt("Request A")).await;
    assert!(error.is_none(), "{error:?}");
    assert!(!full.cancelled);
    let baseline = Duration::from_secs_f64(full.prompt_eval_ms / 1000.0);
    assert!(full.prompt_eval_tokens > 700, "{full:?}");

    // A prompt of the same length (sharing only the first few tokens), dropped a tenth of
    // the way into its evaluation.
    let started = Instant::now();
    let (mut stream, stats) = adapter.stream_with_stats(&prompt("Request B")).unwrap();
    assert!(matches!(
        stream.next().await,
        Some(Ok(ResponseEvent::Created))
    ));
    tokio::time::sleep(baseline / 10).await;
    drop(stream);
    let cancelled = tokio::task::spawn_blocking(move || stats.recv().unwrap())
        .await
        .unwrap();
    let elapsed = started.elapsed();

    assert!(cancelled.cancelled, "{cancelled:?}");
    let to_evaluate = cancelled.prompt_tokens - cancelled.reused_tokens;
    assert!(
        cancelled.prompt_eval_tokens > 0 && cancelled.prompt_eval_tokens < to_evaluate / 2,
        "evaluated {} of {to_evaluate} tokens: {cancelled:?}",
        cancelled.prompt_eval_tokens
    );
    assert!(
        elapsed < baseline / 2,
        "the dropped request kept the engine for {elapsed:?}; a full evaluation takes {baseline:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_file_call_cut_off_by_the_output_limit_fails_the_response() {
    let Some(adapter) = adapter(LocalModelOptions {
        max_output_tokens: 40,
        prefix_cache_dir: None,
        ..LocalModelOptions::default()
    }) else {
        return;
    };
    let prompt = Prompt {
        model: "local".into(),
        input: vec![ResponseItem::user_text(
            "Create numbers.py: a Python script with fifty separate print statements, \
             printing the numbers 1 to 50, one per statement.",
        )],
        tools: vec![osprey_local_model::write_file_spec()],
        tool_choice: ToolChoice::Required,
        ..Prompt::default()
    };
    let (events, error, stats) = run(&adapter, &prompt).await;
    assert_eq!(stats.generated_tokens, 40, "{stats:?}");
    let Some(ModelError::ResponseFailed { code, message, .. }) = &error else {
        panic!("a cut-off call must fail the response, got {error:?} after {events:?}");
    };
    assert_eq!(code.as_deref(), Some("max_output_tokens"));
    assert!(
        message.starts_with(
            "the model's answer was cut off at 40 tokens while writing a `write_file` call"
        ),
        "{message}"
    );
    assert!(
        message.contains("raise [local_model] max_output_tokens (now 40)"),
        "{message}"
    );
    // Nothing of the broken call became an answer or a call.
    assert!(
        !events.iter().any(|e| matches!(
            e,
            ResponseEvent::OutputItemDone(_) | ResponseEvent::Completed { .. }
        )),
        "{events:?}"
    );
}
