//! Errors: startup failures (reported once, never fatal) and call errors (returned to the model
//! as a failed tool output).

use std::fmt;
use std::time::Duration;

/// A configured server that could not be used this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupFailure {
    /// The server's name in `[mcp_servers.<name>]`.
    pub server: String,
    /// What went wrong, in plain words: the command and its stderr tail, the URL and the HTTP
    /// error, or how long it was given.
    pub reason: String,
}

impl fmt::Display for StartupFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MCP server `{}` failed to start: {}",
            self.server, self.reason
        )
    }
}

/// A failed MCP operation after startup.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    #[error(
        "no MCP server named `{server}` is running; check the name against [mcp_servers] in \
         config.toml (servers that failed to start are reported at startup)"
    )]
    UnknownServer { server: String },

    #[error(
        "MCP tool `{tool}` on server `{server}` is disabled by enabled_tools/disabled_tools in \
         [mcp_servers.{server}]"
    )]
    ToolDisabled { server: String, tool: String },

    #[error("invalid arguments for MCP tool `{tool}` on server `{server}`: {message}")]
    InvalidArguments {
        server: String,
        tool: String,
        message: String,
    },

    #[error(
        "MCP tool `{tool}` on server `{server}` did not finish within {} and was cancelled; \
         raise tool_timeout_sec in [mcp_servers.{server}] if it needs longer",
        seconds(*limit)
    )]
    ToolTimeout {
        server: String,
        tool: String,
        limit: Duration,
    },

    #[error("MCP server `{server}` answered {method} with an error: {message}")]
    Server {
        server: String,
        method: &'static str,
        message: String,
    },

    #[error(
        "MCP server `{server}` is no longer connected ({method} failed: {message}); it may have \
         exited — restart the session to start it again"
    )]
    Disconnected {
        server: String,
        method: &'static str,
        message: String,
    },

    #[error("MCP server `{server}` does not offer resources")]
    NoResources { server: String },

    #[error("{tool}: {message}")]
    BadToolArguments { tool: String, message: String },
}

/// `1.5 s`, `10 s`, `250 ms`: how timeouts are named in messages.
pub(crate) fn seconds(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(Duration::from_millis(250)), "250 ms");
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }

    #[test]
    fn timeout_message_names_server_tool_and_limit() {
        let err = McpError::ToolTimeout {
            server: "docs".into(),
            tool: "search".into(),
            limit: Duration::from_secs(60),
        };
        assert_eq!(
            err.to_string(),
            "MCP tool `search` on server `docs` did not finish within 60 s and was cancelled; \
             raise tool_timeout_sec in [mcp_servers.docs] if it needs longer"
        );
    }
}
