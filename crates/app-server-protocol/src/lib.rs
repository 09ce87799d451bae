//! Types of Osprey's app-server protocol: Codex's app-server "v2" JSON-RPC protocol
//! (threads → turns → items, server → client approval requests), camelCase on the wire.
//! Types only: the server lives in `osprey-app-server`.

pub mod approvals;
pub mod common;
pub mod items;
pub mod jsonrpc;
pub mod mcp;
pub mod methods;
pub mod notifications;
pub mod session;
pub mod thread;

pub use approvals::*;
pub use common::*;
pub use items::*;
pub use jsonrpc::*;
pub use mcp::*;
pub use methods::{
    ClientNotification, ClientRequest, ClientResponse, MethodError, ServerNotification,
    ServerRequest, ServerResponse, method, protocol_schema,
};
pub use notifications::*;
pub use session::*;
pub use thread::*;

/// Fields Codex 0.171 sends that Osprey does not model yet, as (where, field, why). They
/// are dropped when read and absent when written; a client written for Codex treats an
/// absent nullable field as null.
pub const NOT_IMPLEMENTED_FIELDS: &[(&str, &str, &str)] = &[
    (
        "Thread",
        "environments",
        "remote execution environments: Osprey runs locally only",
    ),
    (
        "Thread",
        "extra",
        "opaque client metadata, no Osprey feature sets it",
    ),
    (
        "Thread",
        "attachedToThreadId",
        "thread attachments are not implemented",
    ),
    (
        "Thread",
        "section",
        "thread sections (sidebar folders) are not implemented",
    ),
    (
        "Thread",
        "sectionEnteredAt",
        "thread sections are not implemented",
    ),
    ("Thread", "projectId", "projects are not implemented"),
    (
        "Thread",
        "canAcceptDirectInput",
        "always true without sub-agent input routing",
    ),
    ("Thread", "daybreakEnabled", "Codex-internal feature flag"),
    (
        "ThreadStartResponse",
        "instructionSources",
        "instruction provenance is not reported yet",
    ),
    (
        "ThreadStartResponse",
        "activePermissionProfile",
        "permission profiles are not implemented",
    ),
    (
        "ThreadStartResponse",
        "multiAgentMode",
        "reported by the multi-agent work, not yet",
    ),
    (
        "ThreadStartResponse",
        "collaborationMode",
        "collaboration modes are not implemented",
    ),
    (
        "ThreadReadResponse",
        "readState",
        "read/unread tracking is not implemented",
    ),
    (
        "ThreadListResponse",
        "readStates",
        "read/unread tracking is not implemented",
    ),
    (
        "ThreadStartResponse",
        "initialTurnsPage",
        "paginated turn hydration is not implemented",
    ),
    (
        "ThreadStartResponse",
        "turnsBackwardsCursor",
        "paginated turn hydration is not implemented",
    ),
    (
        "ThreadStartResponse",
        "itemsBackwardsCursor",
        "paginated item hydration is not implemented",
    ),
];

/// Notifications Codex 0.171 sends that Osprey does not send, as (method, why).
pub const NOT_IMPLEMENTED_NOTIFICATIONS: &[(&str, &str)] = &[
    (
        "account/rateLimits/updated",
        "ChatGPT-account rate limits: Osprey has no account login",
    ),
    (
        "remoteControl/status/changed",
        "Codex remote control is not implemented",
    ),
];
