//! The Chat Completions adapter: request mapping and stream assembly.

use osprey_config::WireApi;
use osprey_model::ResponseEvent;
use osprey_protocol::{FunctionCallOutputPayload, ResponseItem, TokenUsage};
use osprey_test_support::{MockModelServer, MockResponse, chat_text_chunks, chat_tool_call_chunks};
use pretty_assertions::assert_eq;
use serde_json::{Map, json};

use super::common::{client, done_items, prompt, provider, run};

#[tokio::test]
async fn chat_text_stream_becomes_one_message_with_usage() {
    let text = "Hello from a chat-only server.";
    let server = MockModelServer::start(vec![MockResponse::ChatSse(chat_text_chunks(text))]).await;
    let client = client(provider(&server.base_url(), WireApi::Chat));
    let mut prompt = prompt(vec![
        ResponseItem::developer_text("You are terse."),
        ResponseItem::user_text("hi"),
    ]);
    prompt.reasoning_effort = Some(osprey_protocol::ReasoningEffort::Low);
    let (events, error) = run(&client, &prompt).await;
    assert!(error.is_none(), "{error:?}");

    assert_eq!(events[0], ResponseEvent::Created);
    assert!(
        matches!(&events[1], ResponseEvent::OutputItemAdded(item) if item.role() == Some("assistant"))
    );
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::OutputTextDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, text);
    assert_eq!(
        done_items(&events),
        vec![ResponseItem::assistant_text(text)]
    );
    assert_eq!(
        events.last(),
        Some(&ResponseEvent::Completed {
            response_id: Some("chatcmpl-mock".into()),
            usage: Some(TokenUsage {
                input_tokens: 10,
                output_tokens: 8,
                total_tokens: 18,
                ..TokenUsage::default()
            }),
        })
    );

    let request = server.single_request();
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(
        request.body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "hi"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
    server.verify();
}

