//! The one table of method names: a constant per method, and enums mapping each method
//! string to its typed params (and, for requests, its typed result) so a server can
//! dispatch on them.

use crate::approvals::*;
use crate::mcp::*;
use crate::notifications::*;
use crate::session::*;
use crate::thread::*;
use schemars::{Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Method names, as on the wire.
pub mod method {
    pub const INITIALIZE: &str = "initialize";
    pub const INITIALIZED: &str = "initialized";
    pub const THREAD_START: &str = "thread/start";
    pub const THREAD_RESUME: &str = "thread/resume";
    pub const THREAD_FORK: &str = "thread/fork";
    pub const THREAD_LIST: &str = "thread/list";
    pub const THREAD_LOADED_LIST: &str = "thread/loaded/list";
    pub const THREAD_READ: &str = "thread/read";
    pub const THREAD_ARCHIVE: &str = "thread/archive";
    pub const THREAD_UNARCHIVE: &str = "thread/unarchive";
    pub const THREAD_UNSUBSCRIBE: &str = "thread/unsubscribe";
    pub const THREAD_SHELL_COMMAND: &str = "thread/shellCommand";
    pub const THREAD_COMPACT_START: &str = "thread/compact/start";
    pub const TURN_START: &str = "turn/start";
    pub const TURN_STEER: &str = "turn/steer";
    pub const TURN_INTERRUPT: &str = "turn/interrupt";
    pub const MODEL_LIST: &str = "model/list";
    pub const CONFIG_READ: &str = "config/read";
    pub const MCP_SERVER_STATUS_LIST: &str = "mcpServerStatus/list";

    pub const THREAD_STARTED: &str = "thread/started";
    pub const THREAD_STATUS_CHANGED: &str = "thread/status/changed";
    pub const THREAD_ARCHIVED: &str = "thread/archived";
    pub const THREAD_UNARCHIVED: &str = "thread/unarchived";
    pub const THREAD_GOAL_CLEARED: &str = "thread/goal/cleared";
    pub const THREAD_TOKEN_USAGE_UPDATED: &str = "thread/tokenUsage/updated";
    pub const TURN_STARTED: &str = "turn/started";
    pub const TURN_COMPLETED: &str = "turn/completed";
    pub const TURN_DIFF_UPDATED: &str = "turn/diff/updated";
    pub const TURN_PLAN_UPDATED: &str = "turn/plan/updated";
    pub const ERROR: &str = "error";
    pub const ITEM_STARTED: &str = "item/started";
    pub const ITEM_COMPLETED: &str = "item/completed";
    pub const ITEM_AGENT_MESSAGE_DELTA: &str = "item/agentMessage/delta";
    pub const ITEM_COMMAND_EXECUTION_OUTPUT_DELTA: &str = "item/commandExecution/outputDelta";
    pub const ITEM_REASONING_SUMMARY_TEXT_DELTA: &str = "item/reasoning/summaryTextDelta";
    pub const ITEM_REASONING_SUMMARY_PART_ADDED: &str = "item/reasoning/summaryPartAdded";
    pub const SERVER_REQUEST_RESOLVED: &str = "serverRequest/resolved";
    pub const CONFIG_WARNING: &str = "configWarning";
    pub const DEPRECATION_NOTICE: &str = "deprecationNotice";
    pub const WARNING: &str = "warning";

    pub const ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL: &str =
        "item/commandExecution/requestApproval";
    pub const ITEM_FILE_CHANGE_REQUEST_APPROVAL: &str = "item/fileChange/requestApproval";
}

/// Why a method and its params are not one of ours. The `Display` text is what Codex puts
/// in its `-32600` error message.
#[derive(Debug, thiserror::Error)]
pub enum MethodError {
    #[error(
        "Invalid request: unknown variant `{method}`, expected one of {}",
        quoted(known)
    )]
    UnknownMethod {
        method: String,
        known: &'static [&'static str],
    },
    #[error("Invalid request: {source}")]
    InvalidParams {
        method: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Absent params read as `{}`, so methods whose params are all optional may omit them.
fn parse_params<T: DeserializeOwned>(
    method: &'static str,
    params: Option<Value>,
) -> Result<T, MethodError> {
    let value = params.unwrap_or_else(|| Value::Object(Map::new()));
    serde_json::from_value(value).map_err(|source| MethodError::InvalidParams { method, source })
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    // Every protocol type serialises to JSON (string keys only): this cannot fail.
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Defines an enum with one variant per method, each holding that method's typed payload.
macro_rules! method_enum {
    ($(#[$meta:meta])* $name:ident { $( $variant:ident($ty:ty) = $method:path, )* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $( $variant($ty), )*
        }

        impl $name {
            /// The methods this enum covers, in table order.
            pub const METHODS: &'static [&'static str] = &[$($method),*];

            /// The typed payload of `method`, or why there is none.
            pub fn from_parts(method: &str, payload: Option<Value>) -> Result<Self, MethodError> {
                $(
                    if method == $method {
                        return parse_params($method, payload).map(Self::$variant);
                    }
                )*
                Err(MethodError::UnknownMethod {
                    method: method.to_owned(),
                    known: Self::METHODS,
                })
            }

            pub fn method(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $method, )*
                }
            }

            /// The payload as JSON, as it goes on the wire.
            pub fn to_value(&self) -> Value {
                match self {
                    $( Self::$variant(payload) => to_json(payload), )*
                }
            }

            /// (method, JSON Schema of its payload) for every method, definitions collected
            /// in `generator`.
            pub fn schemas(generator: &mut SchemaGenerator) -> Vec<(&'static str, Schema)> {
                vec![$( ($method, generator.subschema_for::<$ty>()), )*]
            }
        }
    };
}

