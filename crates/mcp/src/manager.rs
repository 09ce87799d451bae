//! [`McpConnectionManager`]: every configured server, started together, behind one handle.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex as StdMutex;
use std::time::{Duration, Instant};

use osprey_config::{McpApprovalMode, McpServerConfig};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, PaginatedRequestParams,
    ReadResourceRequestParams, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value, json};

use crate::client::{self, Connection, error_chain};
use crate::error::{McpError, StartupFailure};
use crate::names::assign_names;
use crate::result::McpToolResult;
use crate::schema::sanitize_input_schema;

/// One tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// Server name as configured.
    pub server: String,
    /// Tool name as the server spells it (what `tools/call` is sent).
    pub tool: String,
    /// Responses-API namespace, `mcp__<server>`.
    pub namespace: String,
    /// Name inside the namespace.
    pub name: String,
    /// `mcp__<server>__<tool>`, for flat tool lists.
    pub qualified_name: String,
    /// The tool's description (its title when it has none).
    pub description: String,
    /// The sanitised input schema.
    pub parameters: Value,
    /// The tool definition as listed by the server (annotations, output schema, …).
    pub raw: Value,
}

struct Server {
    config: McpServerConfig,
    connection: Connection,
}

/// Connections to the configured MCP servers and the tools they offer.
///
/// Cheap to share behind an `Arc`: every method takes `&self`.
pub struct McpConnectionManager {
    servers: BTreeMap<String, Server>,
    tools: Vec<McpToolInfo>,
    by_qualified: HashMap<String, usize>,
    by_namespaced: HashMap<(String, String), usize>,
    failures: StdMutex<Vec<StartupFailure>>,
    warnings: Vec<String>,
    startup_times: BTreeMap<String, Duration>,
}

impl McpConnectionManager {
    /// A manager with no servers.
    pub fn empty() -> Self {
        Self {
            servers: BTreeMap::new(),
            tools: Vec::new(),
            by_qualified: HashMap::new(),
            by_namespaced: HashMap::new(),
            failures: StdMutex::new(Vec::new()),
            warnings: Vec::new(),
            startup_times: BTreeMap::new(),
        }
    }

    /// Starts every enabled server concurrently. Each one gets its own `startup_timeout` for
    /// the handshake and its tool list; one that fails or runs out of time is recorded (see
    /// [`failures`](Self::failures)) and the rest carry on, so this returns once the slowest
    /// server has answered or timed out.
    ///
    /// `env` is the environment to draw from: launched servers inherit a few variables from it
    /// ([`INHERITED_ENV_VARS`](crate::INHERITED_ENV_VARS)), and `bearer_token_env_var` is read
    /// from it.
    pub async fn start(
        servers: &BTreeMap<String, McpServerConfig>,
        env: &HashMap<String, String>,
    ) -> Self {
        let attempts =
            servers
                .iter()
                .filter(|(_, config)| config.enabled)
                .map(|(name, config)| async move {
                    let started = Instant::now();
                    let result = client::connect(config, env).await;
                    (name, config, result, started.elapsed())
                });
        let results = futures::future::join_all(attempts).await;

        let mut manager = Self::empty();
        let mut failures = Vec::new();
        for (name, config, result, took) in results {
            manager.startup_times.insert(name.clone(), took);
            match result {
                Ok(connection) => {
                    manager.servers.insert(
                        name.clone(),
                        Server {
                            config: config.clone(),
                            connection,
                        },
                    );
                }
                Err(reason) => {
                    tracing::warn!(server = %name, "MCP server failed to start: {reason}");
                    failures.push(StartupFailure {
                        server: name.clone(),
                        reason,
                    });
                }
            }
        }
        manager.failures = StdMutex::new(failures);
        manager.index_tools();
        manager
    }