#[tokio::test]
async fn parallel_tool_calls_split_across_chunks_are_assembled() {
    let first_args = r#"{"cmd":"echo one two three"}"#;
    let second_args = r#"{"path":"/tmp/some/image.png"}"#;
    let server = MockModelServer::start(vec![MockResponse::ChatSse(chat_tool_call_chunks(&[
        ("call_a", "exec_command", first_args),
        ("call_b", "view_image", second_args),
    ]))])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Chat));
    let mut prompt = prompt(vec![ResponseItem::user_text("do two things")]);
    prompt.tools = vec![
        json!({"type": "function", "name": "exec_command", "description": "run", "strict": false,
               "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}),
        json!({"type": "function", "name": "view_image", "description": "see",
               "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}),
    ];
    let (events, error) = run(&client, &prompt).await;
    assert!(error.is_none(), "{error:?}");
    let call = |call_id: &str, name: &str, arguments: &str| ResponseItem::FunctionCall {
        id: None,
        name: name.into(),
        arguments: arguments.into(),
        call_id: call_id.into(),
        extra: Map::new(),
    };
    assert_eq!(
        done_items(&events),
        vec![
            call("call_a", "exec_command", first_args),
            call("call_b", "view_image", second_args)
        ]
    );
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::ToolCallInputDelta { item_id, delta }
                if item_id.as_deref() == Some("call_a") =>
            {
                Some(delta.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(streamed, first_args);

    let request = server.single_request();
    assert_eq!(
        request.body["tools"][0],
        json!({"type": "function", "function": {"name": "exec_command", "description": "run",
               "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}})
    );
    assert_eq!(request.body["tool_choice"], "auto");
    assert_eq!(request.body["parallel_tool_calls"], true);
    server.verify();
}

#[tokio::test]
async fn history_maps_calls_and_outputs_to_assistant_tool_calls_and_tool_messages() {
    let server =
        MockModelServer::start(vec![MockResponse::ChatSse(chat_text_chunks("done"))]).await;
    let client = client(provider(&server.base_url(), WireApi::Chat));
    let call = |call_id: &str, cmd: &str| ResponseItem::FunctionCall {
        id: Some(format!("fc_{call_id}")),
        name: "exec_command".into(),
        arguments: json!({ "cmd": cmd }).to_string(),
        call_id: call_id.into(),
        extra: Map::from_iter([("status".to_owned(), json!("completed"))]),
    };
    let output = |call_id: &str, text: &str| ResponseItem::FunctionCallOutput {
        call_id: call_id.into(),
        output: FunctionCallOutputPayload::Text(text.into()),
    };
    let history = vec![
        ResponseItem::user_text("run two"),
        serde_json::from_value(json!({"type": "reasoning", "id": "rs_1", "summary": [],
            "encrypted_content": "opaque"}))
        .unwrap(),
        call("c1", "ls"),
        call("c2", "pwd"),
        output("c1", "a.txt"),
        output("c2", "/work"),
    ];
    let (_, error) = run(&client, &prompt(history)).await;
    assert!(error.is_none(), "{error:?}");
    let request = server.single_request();
    assert_eq!(
        request.messages(),
        &[
            json!({"role": "user", "content": "run two"}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "exec_command", "arguments": "{\"cmd\":\"pwd\"}"}},
            ]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "a.txt"}),
            json!({"role": "tool", "tool_call_id": "c2", "content": "/work"}),
        ]
    );
    server.verify();
}

#[tokio::test]
async fn custom_tools_round_trip_as_single_string_functions() {
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n";
    let arguments = json!({ "input": patch }).to_string();
    let server = MockModelServer::start(vec![
        MockResponse::ChatSse(chat_tool_call_chunks(&[(
            "call_p",
            "apply_patch",
            &arguments,
        )])),
        MockResponse::ChatSse(chat_text_chunks("patched")),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Chat));
    let mut first = prompt(vec![ResponseItem::user_text("add a file")]);
    first.tools = vec![
        json!({"type": "custom", "name": "apply_patch", "description": "Edit files.",
        "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch"}}),
    ];
    let (events, error) = run(&client, &first).await;
    assert!(error.is_none(), "{error:?}");
    let items = done_items(&events);
    assert_eq!(
        items,
        vec![ResponseItem::CustomToolCall {
            id: None,
            call_id: "call_p".into(),
            name: "apply_patch".into(),
            input: patch.into(),
            extra: Map::new(),
        }]
    );

    let mut history = first.input.clone();
    history.extend(items);
    history.push(ResponseItem::CustomToolCallOutput {
        call_id: "call_p".into(),
        output: "Success. Updated the following files:\nA a.txt\n".into(),
    });
    let mut second = prompt(history);
    second.tools = first.tools.clone();
    let (_, error) = run(&client, &second).await;
    assert!(error.is_none(), "{error:?}");

    let requests = server.requests();
    let tool = &requests[0].body["tools"][0];
    assert_eq!(tool["function"]["name"], "apply_patch");
    assert_eq!(tool["function"]["parameters"]["required"], json!(["input"]));
    assert_eq!(
        requests[1].messages()[1..],
        [
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_p", "type": "function", "function": {"name": "apply_patch", "arguments": arguments}},
            ]}),
            json!({"role": "tool", "tool_call_id": "call_p",
                   "content": "Success. Updated the following files:\nA a.txt\n"}),
        ]
    );
    server.verify();
}

#[tokio::test]
async fn chat_error_status_is_reported_with_the_server_message() {
    let server = MockModelServer::start(vec![MockResponse::http_json(
        404,
        &json!({"error": {"message": "model 'nope' not found, try pulling it first"}}),
    )])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Chat));
    let err = client
        .stream(&prompt(vec![ResponseItem::user_text("hi")]))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("model 'nope' not found"), "{err}");
    assert_eq!(server.requests().len(), 1);
    server.verify();
}
