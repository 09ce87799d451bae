//! Identifiers for threads, turns and tool calls.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A thread's id: a UUID v7, so ids sort by creation time. Also used as the model request's
/// `prompt_cache_key`, which must stay stable across turns and resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThreadId(uuid::Uuid);

impl ThreadId {
    pub fn new() -> Self {
        Self(uuid::Uuid::now_v7())
    }
}

impl Default for ThreadId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for ThreadId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        uuid::Uuid::parse_str(s.trim())
            .map(Self)
            .map_err(|e| format!("`{s}` is not a thread id (expected a UUID): {e}"))
    }
}

/// A turn's id, unique within its thread (`turn-1`, `turn-2`, …, or a UUID from a client).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TurnId(pub String);

impl fmt::Display for TurnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The model's id for one tool call (`call_…`); every call gets exactly one output with it.
pub type CallId = String;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_id_round_trips_through_text() {
        let id = ThreadId::new();
        let parsed: ThreadId = id.to_string().parse().unwrap();
        assert_eq!(id, parsed);
        assert!("not-a-uuid".parse::<ThreadId>().is_err());
    }

    #[test]
    fn thread_ids_sort_by_creation() {
        let a = ThreadId::new();
        let b = ThreadId::new();
        assert!(a <= b);
    }
}