    fn index_tools(&mut self) {
        let mut raw_tools: Vec<(String, String, &Value)> = Vec::new();
        for (server_name, server) in &self.servers {
            for tool in &server.connection.tools {
                let Some(tool_name) = tool.get("name").and_then(Value::as_str) else {
                    self.warnings.push(format!(
                        "MCP server `{server_name}` listed a tool without a name; it is skipped"
                    ));
                    continue;
                };
                if server.config.is_tool_enabled(tool_name) {
                    raw_tools.push((server_name.clone(), tool_name.to_owned(), tool));
                }
            }
        }
        let pairs: Vec<(String, String)> = raw_tools
            .iter()
            .map(|(server, tool, _)| (server.clone(), tool.clone()))
            .collect();
        let (names, name_warnings) = assign_names(&pairs);
        self.warnings.extend(name_warnings);
        let mut tools: Vec<McpToolInfo> = raw_tools
            .into_iter()
            .zip(names)
            .map(|((server, tool, raw), names)| {
                let description = ["description", "title"]
                    .iter()
                    .find_map(|key| raw.get(*key).and_then(Value::as_str))
                    .unwrap_or_default()
                    .to_owned();
                McpToolInfo {
                    qualified_name: names.qualified(),
                    namespace: names.namespace,
                    name: names.name,
                    server,
                    tool,
                    description,
                    parameters: sanitize_input_schema(
                        raw.get("inputSchema").unwrap_or(&Value::Null),
                    ),
                    raw: raw.clone(),
                }
            })
            .collect();
        tools.sort_by(|a, b| a.qualified_name.cmp(&b.qualified_name));
        self.by_qualified = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.qualified_name.clone(), i))
            .collect();
        self.by_namespaced = tools
            .iter()
            .enumerate()
            .map(|(i, t)| ((t.namespace.clone(), t.name.clone()), i))
            .collect();
        self.tools = tools;
    }

    /// The servers that failed to start, each with its reason. Returned once: later calls
    /// return nothing, so a front end reports them a single time.
    pub fn failures(&self) -> Vec<StartupFailure> {
        self.failures
            .lock()
            .map(|mut failures| std::mem::take(&mut *failures))
            .unwrap_or_default()
    }

    /// Name adjustments worth telling the user about (collisions, shortened names).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// How long each enabled server took to start or fail (handshake and tool list), for
    /// diagnostics and benchmarks.
    pub fn startup_times(&self) -> &BTreeMap<String, Duration> {
        &self.startup_times
    }

    /// Names of the servers that started.
    pub fn server_names(&self) -> impl Iterator<Item = &str> {
        self.servers.keys().map(String::as_str)
    }

    /// Whether any server started.
    pub fn has_servers(&self) -> bool {
        !self.servers.is_empty()
    }

    /// Every tool offered, ordered by qualified name.
    pub fn tools(&self) -> &[McpToolInfo] {
        &self.tools
    }

    /// The configured per-call timeout of `server`.
    pub fn tool_timeout(&self, server: &str) -> Option<Duration> {
        self.servers.get(server).map(|s| s.config.tool_timeout)
    }

    /// What the configuration says about asking before a call to `tool` of `server`:
    /// `Some(true)` always ask, `Some(false)` never ask, `None` let the approval policy decide.
    pub fn requires_approval(&self, server: &str, tool: &str) -> Option<bool> {
        let config = &self.servers.get(server)?.config;
        Some(match config.approval_mode(tool) {
            McpApprovalMode::Prompt => true,
            McpApprovalMode::Approve => false,
            McpApprovalMode::Auto => return None,
            McpApprovalMode::Writes => !self.is_read_only(server, tool),
        })
    }

    /// Whether the server annotates `tool` as read-only (`annotations.readOnlyHint`).
    fn is_read_only(&self, server: &str, tool: &str) -> bool {
        self.tools.iter().any(|info| {
            info.server == server
                && info.tool == tool
                && info.raw["annotations"]["readOnlyHint"] == Value::Bool(true)
        })
    }

    /// The `instructions` `server` sent at initialization.
    pub fn instructions(&self, server: &str) -> Option<&str> {
        self.servers
            .get(server)
            .and_then(|s| s.connection.instructions.as_deref())
    }

    /// `(server, tool)` for a flat qualified name `mcp__<server>__<tool>`.
    pub fn resolve(&self, qualified_name: &str) -> Option<(String, String)> {
        let tool = &self.tools[*self.by_qualified.get(qualified_name)?];
        Some((tool.server.clone(), tool.tool.clone()))
    }

    /// `(server, tool)` for a Responses-API call naming a `namespace` and a `name` in it.
    pub fn resolve_namespaced(&self, namespace: &str, name: &str) -> Option<(String, String)> {
        let index = self
            .by_namespaced
            .get(&(namespace.to_owned(), name.to_owned()))?;
        let tool = &self.tools[*index];
        Some((tool.server.clone(), tool.tool.clone()))
    }

    /// Tools for the Responses API: one `{"type":"namespace","name":"mcp__<server>",
    /// "description",…,"tools":[function tools]}` per server, as Codex 0.171 sends them. The
    /// namespace description is the server's instructions when it sent any.
    pub fn responses_tool_specs(&self) -> Vec<Value> {
        let mut namespaces: BTreeMap<&str, (&str, Vec<Value>)> = BTreeMap::new();
        for tool in &self.tools {
            namespaces
                .entry(tool.namespace.as_str())
                .or_insert_with(|| (tool.server.as_str(), Vec::new()))
                .1
                .push(function_spec(
                    &tool.name,
                    &tool.description,
                    &tool.parameters,
                ));
        }
        namespaces
            .into_iter()
            .map(|(namespace, (server, tools))| {
                let description = self
                    .instructions(server)
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("Tools provided by the `{server}` MCP server."));
                json!({
                    "type": "namespace",
                    "name": namespace,
                    "description": description,
                    "tools": tools,
                })
            })
            .collect()
    }

    /// Tools as one flat list of function tools named `mcp__<server>__<tool>`, for APIs
    /// without namespaces (Chat Completions: wrap each as `{"type":"function","function":…}`).
    pub fn flat_tool_specs(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|tool| function_spec(&tool.qualified_name, &tool.description, &tool.parameters))
            .collect()
    }

    fn server(&self, server: &str) -> Result<&Server, McpError> {
        self.servers
            .get(server)
            .ok_or_else(|| McpError::UnknownServer {
                server: server.to_owned(),
            })
    }

    /// Calls `tool` (its name as the server spells it) on `server`. `None` or `null`
    /// arguments are sent as `{}`. `timeout` overrides the server's `tool_timeout_sec`; when it
    /// passes, the request is cancelled on the server and [`McpError::ToolTimeout`] returned.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Value>,
        timeout: Option<Duration>,
    ) -> Result<McpToolResult, McpError> {
        let entry = self.server(server)?;
        if !entry.config.is_tool_enabled(tool) {
            return Err(McpError::ToolDisabled {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
        }
        let arguments = match arguments {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(McpError::InvalidArguments {
                    server: server.to_owned(),
                    tool: tool.to_owned(),
                    message: format!("expected a JSON object, got {}", json_kind(&other)),
                });
            }
        };
        let limit = timeout.unwrap_or(entry.config.tool_timeout);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
        ));
        let disconnected = |err: ServiceError| McpError::Disconnected {
            server: server.to_owned(),
            method: "tools/call",
            message: error_chain(&err),
        };
        let handle = entry
            .connection
            .peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(limit))
            .await
            .map_err(disconnected)?;
        match handle.await_response().await {
            Ok(ServerResult::CallToolResult(result)) => {
                let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                Ok(McpToolResult::from_json(&value))
            }
            Ok(other) => Err(McpError::Server {
                server: server.to_owned(),
                method: "tools/call",
                message: format!(
                    "expected a tool result, got {}",
                    serde_json::to_string(&other).unwrap_or_default()
                ),
            }),
            Err(ServiceError::Timeout { .. }) => Err(McpError::ToolTimeout {
                server: server.to_owned(),
                tool: tool.to_owned(),
                limit,
            }),
            Err(err) => Err(service_error(server, "tools/call", err)),
        }
    }

    /// `resources/list`, shaped for the model: `{"server"?, "resources": [{"server", …}],
    /// "nextCursor"?}`. With `server` it returns one page (continue with `cursor`); without it
    /// it gathers every page of every server that offers resources, and a `cursor` is refused.
    pub async fn list_resources(
        &self,
        server: Option<&str>,
        cursor: Option<String>,
    ) -> Result<Value, McpError> {
        self.list_generic(server, cursor, ListKind::Resources).await
    }

    /// `resources/templates/list`, shaped like [`list_resources`](Self::list_resources) with
    /// the key `resourceTemplates`.
    pub async fn list_resource_templates(
        &self,
        server: Option<&str>,
        cursor: Option<String>,
    ) -> Result<Value, McpError> {
        self.list_generic(server, cursor, ListKind::Templates).await
    }

    /// `resources/read`: `{"server", "uri", "contents": [...]}`.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<Value, McpError> {
        let entry = self.server(server)?;
        let limit = entry.config.tool_timeout;
        let call = entry
            .connection
            .peer
            .read_resource(ReadResourceRequestParams::new(uri));
        let result = match tokio::time::timeout(limit, call).await {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => return Err(service_error(server, "resources/read", err)),
            Err(_) => {
                return Err(McpError::ToolTimeout {
                    server: server.to_owned(),
                    tool: "read_mcp_resource".to_owned(),
                    limit,
                });
            }
        };
        let contents = serde_json::to_value(&result)
            .ok()
            .and_then(|v| v.get("contents").cloned())
            .unwrap_or_else(|| json!([]));
        Ok(json!({"server": server, "uri": uri, "contents": contents}))
    }

    async fn list_generic(
        &self,
        server: Option<&str>,
        cursor: Option<String>,
        kind: ListKind,
    ) -> Result<Value, McpError> {
        let Some(server) = server else {
            if cursor.is_some() {
                return Err(McpError::BadToolArguments {
                    tool: kind.tool().to_owned(),
                    message: "a cursor belongs to one server's listing; pass `server` together \
                              with `cursor`"
                        .to_owned(),
                });
            }
            return Ok(self.list_all(kind).await);
        };
        let entry = self.server(server)?;
        let (items, next_cursor) = if entry.connection.has_resources {
            self.list_page(server, entry, cursor, kind).await?
        } else {
            (Vec::new(), None)
        };
        let mut out = json!({"server": server, kind.key(): items});
        if let Some(next) = next_cursor {
            out["nextCursor"] = Value::String(next);
        }
        Ok(out)
    }

    async fn list_page(
        &self,
        server: &str,
        entry: &Server,
        cursor: Option<String>,
        kind: ListKind,
    ) -> Result<(Vec<Value>, Option<String>), McpError> {
        let params = Some(PaginatedRequestParams::default().with_cursor(cursor));
        let peer = &entry.connection.peer;
        let limit = entry.config.tool_timeout;
        let page = async {
            match kind {
                ListKind::Resources => peer
                    .list_resources(params)
                    .await
                    .map(|r| serde_json::to_value(&r).unwrap_or(Value::Null)),
                ListKind::Templates => peer
                    .list_resource_templates(params)
                    .await
                    .map(|r| serde_json::to_value(&r).unwrap_or(Value::Null)),
            }
        };
        let page = match tokio::time::timeout(limit, page).await {
            Ok(Ok(page)) => page,
            Ok(Err(err)) => return Err(service_error(server, kind.method(), err)),
            Err(_) => {
                return Err(McpError::ToolTimeout {
                    server: server.to_owned(),
                    tool: kind.tool().to_owned(),
                    limit,
                });
            }
        };
        let items = page
            .get(kind.key())
            .and_then(Value::as_array)
            .map(|items| items.iter().map(|item| with_server(item, server)).collect())
            .unwrap_or_default();
        let next = page
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok((items, next))
    }

    async fn list_all(&self, kind: ListKind) -> Value {
        let listings = self
            .servers
            .iter()
            .filter(|(_, entry)| entry.connection.has_resources)
            .map(|(name, entry)| async move {
                let mut items = Vec::new();
                let mut cursor = None;
                // Bounded, in case a server keeps handing out cursors.
                for _ in 0..100 {
                    let (page, next) = self.list_page(name, entry, cursor, kind).await?;
                    items.extend(page);
                    match next {
                        Some(next) => cursor = Some(next),
                        None => break,
                    }
                }
                Ok::<_, McpError>(items)
            });
        let names: Vec<&String> = self
            .servers
            .iter()
            .filter(|(_, entry)| entry.connection.has_resources)
            .map(|(name, _)| name)
            .collect();
        let results = futures::future::join_all(listings).await;
        let mut items = Vec::new();
        let mut errors = Vec::new();
        for (name, result) in names.into_iter().zip(results) {
            match result {
                Ok(list) => items.extend(list),
                Err(err) => errors.push(json!({"server": name, "error": err.to_string()})),
            }
        }
        let mut out = json!({ kind.key(): items });
        if !errors.is_empty() {
            out["errors"] = Value::Array(errors);
        }
        out
    }

    /// Stops every server (stdio children are killed if they do not exit promptly).
    pub async fn shutdown(&self) {
        client::shutdown_all(self.servers.values().map(|s| &s.connection)).await;
    }
}

