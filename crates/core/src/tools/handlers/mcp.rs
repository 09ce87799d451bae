//! MCP tools: calls to tools of configured MCP servers, and the resource tools.
//!
//! Every MCP tool is one handler registered under the `mcp__` prefix: the qualified name
//! (`mcp__<server>__<tool>`, or a Responses-API namespace `mcp__<server>` plus the tool name)
//! is resolved by the connection manager. A call goes through the orchestrator's approval
//! engine when the tool's approval mode says `prompt` (`default_tools_approval_mode`,
//! `tools.<tool>.approval_mode`, or the older `require_approval`), or when the mode is
//! `auto` and the approval policy is `untrusted` (an MCP tool's effects are unknown); "approve
//! for this session" covers later calls to the same tool. It shows as an `mcp_tool_call` item, and returns the server's text and images to
//! the model; an `isError` result is a failed output.

use crate::tools::approval::ApprovalSubject;
use crate::tools::call::{ToolCall, ToolError, ToolOutput, ToolPayload};
use crate::tools::context::{CommandServices, ToolInvocation};
use crate::tools::registry::ToolHandler;
use async_trait::async_trait;
use osprey_mcp::{McpConnectionManager, ModelOutput, ResourceToolCall, resource_output_for_model};
use osprey_protocol::{AskForApproval, EventMsg, ItemStatus, McpCallResult, ThreadItem};
use osprey_tools::{JsonSchema, ToolSpec};
use serde_json::Value;
use std::sync::Arc;

/// The prefix of every MCP tool name.
pub const MCP_PREFIX: &str = "mcp__";

pub struct McpToolHandler {
    pub manager: Arc<McpConnectionManager>,
    pub commands: Arc<CommandServices>,
}

fn arguments_of(call: &ToolCall) -> Result<Option<Value>, ToolError> {
    match &call.payload {
        ToolPayload::Function { arguments } if arguments.trim().is_empty() => Ok(None),
        ToolPayload::Function { arguments } => serde_json::from_str::<Value>(arguments)
            .map(|v| if v.is_null() { None } else { Some(v) })
            .map_err(|e| {
                ToolError::RespondToModel(format!(
                    "failed to parse function arguments: {e}; send one JSON object"
                ))
            }),
        _ => Err(ToolError::RespondToModel(format!(
            "{} takes JSON arguments",
            call.tool_name
        ))),
    }
}

/// What one attached image counts against the output budget, in tokens.
const IMAGE_TOKENS: usize = 1_000;

/// An MCP result as the model gets it: text (structured content included) fitted into the
/// same token budget as command output, head and tail kept around a "tokens truncated"
/// marker; images are kept, each counted as [`IMAGE_TOKENS`].
fn model_output(output: ModelOutput) -> ToolOutput {
    let images_cost = output.images.len().saturating_mul(IMAGE_TOKENS);
    let budget = osprey_tools::DEFAULT_MAX_OUTPUT_TOKENS.saturating_sub(images_cost);
    ToolOutput {
        text: osprey_tools::truncate_middle(&output.text, budget).text,
        images: output.images,
        success: !output.is_error,
    }
}

