//! One connection's outgoing queue, and what happens when the client cannot keep up.
//!
//! Turns never wait for a client: pushing a message never blocks. The writer task takes
//! messages in order and writes them to the transport. When the backlog grows past
//! [`COALESCE_BACKLOG`] messages, a new delta (agent message, command output, reasoning
//! text) is merged into the last queued delta of the same item instead of being queued on its
//! own, so a slow reader gets fewer, larger deltas with the same text. Everything else —
//! `item/started`, `item/completed`, turn and thread notifications, responses and approval
//! requests — is always queued and never dropped or merged. A client whose backlog passes
//! [`MAX_BACKLOG_BYTES`] is disconnected (logged); its threads go on, their session files
//! stay complete, and another connection can `thread/resume` them.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::{Map, Value, json};
use tokio::sync::Notify;

/// Backlog (in messages) from which deltas are merged.
pub const COALESCE_BACKLOG: usize = 64;
/// Backlog (in bytes) at which the client is considered gone.
pub const MAX_BACKLOG_BYTES: usize = 256 * 1024 * 1024;

/// A delta notification whose text may be merged with the next one for the same item.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub method: &'static str,
    /// The params without `delta`; two deltas merge only when these are equal.
    pub params: Map<String, Value>,
    pub delta: String,
    pub emitted_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq)]
enum Outbound {
    Message(String),
    Delta(Delta),
}

impl Outbound {
    fn len(&self) -> usize {
        match self {
            Outbound::Message(text) => text.len(),
            Outbound::Delta(delta) => delta.delta.len() + 128,
        }
    }

    fn into_line(self) -> String {
        match self {
            Outbound::Message(text) => text,
            Outbound::Delta(mut delta) => {
                delta
                    .params
                    .insert("delta".to_owned(), Value::String(delta.delta));
                json!({
                    "method": delta.method,
                    "params": Value::Object(delta.params),
                    "emittedAtMs": delta.emitted_at_ms,
                })
                .to_string()
            }
        }
    }
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Outbound>,
    bytes: usize,
    closed: bool,
    merged: u64,
}

/// The queue between the server and one connection's writer.
#[derive(Default)]
pub struct Outgoing {
    queue: Mutex<Queue>,
    ready: Notify,
}

impl Outgoing {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues one serialised message. Returns false when the connection is closed (or was
    /// just closed for falling too far behind).
    pub fn push(&self, line: String) -> bool {
        self.push_outbound(Outbound::Message(line))
    }

    /// Queues a delta, merging it into the last queued one when the backlog is long.
    pub fn push_delta(&self, delta: Delta) -> bool {
        let Ok(mut queue) = self.queue.lock() else {
            return false;
        };
        if queue.closed {
            return false;
        }
        if queue.items.len() >= COALESCE_BACKLOG
            && let Some(Outbound::Delta(last)) = queue.items.back_mut()
            && last.method == delta.method
            && last.params == delta.params
        {
            last.delta.push_str(&delta.delta);
            queue.bytes += delta.delta.len();
            queue.merged += 1;
            return true;
        }
        drop(queue);
        self.push_outbound(Outbound::Delta(delta))
    }

    fn push_outbound(&self, item: Outbound) -> bool {
        let Ok(mut queue) = self.queue.lock() else {
            return false;
        };
        if queue.closed {
            return false;
        }
        queue.bytes += item.len();
        queue.items.push_back(item);
        if queue.bytes > MAX_BACKLOG_BYTES {
            tracing::warn!(
                backlog_bytes = queue.bytes,
                "the client reads too slowly (over {MAX_BACKLOG_BYTES} bytes queued); disconnecting it. Its threads keep running and can be resumed."
            );
            queue.closed = true;
            queue.items.clear();
            queue.bytes = 0;
        }
        drop(queue);
        self.ready.notify_one();
        true
    }

    /// The next line to write, waiting for one; `None` once closed.
    pub async fn next(&self) -> Option<String> {
        loop {
            let notified = self.ready.notified();
            {
                let Ok(mut queue) = self.queue.lock() else {
                    return None;
                };
                if queue.closed {
                    return None;
                }
                if let Some(item) = queue.items.pop_front() {
                    queue.bytes = queue.bytes.saturating_sub(item.len());
                    return Some(item.into_line());
                }
            }
            notified.await;
        }
    }

    /// Stops the writer and refuses further messages.
    pub fn close(&self) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.closed = true;
            queue.items.clear();
        }
        self.ready.notify_waiters();
        self.ready.notify_one();
    }

    pub fn is_closed(&self) -> bool {
        self.queue.lock().map(|q| q.closed).unwrap_or(true)
    }

    /// How many deltas were merged into earlier ones so far.
    pub fn merged_deltas(&self) -> u64 {
        self.queue.lock().map(|q| q.merged).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn delta(item: &str, text: &str) -> Delta {
        let mut params = Map::new();
        params.insert("itemId".into(), Value::String(item.into()));
        Delta {
            method: "item/agentMessage/delta",
            params,
            delta: text.into(),
            emitted_at_ms: 1,
        }
    }

    #[tokio::test]
    async fn deltas_merge_only_behind_a_long_backlog_and_never_across_other_messages() {
        let out = Outgoing::new();
        out.push_delta(delta("a", "x"));
        out.push_delta(delta("a", "y"));
        assert_eq!(out.merged_deltas(), 0, "a short queue keeps every delta");
        for n in 0..COALESCE_BACKLOG {
            out.push(format!("{{\"n\":{n}}}"));
        }
        out.push_delta(delta("a", "1"));
        out.push_delta(delta("a", "2"));
        out.push_delta(delta("b", "3"));
        out.push(r#"{"method":"item/completed"}"#.into());
        out.push_delta(delta("b", "4"));
        assert_eq!(out.merged_deltas(), 1);
        let mut lines = Vec::new();
        while let Ok(Some(line)) =
            tokio::time::timeout(std::time::Duration::from_millis(50), out.next()).await
        {
            lines.push(line);
        }
        assert_eq!(lines.len(), 2 + COALESCE_BACKLOG + 4);
        let tail: Vec<Value> = lines[lines.len() - 4..]
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(tail[0]["params"]["delta"], "12");
        assert_eq!(tail[1]["params"]["delta"], "3");
        assert_eq!(tail[2]["method"], "item/completed");
        assert_eq!(tail[3]["params"]["delta"], "4");
    }

    #[tokio::test]
    async fn a_closed_queue_refuses_and_ends_the_writer() {
        let out = Outgoing::new();
        out.push("{}".into());
        out.close();
        assert!(!out.push("{}".into()));
        assert_eq!(out.next().await, None);
    }
}
