//! Binds tool names to handlers and dispatches calls with uniform error handling.
//!
//! Adding a tool is one spec (in `osprey-tools`), one handler (a file in `handlers/`), one
//! line in the handler table (`super::handler_for`) and its entry in a tool profile; see
//! `docs/architecture.md`.

use super::call::{ToolCall, ToolError, ToolOutput};
use super::context::ToolInvocation;
use async_trait::async_trait;
use osprey_tools::ToolSpec;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One tool's behaviour.
#[async_trait]
pub trait ToolHandler: Send + Sync {
    /// What the model is told about the tool.
    fn spec(&self) -> ToolSpec;

    /// Whether this call may change anything. Calls that cannot run concurrently with each
    /// other; read-only calls run side by side.
    fn is_mutating(&self, _call: &ToolCall) -> bool {
        true
    }

    async fn handle(&self, invocation: ToolInvocation) -> Result<ToolOutput, ToolError>;
}

/// Every tool offered in this thread, in the order they are offered.
#[derive(Default, Clone)]
pub struct ToolRegistry {
    handlers: BTreeMap<String, Arc<dyn ToolHandler>>,
    order: Vec<String>,
    /// Handlers for call names that are accepted but not offered.
    hidden: BTreeMap<String, Arc<dyn ToolHandler>>,
    /// Handlers for every name with a prefix (MCP tools), whose specs are given raw.
    prefixed: Vec<(String, Arc<dyn ToolHandler>)>,
    /// Tool specs in wire form that no single handler's `spec` describes (MCP tools).
    raw_specs: Vec<serde_json::Value>,
}

impl ToolRegistry {
    pub fn register(&mut self, handler: Arc<dyn ToolHandler>) {
        let name = handler.spec().name().to_string();
        if self.handlers.insert(name.clone(), handler).is_none() {
            self.order.push(name);
        }
    }

    /// Handles calls named `name` without offering the tool to the model.
    pub fn register_hidden(&mut self, name: &str, handler: Arc<dyn ToolHandler>) {
        self.hidden.insert(name.to_string(), handler);
    }

    /// Handles every call whose name starts with `prefix`; the model is offered `specs`.
    pub fn register_prefixed(
        &mut self,
        prefix: &str,
        handler: Arc<dyn ToolHandler>,
        specs: Vec<serde_json::Value>,
    ) {
        self.prefixed.push((prefix.to_string(), handler));
        self.raw_specs.extend(specs);
    }

    /// Every tool spec in Responses-API form, in the order offered.
    pub fn specs_json(&self) -> Vec<serde_json::Value> {
        self.specs()
            .iter()
            .map(ToolSpec::to_responses_json)
            .chain(self.raw_specs.iter().cloned())
            .collect()
    }

    pub fn handler(&self, name: &str) -> Option<&Arc<dyn ToolHandler>> {
        self.handlers
            .get(name)
            .or_else(|| self.hidden.get(name))
            .or_else(|| {
                self.prefixed
                    .iter()
                    .find(|(prefix, _)| name.starts_with(prefix.as_str()))
                    .map(|(_, handler)| handler)
            })
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.order
            .iter()
            .filter_map(|name| self.handlers.get(name))
            .map(|h| h.spec())
            .collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.order.clone()
    }

    pub fn is_mutating(&self, call: &ToolCall) -> bool {
        self.handler(&call.tool_name)
            .is_none_or(|handler| handler.is_mutating(call))
    }

    /// Runs one call. Unknown tools and handler errors the model can act on come back as
    /// failed outputs; only fatal errors are returned as `Err`.
    pub async fn dispatch(&self, invocation: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let name = invocation.call.tool_name.clone();
        let Some(handler) = self.handler(&name).cloned() else {
            return Ok(ToolOutput::failure(format!("unsupported call: {name}")));
        };
        match handler.handle(invocation).await {
            Ok(output) => Ok(output),
            Err(ToolError::RespondToModel(message)) => Ok(ToolOutput::failure(message)),
            Err(fatal @ ToolError::Fatal(_)) => Err(fatal),
        }
    }
}
