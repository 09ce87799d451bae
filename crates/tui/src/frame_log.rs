//! An optional timing log of every frame, for benchmarks: with `OSPREY_TUI_FRAME_LOG=<file>`
//! set, each frame the app loop draws appends one line to that file:
//!
//! ```text
//! <cause> <input_to_flushed_us> <draw_us>
//! ```
//!
//! * `cause` — what made the frame: `key` (a key, paste or resize), `server` (an event from
//!   the app server, e.g. a streamed delta), `app` (a task of the TUI's own finished) or
//!   `tick` (the once-a-second timer while a turn runs); `start` for the first frame.
//! * `input_to_flushed_us` — microseconds from the moment the loop received the earliest
//!   input this frame shows to the moment the frame was flushed to the terminal. For a key
//!   this is the TUI's key → frame time (what the terminal emulator adds is not in it).
//! * `draw_us` — microseconds spent rendering and writing the frame itself.
//!
//! Unset (the default), nothing is timed or written. A line is written after the frame is
//! flushed, so the log's own write is never inside a measured interval.

use std::fs::File;
use std::io::Write;
use std::time::Instant;

/// The environment variable that names the log file.
pub const ENV: &str = "OSPREY_TUI_FRAME_LOG";

/// What made a frame necessary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Start,
    Key,
    Server,
    App,
    Tick,
}

impl Cause {
    fn name(self) -> &'static str {
        match self {
            Cause::Start => "start",
            Cause::Key => "key",
            Cause::Server => "server",
            Cause::App => "app",
            Cause::Tick => "tick",
        }
    }
}

/// The per-frame log; inert unless [`ENV`] names a file.
pub struct FrameLog {
    out: Option<File>,
    /// The earliest input not yet shown, and when the loop received it.
    pending: Option<(Cause, Instant)>,
}

impl FrameLog {
    /// Opens the file [`ENV`] names (appending). A file that cannot be opened turns the log
    /// off rather than stopping the TUI; the returned message says so, for a warning cell.
    pub fn from_env() -> (Self, Option<String>) {
        let Some(path) = std::env::var_os(ENV) else {
            return (Self::to(None), None);
        };
        match File::options().create(true).append(true).open(&path) {
            Ok(file) => (Self::to(Some(file)), None),
            Err(e) => (
                Self::to(None),
                Some(format!(
                    "{ENV}={}: cannot open the frame log ({e}); frames are not timed",
                    path.to_string_lossy()
                )),
            ),
        }
    }

    /// A log writing to `out` (None: off).
    pub fn to(out: Option<File>) -> Self {
        let pending = out.as_ref().map(|_| (Cause::Start, Instant::now()));
        Self { out, pending }
    }

    /// Whether frames are being timed.
    pub fn enabled(&self) -> bool {
        self.out.is_some()
    }

    /// Notes an input received at `at` that the next frame will show. The earliest one
    /// pending is kept: a frame that shows two keys is as late as the first of them.
    pub fn input(&mut self, cause: Cause, at: Instant) {
        if self.out.is_some() && self.pending.is_none() {
            self.pending = Some((cause, at));
        }
    }

    /// Records a frame whose drawing started at `started` and was flushed just now. A write
    /// that fails turns the log off.
    pub fn framed(&mut self, started: Instant) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let flushed = Instant::now();
        let (cause, since) = self.pending.take().unwrap_or((Cause::App, started));
        let line = format!(
            "{} {} {}\n",
            cause.name(),
            flushed.duration_since(since).as_micros(),
            flushed.duration_since(started).as_micros()
        );
        if out.write_all(line.as_bytes()).is_err() {
            // A full disk must not end the session (nor be written over the screen): the
            // log stops, and the benchmark reading it sees it cut short.
            self.out = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn lines(path: &std::path::Path) -> Vec<Vec<String>> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| l.split(' ').map(str::to_owned).collect())
            .collect()
    }

    #[test]
    fn off_writes_nothing_and_times_nothing() {
        let mut log = FrameLog::to(None);
        assert!(!log.enabled());
        log.input(Cause::Key, Instant::now());
        log.framed(Instant::now());
        assert!(log.pending.is_none());
    }

    #[test]
    fn a_frame_is_as_late_as_the_earliest_input_it_shows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frames.log");
        let mut log = FrameLog::to(Some(File::create(&path).unwrap()));
        log.framed(Instant::now()); // the first frame
        let first = Instant::now();
        log.input(Cause::Key, first);
        std::thread::sleep(Duration::from_millis(20));
        log.input(Cause::Server, Instant::now());
        let started = Instant::now();
        log.framed(started);
        log.framed(Instant::now()); // nothing new: drawn for the app itself
        let rows = lines(&path);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[0][0], "start");
        assert_eq!(
            rows[1][0], "key",
            "the earlier key, not the later server event"
        );
        let waited: u128 = rows[1][1].parse().unwrap();
        let drew: u128 = rows[1][2].parse().unwrap();
        assert!(
            waited >= 20_000,
            "measured from the key, 20 ms back: {waited} µs"
        );
        assert!(
            drew < waited,
            "drawing is part of the wait: {drew} < {waited}"
        );
        assert_eq!(rows[2][0], "app");
    }
}
