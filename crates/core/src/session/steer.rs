//! Input steered into a running turn: queued by the actor, taken by the turn before its next
//! model request.
//!
//! The queue closes when the turn decides to end, under the same lock that checks it is
//! empty, so input is never accepted by a turn that will not read it: a steer that comes too
//! late is refused (`CoreError::NoActiveTurn`) instead of being lost.

use osprey_protocol::UserInput;
use std::sync::Mutex;

#[derive(Default)]
pub(crate) struct SteerQueue {
    state: Mutex<SteerState>,
}

#[derive(Default)]
struct SteerState {
    /// One entry per steer, in arrival order.
    pending: Vec<Vec<UserInput>>,
    closed: bool,
}

impl SteerQueue {
    fn state(&self) -> std::sync::MutexGuard<'_, SteerState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues input for the turn; `false` once the turn has stopped taking input.
    pub fn push(&self, items: Vec<UserInput>) -> bool {
        let mut state = self.state();
        if state.closed {
            return false;
        }
        state.pending.push(items);
        true
    }

    /// Everything queued so far, oldest first.
    pub fn take(&self) -> Vec<Vec<UserInput>> {
        std::mem::take(&mut self.state().pending)
    }

    pub fn has_pending(&self) -> bool {
        !self.state().pending.is_empty()
    }

    /// Stops taking input if none is waiting (the turn may end); `false` when input arrived,
    /// and the turn must send another request for it.
    pub fn close_if_empty(&self) -> bool {
        let mut state = self.state();
        if state.pending.is_empty() {
            state.closed = true;
        }
        state.closed
    }

    /// Stops taking input and returns what was still waiting.
    pub fn close(&self) -> Vec<Vec<UserInput>> {
        let mut state = self.state();
        state.closed = true;
        std::mem::take(&mut state.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn text(t: &str) -> Vec<UserInput> {
        vec![UserInput::Text { text: t.into() }]
    }

    #[test]
    fn input_after_the_turn_stopped_taking_it_is_refused() {
        let queue = SteerQueue::default();
        assert!(queue.push(text("a")));
        assert!(
            !queue.close_if_empty(),
            "pending input keeps the turn going"
        );
        assert_eq!(queue.take(), vec![text("a")]);
        assert!(queue.close_if_empty());
        assert!(!queue.push(text("late")));
        assert!(!queue.has_pending());
    }

    #[test]
    fn close_returns_what_was_left() {
        let queue = SteerQueue::default();
        assert!(queue.push(text("a")));
        assert!(queue.push(text("b")));
        assert_eq!(queue.close(), vec![text("a"), text("b")]);
        assert!(!queue.push(text("c")));
    }
}
