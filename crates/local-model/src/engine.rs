//! The inference thread: llama.cpp model and context, prompt processing with KV reuse,
//! constrained greedy sampling, and streaming of the result as [`ResponseEvent`]s.
//!
//! One OS thread owns the model and its single context (llama.cpp contexts are not shared
//! across threads); requests queue on a channel and run one at a time. The context's
//! sequence 0 keeps the tokens of the previous request, so a follow-up request in the same
//! thread only processes what is new after their common prefix. The fixed prefix (system
//! message) is additionally saved to disk once and reloaded into a fresh process.

use std::collections::HashSet;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token_type::LlamaTokenAttr;
use osprey_model::{ModelError, Prompt, ResponseEvent, ToolChoice};
use osprey_protocol::{ResponseItem, TokenUsage};
use tokio::sync::mpsc;

use crate::conversation::{self, ChatMessage, PromptStyle};
use crate::error::LocalModelError;
use crate::grammar::{ToolDef, only_tool, required_call_grammar, tools_grammar};
use crate::parse::{UnfinishedCall, parse_output, unfinished_call};
use crate::prefix_cache;
use crate::stats::Stats;

mod fit;
use fit::Fitted;

pub(crate) const PROVIDER: &str = "local";

/// Tuning for the embedded model.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalModelOptions {
    /// Context window in tokens (prompt + answer). A prompt that does not fit with room
    /// for the answer is refused as too long (`ModelError::ContextWindowExceeded`) unless
    /// leaving out old tool outputs makes it fit.
    pub context_tokens: u32,
    /// Threads for llama.cpp; `None` uses every available core.
    pub threads: Option<u32>,
    /// Most tokens generated per response; a tool call cut off at this limit fails the
    /// response instead of becoming its text.
    pub max_output_tokens: u32,
    /// Where to save and reload the prefix KV state; `None` disables the disk cache
    /// (reuse within a process still happens).
    pub prefix_cache_dir: Option<PathBuf>,
    /// Constrain sampling to "message or valid tool call" with a grammar.
    pub constrained: bool,
    /// Our compact instructions, or the client's own.
    pub prompt_style: PromptStyle,
    /// End a response with a message instead of a call identical to the previous call.
    pub loop_guard: bool,
}

impl Default for LocalModelOptions {
    /// The defaults of `[local_model]` (the agent's compaction works from the same context
    /// window), with no disk cache.
    fn default() -> Self {
        let config = osprey_config::LocalModelConfig::default();
        Self {
            context_tokens: config.context_tokens,
            threads: None,
            max_output_tokens: config.max_output_tokens,
            prefix_cache_dir: None,
            constrained: true,
            prompt_style: PromptStyle::Compact,
            loop_guard: true,
        }
    }
}

impl LocalModelOptions {
    /// Defaults, with the prefix cache under `$OSPREY_HOME/models/`.
    pub fn for_home(home: &Path) -> Self {
        Self {
            prefix_cache_dir: Some(home.join("models")),
            ..Self::default()
        }
    }
}

pub(crate) struct Job {
    pub prompt: Prompt,
    pub events: mpsc::Sender<Result<ResponseEvent, ModelError>>,
    /// Filled with this request's measurements, for benchmarks.
    pub stats: Option<std::sync::mpsc::Sender<Stats>>,
}

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

fn backend() -> Result<&'static LlamaBackend, LocalModelError> {
    let result = BACKEND.get_or_init(|| {
        let mut backend = LlamaBackend::init().map_err(|e| e.to_string())?;
        if std::env::var_os("OSPREY_LOCAL_MODEL_LOG").is_none() {
            backend.void_logs();
        }
        Ok(backend)
    });
    result.as_ref().map_err(|reason| LocalModelError::Backend {
        reason: reason.clone(),
    })
}

/// The x86 instruction sets the llama.cpp build is compiled with: the `GGML_*` switches in the
/// workspace's `.cargo/config.toml` (a test keeps the two lists equal).
pub(crate) const BUILD_CPU_FEATURES: &[&str] = &["AVX", "AVX2", "FMA", "F16C", "BMI2"];

