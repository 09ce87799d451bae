//! The agent itself: threads, sessions, the turn loop and the tool system.
//!
//! A front end creates a [`ThreadManager`], starts an [`OspreyThread`] from a resolved
//! [`osprey_config::Config`], submits [`osprey_protocol::Op`]s and reads
//! [`osprey_protocol::Event`]s. Nothing here prints or knows about terminals.
//!
//! Inside, each thread is a session actor (`session`) that owns the history and runs one turn
//! at a time. A turn builds the prompt (base instructions, permissions, environment, history,
//! tool specs), streams the model's response through `osprey-model`, records the items, and
//! runs tool calls through the tool system (`tools`): router → registry → handler, with
//! read-only calls running side by side and outputs appended in call order. The loop repeats
//! until the model answers without tool calls. Approvals wait on the [`approvals`] broker
//! until a front end answers.

pub(crate) mod agents;
pub(crate) mod approvals;
#[cfg(feature = "bench")]
#[doc(hidden)]
pub mod bench;
mod compact;
pub(crate) mod environment;
mod error;
pub(crate) mod events;
pub(crate) mod exec_policy;
pub(crate) mod history;
mod inspect;
pub(crate) mod project_doc;
pub(crate) mod prompt;
pub(crate) mod sandbox;
mod session;
mod thread_manager;
pub(crate) mod tools;
pub(crate) mod turn_context;

pub use agents::decline_subagent_approvals;
pub use error::CoreError;
/// The provider seam: front ends register factories for providers that are not HTTP
/// endpoints ([`ThreadManager::with_provider`]).
pub use osprey_model::{ModelProviderFactory, ProviderRegistry};
pub use thread_manager::{OspreyThread, SpawnedThread, ThreadManager, ThreadMcp};
