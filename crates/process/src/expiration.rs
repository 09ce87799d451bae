//! When a command must stop early: a timeout that can be suspended, a cancellation token,
//! or both.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Why a command was stopped before it finished by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// The timeout ran out (time spent suspended not counted).
    TimedOut,
    /// The cancellation token was cancelled.
    Cancelled,
}

/// What ends a command early: a timeout, a cancellation token, both, or neither.
///
/// The timeout counts only *active* time. [`ExecExpiration::timeout_control`] hands out a
/// [`TimeoutControl`]; while any [`TimeoutSuspension`] taken from it is alive, the clock
/// stands still, so a command is not charged for the minutes a person spends answering
/// an approval prompt. The clock starts when the command is spawned; suspensions taken
/// before that simply mean it starts stopped. Clones share one clock, so use a fresh
/// expiration for each command.
///
/// ```
/// # use std::time::Duration;
/// # use osprey_process::ExecExpiration;
/// # use tokio_util::sync::CancellationToken;
/// let token = CancellationToken::new();
/// let expiration = ExecExpiration::timeout(Duration::from_secs(10)).with_cancellation(token);
/// let control = expiration.timeout_control().unwrap();
/// let pending_approval = control.suspend(); // the clock stops
/// drop(pending_approval); // and runs again
/// ```
#[derive(Debug, Clone, Default)]
pub struct ExecExpiration {
    clock: Option<TimeoutControl>,
    cancel: Option<CancellationToken>,
}

impl ExecExpiration {
    /// Never expires: the command runs until it exits.
    pub fn never() -> Self {
        Self::default()
    }

    /// Expires after `limit` of active (not suspended) time.
    pub fn timeout(limit: Duration) -> Self {
        Self {
            clock: Some(TimeoutControl::new(limit)),
            cancel: None,
        }
    }

    /// Expires when `token` is cancelled.
    pub fn cancellation(token: CancellationToken) -> Self {
        Self {
            clock: None,
            cancel: Some(token),
        }
    }

    /// Adds (or replaces) the cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Adds (or replaces) the timeout.
    pub fn with_timeout(mut self, limit: Duration) -> Self {
        self.clock = Some(TimeoutControl::new(limit));
        self
    }

    /// The handle that suspends and resumes the timeout; `None` without a timeout.
    pub fn timeout_control(&self) -> Option<TimeoutControl> {
        self.clock.clone()
    }

    /// The timeout's limit, if there is one.
    pub fn timeout_limit(&self) -> Option<Duration> {
        self.clock.as_ref().map(TimeoutControl::limit)
    }

