//! `[mcp_servers.<name>]`: MCP servers Osprey connects to, parsed and checked here and used
//! by the `mcp` crate.
//!
//! A server is either launched (`command`, stdio) or reached over streamable HTTP (`url`).
//! Fields of the other transport are refused rather than ignored, so a half-edited entry is
//! caught when the configuration loads instead of when the server fails to start.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// One `[mcp_servers.<name>]` table as written (every field optional, so layers can merge).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct McpServerToml {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub cwd: Option<PathBuf>,
    pub url: Option<String>,
    pub bearer_token_env_var: Option<String>,
    pub http_headers: Option<BTreeMap<String, String>>,
    pub startup_timeout_sec: Option<f64>,
    pub tool_timeout_sec: Option<f64>,
    pub enabled: Option<bool>,
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Option<Vec<String>>,
    pub require_approval: Option<bool>,
    pub default_tools_approval_mode: Option<McpApprovalMode>,
    pub tools: Option<BTreeMap<String, McpToolToml>>,
}

/// `[mcp_servers.<name>.tools.<tool>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpToolToml {
    pub approval_mode: Option<McpApprovalMode>,
}

/// Whether calls to an MCP tool ask a person first (Codex's `default_tools_approval_mode`
/// and `tools.<tool>.approval_mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpApprovalMode {
    /// The approval policy decides: ask only under `untrusted`.
    #[default]
    Auto,
    /// Ask before every call (unless approved for the session).
    Prompt,
    /// Never ask: the user trusts this tool.
    Approve,
    /// Ask before calls to tools that do not declare themselves read-only.
    Writes,
}

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq)]
pub enum McpTransport {
    /// Launch `command args…` and speak MCP over its stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP at `url`.
    StreamableHttp {
        url: String,
        /// Variable whose value is sent as `Authorization: Bearer …`.
        bearer_token_env_var: Option<String>,
        http_headers: BTreeMap<String, String>,
    },
}

/// A validated MCP server entry.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    pub transport: McpTransport,
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    pub enabled: bool,
    /// When set, only these tools are exposed.
    pub enabled_tools: Option<Vec<String>>,
    /// Tools removed after `enabled_tools` is applied.
    pub disabled_tools: Vec<String>,
    /// Ask the user before every call to this server's tools (Osprey's older key; the same
    /// as `default_tools_approval_mode = "prompt"`).
    pub require_approval: bool,
    /// The approval mode of tools without their own.
    pub default_tools_approval_mode: McpApprovalMode,
    /// Per-tool approval modes.
    pub tool_approval_modes: BTreeMap<String, McpApprovalMode>,
}

impl McpServerConfig {
    pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
    pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

    /// Whether `tool` passes `enabled_tools` and `disabled_tools`.
    pub fn is_tool_enabled(&self, tool: &str) -> bool {
        let allowed = self
            .enabled_tools
            .as_ref()
            .is_none_or(|list| list.iter().any(|t| t == tool));
        allowed && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// The approval mode for calls to `tool`: its own, else the server's default.
    pub fn approval_mode(&self, tool: &str) -> McpApprovalMode {
        if let Some(mode) = self.tool_approval_modes.get(tool) {
            return *mode;
        }
        if self.require_approval && self.default_tools_approval_mode == McpApprovalMode::Auto {
            return McpApprovalMode::Prompt;
        }
        self.default_tools_approval_mode
    }
}

impl McpServerToml {
    /// Checks the entry; the error says what to change.
    pub(crate) fn resolve(self) -> Result<McpServerConfig, String> {
        let transport = match (self.command, self.url) {
            (Some(_), Some(_)) => {
                return Err("set either `command` (stdio) or `url` (HTTP), not both".into());
            }
            (None, None) => {
                return Err(
                    "missing transport: set `command` to launch a server or `url` to reach one"
                        .into(),
                );
            }
            (Some(command), None) => {
                let http_only = [
                    ("bearer_token_env_var", self.bearer_token_env_var.is_some()),
                    ("http_headers", self.http_headers.is_some()),
                ];
                if let Some((field, _)) = http_only.iter().find(|(_, set)| *set) {
                    return Err(format!(
                        "`{field}` only applies to HTTP servers (`url`), not to `command` servers"
                    ));
                }
                if command.trim().is_empty() {
                    return Err("`command` is empty".into());
                }
                McpTransport::Stdio {
                    command,
                    args: self.args.unwrap_or_default(),
                    env: self.env.unwrap_or_default(),
                    cwd: self.cwd,
                }
            }
            (None, Some(url)) => {
                let stdio_only = [
                    ("args", self.args.is_some()),
                    ("env", self.env.is_some()),
                    ("cwd", self.cwd.is_some()),
                ];
                if let Some((field, _)) = stdio_only.iter().find(|(_, set)| *set) {
                    return Err(format!(
                        "`{field}` only applies to launched servers (`command`), not to `url` servers"
                    ));
                }
                McpTransport::StreamableHttp {
                    url,
                    bearer_token_env_var: self.bearer_token_env_var,
                    http_headers: self.http_headers.unwrap_or_default(),
                }
            }
        };
        Ok(McpServerConfig {
            transport,
            startup_timeout: seconds(
                "startup_timeout_sec",
                self.startup_timeout_sec,
                McpServerConfig::DEFAULT_STARTUP_TIMEOUT,
            )?,
            tool_timeout: seconds(
                "tool_timeout_sec",
                self.tool_timeout_sec,
                McpServerConfig::DEFAULT_TOOL_TIMEOUT,
            )?,
            enabled: self.enabled.unwrap_or(true),
            enabled_tools: self.enabled_tools,
            disabled_tools: self.disabled_tools.unwrap_or_default(),
            require_approval: self.require_approval.unwrap_or(false),
            default_tools_approval_mode: self.default_tools_approval_mode.unwrap_or_default(),
            tool_approval_modes: self
                .tools
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(tool, table)| Some((tool, table.approval_mode?)))
                .collect(),
        })
    }
}