/// Refuses CPUs the llama.cpp build may use instructions for, instead of crashing with
/// SIGILL mid-request.
pub(crate) fn check_cpu() -> Result<(), LocalModelError> {
    if !cfg!(target_arch = "x86_64") {
        return Ok(());
    }
    check_cpu_features(BUILD_CPU_FEATURES, &cpu_has)
}

/// The check itself, with the feature list and the detector as inputs.
pub(crate) fn check_cpu_features(
    required: &[&str],
    has: &dyn Fn(&str) -> bool,
) -> Result<(), LocalModelError> {
    let missing: Vec<&str> = required.iter().copied().filter(|f| !has(f)).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(LocalModelError::UnsupportedCpu {
            missing: missing.join(", "),
        })
    }
}

/// An instruction set's `GGML_<NAME>` name and how to detect it.
type Detector = (&'static str, fn() -> bool);

/// The instruction sets this code can detect, by the name the `GGML_<NAME>` build switch
/// uses.
#[cfg(target_arch = "x86_64")]
const DETECTORS: &[Detector] = &[
    ("AVX", || std::arch::is_x86_feature_detected!("avx")),
    ("AVX2", || std::arch::is_x86_feature_detected!("avx2")),
    ("FMA", || std::arch::is_x86_feature_detected!("fma")),
    ("F16C", || std::arch::is_x86_feature_detected!("f16c")),
    ("BMI2", || std::arch::is_x86_feature_detected!("bmi2")),
    ("AVX512", || std::arch::is_x86_feature_detected!("avx512f")),
];
#[cfg(not(target_arch = "x86_64"))]
const DETECTORS: &[Detector] = &[];

/// Whether this CPU has `feature` (a name from [`BUILD_CPU_FEATURES`]); a name this code
/// cannot detect counts as missing, so the check fails closed.
fn cpu_has(feature: &str) -> bool {
    DETECTORS
        .iter()
        .find(|(name, _)| *name == feature)
        .is_some_and(|(_, detect)| detect())
}

/// Loads the model and serves jobs until the job channel closes.
pub(crate) fn run(
    model_path: PathBuf,
    options: LocalModelOptions,
    ready: std::sync::mpsc::Sender<Result<(), LocalModelError>>,
    jobs: std::sync::mpsc::Receiver<Job>,
) {
    let load_started = Instant::now();
    let backend = match backend() {
        Ok(b) => b,
        Err(err) => {
            let _ = ready.send(Err(err));
            return;
        }
    };
    let model = match LlamaModel::load_from_file(backend, &model_path, &LlamaModelParams::default())
    {
        Ok(m) => m,
        Err(err) => {
            let _ = ready.send(Err(LocalModelError::Load {
                path: model_path,
                reason: err.to_string(),
            }));
            return;
        }
    };
    let threads = options.threads.map_or_else(
        || std::thread::available_parallelism().map_or(2, |n| n.get() as i32),
        |t| t as i32,
    );
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(options.context_tokens))
        .with_n_batch(512)
        .with_n_ubatch(512)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        .with_no_perf(false);
    let ctx = match model.new_context(backend, params) {
        Ok(c) => c,
        Err(err) => {
            let _ = ready.send(Err(LocalModelError::Context {
                reason: err.to_string(),
            }));
            return;
        }
    };
    let template = match model.chat_template(None) {
        Ok(t) => t,
        Err(err) => {
            let _ = ready.send(Err(LocalModelError::NoChatTemplate {
                path: model_path,
                reason: err.to_string(),
            }));
            return;
        }
    };
    let model_size = std::fs::metadata(&model_path).map_or(0, |m| m.len());
    let control_tokens = control_tokens(&model);
    let mut engine = Engine {
        model: &model,
        ctx,
        template,
        control_tokens,
        cached: Vec::new(),
        options,
        model_path,
        model_size,
        load_ms: load_started.elapsed().as_secs_f64() * 1000.0,
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    while let Ok(job) = jobs.recv() {
        engine.run_job(job);
    }
}

struct Engine<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    /// Control tokens that do not end generation (`<|im_start|>`, …): never part of an answer.
    control_tokens: HashSet<LlamaToken>,
    /// Tokens whose KV state is in sequence 0, in order.
    cached: Vec<LlamaToken>,
    options: LocalModelOptions,
    model_path: PathBuf,
    model_size: u64,
    load_ms: f64,
}

