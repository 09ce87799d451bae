//! The three resource tools the model gets when MCP servers are configured:
//! `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`.
//!
//! Their specs are [`resource_tool_specs`]; [`ResourceToolCall::parse`] reads the arguments a
//! model wrote (tolerating `null`, missing and empty optional fields, since models send all
//! three), and [`McpConnectionManager::run_resource_tool`] performs the call. Results are JSON
//! values; [`resource_output_for_model`] turns one into text and images, so a read image is
//! shown to the model rather than pasted as base64.

use serde_json::{Value, json};

use crate::error::McpError;
use crate::manager::McpConnectionManager;
use crate::result::{McpToolResult, ModelOutput};

pub const LIST_MCP_RESOURCES: &str = "list_mcp_resources";
pub const LIST_MCP_RESOURCE_TEMPLATES: &str = "list_mcp_resource_templates";
pub const READ_MCP_RESOURCE: &str = "read_mcp_resource";

/// Whether `name` is one of the three resource tools.
pub fn is_resource_tool(name: &str) -> bool {
    [
        LIST_MCP_RESOURCES,
        LIST_MCP_RESOURCE_TEMPLATES,
        READ_MCP_RESOURCE,
    ]
    .contains(&name)
}

/// Function-tool specs (Responses shape) for the three resource tools.
pub fn resource_tool_specs() -> Vec<Value> {
    let listing = |name: &str, description: &str, what: &str| {
        json!({
            "type": "function",
            "name": name,
            "description": description,
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "server": {
                        "type": "string",
                        "description": format!("Name of the MCP server to ask. Leave it out to list the {what} of every server.")
                    },
                    "cursor": {
                        "type": "string",
                        "description": "The nextCursor value from an earlier call for the same server, to fetch the following page."
                    }
                },
                "additionalProperties": false
            }
        })
    };
    vec![
        listing(
            LIST_MCP_RESOURCES,
            "List the resources (documents, files, records and other context) that the \
             connected MCP servers make available. Each entry names its server and URI; read \
             one with read_mcp_resource.",
            "resources",
        ),
        listing(
            LIST_MCP_RESOURCE_TEMPLATES,
            "List the URI templates of parameterised resources the connected MCP servers can \
             produce. Fill a template's variables to get a URI for read_mcp_resource.",
            "resource templates",
        ),
        json!({
            "type": "function",
            "name": READ_MCP_RESOURCE,
            "description": "Read one resource from an MCP server by its URI.",
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "server": {
                        "type": "string",
                        "description": "The server that offers the resource, as given in the `server` field of a listing."
                    },
                    "uri": {
                        "type": "string",
                        "description": "The resource URI, from a listing or a filled-in template."
                    }
                },
                "required": ["server", "uri"],
                "additionalProperties": false
            }
        }),
    ]
}

/// A parsed call to one of the resource tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceToolCall {
    ListResources {
        server: Option<String>,
        cursor: Option<String>,
    },
    ListResourceTemplates {
        server: Option<String>,
        cursor: Option<String>,
    },
    ReadResource {
        server: String,
        uri: String,
    },
}

impl ResourceToolCall {
    /// Parses the JSON `arguments` string of a call to `tool_name`. Returns `Ok(None)` when
    /// `tool_name` is not a resource tool. Empty arguments, `null`, and `null`, missing or
    /// blank optional fields are all accepted.
    pub fn parse(tool_name: &str, arguments: &str) -> Result<Option<Self>, McpError> {
        if !is_resource_tool(tool_name) {
            return Ok(None);
        }
        let bad = |message: String| McpError::BadToolArguments {
            tool: tool_name.to_owned(),
            message,
        };
        let value: Value = if arguments.trim().is_empty() {
            Value::Null
        } else {
            serde_json::from_str(arguments)
                .map_err(|err| bad(format!("arguments are not valid JSON: {err}")))?
        };
        let fields = match &value {
            Value::Null => serde_json::Map::new(),
            Value::Object(map) => map.clone(),
            _ => return Err(bad("arguments must be a JSON object".to_owned())),
        };
        let optional = |key: &str| -> Result<Option<String>, McpError> {
            match fields.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.trim().to_owned())),
                Some(_) => Err(bad(format!("`{key}` must be a string"))),
            }
        };
        let required = |key: &str| -> Result<String, McpError> {
            optional(key)?.ok_or_else(|| bad(format!("`{key}` is required")))
        };
        Ok(Some(match tool_name {
            LIST_MCP_RESOURCES => Self::ListResources {
                server: optional("server")?,
                cursor: optional("cursor")?,
            },
            LIST_MCP_RESOURCE_TEMPLATES => Self::ListResourceTemplates {
                server: optional("server")?,
                cursor: optional("cursor")?,
            },
            _ => Self::ReadResource {
                server: required("server")?,
                uri: required("uri")?,
            },
        }))
    }
}