    /// The cancellation token, if there is one.
    pub fn cancellation_token(&self) -> Option<&CancellationToken> {
        self.cancel.as_ref()
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Starts the clock and resolves when the command must stop. Never resolves for
    /// [`ExecExpiration::never`].
    pub async fn expired(self) -> Expiry {
        let Self { clock, cancel } = self;
        let timeout = async {
            match clock {
                Some(clock) => clock.run_out().await,
                None => std::future::pending().await,
            }
        };
        let cancelled = async {
            match cancel {
                Some(token) => token.cancelled_owned().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = cancelled => Expiry::Cancelled,
            () = timeout => Expiry::TimedOut,
        }
    }
}

#[derive(Debug)]
struct ClockState {
    limit: Duration,
    /// Active time used before `running_since`.
    used: Duration,
    /// Set while the clock runs: started and not suspended.
    running_since: Option<Instant>,
    started: bool,
    suspensions: usize,
}

impl ClockState {
    fn used_now(&self, now: Instant) -> Duration {
        let running = self
            .running_since
            .map_or(Duration::ZERO, |since| now.saturating_duration_since(since));
        self.used + running
    }
}

#[derive(Debug)]
struct ClockShared {
    state: Mutex<ClockState>,
    changed: watch::Sender<()>,
}

/// Suspends and resumes an [`ExecExpiration`]'s timeout. Cheap to clone; all clones
/// control the same clock.
#[derive(Debug, Clone)]
pub struct TimeoutControl {
    shared: Arc<ClockShared>,
}

impl TimeoutControl {
    fn new(limit: Duration) -> Self {
        let (changed, _) = watch::channel(());
        Self {
            shared: Arc::new(ClockShared {
                state: Mutex::new(ClockState {
                    limit,
                    used: Duration::ZERO,
                    running_since: None,
                    started: false,
                    suspensions: 0,
                }),
                changed,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ClockState> {
        // The state stays consistent even if a holder panicked: every update is a
        // single assignment.
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stops the clock until the returned guard is dropped. Suspensions nest: the clock
    /// runs again when the last guard is gone.
    #[must_use = "the timeout resumes as soon as the guard is dropped"]
    pub fn suspend(&self) -> TimeoutSuspension {
        {
            let mut state = self.lock();
            state.suspensions += 1;
            if let Some(since) = state.running_since.take() {
                state.used += since.elapsed();
            }
        }
        self.shared.changed.send_replace(());
        TimeoutSuspension {
            control: self.clone(),
        }
    }

    fn resume_one(&self) {
        {
            let mut state = self.lock();
            state.suspensions = state.suspensions.saturating_sub(1);
            if state.suspensions == 0 && state.started && state.running_since.is_none() {
                state.running_since = Some(Instant::now());
            }
        }
        self.shared.changed.send_replace(());
    }

    /// Whether a suspension is in force.
    pub fn is_suspended(&self) -> bool {
        self.lock().suspensions > 0
    }

    /// The full timeout.
    pub fn limit(&self) -> Duration {
        self.lock().limit
    }

    /// Active time used so far (zero before the command starts).
    pub fn used(&self) -> Duration {
        self.lock().used_now(Instant::now())
    }

    /// Active time left before the timeout fires.
    pub fn remaining(&self) -> Duration {
        let state = self.lock();
        state.limit.saturating_sub(state.used_now(Instant::now()))
    }

    fn start(&self) {
        {
            let mut state = self.lock();
            if state.started {
                return;
            }
            state.started = true;
            if state.suspensions == 0 {
                state.running_since = Some(Instant::now());
            }
        }
        self.shared.changed.send_replace(());
    }

    /// Starts the clock and resolves once the active time reaches the limit.
    async fn run_out(self) {
        let mut changes = self.shared.changed.subscribe();
        self.start();
        loop {
            changes.borrow_and_update();
            let (remaining, running) = {
                let state = self.lock();
                let now = Instant::now();
                (
                    state.limit.saturating_sub(state.used_now(now)),
                    state.running_since.is_some(),
                )
            };
            if running && remaining.is_zero() {
                return;
            }
            if running {
                tokio::select! {
                    () = tokio::time::sleep(remaining) => {}
                    _ = changes.changed() => {}
                }
            } else if changes.changed().await.is_err() {
                // Unreachable while `self` holds the sender; never fire by accident.
                std::future::pending::<()>().await;
            }
        }
    }
}

/// While this guard lives, the timeout it came from does not advance.
#[derive(Debug)]
#[must_use = "the timeout resumes as soon as the guard is dropped"]
pub struct TimeoutSuspension {
    control: TimeoutControl,
}

impl Drop for TimeoutSuspension {
    fn drop(&mut self) {
        self.control.resume_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn cancellation_wins_and_is_reported() {
        let token = CancellationToken::new();
        token.cancel();
        let exp = ExecExpiration::timeout(Duration::from_secs(3600)).with_cancellation(token);
        assert!(exp.is_cancelled());
        assert_eq!(exp.expired().await, Expiry::Cancelled);
    }

    #[tokio::test]
    async fn zero_timeout_fires_at_once() {
        let exp = ExecExpiration::timeout(Duration::ZERO);
        assert_eq!(exp.expired().await, Expiry::TimedOut);
    }

    #[tokio::test]
    async fn suspended_clock_does_not_advance_until_resumed() {
        let exp = ExecExpiration::timeout(Duration::from_millis(20));
        let control = exp.timeout_control().unwrap();
        let guard = control.suspend();
        let nested = control.suspend();
        let mut expired = std::pin::pin!(exp.expired());
        // Poll once so the clock "starts" while suspended.
        assert!(futures_poll_once(expired.as_mut()).await.is_none());
        assert_eq!(control.used(), Duration::ZERO);
        drop(guard);
        assert!(control.is_suspended());
        assert_eq!(control.used(), Duration::ZERO);
        drop(nested);
        assert!(!control.is_suspended());
        assert_eq!(expired.await, Expiry::TimedOut);
        assert!(control.used() >= Duration::from_millis(20));
    }

    async fn futures_poll_once<F: std::future::Future + Unpin>(fut: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            out = fut => Some(out),
            () = std::future::ready(()) => None,
        }
    }
}