/// The control tokens of `model` that do not end generation.
fn control_tokens(model: &LlamaModel) -> HashSet<LlamaToken> {
    let vocab = model.vocab();
    (0..model.n_vocab())
        .map(LlamaToken)
        .filter(|&token| {
            vocab.attr(token).contains(LlamaTokenAttr::Control) && !vocab.is_eog(token)
        })
        .collect()
}

/// Applies the GGUF's chat template (llama.cpp's built-in template engine).
pub(crate) fn render(
    model: &LlamaModel,
    template: &LlamaChatTemplate,
    messages: &[ChatMessage],
    add_assistant: bool,
) -> Result<String, ModelError> {
    let chat = messages
        .iter()
        .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.replace('\0', "")))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| local_error(format!("could not build a chat message: {e}")))?;
    model
        .apply_chat_template(template, &chat, add_assistant)
        .map_err(|e| local_error(format!("the model's chat template failed: {e}")))
}

pub(crate) fn load_backend() -> Result<&'static LlamaBackend, LocalModelError> {
    backend()
}

static RESPONSES: AtomicU64 = AtomicU64::new(0);

fn local_error(reason: impl Into<String>) -> ModelError {
    ModelError::Config {
        provider: PROVIDER.to_string(),
        reason: reason.into(),
    }
}

/// Prompt tokens decoded per call to llama.cpp. Cancellation is checked between calls, so
/// this bounds how long a dropped request keeps the engine busy; llama.cpp's CPU kernels
/// lose little throughput at this size compared with the 512-token batch.
const PROMPT_CHUNK: usize = 128;

/// Whether prompt processing ran to the end or stopped because the caller left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Done,
    Cancelled,
}

/// How the output is being shown while it is generated.
#[derive(PartialEq)]
enum Mode {
    Undecided,
    /// Plain text: streamed as deltas.
    Message,
    /// Looks like a call: held back until it can be parsed.
    Call,
}