#[derive(Debug, Clone, Copy)]
enum ListKind {
    Resources,
    Templates,
}

impl ListKind {
    fn key(self) -> &'static str {
        match self {
            ListKind::Resources => "resources",
            ListKind::Templates => "resourceTemplates",
        }
    }

    fn method(self) -> &'static str {
        match self {
            ListKind::Resources => "resources/list",
            ListKind::Templates => "resources/templates/list",
        }
    }

    fn tool(self) -> &'static str {
        match self {
            ListKind::Resources => crate::resources::LIST_MCP_RESOURCES,
            ListKind::Templates => crate::resources::LIST_MCP_RESOURCE_TEMPLATES,
        }
    }
}

/// `{"server": server, ...item}`.
fn with_server(item: &Value, server: &str) -> Value {
    let mut map = Map::new();
    map.insert("server".to_owned(), Value::String(server.to_owned()));
    if let Some(fields) = item.as_object() {
        for (key, value) in fields {
            map.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    Value::Object(map)
}

fn function_spec(name: &str, description: &str, parameters: &Value) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "strict": false,
        "parameters": parameters,
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn service_error(server: &str, method: &'static str, err: ServiceError) -> McpError {
    match err {
        ServiceError::McpError(data) => McpError::Server {
            server: server.to_owned(),
            method,
            message: format!("{} (code {})", data.message, data.code.0),
        },
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => McpError::Disconnected {
            server: server.to_owned(),
            method,
            message: error_chain(&err),
        },
        other => McpError::Server {
            server: server.to_owned(),
            method,
            message: error_chain(&other),
        },
    }
}