method_enum! {
    /// Client → server requests, by their params.
    ClientRequest {
        Initialize(InitializeParams) = method::INITIALIZE,
        ThreadStart(ThreadStartParams) = method::THREAD_START,
        ThreadResume(ThreadResumeParams) = method::THREAD_RESUME,
        ThreadFork(ThreadForkParams) = method::THREAD_FORK,
        ThreadList(ThreadListParams) = method::THREAD_LIST,
        ThreadLoadedList(ThreadLoadedListParams) = method::THREAD_LOADED_LIST,
        ThreadRead(ThreadReadParams) = method::THREAD_READ,
        ThreadArchive(ThreadArchiveParams) = method::THREAD_ARCHIVE,
        ThreadUnarchive(ThreadUnarchiveParams) = method::THREAD_UNARCHIVE,
        ThreadUnsubscribe(ThreadUnsubscribeParams) = method::THREAD_UNSUBSCRIBE,
        ThreadShellCommand(ThreadShellCommandParams) = method::THREAD_SHELL_COMMAND,
        ThreadCompactStart(ThreadCompactStartParams) = method::THREAD_COMPACT_START,
        TurnStart(TurnStartParams) = method::TURN_START,
        TurnSteer(TurnSteerParams) = method::TURN_STEER,
        TurnInterrupt(TurnInterruptParams) = method::TURN_INTERRUPT,
        ModelList(ModelListParams) = method::MODEL_LIST,
        ConfigRead(ConfigReadParams) = method::CONFIG_READ,
        McpServerStatusList(ListMcpServerStatusParams) = method::MCP_SERVER_STATUS_LIST,
    }
}

