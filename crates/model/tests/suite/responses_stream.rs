//! Responses SSE streams turned into events, and items sent back exactly as received.

use osprey_config::WireApi;
use osprey_model::ResponseEvent;
use osprey_protocol::{ContentItem, FunctionCallOutputPayload, ResponseItem, TokenUsage};
use osprey_test_support::{
    MockModelServer, MockResponse, SseEvent, ev_assistant_message, ev_completed,
    ev_completed_with_usage, ev_custom_tool_call, ev_function_call, ev_output_item_added,
    ev_output_text_delta, ev_reasoning_item, ev_reasoning_summary_delta, ev_response_created,
};
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::common::{client, done_items, prompt, provider, run};

fn with_item_id(event: SseEvent, item_id: &str) -> SseEvent {
    let mut data = event.data().clone();
    data["item_id"] = json!(item_id);
    SseEvent::new(data)
}

#[tokio::test]
async fn text_stream_yields_deltas_item_and_usage() {
    let server = MockModelServer::start(vec![MockResponse::Sse(vec![
        ev_response_created("resp_7"),
        SseEvent::new(json!({"type": "response.in_progress", "response": {"id": "resp_7"}})),
        ev_output_item_added(
            json!({"type": "message", "id": "msg_1", "role": "assistant",
            "status": "in_progress", "content": []}),
        ),
        with_item_id(ev_output_text_delta("Hel"), "msg_1"),
        with_item_id(ev_output_text_delta("lo."), "msg_1"),
        ev_assistant_message("msg_1", "Hello."),
        ev_completed_with_usage("resp_7", 120, 100, 30, 8),
    ])])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (events, error) = run(&client, &prompt(vec![ResponseItem::user_text("hi")])).await;
    assert!(error.is_none(), "{error:?}");
    let message = |status: &str, content: Vec<ContentItem>| ResponseItem::Message {
        id: Some("msg_1".into()),
        role: "assistant".into(),
        content,
        extra: Map::from_iter([("status".to_owned(), json!(status))]),
    };
    assert_eq!(
        events,
        vec![
            ResponseEvent::Created,
            ResponseEvent::OutputItemAdded(message("in_progress", vec![])),
            ResponseEvent::OutputTextDelta {
                item_id: Some("msg_1".into()),
                delta: "Hel".into()
            },
            ResponseEvent::OutputTextDelta {
                item_id: Some("msg_1".into()),
                delta: "lo.".into()
            },
            ResponseEvent::OutputItemDone(message(
                "completed",
                vec![ContentItem::output_text("Hello.")]
            )),
            ResponseEvent::Completed {
                response_id: Some("resp_7".into()),
                usage: Some(TokenUsage {
                    input_tokens: 120,
                    cached_input_tokens: 100,
                    output_tokens: 30,
                    reasoning_output_tokens: 8,
                    total_tokens: 150,
                }),
            },
        ]
    );
    server.verify();
}

#[tokio::test]
async fn only_item_done_and_completed_is_a_valid_stream() {
    let server = MockModelServer::start(vec![MockResponse::Sse(vec![
        ev_assistant_message("msg_1", "short"),
        ev_completed("resp_1"),
    ])])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let (events, error) = run(&client, &prompt(vec![ResponseItem::user_text("hi")])).await;
    assert!(error.is_none(), "{error:?}");
    // The client opens the attempt with `Created` even when the server never sent one.
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0], ResponseEvent::Created);
    assert_eq!(
        done_items(&events)[0].message_text().as_deref(),
        Some("short")
    );
    assert_eq!(
        events[2],
        ResponseEvent::Completed {
            response_id: Some("resp_1".into()),
            usage: Some(TokenUsage::default()),
        }
    );
    server.verify();
}

#[tokio::test]
async fn call_items_round_trip_exactly_into_the_next_request() {
    let reasoning = ev_reasoning_item("rs_1", &["Looking at files"], Some("gAAAA-opaque=="));
    let function = ev_function_call("call_1", "exec_command", r#"{"cmd":"ls -la"}"#);
    let custom = ev_custom_tool_call("call_2", "apply_patch", "*** Begin Patch\n*** End Patch\n");
    let sent_items: Vec<Value> = [&reasoning, &function, &custom]
        .iter()
        .map(|event| event.data()["item"].clone())
        .collect();
    let server = MockModelServer::start(vec![
        MockResponse::Sse(vec![
            ev_response_created("resp_1"),
            with_item_id(ev_reasoning_summary_delta("Looking"), "rs_1"),
            reasoning.clone(),
            SseEvent::new(json!({"type": "response.function_call_arguments.delta",
                "item_id": "fc_call_1", "delta": "{\"cmd\""})),
            function.clone(),
            custom.clone(),
            ev_completed("resp_1"),
        ]),
        osprey_test_support::sse_turn(vec![ev_assistant_message("msg_2", "done")]),
    ])
    .await;
    let client = client(provider(&server.base_url(), WireApi::Responses));
    let first = prompt(vec![ResponseItem::user_text("list and patch")]);
    let (events, error) = run(&client, &first).await;
    assert!(error.is_none(), "{error:?}");
    assert!(events.contains(&ResponseEvent::ReasoningSummaryDelta {
        item_id: Some("rs_1".into()),
        delta: "Looking".into()
    }));
    assert!(events.contains(&ResponseEvent::ToolCallInputDelta {
        item_id: Some("fc_call_1".into()),
        delta: "{\"cmd\"".into()
    }));
    let items = done_items(&events);
    assert!(
        matches!(&items[0], ResponseItem::Reasoning { encrypted_content: Some(e), .. } if e == "gAAAA-opaque==")
    );
    assert!(matches!(&items[1], ResponseItem::FunctionCall { call_id, .. } if call_id == "call_1"));
    assert!(
        matches!(&items[2], ResponseItem::CustomToolCall { input, .. } if input.starts_with("*** Begin Patch"))
    );

    let mut history = first.input.clone();
    history.extend(items);
    history.push(ResponseItem::FunctionCallOutput {
        call_id: "call_1".into(),
        output: FunctionCallOutputPayload::Text("total 0".into()),
    });
    history.push(ResponseItem::CustomToolCallOutput {
        call_id: "call_2".into(),
        output: "Success.".into(),
    });
    let (_, error) = run(&client, &prompt(history)).await;
    assert!(error.is_none(), "{error:?}");

    let second = &server.requests()[1];
    assert_eq!(&second.input()[1..4], sent_items.as_slice());
    assert_eq!(second.output_for("call_1").as_deref(), Some("total 0"));
    assert_eq!(second.output_for("call_2").as_deref(), Some("Success."));
    server.verify();
}
