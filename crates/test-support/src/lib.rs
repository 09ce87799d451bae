//! Test support for Osprey: a scripted model server that speaks real HTTP, and temporary
//! homes that point Osprey at it.
//!
//! Osprey's tests never replace the model client with an in-process fake. They start a
//! [`MockModelServer`] on 127.0.0.1, point a provider's `base_url` at it, and let the real
//! client make real requests and parse real server-sent events. The server answers each
//! request with the next entry of a script ([`MockResponse`]): a Responses-API event stream
//! (built with the `ev_*` functions), a Chat Completions chunk stream (`chat_*`), an HTTP
//! error such as a 429 with `Retry-After`, a stream that breaks off ([`MockResponse::DropAfter`])
//! or stalls ([`MockResponse::Hang`]), raw bytes, or any of these after a delay.
//!
//! Every request is recorded ([`CapturedRequest`], with helpers for the input items,
//! messages, tool outputs, user texts and tool names) and checked: each tool call in the
//! history must have exactly one output after it, and each output its call (see
//! [`history_problems`]). The hosted APIs reject such histories, so an agent bug that loses
//! or doubles a tool output fails here, in the test that caused it: the server answers
//! HTTP 500 with the problem and records a failure. A request beyond the end of the
//! script is a failure too. Tests end with [`MockModelServer::verify`], which panics
//! listing every failure and every script entry that was never requested.
//! (The server does not panic on drop; a test that skips `verify` only sees failures as
//! the 500 answers its client received.)
//!
//! Sub-agents get their own scripts ([`MockModelServer::start_routed`]): a request that
//! carries `x-openai-subagent` is answered from the route named by the `agent_nickname` of
//! its `x-codex-turn-metadata`, or else from the catch-all route [`EVERY_AGENT`], which walks
//! its script once per thread (the metadata's `thread_id`) — Codex's children carry no
//! nickname. Scripted calls name spawned agents as `{{agent:<nickname>}}` or `{{agent:#N}}`
//! (the N-th spawned), filled in from the `spawn_agent` outputs seen so far.
//!
//! [`TempHome`] makes a temporary `OSPREY_HOME` with a `config.toml` for a `mock`
//! provider (retries off, short idle timeout) and gives the environment for an `osprey`
//! child process; [`temp_git_repo`] makes a scratch repository.
//!
//! The crate depends on no other Osprey crate, so it builds early and every crate can use
//! it as a dev-dependency; requests and events are plain `serde_json::Value`s. Scripts are
//! serde data, so the `osprey-mock-model` binary can serve the same scenarios from a JSON
//! file for benchmark scripts.
//!
//! ```no_run
//! use osprey_test_support::*;
//!
//! # async fn example() {
//! let server = MockModelServer::start(vec![
//!     sse_turn(vec![ev_function_call("call_1", "exec_command", r#"{"cmd":"ls"}"#)]),
//!     sse_turn(vec![ev_assistant_message("msg_1", "Listed the files.")]),
//! ])
//! .await;
//! let home = TempHome::for_server(&server, WireApi::Responses);
//! // … run `osprey exec` with `home.env()`, or drive the model client at `server.base_url()` …
//! let requests = server.requests();
//! assert!(requests[1].output_for("call_1").is_some());
//! server.verify();
//! # drop(home);
//! # }
//! ```

mod capture;
mod check;
mod events;
mod home;
pub mod netns;
mod script;
mod server;

pub use capture::CallOutput;
pub use capture::CapturedRequest;
pub use check::history_problems;
pub use events::MOCK_RESPONSE_ID;
pub use events::chat_text_chunks;
pub use events::chat_tool_call_chunks;
pub use events::ev_assistant_message;
pub use events::ev_completed;
pub use events::ev_completed_with_usage;
pub use events::ev_custom_tool_call;
pub use events::ev_failed;
pub use events::ev_function_call;
pub use events::ev_local_shell_call;
pub use events::ev_output_item_added;
pub use events::ev_output_item_done;
pub use events::ev_output_text_delta;
pub use events::ev_reasoning_item;
pub use events::ev_reasoning_summary_delta;
pub use events::ev_response_created;
pub use events::sse_turn;
pub use home::TEST_API_KEY;
pub use home::TempHome;
pub use home::temp_git_repo;
pub use home::workspace_binary;
pub use script::CHAT_DONE_FRAME;
pub use script::MockResponse;
pub use script::SseEvent;
pub use script::WireApi;
pub use script::chat_frame;
pub use server::EVERY_AGENT;
pub use server::MockModelServer;
pub use server::MockServerError;
pub use server::ServerOptions;
pub use server::load_script;
