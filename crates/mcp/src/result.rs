//! What a tool call returned, and what the model is shown.
//!
//! [`McpToolResult`] keeps the server's answer as it came (raw content blocks, for events and
//! the rollout). [`McpToolResult::to_model_output`] turns it into a [`ModelOutput`]: text for the
//! function-call output plus images the model can look at.
//!
//! * `text` blocks are text.
//! * `image` blocks become `data:<mime>;base64,<data>` URLs in `images`, so the caller can
//!   attach them as input images rather than pasting base64 into the text.
//! * Embedded `resource` blocks become their text (or an image, when they hold one), headed by
//!   their URI; binary resources are described rather than dumped.
//! * `resource_link` blocks become one line naming the URI, so the model can read it with
//!   `read_mcp_resource`.
//! * `audio` and unknown blocks are described in a line.
//! * `structuredContent` is appended as JSON when the result has no text of its own, so the
//!   data is never lost; a server that sends both (as the spec recommends) is not doubled.
//! * `isError` is carried in [`ModelOutput::is_error`]: the caller records a failed output the
//!   model can react to.

use serde_json::{Value, json};

/// A `tools/call` result as received.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolResult {
    /// The raw MCP content blocks (`{"type":"text",…}`, `{"type":"image",…}`, …).
    pub content: Vec<Value>,
    /// The server's `isError` flag.
    pub is_error: bool,
    /// The server's `structuredContent`, if any.
    pub structured_content: Option<Value>,
}

/// The model-facing form of a tool result.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelOutput {
    /// Everything textual, blocks separated by newlines.
    pub text: String,
    /// Images as `data:<mime>;base64,<data>` URLs, in the order they appeared.
    pub images: Vec<String>,
    /// The server flagged the call as failed; record a failed output.
    pub is_error: bool,
}

impl ModelOutput {
    /// The output as Responses-API content items — `input_text` for the text, then one
    /// `input_image` per image — the array form of a `function_call_output`'s `output`.
    pub fn to_content_items(&self) -> Vec<Value> {
        let mut items = Vec::with_capacity(1 + self.images.len());
        if !self.text.is_empty() || self.images.is_empty() {
            items.push(json!({"type": "input_text", "text": self.text}));
        }
        for url in &self.images {
            items.push(json!({"type": "input_image", "image_url": url}));
        }
        items
    }
}

impl McpToolResult {
    /// Reads a `CallToolResult` in its JSON form (`content`, `isError`, `structuredContent`).
    pub fn from_json(value: &Value) -> Self {
        let content = value
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let is_error = value
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let structured_content = value
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .cloned();
        Self {
            content,
            is_error,
            structured_content,
        }
    }

    /// Converts the result for the model (see the module documentation).
    pub fn to_model_output(&self) -> ModelOutput {
        let mut parts: Vec<String> = Vec::new();
        let mut images = Vec::new();
        let mut has_text = false;
        for block in &self.content {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    has_text = true;
                    parts.push(str_field(block, "text").to_owned());
                }
                Some("image") => match image_url(block, "data") {
                    Some(url) => images.push(url),
                    None => parts.push("[image without data]".to_owned()),
                },
                Some("audio") => parts.push(format!(
                    "[audio: {}, {} bytes, not shown]",
                    mime_or_unknown(block),
                    base64_len(str_field(block, "data"))
                )),
                Some("resource") => {
                    let resource = block.get("resource").unwrap_or(&Value::Null);
                    if let Some(text) = embedded_resource(resource, &mut images) {
                        has_text = true;
                        parts.push(text);
                    }
                }
                Some("resource_link") => {
                    has_text = true;
                    parts.push(resource_link(block));
                }
                _ => parts.push(format!("[unsupported content: {block}]")),
            }
        }
        if !has_text && let Some(structured) = &self.structured_content {
            parts.push(structured.to_string());
        }
        ModelOutput {
            text: parts.join("\n"),
            images,
            is_error: self.is_error,
        }
    }
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn mime_or_unknown(value: &Value) -> &str {
    match str_field(value, "mimeType") {
        "" => "unknown type",
        mime => mime,
    }
}

/// Decoded size of a base64 string, without decoding it.
fn base64_len(data: &str) -> usize {
    let trimmed = data.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

/// `data:` URL for the base64 payload in `block[key]`, or `None` when there is none.
fn image_url(block: &Value, key: &str) -> Option<String> {
    let data = str_field(block, key).trim();
    if data.is_empty() {
        return None;
    }
    if data.starts_with("data:") {
        return Some(data.to_owned());
    }
    let mime = match str_field(block, "mimeType") {
        "" => sniff_image_mime(data),
        mime => mime,
    };
    Some(format!("data:{mime};base64,{data}"))
}

/// Guesses an image type from the first base64 characters of its bytes.
fn sniff_image_mime(data: &str) -> &'static str {
    if data.starts_with("iVBORw0KGgo") {
        "image/png"
    } else if data.starts_with("/9j/") {
        "image/jpeg"
    } else if data.starts_with("R0lGOD") {
        "image/gif"
    } else if data.starts_with("UklGR") {
        "image/webp"
    } else {
        "application/octet-stream"
    }
}

