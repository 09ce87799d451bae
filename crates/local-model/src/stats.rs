//! Measurements of one request, for benchmarks and `--verbose` displays.

/// Timings and token counts of one response.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// How long loading the model took when the adapter started.
    pub load_ms: f64,
    /// Tokens in the rendered prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens whose KV state was reused (from this thread or the prefix cache).
    pub reused_tokens: usize,
    /// Prompt tokens actually processed.
    pub prompt_eval_tokens: usize,
    pub prompt_eval_ms: f64,
    /// The prefix state was loaded from disk for this request.
    pub prefix_cache_hit: bool,
    /// From the request to the first generated token.
    pub first_token_ms: Option<f64>,
    pub generated_tokens: usize,
    pub generation_ms: f64,
    pub total_ms: f64,
    /// The caller dropped the stream before the response was complete (during prompt
    /// processing or generation).
    pub cancelled: bool,
    /// Old tool outputs left out so the prompt fits the context window.
    pub omitted_outputs: usize,
    /// llama.cpp's own count of prompt tokens it evaluated and the time it spent, from its
    /// performance counters — the reference our wall-clock figures are compared with.
    pub llama_prompt_tokens: usize,
    pub llama_prompt_ms: f64,
    /// llama.cpp's own count of generated tokens it evaluated and the time it spent.
    pub llama_gen_tokens: usize,
    pub llama_gen_ms: f64,
}

impl Stats {
    /// Prompt processing speed in tokens per second.
    pub fn prompt_tokens_per_second(&self) -> f64 {
        per_second(self.prompt_eval_tokens, self.prompt_eval_ms)
    }

    /// Generation speed in tokens per second.
    pub fn generation_tokens_per_second(&self) -> f64 {
        per_second(self.generated_tokens, self.generation_ms)
    }
}

impl Stats {
    /// llama.cpp's own prompt speed (tokens per second).
    pub fn llama_prompt_tokens_per_second(&self) -> f64 {
        per_second(self.llama_prompt_tokens, self.llama_prompt_ms)
    }

    /// llama.cpp's own generation speed (tokens per second).
    pub fn llama_generation_tokens_per_second(&self) -> f64 {
        per_second(self.llama_gen_tokens, self.llama_gen_ms)
    }
}

fn per_second(tokens: usize, ms: f64) -> f64 {
    if ms <= 0.0 {
        0.0
    } else {
        tokens as f64 * 1000.0 / ms
    }
}