method_enum! {
    /// The results of client → server requests, keyed by the request's method.
    ClientResponse {
        Initialize(InitializeResponse) = method::INITIALIZE,
        ThreadStart(ThreadStartResponse) = method::THREAD_START,
        ThreadResume(ThreadResumeResponse) = method::THREAD_RESUME,
        ThreadFork(ThreadForkResponse) = method::THREAD_FORK,
        ThreadList(ThreadListResponse) = method::THREAD_LIST,
        ThreadLoadedList(ThreadLoadedListResponse) = method::THREAD_LOADED_LIST,
        ThreadRead(ThreadReadResponse) = method::THREAD_READ,
        ThreadArchive(ThreadArchiveResponse) = method::THREAD_ARCHIVE,
        ThreadUnarchive(ThreadUnarchiveResponse) = method::THREAD_UNARCHIVE,
        ThreadUnsubscribe(ThreadUnsubscribeResponse) = method::THREAD_UNSUBSCRIBE,
        ThreadShellCommand(ThreadShellCommandResponse) = method::THREAD_SHELL_COMMAND,
        ThreadCompactStart(ThreadCompactStartResponse) = method::THREAD_COMPACT_START,
        TurnStart(TurnStartResponse) = method::TURN_START,
        TurnSteer(TurnSteerResponse) = method::TURN_STEER,
        TurnInterrupt(TurnInterruptResponse) = method::TURN_INTERRUPT,
        ModelList(ModelListResponse) = method::MODEL_LIST,
        ConfigRead(ConfigReadResponse) = method::CONFIG_READ,
        McpServerStatusList(ListMcpServerStatusResponse) = method::MCP_SERVER_STATUS_LIST,
    }
}

method_enum! {
    /// Server → client notifications, by their params.
    ServerNotification {
        ThreadStarted(ThreadStartedNotification) = method::THREAD_STARTED,
        ThreadStatusChanged(ThreadStatusChangedNotification) = method::THREAD_STATUS_CHANGED,
        ThreadArchived(ThreadArchivedNotification) = method::THREAD_ARCHIVED,
        ThreadUnarchived(ThreadIdNotification) = method::THREAD_UNARCHIVED,
        ThreadGoalCleared(ThreadIdNotification) = method::THREAD_GOAL_CLEARED,
        ThreadTokenUsageUpdated(ThreadTokenUsageUpdatedNotification) =
            method::THREAD_TOKEN_USAGE_UPDATED,
        TurnStarted(TurnStartedNotification) = method::TURN_STARTED,
        TurnCompleted(TurnCompletedNotification) = method::TURN_COMPLETED,
        TurnDiffUpdated(TurnDiffUpdatedNotification) = method::TURN_DIFF_UPDATED,
        TurnPlanUpdated(TurnPlanUpdatedNotification) = method::TURN_PLAN_UPDATED,
        Error(ErrorNotification) = method::ERROR,
        ItemStarted(ItemStartedNotification) = method::ITEM_STARTED,
        ItemCompleted(ItemCompletedNotification) = method::ITEM_COMPLETED,
        AgentMessageDelta(AgentMessageDeltaNotification) = method::ITEM_AGENT_MESSAGE_DELTA,
        CommandExecutionOutputDelta(CommandExecutionOutputDeltaNotification) =
            method::ITEM_COMMAND_EXECUTION_OUTPUT_DELTA,
        ReasoningSummaryTextDelta(ReasoningSummaryTextDeltaNotification) =
            method::ITEM_REASONING_SUMMARY_TEXT_DELTA,
        ReasoningSummaryPartAdded(ReasoningSummaryPartAddedNotification) =
            method::ITEM_REASONING_SUMMARY_PART_ADDED,
        ServerRequestResolved(ServerRequestResolvedNotification) =
            method::SERVER_REQUEST_RESOLVED,
        ConfigWarning(NoticeNotification) = method::CONFIG_WARNING,
        DeprecationNotice(NoticeNotification) = method::DEPRECATION_NOTICE,
        Warning(WarningNotification) = method::WARNING,
    }
}

method_enum! {
    /// Server → client requests, by their params.
    ServerRequest {
        CommandExecutionRequestApproval(CommandExecutionRequestApprovalParams) =
            method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
        FileChangeRequestApproval(FileChangeRequestApprovalParams) =
            method::ITEM_FILE_CHANGE_REQUEST_APPROVAL,
    }
}

method_enum! {
    /// The client's results for server → client requests, keyed by the request's method.
    ServerResponse {
        CommandExecutionRequestApproval(CommandExecutionRequestApprovalResponse) =
            method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
        FileChangeRequestApproval(FileChangeRequestApprovalResponse) =
            method::ITEM_FILE_CHANGE_REQUEST_APPROVAL,
    }
}

/// Client → server notifications. `initialized` carries no params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientNotification {
    Initialized,
}

