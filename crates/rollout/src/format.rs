//! The records of a rollout file and how each one is spelled on disk.
//!
//! A line is `{"timestamp":"…Z","type":"<kind>","payload":{…}}`. Writing is done by hand
//! (three fixed keys around the payload's own serde form) so a response item's bytes are
//! exactly `serde_json::to_string(item)`; reading goes through a small untyped envelope first
//! so an unknown `type` or a payload from another version becomes a warning, not an error.

use chrono::{DateTime, SecondsFormat, Utc};
use osprey_protocol::{
    AskForApproval, EventMsg, ReasoningEffort, ResponseItem, SandboxPolicy, ThreadId, TurnId,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// One record of a rollout file, without its timestamp.
#[derive(Debug, Clone, PartialEq)]
pub enum RolloutItem {
    /// The thread's header; always the first line of a file.
    SessionMeta(SessionMeta),
    /// An item of the model-visible history, exactly as sent to or received from the model.
    ResponseItem(ResponseItem),
    /// An event a front end needs to replay the thread (see [`crate::should_persist_event`]).
    EventMsg(EventMsg),
    /// The settings a turn ran with; written as the first record of every turn.
    TurnContext(TurnContextItem),
    /// History was compacted; see [`crate::RolloutContents::reconstruct_history`].
    Compacted(CompactedItem),
}

impl RolloutItem {
    /// The record's `type` on disk.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::SessionMeta(_) => "session_meta",
            Self::ResponseItem(_) => "response_item",
            Self::EventMsg(_) => "event_msg",
            Self::TurnContext(_) => "turn_context",
            Self::Compacted(_) => "compacted",
        }
    }

    fn write_payload(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            Self::SessionMeta(v) => serde_json::to_writer(out, v),
            Self::ResponseItem(v) => serde_json::to_writer(out, v),
            Self::EventMsg(v) => serde_json::to_writer(out, v),
            Self::TurnContext(v) => serde_json::to_writer(out, v),
            Self::Compacted(v) => serde_json::to_writer(out, v),
        }
    }

    fn from_payload(kind: &str, payload: Value) -> Result<Self, ParseLineError> {
        let bad = |e: serde_json::Error| ParseLineError::Payload {
            kind: kind.to_string(),
            message: e.to_string(),
        };
        Ok(match kind {
            "session_meta" => Self::SessionMeta(serde_json::from_value(payload).map_err(bad)?),
            "response_item" => Self::ResponseItem(serde_json::from_value(payload).map_err(bad)?),
            "event_msg" => Self::EventMsg(serde_json::from_value(payload).map_err(bad)?),
            "turn_context" => Self::TurnContext(serde_json::from_value(payload).map_err(bad)?),
            "compacted" => Self::Compacted(serde_json::from_value(payload).map_err(bad)?),
            other => return Err(ParseLineError::UnknownType(other.to_string())),
        })
    }
}

impl From<ResponseItem> for RolloutItem {
    fn from(item: ResponseItem) -> Self {
        Self::ResponseItem(item)
    }
}

impl From<EventMsg> for RolloutItem {
    fn from(msg: EventMsg) -> Self {
        Self::EventMsg(msg)
    }
}

impl From<TurnContextItem> for RolloutItem {
    fn from(ctx: TurnContextItem) -> Self {
        Self::TurnContext(ctx)
    }
}

impl From<CompactedItem> for RolloutItem {
    fn from(compacted: CompactedItem) -> Self {
        Self::Compacted(compacted)
    }
}

/// One line of a rollout file: when it was recorded and what.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutLine {
    /// UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub timestamp: String,
    pub item: RolloutItem,
    /// The record's position in the file, counting the header as 0. Recent Codex versions
    /// number every record of a "paginated" thread and expect the numbering to continue;
    /// Osprey's own files leave it out. The recorder continues it when it resumes such a
    /// file, and a fork renumbers it.
    pub ordinal: Option<u64>,
    /// Other line-level fields (Codex's per-record `metadata`), kept verbatim.
    pub extra: Map<String, Value>,
}

