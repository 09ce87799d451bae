//! Measures the embedded model: load time, prompt and generation speed (ours, and
//! llama.cpp's own counters for comparison), time to first token without and with the
//! prefix cache, and peak RSS. Run through `bench/local_model.sh`.
#![expect(clippy::print_stdout, reason = "a benchmark binary reports on stdout")]

use std::path::PathBuf;
use std::time::Instant;

use futures::StreamExt;
use osprey_local_model::{LocalModelAdapter, LocalModelOptions, Stats};
use osprey_model::Prompt;
use osprey_protocol::ResponseItem;

fn prompt(text: &str, tools: bool) -> Prompt {
    Prompt {
        model: "local".into(),
        input: vec![ResponseItem::user_text(text)],
        tools: if tools {
            vec![
                osprey_local_model::write_file_spec(),
                serde_json::json!({"type": "function", "name": "shell_command",
                    "description": "Run a script in bash and return its exit code and output.",
                    "parameters": {"type": "object", "properties": {
                        "command": {"type": "string"}}, "required": ["command"]}}),
            ]
        } else {
            Vec::new()
        },
        ..Prompt::default()
    }
}

async fn run(adapter: &LocalModelAdapter, prompt: &Prompt) -> anyhow::Result<Stats> {
    let (mut stream, stats) = adapter.stream_with_stats(prompt)?;
    while let Some(event) = stream.next().await {
        event?;
    }
    Ok(stats.recv()?)
}

fn load(
    path: &std::path::Path,
    cache: &std::path::Path,
    max: u32,
) -> anyhow::Result<(LocalModelAdapter, f64)> {
    let started = Instant::now();
    let options = LocalModelOptions {
        prefix_cache_dir: Some(cache.to_path_buf()),
        max_output_tokens: max,
        ..LocalModelOptions::default()
    };
    let adapter = LocalModelAdapter::new(path, options)?;
    Ok((adapter, started.elapsed().as_secs_f64()))
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let path = PathBuf::from(std::env::var("OSPREY_LOCAL_MODEL").map_err(|_| {
        anyhow::anyhow!(
            "set OSPREY_LOCAL_MODEL to the GGUF (bash scripts/install-test-deps.sh prints it)"
        )
    })?);
    let cache = tempfile::tempdir()?;
    let task = "Create hello.py that prints hello, then run it.";

    let (adapter, load_s) = load(&path, cache.path(), 256)?;
    println!("load_s {load_s:.2}");
    let cold = run(&adapter, &prompt(task, true)).await?;
    println!(
        "ttft_no_prefix_cache_s {:.2}",
        cold.first_token_ms.unwrap_or(0.0) / 1000.0
    );
    println!(
        "prompt_tok_s {:.1} (llama.cpp's own {:.1}; {} tokens)",
        cold.prompt_tokens_per_second(),
        cold.llama_prompt_tokens_per_second(),
        cold.prompt_eval_tokens
    );
    let essay = run(
        &adapter,
        &prompt(
            "Write a Python module implementing quicksort, mergesort and heapsort with docstrings.",
            false,
        ),
    )
    .await?;
    println!(
        "gen_tok_s {:.2} (llama.cpp's own {:.2}; {} tokens, ratio {:.2})",
        essay.generation_tokens_per_second(),
        essay.llama_generation_tokens_per_second(),
        essay.generated_tokens,
        essay.llama_generation_tokens_per_second()
            / essay.generation_tokens_per_second().max(0.001)
    );
    let constrained = run(&adapter, &prompt(task, true)).await?;
    println!(
        "gen_tok_s_constrained {:.2} (llama.cpp's own {:.2}; {} tokens)",
        constrained.generation_tokens_per_second(),
        constrained.llama_generation_tokens_per_second(),
        constrained.generated_tokens
    );
    drop(adapter);

    // A new adapter, as in a new process: the prefix comes from disk.
    let (adapter, _) = load(&path, cache.path(), 256)?;
    let warm = run(&adapter, &prompt(task, true)).await?;
    println!(
        "ttft_prefix_cache_s {:.2} (prefix hit: {}, {} of {} prompt tokens processed)",
        warm.first_token_ms.unwrap_or(0.0) / 1000.0,
        warm.prefix_cache_hit,
        warm.prompt_eval_tokens,
        warm.prompt_tokens
    );
    println!("peak_rss_mib {:.0}", peak_rss_mib());
    Ok(())
}