/// Text for an embedded resource; an image blob goes to `images` instead.
fn embedded_resource(resource: &Value, images: &mut Vec<String>) -> Option<String> {
    let uri = str_field(resource, "uri");
    if let Some(text) = resource.get("text").and_then(Value::as_str) {
        return Some(format!("Resource {uri}:\n{text}"));
    }
    let mime = str_field(resource, "mimeType");
    if mime.starts_with("image/")
        && let Some(url) = image_url(resource, "blob")
    {
        images.push(url);
        return Some(format!("Resource {uri}: image ({mime}), attached"));
    }
    Some(format!(
        "Resource {uri}: binary content ({}, {} bytes, not shown)",
        mime_or_unknown(resource),
        base64_len(str_field(resource, "blob"))
    ))
}

fn resource_link(block: &Value) -> String {
    let mut line = format!("Resource link: {}", str_field(block, "uri"));
    let name = str_field(block, "name");
    if !name.is_empty() {
        line.push_str(&format!(" ({name})"));
    }
    let mime = str_field(block, "mimeType");
    if !mime.is_empty() {
        line.push_str(&format!(" [{mime}]"));
    }
    let description = str_field(block, "description");
    if !description.is_empty() {
        line.push_str(&format!(" — {description}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

    #[test]
    fn text_and_images_are_separated() {
        let result = McpToolResult::from_json(&json!({
            "content": [
                {"type": "text", "text": "Here it is:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "image", "data": "/9j/4AAQ"},
                {"type": "text", "text": "done"}
            ]
        }));
        assert_eq!(
            result.to_model_output(),
            ModelOutput {
                text: "Here it is:\ndone".into(),
                images: vec![
                    format!("data:image/png;base64,{PNG}"),
                    "data:image/jpeg;base64,/9j/4AAQ".into()
                ],
                is_error: false,
            }
        );
    }

    #[test]
    fn resources_and_links_name_their_uri() {
        let result = McpToolResult::from_json(&json!({
            "content": [
                {"type": "resource", "resource": {"uri": "demo://a", "mimeType": "text/plain", "text": "alpha"}},
                {"type": "resource", "resource": {"uri": "demo://b", "mimeType": "application/octet-stream", "blob": "AAAA"}},
                {"type": "resource", "resource": {"uri": "demo://c.png", "mimeType": "image/png", "blob": PNG}},
                {"type": "resource_link", "uri": "demo://d", "name": "D", "mimeType": "text/plain", "description": "fourth"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "mystery"}
            ]
        }));
        let output = result.to_model_output();
        assert_eq!(
            output.text,
            "Resource demo://a:\nalpha\n\
             Resource demo://b: binary content (application/octet-stream, 3 bytes, not shown)\n\
             Resource demo://c.png: image (image/png), attached\n\
             Resource link: demo://d (D) [text/plain] — fourth\n\
             [audio: audio/wav, 3 bytes, not shown]\n\
             [unsupported content: {\"type\":\"mystery\"}]"
        );
        assert_eq!(output.images, vec![format!("data:image/png;base64,{PNG}")]);
    }

    #[test]
    fn structured_content_fills_in_when_there_is_no_text() {
        let only_structured = McpToolResult::from_json(&json!({
            "content": [],
            "structuredContent": {"temperature": 21}
        }));
        assert_eq!(
            only_structured.to_model_output().text,
            "{\"temperature\":21}"
        );
        let both = McpToolResult::from_json(&json!({
            "content": [{"type": "text", "text": "21 degrees"}],
            "structuredContent": {"temperature": 21}
        }));
        assert_eq!(both.to_model_output().text, "21 degrees");
        assert_eq!(both.structured_content, Some(json!({"temperature": 21})));
    }

    #[test]
    fn errors_are_flagged() {
        let result = McpToolResult::from_json(&json!({
            "content": [{"type": "text", "text": "bad input"}],
            "isError": true
        }));
        let output = result.to_model_output();
        assert!(output.is_error);
        assert_eq!(output.text, "bad input");
    }

    #[test]
    fn content_items_follow_the_responses_shape() {
        let output = ModelOutput {
            text: "hi".into(),
            images: vec!["data:image/png;base64,AA".into()],
            is_error: false,
        };
        assert_eq!(
            output.to_content_items(),
            vec![
                json!({"type": "input_text", "text": "hi"}),
                json!({"type": "input_image", "image_url": "data:image/png;base64,AA"})
            ]
        );
        assert_eq!(
            ModelOutput::default().to_content_items(),
            vec![json!({"type": "input_text", "text": ""})]
        );
    }
}