impl RolloutLine {
    pub fn new(timestamp: String, item: RolloutItem) -> Self {
        Self {
            timestamp,
            item,
            ordinal: None,
            extra: Map::new(),
        }
    }

    /// Appends this line's JSON and a newline to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"timestamp\":");
        serde_json::to_writer(&mut *out, &self.timestamp)?;
        if let Some(ordinal) = self.ordinal {
            out.extend_from_slice(b",\"ordinal\":");
            out.extend_from_slice(ordinal.to_string().as_bytes());
        }
        out.extend_from_slice(b",\"type\":\"");
        out.extend_from_slice(self.item.kind().as_bytes());
        out.extend_from_slice(b"\",\"payload\":");
        self.item.write_payload(out)?;
        for (key, value) in &self.extra {
            out.push(b',');
            serde_json::to_writer(&mut *out, key)?;
            out.push(b':');
            serde_json::to_writer(&mut *out, value)?;
        }
        out.extend_from_slice(b"}\n");
        Ok(())
    }

    /// This line as a JSON string (no trailing newline).
    pub fn to_json(&self) -> serde_json::Result<String> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        out.pop();
        // Only valid UTF-8 went in: serde_json output and ASCII literals.
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Parses one line (without its newline).
    pub fn parse(text: &str) -> Result<Self, ParseLineError> {
        let mut fields = Envelope::parse(text)?;
        let item = RolloutItem::from_payload(&fields.kind, fields.payload)?;
        let ordinal = fields.rest.remove("ordinal").and_then(|v| v.as_u64());
        Ok(Self {
            timestamp: fields.timestamp,
            item,
            ordinal,
            extra: fields.rest,
        })
    }
}

/// A line split into its fixed keys, the payload still untyped.
pub(crate) struct Envelope {
    pub(crate) timestamp: String,
    pub(crate) kind: String,
    pub(crate) payload: Value,
    pub(crate) rest: Map<String, Value>,
}

impl Envelope {
    pub(crate) fn parse(text: &str) -> Result<Self, ParseLineError> {
        let mut rest: Map<String, Value> =
            serde_json::from_str(text).map_err(|e| ParseLineError::Json(e.to_string()))?;
        let kind = match rest.remove("type") {
            Some(Value::String(kind)) => kind,
            _ => return Err(ParseLineError::Json("no string `type` field".to_string())),
        };
        let timestamp = match rest.remove("timestamp") {
            Some(Value::String(timestamp)) => timestamp,
            _ => String::new(),
        };
        let payload = rest.remove("payload").unwrap_or(Value::Null);
        Ok(Self {
            timestamp,
            kind,
            payload,
            rest,
        })
    }
}

/// Why one line could not be read; reported as a warning by the reader.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseLineError {
    #[error("not a JSON record: {0}")]
    Json(String),
    #[error("unknown record type `{0}` (written by a newer or different program?)")]
    UnknownType(String),
    #[error("`{kind}` payload does not match this version's format: {message}")]
    Payload { kind: String, message: String },
}

/// The current time in the line-timestamp format.
pub fn now_timestamp() -> String {
    format_timestamp(Utc::now())
}

/// `2025-01-02T03:04:05.678Z`.
pub fn format_timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The thread's header, the `session_meta` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: ThreadId,
    /// Set on a fork: the thread this one was copied from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from_id: Option<ThreadId>,
    /// When the thread was created, UTC (`YYYY-MM-DDTHH:MM:SS.mmmZ`).
    pub timestamp: String,
    pub cwd: PathBuf,
    /// Which program wrote the file (`osprey_exec`, `osprey_tui`, …).
    pub originator: String,
    pub cli_version: String,
    #[serde(default)]
    pub source: SessionSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_provider: Option<String>,
    /// The base instructions the thread runs with; fixed for the thread's life.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_instructions: Option<BaseInstructions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitInfo>,
    /// Fields this version does not know, kept so a rewrite (fork) does not drop them.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SessionMeta {
    /// A header for a new thread created now; optional fields start empty.
    pub fn new(
        id: ThreadId,
        cwd: PathBuf,
        originator: impl Into<String>,
        cli_version: impl Into<String>,
        source: SessionSource,
    ) -> Self {
        Self {
            id,
            forked_from_id: None,
            timestamp: now_timestamp(),
            cwd,
            originator: originator.into(),
            cli_version: cli_version.into(),
            source,
            model_provider: None,
            base_instructions: None,
            git: None,
            extra: Map::new(),
        }
    }
}