impl McpConnectionManager {
    /// Performs a parsed resource-tool call.
    pub async fn run_resource_tool(&self, call: ResourceToolCall) -> Result<Value, McpError> {
        match call {
            ResourceToolCall::ListResources { server, cursor } => {
                self.list_resources(server.as_deref(), cursor).await
            }
            ResourceToolCall::ListResourceTemplates { server, cursor } => {
                self.list_resource_templates(server.as_deref(), cursor)
                    .await
            }
            ResourceToolCall::ReadResource { server, uri } => {
                self.read_resource(&server, &uri).await
            }
        }
    }
}

/// What the model sees for a resource-tool result: listings as compact JSON; a read's
/// contents as text (headed by their URI) and images.
pub fn resource_output_for_model(value: &Value) -> ModelOutput {
    let Some(contents) = value.get("contents").and_then(Value::as_array) else {
        return ModelOutput {
            text: value.to_string(),
            images: Vec::new(),
            is_error: false,
        };
    };
    let blocks = contents
        .iter()
        .map(|resource| json!({"type": "resource", "resource": resource}))
        .collect();
    let mut output = McpToolResult {
        content: blocks,
        is_error: false,
        structured_content: None,
    }
    .to_model_output();
    if contents.is_empty() {
        output.text = format!(
            "Resource {} has no contents.",
            value.get("uri").and_then(Value::as_str).unwrap_or_default()
        );
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(tool: &str, args: &str) -> Result<Option<ResourceToolCall>, McpError> {
        ResourceToolCall::parse(tool, args)
    }

    #[test]
    fn null_missing_and_blank_optionals_are_accepted() {
        let none = ResourceToolCall::ListResources {
            server: None,
            cursor: None,
        };
        for args in [
            "",
            "null",
            "{}",
            r#"{"server": null, "cursor": null}"#,
            r#"{"server": "", "cursor": " "}"#,
        ] {
            assert_eq!(parse(LIST_MCP_RESOURCES, args).unwrap(), Some(none.clone()));
        }
        assert_eq!(
            parse(
                LIST_MCP_RESOURCE_TEMPLATES,
                r#"{"server":"docs","cursor":null}"#
            )
            .unwrap(),
            Some(ResourceToolCall::ListResourceTemplates {
                server: Some("docs".into()),
                cursor: None
            })
        );
    }

    #[test]
    fn read_requires_server_and_uri() {
        assert_eq!(
            parse(READ_MCP_RESOURCE, r#"{"server":"s","uri":"demo://x"}"#).unwrap(),
            Some(ResourceToolCall::ReadResource {
                server: "s".into(),
                uri: "demo://x".into()
            })
        );
        let err = parse(READ_MCP_RESOURCE, r#"{"server":"s","uri":null}"#).unwrap_err();
        assert_eq!(err.to_string(), "read_mcp_resource: `uri` is required");
        let err = parse(LIST_MCP_RESOURCES, r#"{"server": 3}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "list_mcp_resources: `server` must be a string"
        );
        assert!(parse(LIST_MCP_RESOURCES, "[1]").is_err());
        assert!(parse(LIST_MCP_RESOURCES, "{oops").is_err());
        assert_eq!(parse("echo", "{}").unwrap(), None);
    }

    #[test]
    fn specs_name_the_three_tools() {
        let names: Vec<String> = resource_tool_specs()
            .iter()
            .map(|spec| spec["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            names,
            vec![
                LIST_MCP_RESOURCES,
                LIST_MCP_RESOURCE_TEMPLATES,
                READ_MCP_RESOURCE
            ]
        );
        for spec in resource_tool_specs() {
            assert_eq!(spec["type"], "function");
            assert_eq!(spec["strict"], false);
            assert_eq!(spec["parameters"]["type"], "object");
        }
    }

    #[test]
    fn read_results_become_text_and_images() {
        let output = resource_output_for_model(&json!({
            "server": "s",
            "uri": "demo://a",
            "contents": [
                {"uri": "demo://a", "mimeType": "text/plain", "text": "hello"},
                {"uri": "demo://a.png", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
            ]
        }));
        assert_eq!(
            output.text,
            "Resource demo://a:\nhello\nResource demo://a.png: image (image/png), attached"
        );
        assert_eq!(output.images, vec!["data:image/png;base64,iVBORw0KGgo="]);
        let listing = resource_output_for_model(&json!({"resources": []}));
        assert_eq!(listing.text, r#"{"resources":[]}"#);
    }
}