#[async_trait]
impl ToolHandler for McpToolHandler {
    fn spec(&self) -> ToolSpec {
        // Never offered through this spec: the MCP specs come from the manager.
        ToolSpec::Function {
            name: MCP_PREFIX.to_string(),
            description: String::new(),
            strict: false,
            parameters: JsonSchema(serde_json::json!({"type": "object"})),
        }
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let name = &inv.call.tool_name;
        let Some((server, tool)) = self.manager.resolve(name) else {
            return Err(ToolError::RespondToModel(format!(
                "unsupported call: {name}"
            )));
        };
        let arguments = arguments_of(&inv.call)?;
        let shown_arguments = arguments
            .clone()
            .unwrap_or(Value::Object(Default::default()));
        let item_id = inv.events.call_item_id(&inv.call.call_id);
        let item = |status, result: Option<McpCallResult>, error: Option<String>| {
            ThreadItem::McpToolCall {
                id: item_id.clone(),
                server: server.clone(),
                tool: tool.clone(),
                arguments: shown_arguments.clone(),
                result,
                error,
                status,
            }
        };

        let configured = self.manager.requires_approval(&server, &tool);
        let untrusted = inv.turn.approval_policy == AskForApproval::Untrusted;
        let reason = match configured {
            Some(true) => Some(format!(
                "the MCP tool {server}/{tool} is configured to ask before every call"
            )),
            None if untrusted => Some(
                "the approval policy is `untrusted`, and an MCP tool may change anything"
                    .to_string(),
            ),
            Some(false) | None => None,
        };
        if let Some(reason) = reason {
            let subject = ApprovalSubject::McpTool {
                server: server.clone(),
                tool: tool.clone(),
                arguments: shown_arguments.clone(),
            };
            let orchestrator = &self.commands.orchestrator;
            if let Err(error) = orchestrator
                .approve(inv.scope(), &subject, reason, None)
                .await
            {
                let message = match &error {
                    ToolError::RespondToModel(message) => Some(message.clone()),
                    ToolError::Fatal(_) => None,
                };
                inv.emit(EventMsg::ItemCompleted {
                    item: item(ItemStatus::Declined, None, message),
                });
                return Err(error);
            }
        }

        inv.emit(EventMsg::ItemStarted {
            item: item(ItemStatus::InProgress, None, None),
        });
        match self
            .manager
            .call_tool(&server, &tool, arguments, None)
            .await
        {
            Ok(result) => {
                let status = if result.is_error {
                    ItemStatus::Failed
                } else {
                    ItemStatus::Completed
                };
                inv.emit(EventMsg::ItemCompleted {
                    item: item(
                        status,
                        Some(McpCallResult {
                            content: result.content.clone(),
                            structured_content: result.structured_content.clone(),
                        }),
                        None,
                    ),
                });
                Ok(model_output(result.to_model_output()))
            }
            Err(e) => {
                let message = e.to_string();
                inv.emit(EventMsg::ItemCompleted {
                    item: item(ItemStatus::Failed, None, Some(message.clone())),
                });
                Err(ToolError::RespondToModel(message))
            }
        }
    }
}

/// `list_mcp_resources`, `list_mcp_resource_templates`, `read_mcp_resource`.
pub struct McpResourceHandler {
    pub manager: Arc<McpConnectionManager>,
    pub name: &'static str,
    pub spec: Value,
}

#[async_trait]
impl ToolHandler for McpResourceHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: self.name.to_string(),
            description: self.spec["description"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            strict: false,
            parameters: JsonSchema(self.spec["parameters"].clone()),
        }
    }

    fn is_mutating(&self, _call: &ToolCall) -> bool {
        false
    }

    async fn handle(&self, inv: ToolInvocation) -> Result<ToolOutput, ToolError> {
        let raw = match &inv.call.payload {
            ToolPayload::Function { arguments } => arguments.as_str(),
            _ => "",
        };
        let call = ResourceToolCall::parse(self.name, raw)
            .map_err(|e| ToolError::RespondToModel(e.to_string()))?
            .ok_or_else(|| ToolError::RespondToModel(format!("unsupported call: {}", self.name)))?;
        let value = self
            .manager
            .run_resource_tool(call)
            .await
            .map_err(|e| ToolError::RespondToModel(e.to_string()))?;
        Ok(model_output(resource_output_for_model(&value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_cut_in_the_middle_and_images_count() {
        let long = format!("HEAD{}TAIL", "x".repeat(200_000));
        let output = model_output(ModelOutput {
            text: long.clone(),
            images: Vec::new(),
            is_error: false,
        });
        assert!(output.text.len() < long.len());
        assert!(output.text.contains("HEAD") && output.text.contains("TAIL"));
        assert!(
            output.text.contains("tokens truncated"),
            "{}",
            &output.text[..200]
        );
        let with_images = model_output(ModelOutput {
            text: long,
            images: vec!["data:image/png;base64,AAAA".to_string(); 3],
            is_error: false,
        });
        assert_eq!(with_images.images.len(), 3, "images are kept");
        assert!(with_images.text.len() < output.text.len(), "and counted");
        let short = model_output(ModelOutput {
            text: "small".to_string(),
            images: Vec::new(),
            is_error: true,
        });
        assert_eq!(short.text, "small");
        assert!(!short.success);
    }
}