impl Engine<'_> {
    fn run_job(&mut self, job: Job) {
        let started = Instant::now();
        let mut stats = Stats {
            load_ms: self.load_ms,
            ..Stats::default()
        };
        if job
            .events
            .blocking_send(Ok(ResponseEvent::Created))
            .is_err()
        {
            return;
        }
        self.ctx.reset_timings();
        let result = self.generate(&job, started, &mut stats);
        stats.total_ms = started.elapsed().as_secs_f64() * 1000.0;
        let timings = self.ctx.timings();
        stats.llama_prompt_tokens = usize::try_from(timings.n_p_eval()).unwrap_or(0);
        stats.llama_prompt_ms = timings.t_p_eval_ms();
        stats.llama_gen_tokens = usize::try_from(timings.n_eval()).unwrap_or(0);
        stats.llama_gen_ms = timings.t_eval_ms();
        match result {
            Ok(()) => {}
            Err(err) => {
                // Whatever state the context is in, do not trust it for reuse.
                self.reset();
                let _ = job.events.blocking_send(Err(err));
            }
        }
        if let Some(tx) = job.stats {
            let _ = tx.send(stats);
        }
    }

    fn reset(&mut self) {
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    fn render(&self, messages: &[ChatMessage], add_assistant: bool) -> Result<String, ModelError> {
        render(self.model, &self.template, messages, add_assistant)
    }

    fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), false, true)
    }

    fn generate(
        &mut self,
        job: &Job,
        started: Instant,
        stats: &mut Stats,
    ) -> Result<(), ModelError> {
        let tools = ToolDef::from_specs(&job.prompt.tools);
        let Fitted {
            tokens,
            prefix_text,
            prefix_len,
            max_out,
            omitted_outputs,
        } = match self.fit(&job.prompt, &tools) {
            Ok(fitted) => fitted,
            Err(refused) => {
                // Nothing was processed: the cached state stays good for the next request.
                let _ = job.events.blocking_send(Err(refused));
                return Ok(());
            }
        };
        stats.prompt_tokens = tokens.len();
        stats.omitted_outputs = omitted_outputs;

        let cancelled = || job.events.is_closed();
        if self.process_prompt(&tokens, prefix_len, &prefix_text, &cancelled, stats)?
            == Flow::Cancelled
        {
            stats.cancelled = true;
            return Ok(());
        }
        stats.first_token_ms = None;

        let mut grammar = if self.options.constrained && !tools.is_empty() {
            let text = match job.prompt.tool_choice {
                ToolChoice::Auto => tools_grammar(&tools),
                ToolChoice::Required => required_call_grammar(&tools),
                ToolChoice::Function(name) => required_call_grammar(&only_tool(&tools, name)),
            };
            match LlamaSampler::grammar(self.model, &text, "root") {
                Ok(g) => Some(g),
                Err(err) => {
                    tracing::warn!(%err, "tool grammar rejected; sampling unconstrained");
                    None
                }
            }
        } else {
            None
        };

        let vocab = self.model.vocab();
        let mut greedy = LlamaSampler::greedy();
        let mut bytes: Vec<u8> = Vec::new();
        let mut text = String::new();
        let mut mode = Mode::Undecided;
        // Whether a message item was announced (OutputItemAdded) and streamed.
        let mut announced = false;
        let mut generated = 0usize;
        // Whether generation ended on its own (end token, grammar, closed call) rather than
        // at the token limit.
        let mut ended = false;
        let gen_started = Instant::now();
        while generated < max_out {
            if job.events.is_closed() {
                stats.cancelled = true;
                return Ok(());
            }
            let token = pick(
                &self.ctx,
                &mut greedy,
                grammar.as_mut(),
                &self.control_tokens,
                vocab.eos(),
            );
            if vocab.is_eog(token) {
                ended = true;
                break;
            }
            if let Some(g) = grammar.as_mut()
                && g.try_accept(token).is_err()
            {
                ended = true;
                break;
            }
            generated += 1;
            if stats.first_token_ms.is_none() {
                stats.first_token_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
            }
            bytes.extend(vocab.token_to_piece(token, true, None));
            let piece = take_utf8(&mut bytes);
            if !piece.is_empty() {
                text.push_str(&piece);
                if mode == Mode::Undecided
                    && let Some(c) = text.trim_start().chars().next()
                {
                    mode = if matches!(c, '<' | '{' | '`') {
                        Mode::Call
                    } else {
                        let added = ResponseItem::assistant_text("");
                        if job
                            .events
                            .blocking_send(Ok(ResponseEvent::OutputItemAdded(added)))
                            .is_err()
                        {
                            return Ok(());
                        }
                        announced = true;
                        Mode::Message
                    };
                    if mode == Mode::Message {
                        let delta = text.trim_start().to_string();
                        if stream_line(job, &delta, &mut mode).is_err() {
                            return Ok(());
                        }
                    }
                } else if mode == Mode::Message && stream_line(job, &piece, &mut mode).is_err() {
                    return Ok(());
                }
            }
            if text.ends_with("</tool_call>") {
                // The grammar admits only the end token now; no need to compute it.
                ended = true;
                break;
            }
            self.decode_one(token)?;
        }
        stats.generated_tokens = generated;
        stats.generation_ms = gen_started.elapsed().as_secs_f64() * 1000.0;

        let cut_off = (!ended).then_some(max_out);
        self.finish(job, &tools, &text, announced, cut_off, stats)
    }

    /// Brings sequence 0 to `tokens`, reusing the common prefix with what is cached, and the
    /// saved prefix state when the cache is cold. Leaves logits for the last token, or stops
    /// early (between chunks) once `cancelled` says the caller is gone.
    fn process_prompt(
        &mut self,
        tokens: &[LlamaToken],
        prefix_len: usize,
        prefix_text: &str,
        cancelled: &dyn Fn() -> bool,
        stats: &mut Stats,
    ) -> Result<Flow, ModelError> {
        let entry = match (&self.options.prefix_cache_dir, prefix_len) {
            (Some(dir), n) if n > 0 => Some(prefix_cache::entry_path(
                dir,
                &self.model_path,
                self.model_size,
                prefix_text,
            )),
            _ => None,
        };
        let prefix = tokens.get(..prefix_len).unwrap_or_default();
        if let Some(entry) = &entry
            && common_prefix(&self.cached, tokens) < prefix_len
            && entry.is_file()
        {
            self.reset();
            match self.ctx.state_seq_load_file(entry, 0, prefix_len + 1) {
                Ok((loaded, _)) if loaded == prefix => {
                    self.cached = loaded;
                    stats.prefix_cache_hit = true;
                }
                _ => {
                    tracing::debug!(entry = %entry.display(), "stale prefix cache entry ignored");
                    self.reset();
                }
            }
        }
        let mut common = common_prefix(&self.cached, tokens);
        if common == tokens.len() {
            common = common.saturating_sub(1);
        }
        if self
            .ctx
            .kv_cache_seq_rm(0, Some(common as u32), None)
            .is_err()
        {
            self.reset();
            common = 0;
        }
        self.cached.truncate(common);
        stats.reused_tokens = common;

        let started = Instant::now();
        let mut flow = Flow::Done;
        if let Some(entry) = &entry
            && common < prefix_len
            && !entry.is_file()
        {
            flow = self.decode_range(tokens, common, prefix_len, cancelled)?;
            if flow == Flow::Done {
                save_prefix(&self.ctx, entry, prefix);
                common = prefix_len;
            }
        }
        if flow == Flow::Done {
            flow = self.decode_range(tokens, common, tokens.len(), cancelled)?;
        }
        stats.prompt_eval_tokens = self.cached.len() - stats.reused_tokens;
        stats.prompt_eval_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(flow)
    }

    /// Decodes `tokens[from..to]` into sequence 0 in chunks of [`PROMPT_CHUNK`]; logits for
    /// the last one. Checks `cancelled` before each chunk: what was decoded stays cached (and
    /// reusable), the rest is skipped.
    fn decode_range(
        &mut self,
        tokens: &[LlamaToken],
        from: usize,
        to: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Flow, ModelError> {
        let chunk = PROMPT_CHUNK.min(self.ctx.n_batch().max(1) as usize);
        let mut batch = LlamaBatch::new(chunk, 1);
        let mut start = from;
        while start < to {
            if cancelled() {
                return Ok(Flow::Cancelled);
            }
            let end = (start + chunk).min(to);
            batch.clear();
            for (pos, token) in tokens.iter().enumerate().take(end).skip(start) {
                batch
                    .add(*token, pos as i32, &[0], pos + 1 == to)
                    .map_err(|e| local_error(format!("could not fill a batch: {e}")))?;
            }
            self.ctx
                .decode(&mut batch)
                .map_err(|e| local_error(format!("llama.cpp could not process the prompt: {e}")))?;
            self.cached
                .extend(tokens.get(start..end).unwrap_or_default());
            start = end;
        }
        Ok(Flow::Done)
    }

    fn decode_one(&mut self, token: LlamaToken) -> Result<(), ModelError> {
        let mut batch = LlamaBatch::new(1, 1);
        let pos = self.cached.len() as i32;
        batch
            .add(token, pos, &[0], true)
            .map_err(|e| local_error(format!("could not fill a batch: {e}")))?;
        self.ctx
            .decode(&mut batch)
            .map_err(|e| local_error(format!("llama.cpp could not continue generating: {e}")))?;
        self.cached.push(token);
        Ok(())
    }

    /// Why a response that stopped at `limit` tokens while writing `call` failed, and what
    /// to change: the output limit, or (when the context ended first) the context, which
    /// the agent then compacts.
    fn cut_off_error(&self, call: &UnfinishedCall, limit: usize) -> ModelError {
        let what = match (&call.name, &call.path) {
            (Some(name), Some(path)) => format!("a `{name}` call for {path}"),
            (Some(name), None) => format!("a `{name}` call"),
            (None, _) => "a tool call".to_string(),
        };
        let configured = self.options.max_output_tokens;
        if limit < configured as usize {
            return ModelError::ContextWindowExceeded {
                provider: PROVIDER.to_string(),
                message: format!(
                    "the model's answer ran out of context after {limit} tokens while \
                     writing {what}, so the call was not made"
                ),
            };
        }
        let smaller = if call.name.as_deref() == Some("write_file") {
            "ask for a smaller file"
        } else {
            "ask for a smaller step"
        };
        ModelError::ResponseFailed {
            provider: PROVIDER.to_string(),
            code: Some("max_output_tokens".to_string()),
            message: format!(
                "the model's answer was cut off at {limit} tokens while writing {what}, so \
                 the call was not made; raise [local_model] max_output_tokens (now \
                 {configured}) so the whole call fits, or {smaller}"
            ),
        }
    }

    /// Turns the generated text into output items, applies the loop guard, completes.
    fn finish(
        &mut self,
        job: &Job,
        tools: &[ToolDef],
        text: &str,
        streamed: bool,
        cut_off: Option<usize>,
        stats: &Stats,
    ) -> Result<(), ModelError> {
        let mut parsed = parse_output(text, tools);
        if !job.prompt.parallel_tool_calls {
            parsed.calls.truncate(1);
        }
        if let Some(limit) = cut_off
            && parsed.calls.is_empty()
            && !tools.is_empty()
            && let Some(call) = unfinished_call(text)
        {
            // A call cut off mid-way is neither an answer nor a call: fail the response
            // with what to change. The line streamed before it completes as shown.
            if streamed {
                let shown = text.get(..call.start).unwrap_or_default().trim();
                send(
                    job,
                    ResponseEvent::OutputItemDone(ResponseItem::assistant_text(shown)),
                )?;
            }
            let error = self.cut_off_error(&call, limit);
            let _ = job.events.blocking_send(Err(error));
            return Ok(());
        }
        let mut message = parsed.text.clone();
        let previous = if self.options.loop_guard {
            conversation::previous_call(&job.prompt)
        } else {
            None
        };
        if let (Some(call), Some((prev_name, prev_args))) = (parsed.calls.first(), previous) {
            let args: serde_json::Value =
                serde_json::from_str(&call.arguments).unwrap_or(serde_json::Value::Null);
            if call.name == prev_name && args == prev_args {
                message = format!(
                    "I stopped: I was about to call `{}` again with the same arguments as my \
                     previous call, which would repeat the same step in a loop. The last result \
                     is above; ask again with more detail if the task is not done.",
                    call.name
                );
                parsed.calls.clear();
            }
        }
        if streamed || !message.is_empty() || parsed.calls.is_empty() {
            if message.is_empty() && parsed.calls.is_empty() {
                message = text.trim().to_string();
            }
            let item = ResponseItem::assistant_text(message);
            if !streamed {
                send(
                    job,
                    ResponseEvent::OutputItemAdded(ResponseItem::assistant_text("")),
                )?;
            }
            send(job, ResponseEvent::OutputItemDone(item))?;
        }
        for call in parsed.calls {
            let n = RESPONSES.fetch_add(1, Ordering::Relaxed);
            let item = ResponseItem::FunctionCall {
                id: None,
                name: call.name,
                arguments: call.arguments,
                call_id: format!("call_local_{}_{n}", std::process::id()),
                extra: Default::default(),
            };
            send(job, ResponseEvent::OutputItemAdded(item.clone()))?;
            send(job, ResponseEvent::OutputItemDone(item))?;
        }
        let n = RESPONSES.fetch_add(1, Ordering::Relaxed);
        let usage = TokenUsage {
            input_tokens: stats.prompt_tokens as u64,
            cached_input_tokens: stats.reused_tokens as u64,
            output_tokens: stats.generated_tokens as u64,
            reasoning_output_tokens: 0,
            total_tokens: (stats.prompt_tokens + stats.generated_tokens) as u64,
        };
        send(
            job,
            ResponseEvent::Completed {
                response_id: Some(format!("resp_local_{n}")),
                usage: Some(usage),
            },
        )
    }
}