fn seconds(field: &str, value: Option<f64>, default: Duration) -> Result<Duration, String> {
    match value {
        None => Ok(default),
        Some(secs) => Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("`{field}` must be a non-negative number of seconds, got {secs}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(text: &str) -> Result<McpServerConfig, String> {
        toml::from_str::<McpServerToml>(text).unwrap().resolve()
    }

    #[test]
    fn stdio_server_with_defaults() {
        let server = parse("command = \"npx\"\nargs = [\"-y\", \"srv\"]").unwrap();
        assert_eq!(
            server,
            McpServerConfig {
                transport: McpTransport::Stdio {
                    command: "npx".into(),
                    args: vec!["-y".into(), "srv".into()],
                    env: BTreeMap::new(),
                    cwd: None,
                },
                startup_timeout: Duration::from_secs(10),
                tool_timeout: Duration::from_secs(60),
                enabled: true,
                enabled_tools: None,
                disabled_tools: vec![],
                require_approval: false,
                default_tools_approval_mode: McpApprovalMode::Auto,
                tool_approval_modes: BTreeMap::new(),
            }
        );
    }

    #[test]
    fn http_server_and_tool_filters() {
        let server = parse(
            "url = \"https://x/mcp\"\nbearer_token_env_var = \"T\"\ntool_timeout_sec = 1.5\n\
             enabled_tools = [\"a\", \"b\"]\ndisabled_tools = [\"b\"]",
        )
        .unwrap();
        assert_eq!(server.tool_timeout, Duration::from_millis(1500));
        assert!(server.is_tool_enabled("a"));
        assert!(!server.is_tool_enabled("b"));
        assert!(!server.is_tool_enabled("c"));
    }

    #[test]
    fn tool_approval_modes_fall_back_to_the_server_default() {
        let server = parse(
            "command = \"srv\"\ndefault_tools_approval_mode = \"approve\"\n\
             [tools.delete_all]\napproval_mode = \"prompt\"\n",
        )
        .unwrap();
        assert_eq!(server.approval_mode("delete_all"), McpApprovalMode::Prompt);
        assert_eq!(server.approval_mode("echo"), McpApprovalMode::Approve);
        let legacy = parse("command = \"srv\"\nrequire_approval = true").unwrap();
        assert_eq!(legacy.approval_mode("echo"), McpApprovalMode::Prompt);
        let plain = parse("command = \"srv\"").unwrap();
        assert_eq!(plain.approval_mode("echo"), McpApprovalMode::Auto);
        let bad = toml::from_str::<McpServerToml>(
            "command = \"s\"\ndefault_tools_approval_mode = \"sometimes\"",
        );
        assert!(bad.is_err());
    }

    #[test]
    fn exactly_one_transport() {
        assert!(
            parse("command = \"a\"\nurl = \"b\"")
                .unwrap_err()
                .contains("not both")
        );
        assert!(
            parse("enabled = true")
                .unwrap_err()
                .contains("missing transport")
        );
        assert!(
            parse("url = \"b\"\nargs = []")
                .unwrap_err()
                .contains("`args`")
        );
        assert!(
            parse("command = \"a\"\nhttp_headers = {}")
                .unwrap_err()
                .contains("`http_headers`")
        );
        assert!(
            parse("command = \"a\"\nstartup_timeout_sec = -1")
                .unwrap_err()
                .contains("non-negative")
        );
    }
}
