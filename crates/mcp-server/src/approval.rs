//! Approval requests as MCP elicitations, and the answers as [`ReviewDecision`]s.
//!
//! When the agent needs a decision, the server sends the client an `elicitation/create`
//! request (form mode). The message says what would happen (the command and its directory,
//! the files a patch touches, the MCP tool called) and why approval is needed. The form has
//! one optional field, `decision`, a single-select of the decisions this request allows
//! (`approved`, `approved_for_session`, `denied`, `abort`). `_meta` carries the thread id,
//! the `tools/call` request id and the whole approval request as JSON, for clients that want
//! to render it themselves.
//!
//! The answer maps to a decision: `accept` with no `decision` is a plain approval, `accept`
//! with one is that decision, `decline` denies (the model is told and the turn goes on),
//! `cancel` aborts the turn. A decision the request did not offer is narrowed to one it did
//! (`approved_for_session` to `approved`), or denied. Anything that is not a valid answer —
//! an error from the client, a broken connection, a malformed result — denies: the server
//! never runs something nobody approved.

use std::path::Path;

use osprey_protocol::{ApprovalRequest, ApprovalRequestKind, FileChangeKind, ReviewDecision};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, JsonObject,
    MetaObject, RequestId, RequestMetaObject,
};
use serde_json::{Value, json};

/// The decisions a client can pick, in the order offered, with their labels.
const CHOICES: [(&str, &str); 4] = [
    ("approved", "Yes, run it"),
    (
        "approved_for_session",
        "Yes, and don't ask again for this in this thread",
    ),
    ("denied", "No, and let Osprey continue without it"),
    ("abort", "No, and stop the turn"),
];

fn wire_name(decision: &ReviewDecision) -> Option<&'static str> {
    match decision {
        ReviewDecision::Approved => Some("approved"),
        ReviewDecision::ApprovedForSession => Some("approved_for_session"),
        ReviewDecision::Denied => Some("denied"),
        ReviewDecision::Abort => Some("abort"),
        // Needs a rule prefix a form cannot carry; not offered over MCP.
        ReviewDecision::ApprovedExecpolicyAmendment { .. } => None,
    }
}

fn from_wire_name(name: &str) -> Option<ReviewDecision> {
    let normal: String = name
        .trim()
        .chars()
        .filter_map(|c| match c {
            '-' | ' ' | '_' => None,
            c => Some(c.to_ascii_lowercase()),
        })
        .collect();
    match normal.as_str() {
        "approved" | "approve" | "yes" => Some(ReviewDecision::Approved),
        "approvedforsession" => Some(ReviewDecision::ApprovedForSession),
        "denied" | "deny" | "no" => Some(ReviewDecision::Denied),
        "abort" => Some(ReviewDecision::Abort),
        _ => None,
    }
}

/// The `elicitation/create` parameters for an approval request.
pub fn elicitation_params(
    request: &ApprovalRequest,
    thread_id: &str,
    tool_call_id: &RequestId,
) -> ElicitRequestParams {
    let offered: Vec<&str> = request
        .available_decisions
        .iter()
        .filter_map(wire_name)
        .collect();
    let one_of: Vec<Value> = CHOICES
        .iter()
        .filter(|(name, _)| offered.contains(name))
        .map(|(name, title)| json!({"const": name, "title": title}))
        .collect();
    let mut properties = JsonObject::new();
    if !one_of.is_empty() {
        properties.insert(
            "decision".to_string(),
            json!({
                "type": "string",
                "title": "Decision",
                "description": "Leave it empty to approve once.",
                "oneOf": one_of,
                "default": "approved",
            }),
        );
    }
    let schema_json = json!({"type": "object", "properties": properties});
    let requested_schema = match schema_json {
        Value::Object(map) => ElicitationSchema::from_json_schema(map)
            .unwrap_or_else(|_| ElicitationSchema::new(Default::default())),
        _ => ElicitationSchema::new(Default::default()),
    };
    let mut meta = JsonObject::new();
    meta.insert("threadId".to_string(), json!(thread_id));
    meta.insert(
        "requestId".to_string(),
        serde_json::to_value(tool_call_id).unwrap_or(Value::Null),
    );
    meta.insert(
        "approval".to_string(),
        serde_json::to_value(request).unwrap_or(Value::Null),
    );
    ElicitRequestParams::FormElicitationParams {
        meta: Some(RequestMetaObject(MetaObject(meta))),
        message: approval_message(request),
        requested_schema,
    }
}

