//! What can go wrong while serving a tool call or the connection.
//!
//! Tool-call errors are not protocol errors: they come back to the calling agent as a tool
//! result with `isError: true` and this message as its text, so each message says what
//! failed and what the caller can do about it.

use std::path::PathBuf;

use osprey_protocol::ThreadId;

#[derive(Debug, thiserror::Error)]
pub enum McpServerError {
    #[error("invalid arguments for the `{tool}` tool: {reason}")]
    BadArguments { tool: String, reason: String },

    #[error(
        "`osprey-reply` needs the `threadId` an earlier `osprey` call returned in its structuredContent"
    )]
    MissingThreadId,

    #[error("`{value}` is not a thread id; pass the `threadId` an earlier `osprey` call returned")]
    BadThreadId { value: String },

    #[error(
        "no thread {thread_id} in this server (threads live as long as the server process); start a new one with the `osprey` tool"
    )]
    UnknownThread { thread_id: ThreadId },

    #[error("`cwd` {}: no such directory", path.display())]
    NoSuchCwd { path: PathBuf },

    #[error("config.{key}: {reason}")]
    BadOverride { key: String, reason: String },

    #[error("the configuration could not be built: {source}")]
    Config {
        #[source]
        source: osprey_config::ConfigError,
    },

    #[error("the thread could not be started: {source}")]
    StartThread {
        #[source]
        source: osprey_core::CoreError,
    },

    #[error(
        "the call was cancelled while thread {thread_id} was still busy with an earlier turn; nothing was sent"
    )]
    CancelledWhileQueued { thread_id: ThreadId },

    #[error("the MCP connection could not be set up: {reason}")]
    Connection { reason: String },
}
