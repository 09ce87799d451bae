//! Every protocol line of the Codex 0.171 app-server captures (copied into `fixtures/` from
//! the reference) parses into our types and serialises back to the same JSON, except the
//! fields and notifications listed as not implemented.

use osprey_app_server_protocol::{
    ClientNotification, ClientRequest, ClientResponse, JsonRpcMessage, MethodError,
    NOT_IMPLEMENTED_FIELDS, NOT_IMPLEMENTED_NOTIFICATIONS, RequestId, ServerNotification,
    ServerRequest, ServerResponse,
};
use pretty_assertions::assert_eq;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

const CAPTURES: &[(&str, &str)] = &[
    (
        "appserver-approval-turn.jsonl",
        include_str!("../fixtures/appserver-approval-turn.jsonl"),
    ),
    (
        "appserver-errors-decisions-interrupt.jsonl",
        include_str!("../fixtures/appserver-errors-decisions-interrupt.jsonl"),
    ),
    (
        "appserver-failed-turns-shell-steer-archive.jsonl",
        include_str!("../fixtures/appserver-failed-turns-shell-steer-archive.jsonl"),
    ),
];

/// Removes the fields we document as not implemented, wherever they occur.
fn strip(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !NOT_IMPLEMENTED_FIELDS.iter().any(|(_, f, _)| f == k))
                .map(|(k, v)| (k.clone(), strip(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip).collect()),
        other => other.clone(),
    }
}

fn params_or_empty(params: &Option<Value>) -> Value {
    strip(&params.clone().unwrap_or_else(|| Value::Object(Map::new())))
}

#[derive(Default, Debug)]
struct Tally {
    client_requests: usize,
    server_responses: usize,
    server_notifications: usize,
    server_requests: usize,
    client_responses: usize,
    errors: usize,
    skipped_notifications: usize,
    /// (method, how it failed) of client requests our types refuse.
    refused: BTreeSet<(String, &'static str)>,
    methods: BTreeSet<String>,
}

fn check_capture(name: &str, text: &str, tally: &mut Tally) {
    let mut client_request_methods: BTreeMap<RequestId, String> = BTreeMap::new();
    let mut server_request_methods: BTreeMap<RequestId, String> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", n + 1);
        let record: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{at}: {e}"));
        let dir = record["dir"].as_str().unwrap_or_default();
        let from_client = match dir {
            "client->server" => true,
            "server->client" => false,
            _ => continue,
        };
        let msg = record["msg"].clone();
        let parsed =
            JsonRpcMessage::from_value(msg.clone()).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(parsed.to_value(), msg, "{at}: the envelope round-trips");
        match (from_client, parsed) {
            (true, JsonRpcMessage::Request(req)) => {
                tally.client_requests += 1;
                client_request_methods.insert(req.id.clone(), req.method.clone());
                match ClientRequest::from_parts(&req.method, req.params.clone()) {
                    Ok(typed) => {
                        tally.methods.insert(req.method.clone());
                        assert_eq!(typed.method(), req.method);
                        assert_eq!(typed.to_value(), params_or_empty(&req.params), "{at}");
                    }
                    Err(MethodError::UnknownMethod { method, .. }) => {
                        tally.refused.insert((method, "unknown method"));
                    }
                    Err(MethodError::InvalidParams { method, .. }) => {
                        tally.refused.insert((method.to_owned(), "invalid params"));
                    }
                }
            }
            (true, JsonRpcMessage::Notification(note)) => {
                ClientNotification::from_method(&note.method)
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
            }
            (true, JsonRpcMessage::Response(resp)) => {
                tally.client_responses += 1;
                let method = &server_request_methods[&resp.id];
                let typed = ServerResponse::from_parts(method, Some(resp.result.clone()))
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
                assert_eq!(typed.to_value(), strip(&resp.result), "{at}");
            }
            (false, JsonRpcMessage::Request(req)) => {
                tally.server_requests += 1;
                server_request_methods.insert(req.id.clone(), req.method.clone());
                let typed = ServerRequest::from_parts(&req.method, req.params.clone())
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
                tally.methods.insert(req.method.clone());
                assert_eq!(typed.to_value(), params_or_empty(&req.params), "{at}");
            }
            (false, JsonRpcMessage::Notification(note)) => {
                assert!(note.emitted_at_ms.is_some(), "{at}: emittedAtMs");
                if NOT_IMPLEMENTED_NOTIFICATIONS
                    .iter()
                    .any(|(m, _)| *m == note.method)
                {
                    tally.skipped_notifications += 1;
                    continue;
                }
                tally.server_notifications += 1;
                let typed = ServerNotification::from_parts(&note.method, note.params.clone())
                    .unwrap_or_else(|e| panic!("{at}: {e}"));
                tally.methods.insert(note.method.clone());
                assert_eq!(typed.to_value(), params_or_empty(&note.params), "{at}");
            }
            (false, JsonRpcMessage::Response(resp)) => {
                tally.server_responses += 1;
                let method = &client_request_methods[&resp.id];
                let typed = ClientResponse::from_parts(method, Some(resp.result.clone()))
                    .unwrap_or_else(|e| panic!("{at}: {method}: {e}"));
                assert_eq!(typed.to_value(), strip(&resp.result), "{at}: {method}");
            }
            (_, JsonRpcMessage::Error(_)) => tally.errors += 1,
        }
    }
}

#[test]
fn every_capture_line_round_trips_through_our_types() {
    let mut tally = Tally::default();
    for (name, text) in CAPTURES {
        check_capture(name, text, &mut tally);
    }
    // The only client requests we refuse are the two the captures send to provoke errors.
    let refused: Vec<_> = tally.refused.iter().cloned().collect();
    assert_eq!(
        refused,
        vec![
            ("no/such/method".to_owned(), "unknown method"),
            ("thread/start".to_owned(), "invalid params"),
        ]
    );
    assert!(tally.client_requests > 30, "{tally:?}");
    assert!(tally.server_responses > 20, "{tally:?}");
    assert!(tally.server_notifications > 150, "{tally:?}");
    assert!(tally.server_requests >= 9, "{tally:?}");
    assert_eq!(
        tally.client_responses,
        tally.server_requests - 1,
        "one approval goes unanswered"
    );
    assert!(tally.errors >= 6, "{tally:?}");
    for required in [
        "item/commandExecution/requestApproval",
        "item/fileChange/requestApproval",
        "item/reasoning/summaryTextDelta",
        "serverRequest/resolved",
        "thread/archived",
        "turn/diff/updated",
        "error",
        "turn/steer",
        "thread/shellCommand",
    ] {
        assert!(tally.methods.contains(required), "{required} not exercised");
    }
}

/// The round trip above proves something only if a field we do not model is lost on the
/// way: here one is, and the comparison sees it.
#[test]
fn an_unmodelled_field_shows_up_as_a_difference() {
    let params = serde_json::json!({
        "threadId": "t", "turnId": "u", "itemId": "i", "delta": "x", "notAField": 1
    });
    let typed =
        ServerNotification::from_parts("item/agentMessage/delta", Some(params.clone())).unwrap();
    assert_ne!(typed.to_value(), strip(&params));
}