/// `{"text": "…"}`, as Codex spells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseInstructions {
    pub text: String,
}

/// Which front end started the thread.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionSource {
    Cli,
    Exec,
    #[serde(rename = "vscode")]
    VsCode,
    Mcp,
    AppServer,
    #[default]
    Unknown,
    /// A source this version does not know (Codex writes objects for sub-agents).
    #[serde(untagged)]
    Other(Value),
}

/// The repository the thread started in, read from `.git` (see [`crate::git_info`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GitInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
}

/// The `turn_context` payload: what a turn ran with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnContextItem {
    /// Absent in files from older Codex versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    pub cwd: PathBuf,
    pub approval_policy: AskForApproval,
    pub sandbox_policy: SandboxPolicy,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<ReasoningEffort>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `compacted` payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactedItem {
    /// The summary the model wrote.
    pub message: String,
    /// The history that replaced everything before this record, when the writer kept it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement_history: Option<Vec<ResponseItem>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn line_has_timestamp_type_payload_in_order() {
        let line = RolloutLine::new(
            "2025-01-02T03:04:05.678Z".into(),
            RolloutItem::ResponseItem(ResponseItem::user_text("hi")),
        );
        assert_eq!(
            line.to_json().unwrap(),
            r#"{"timestamp":"2025-01-02T03:04:05.678Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}"#
        );
        assert_eq!(RolloutLine::parse(&line.to_json().unwrap()).unwrap(), line);
    }

    #[test]
    fn codex_line_fields_are_kept() {
        let text = r#"{"timestamp":"t","ordinal":7,"type":"response_item","payload":{"type":"message","role":"user","content":[]},"metadata":{"history_sequence":3}}"#;
        let line = RolloutLine::parse(text).unwrap();
        assert_eq!(line.ordinal, Some(7));
        assert_eq!(
            line.extra.get("metadata"),
            Some(&json!({"history_sequence":3}))
        );
        assert_eq!(line.to_json().unwrap(), text);
    }

    #[test]
    fn unknown_types_and_bad_payloads_are_distinguished() {
        let unknown = RolloutLine::parse(r#"{"timestamp":"t","type":"novel","payload":{}}"#);
        assert_eq!(unknown, Err(ParseLineError::UnknownType("novel".into())));
        let bad = RolloutLine::parse(r#"{"timestamp":"t","type":"compacted","payload":{}}"#);
        assert!(
            matches!(bad, Err(ParseLineError::Payload { .. })),
            "{bad:?}"
        );
        let torn = RolloutLine::parse(r#"{"timestamp":"t","ty"#);
        assert!(matches!(torn, Err(ParseLineError::Json(_))), "{torn:?}");
    }

    #[test]
    fn session_sources_accept_codex_spellings() {
        let s: SessionSource = serde_json::from_value(json!("vscode")).unwrap();
        assert_eq!(s, SessionSource::VsCode);
        let sub = json!({"subagent": "review"});
        let s: SessionSource = serde_json::from_value(sub.clone()).unwrap();
        assert_eq!(s, SessionSource::Other(sub));
        assert_eq!(
            serde_json::to_value(SessionSource::AppServer).unwrap(),
            json!("app_server")
        );
    }

    #[test]
    fn meta_keeps_unknown_fields() {
        let v = json!({"id":"0191d4a0-0000-7000-8000-000000000001","timestamp":"t","cwd":"/w",
            "originator":"codex_exec","cli_version":"0.171.0","source":"exec",
            "base_instructions":{"text":"be brief"},"memory_mode":"x"});
        let meta: SessionMeta = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(meta.extra.get("memory_mode"), Some(&json!("x")));
        assert_eq!(serde_json::to_value(&meta).unwrap(), v);
    }
}