/// One or two sentences a person can decide on.
pub fn approval_message(request: &ApprovalRequest) -> String {
    let question = match &request.kind {
        ApprovalRequestKind::Exec {
            command,
            escalation,
        } => {
            let shown = shlex::try_join(command.iter().map(String::as_str))
                .unwrap_or_else(|_| command.join(" "));
            let outside = if *escalation {
                " outside the sandbox"
            } else {
                ""
            };
            format!(
                "Allow Osprey to run `{shown}`{outside} in {}?",
                display(&request.cwd)
            )
        }
        ApprovalRequestKind::Patch { changes, .. } => {
            let files: Vec<String> = changes
                .iter()
                .map(|change| {
                    let verb = match change.kind {
                        FileChangeKind::Add => "add",
                        FileChangeKind::Update => "update",
                        FileChangeKind::Delete => "delete",
                    };
                    format!("{verb} {}", display(&change.path))
                })
                .collect();
            format!("Allow Osprey to change files: {}?", files.join(", "))
        }
        ApprovalRequestKind::McpTool { server, tool, .. } => {
            format!("Allow Osprey to call the tool `{tool}` of the MCP server `{server}`?")
        }
    };
    let reason = request.reason.trim();
    if reason.is_empty() {
        question
    } else {
        format!("{question} Reason: {reason}")
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The decision an elicitation answer stands for. `Err` answers (the request failed) deny.
pub fn decision_from_answer<E>(
    answer: Result<ElicitResult, E>,
    available: &[ReviewDecision],
) -> ReviewDecision {
    let Ok(answer) = answer else {
        return ReviewDecision::Denied;
    };
    let chosen = match answer.action {
        ElicitationAction::Decline => ReviewDecision::Denied,
        ElicitationAction::Cancel => ReviewDecision::Abort,
        ElicitationAction::Accept => {
            let field = answer
                .content
                .as_ref()
                .and_then(|content| content.get("decision"));
            match field {
                None | Some(Value::Null) => ReviewDecision::Approved,
                Some(Value::String(s)) if s.trim().is_empty() => ReviewDecision::Approved,
                Some(Value::String(s)) => match from_wire_name(s) {
                    Some(decision) => decision,
                    None => return ReviewDecision::Denied,
                },
                Some(_) => return ReviewDecision::Denied,
            }
        }
        // An action this version does not know is no approval.
        _ => return ReviewDecision::Denied,
    };
    narrow(chosen, available)
}

/// A decision the request allows: the chosen one, or a narrower approval, or a denial.
fn narrow(chosen: ReviewDecision, available: &[ReviewDecision]) -> ReviewDecision {
    // An empty list means the request did not say; take the answer as given.
    if available.is_empty() || available.contains(&chosen) {
        return chosen;
    }
    match chosen {
        ReviewDecision::ApprovedForSession | ReviewDecision::ApprovedExecpolicyAmendment { .. }
            if available.contains(&ReviewDecision::Approved) =>
        {
            ReviewDecision::Approved
        }
        _ => ReviewDecision::Denied,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_protocol::FileChangeSummary;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    fn exec_request(available: Vec<ReviewDecision>) -> ApprovalRequest {
        ApprovalRequest {
            id: "call_1".to_string(),
            call_id: "call_1".to_string(),
            kind: ApprovalRequestKind::Exec {
                command: vec!["touch".to_string(), "a file".to_string()],
                escalation: false,
            },
            cwd: PathBuf::from("/repo"),
            reason: "not known to be safe".to_string(),
            available_decisions: available,
            justification: None,
            proposed_execpolicy_amendment: None,
            sandbox_denial: None,
        }
    }

    fn all() -> Vec<ReviewDecision> {
        vec![
            ReviewDecision::Approved,
            ReviewDecision::ApprovedForSession,
            ReviewDecision::Denied,
            ReviewDecision::Abort,
        ]
    }

    fn accept(content: Option<Value>) -> Result<ElicitResult, ()> {
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = content;
        Ok(result)
    }

    #[test]
    fn answers_map_to_decisions() {
        let all = all();
        let cases: Vec<(Result<ElicitResult, ()>, ReviewDecision)> = vec![
            (accept(None), ReviewDecision::Approved),
            (accept(Some(json!({}))), ReviewDecision::Approved),
            (
                accept(Some(json!({"decision": "approved_for_session"}))),
                ReviewDecision::ApprovedForSession,
            ),
            (
                accept(Some(json!({"decision": "approved-for-session"}))),
                ReviewDecision::ApprovedForSession,
            ),
            (
                accept(Some(json!({"decision": "denied"}))),
                ReviewDecision::Denied,
            ),
            (
                accept(Some(json!({"decision": "abort"}))),
                ReviewDecision::Abort,
            ),
            (
                accept(Some(json!({"decision": "sure, whatever"}))),
                ReviewDecision::Denied,
            ),
            (accept(Some(json!({"decision": 1}))), ReviewDecision::Denied),
            (
                Ok(ElicitResult::new(ElicitationAction::Decline)),
                ReviewDecision::Denied,
            ),
            (
                Ok(ElicitResult::new(ElicitationAction::Cancel)),
                ReviewDecision::Abort,
            ),
            (Err(()), ReviewDecision::Denied),
        ];
        for (answer, expected) in cases {
            let shown = format!("{answer:?}");
            assert_eq!(decision_from_answer(answer, &all), expected, "{shown}");
        }
    }

    #[test]
    fn decisions_not_offered_are_narrowed() {
        let only_once = vec![ReviewDecision::Approved, ReviewDecision::Denied];
        assert_eq!(
            decision_from_answer(
                accept(Some(json!({"decision": "approved_for_session"}))),
                &only_once
            ),
            ReviewDecision::Approved
        );
        assert_eq!(
            decision_from_answer(accept(Some(json!({"decision": "abort"}))), &only_once),
            ReviewDecision::Denied
        );
        let deny_only = vec![ReviewDecision::Denied];
        assert_eq!(
            decision_from_answer(accept(None), &deny_only),
            ReviewDecision::Denied
        );
    }

    #[test]
    fn exec_elicitation_names_the_command_and_offers_the_choices() {
        let request = exec_request(vec![ReviewDecision::Approved, ReviewDecision::Abort]);
        let id = RequestId::Number(7);
        let params = serde_json::to_value(elicitation_params(&request, "t-1", &id)).unwrap();
        assert_eq!(
            params["message"],
            "Allow Osprey to run `touch 'a file'` in /repo? Reason: not known to be safe"
        );
        assert_eq!(params["mode"], "form");
        let one_of = &params["requestedSchema"]["properties"]["decision"]["oneOf"];
        assert_eq!(
            one_of,
            &json!([
                {"const": "approved", "title": "Yes, run it"},
                {"const": "abort", "title": "No, and stop the turn"}
            ])
        );
        assert_eq!(params["_meta"]["threadId"], "t-1");
        assert_eq!(params["_meta"]["requestId"], 7);
        assert_eq!(params["_meta"]["approval"]["call_id"], "call_1");
    }

    #[test]
    fn patch_and_mcp_messages_say_what_changes() {
        let mut request = exec_request(all());
        request.reason = String::new();
        request.kind = ApprovalRequestKind::Patch {
            changes: vec![
                FileChangeSummary {
                    path: PathBuf::from("/repo/a.txt"),
                    kind: FileChangeKind::Add,
                    diff: None,
                    move_path: None,
                },
                FileChangeSummary {
                    path: PathBuf::from("/repo/b.txt"),
                    kind: FileChangeKind::Delete,
                    diff: None,
                    move_path: None,
                },
            ],
            paths: Vec::new(),
        };
        assert_eq!(
            approval_message(&request),
            "Allow Osprey to change files: add /repo/a.txt, delete /repo/b.txt?"
        );
        request.kind = ApprovalRequestKind::McpTool {
            server: "docs".to_string(),
            tool: "search".to_string(),
            arguments: json!({}),
        };
        assert_eq!(
            approval_message(&request),
            "Allow Osprey to call the tool `search` of the MCP server `docs`?"
        );
    }
}