impl ClientNotification {
    pub const METHODS: &'static [&'static str] = &[method::INITIALIZED];

    pub fn from_method(method: &str) -> Result<Self, MethodError> {
        if method == method::INITIALIZED {
            Ok(ClientNotification::Initialized)
        } else {
            Err(MethodError::UnknownMethod {
                method: method.to_owned(),
                known: Self::METHODS,
            })
        }
    }

    pub fn method(&self) -> &'static str {
        match self {
            ClientNotification::Initialized => method::INITIALIZED,
        }
    }
}

/// One JSON Schema document for the whole protocol: for each direction, each method's
/// payload schema, with the shared definitions under `$defs`.
pub fn protocol_schema() -> Value {
    let mut generator = SchemaGenerator::default();
    let section = |pairs: Vec<(&'static str, Schema)>| -> Value {
        Value::Object(
            pairs
                .into_iter()
                .map(|(method, schema)| (method.to_owned(), to_json(&schema)))
                .collect(),
        )
    };
    let client_requests = section(ClientRequest::schemas(&mut generator));
    let client_responses = section(ClientResponse::schemas(&mut generator));
    let server_notifications = section(ServerNotification::schemas(&mut generator));
    let server_requests = section(ServerRequest::schemas(&mut generator));
    let server_responses = section(ServerResponse::schemas(&mut generator));
    let defs: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Osprey app-server protocol (Codex app-server v2)",
        "clientRequests": client_requests,
        "clientResponses": client_responses,
        "clientNotifications": ClientNotification::METHODS,
        "serverNotifications": server_notifications,
        "serverRequests": server_requests,
        "serverResponses": server_responses,
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_method_is_a_typed_outcome() {
        let err = ClientRequest::from_parts("no/such/method", Some(json!({}))).unwrap_err();
        assert!(
            matches!(&err, MethodError::UnknownMethod { method, .. } if method == "no/such/method")
        );
        assert!(
            err.to_string()
                .starts_with("Invalid request: unknown variant `no/such/method`, expected one of `initialize`, `thread/start`"),
            "{err}"
        );
        assert!(ServerNotification::from_parts("nope", None).is_err());
        assert!(ClientNotification::from_method("nope").is_err());
    }

    #[test]
    fn bad_params_read_as_codex_does() {
        let err =
            ClientRequest::from_parts(method::THREAD_START, Some(json!({"cwd": 42}))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid request: invalid type: integer `42`, expected a string"
        );
    }

    #[test]
    fn absent_params_of_all_optional_methods_read_as_empty() {
        let r = ClientRequest::from_parts(method::THREAD_LOADED_LIST, None).unwrap();
        assert_eq!(
            r,
            ClientRequest::ThreadLoadedList(ThreadLoadedListParams::default())
        );
        assert!(ClientRequest::from_parts(method::TURN_START, None).is_err());
    }

    #[test]
    fn the_two_decision_enums_differ() {
        let amend = json!({"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["touch"]}}});
        assert!(
            ServerResponse::from_parts(
                method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
                Some(amend.clone())
            )
            .is_ok()
        );
        assert!(
            ServerResponse::from_parts(method::ITEM_FILE_CHANGE_REQUEST_APPROVAL, Some(amend))
                .is_err()
        );
        for d in ["accept", "acceptForSession", "decline", "cancel"] {
            let v = json!({"decision": d});
            for m in [
                method::ITEM_COMMAND_EXECUTION_REQUEST_APPROVAL,
                method::ITEM_FILE_CHANGE_REQUEST_APPROVAL,
            ] {
                let parsed = ServerResponse::from_parts(m, Some(v.clone())).unwrap();
                assert_eq!(parsed.to_value(), v);
            }
        }
    }

    #[test]
    fn schema_names_every_method_and_defines_the_item_union() {
        let schema = protocol_schema();
        for m in ClientRequest::METHODS {
            assert!(schema["clientRequests"].get(*m).is_some(), "{m}");
        }
        assert!(schema["$defs"].get("ThreadItem").is_some(), "{schema:#}");
    }
}