fn send(job: &Job, event: ResponseEvent) -> Result<(), ModelError> {
    // A closed channel means the caller dropped the stream: nothing more to do.
    let _ = job.events.blocking_send(Ok(event));
    Ok(())
}

/// Streams the text of the message line; at its end (a newline, after which the grammar
/// admits only a call) streaming stops and the rest is held back for parsing.
fn stream_line(job: &Job, piece: &str, mode: &mut Mode) -> Result<(), ()> {
    let (shown, ended) = match piece.find('\n') {
        Some(i) => (piece.get(..i).unwrap_or_default(), true),
        None => (piece, false),
    };
    if ended {
        *mode = Mode::Call;
    }
    if shown.is_empty() {
        return Ok(());
    }
    send_delta(job, shown.to_string())
}

fn send_delta(job: &Job, delta: String) -> Result<(), ()> {
    job.events
        .blocking_send(Ok(ResponseEvent::OutputTextDelta {
            item_id: None,
            delta,
        }))
        .map_err(|_| ())
}

/// Greedy choice; with a grammar, the best token the grammar admits (checking the
/// unconstrained best first, which is almost always admitted and far cheaper).
fn pick(
    ctx: &LlamaContext<'_>,
    greedy: &mut LlamaSampler,
    grammar: Option<&mut LlamaSampler>,
    control_tokens: &HashSet<LlamaToken>,
    eos: LlamaToken,
) -> LlamaToken {
    // The arg-max over the ~152k logits runs in llama.cpp's optimised code.
    let best = greedy.sample(ctx, -1);
    let Some(grammar) = grammar else {
        return best;
    };
    // A control token's text (`<|im_start|>`) can look like admissible text to the
    // grammar; when the grammar forbids ending, the model reached for one. Never take them.
    if !control_tokens.contains(&best) {
        let mut single = LlamaTokenDataArray::new(vec![LlamaTokenData::new(best, 0.0, 0.0)], false);
        single.apply_sampler(grammar);
        if single.data.first().is_some_and(|d| d.logit().is_finite()) {
            return best;
        }
    }
    let mut all = LlamaTokenDataArray::from_iter(ctx.candidates_ith(-1), false);
    all.apply_sampler(grammar);
    let best = all
        .data
        .iter()
        .filter(|d| d.logit().is_finite() && !control_tokens.contains(&d.id()))
        .max_by(|a, b| a.logit().total_cmp(&b.logit()))
        .map(LlamaTokenData::id);
    // No admissible token at all cannot happen with a well-formed grammar; end the turn.
    best.unwrap_or(eos)
}

fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Removes and returns the longest valid UTF-8 prefix of `bytes` (invalid bytes become
/// U+FFFD; an incomplete sequence at the end waits for the next token).
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            let out = s.to_string();
            bytes.clear();
            out
        }
        Err(err) if err.error_len().is_none() => {
            let valid = err.valid_up_to();
            let out = String::from_utf8_lossy(bytes.get(..valid).unwrap_or_default()).into_owned();
            bytes.drain(..valid);
            out
        }
        Err(_) => {
            let out = String::from_utf8_lossy(bytes).into_owned();
            bytes.clear();
            out
        }
    }
}

/// Saves sequence 0 (exactly the prefix at this point) atomically; failures only log.
fn save_prefix(ctx: &LlamaContext<'_>, entry: &Path, prefix: &[LlamaToken]) {
    let Some(dir) = entry.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = entry.with_extension(format!("tmp{}", std::process::id()));
    match ctx.state_seq_save_file(&tmp, 0, prefix) {
        Ok(_) => {
            if std::fs::rename(&tmp, entry).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
        Err(err) => {
            tracing::warn!(%err, entry = %entry.display(), "could not save the prefix cache");
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_across_tokens_waits_for_the_rest() {
        let mut bytes = "é".as_bytes()[..1].to_vec();
        assert_eq!(take_utf8(&mut bytes), "");
        bytes.extend(&"é".as_bytes()[1..]);
        bytes.extend(b"x");
        assert_eq!(take_utf8(&mut bytes), "éx");
        assert!(bytes.is_empty());
        let mut bad = vec![0xff, b'a'];
        assert_eq!(take_utf8(&mut bad), "\u{fffd}a");
    }

    #[test]
    fn the_cpu_check_names_every_missing_instruction_set() {
        let has = |f: &str| f == "AVX" || f == "FMA";
        let err = check_cpu_features(BUILD_CPU_FEATURES, &has).unwrap_err();
        assert!(
            matches!(&err, LocalModelError::UnsupportedCpu { missing } if missing == "AVX2, F16C, BMI2"),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("this CPU lacks AVX2, F16C, BMI2,"),
            "{err}"
        );
        assert!(check_cpu_features(BUILD_CPU_FEATURES, &|_| true).is_ok());
        // A CPU without BMI2 alone is refused too (the build enables it).
        let err = check_cpu_features(BUILD_CPU_FEATURES, &|f| f != "BMI2").unwrap_err();
        assert!(err.to_string().contains("lacks BMI2,"), "{err}");
    }

    /// The check must cover exactly the instruction sets the build turns on: a switch added
    /// to `.cargo/config.toml` without a check would crash older CPUs with SIGILL.
    #[test]
    fn the_cpu_check_matches_the_instruction_sets_the_build_enables() {
        let config =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cargo/config.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        const NOT_INSTRUCTION_SETS: &[&str] = &["NATIVE", "OPENMP", "CCACHE", "LTO", "STATIC"];
        // `GGML_<NAME> = "ON"` lines of the `[env]` table.
        let mut enabled: Vec<String> = text
            .lines()
            .filter_map(|line| line.split_once('='))
            .filter(|(_, value)| value.trim() == "\"ON\"")
            .filter_map(|(key, _)| key.trim().strip_prefix("GGML_"))
            .filter(|name| !NOT_INSTRUCTION_SETS.contains(name))
            .map(str::to_owned)
            .collect();
        enabled.sort();
        let mut checked: Vec<String> = BUILD_CPU_FEATURES.iter().map(|f| (*f).to_owned()).collect();
        checked.sort();
        assert_eq!(
            checked,
            enabled,
            "BUILD_CPU_FEATURES vs {}",
            config.display()
        );
        if cfg!(target_arch = "x86_64") {
            for feature in BUILD_CPU_FEATURES {
                assert!(
                    DETECTORS.iter().any(|(name, _)| name == feature),
                    "{feature} cannot be detected"
                );
            }
        }
    }

    #[test]
    fn common_prefix_counts_equal_leading_tokens() {
        let t = |v: &[i32]| v.iter().map(|i| LlamaToken::new(*i)).collect::<Vec<_>>();
        assert_eq!(common_prefix(&t(&[1, 2, 3]), &t(&[1, 2, 4, 5])), 2);
        assert_eq!(common_prefix(&t(&[]), &t(&[1])), 0);
    }
}
