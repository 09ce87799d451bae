//! The text an exec tool returns to the model.
//!
//! One plain string, not JSON, in the layout Codex uses so models read it the same way:
//!
//! ```text
//! Chunk ID: 6a6f02
//! Wall time: 0.1912 seconds
//! Process exited with code 0
//! Original token count: 14
//! Output:
//! <stdout and stderr combined, truncated to the budget>
//! ```
//!
//! Osprey adds two lines Codex lacks: a timeout says so plainly
//! (`Command timed out after 10000 ms; the process group was killed.`), and when the sandbox
//! blocked something the caller's note is shown on its own line, so a denial does not look
//! like an ordinary failure.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use crate::truncation::truncate_middle;

/// How the command ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitView {
    /// It exited with this code.
    Exited(i32),
    /// It is still running; the model can continue with write_stdin on this session.
    Running {
        /// The session id to pass to write_stdin.
        session_id: u64,
    },
    /// It ran past its timeout and its process group was killed.
    TimedOut {
        /// The timeout that expired.
        after_ms: u64,
        /// The exit code observed after the kill, if any.
        exit_code: Option<i32>,
    },
    /// It was killed by a signal (not by our timeout).
    Killed {
        /// The signal number, if known.
        signal: Option<i32>,
    },
}

/// Everything [`format_exec_output`] needs.
#[derive(Debug, Clone)]
pub struct ExecOutputView<'a> {
    /// Identifier of this output chunk (see [`new_chunk_id`]); the line is omitted when `None`.
    pub chunk_id: Option<String>,
    /// Time from start (or from the previous chunk) to now.
    pub wall_time: Duration,
    /// How the command ended.
    pub exit: ExitView,
    /// Combined stdout and stderr.
    pub output: &'a str,
    /// Token budget for `output` (already clamped by the caller).
    pub max_output_tokens: usize,
    /// A sentence about the sandbox (e.g. that it denied a write), shown verbatim on its own
    /// line.
    pub sandbox_note: Option<&'a str>,
}

/// Render an exec result for the model.
pub fn format_exec_output(view: ExecOutputView<'_>) -> String {
    let truncated = truncate_middle(view.output, view.max_output_tokens);
    let mut lines: Vec<String> = Vec::with_capacity(7);
    if let Some(chunk_id) = &view.chunk_id {
        lines.push(format!("Chunk ID: {chunk_id}"));
    }
    lines.push(format!(
        "Wall time: {:.4} seconds",
        view.wall_time.as_secs_f64()
    ));
    match view.exit {
        ExitView::Exited(code) => lines.push(format!("Process exited with code {code}")),
        ExitView::Running { session_id } => {
            lines.push(format!("Process running with session ID {session_id}"));
        }
        ExitView::TimedOut {
            after_ms,
            exit_code,
        } => {
            lines.push(format!(
                "Command timed out after {after_ms} ms; the process group was killed."
            ));
            if let Some(code) = exit_code {
                lines.push(format!("Process exited with code {code}"));
            }
        }
        ExitView::Killed {
            signal: Some(signal),
        } => lines.push(format!("Process was killed by signal {signal}")),
        ExitView::Killed { signal: None } => lines.push("Process was killed".to_string()),
    }
    if let Some(note) = view.sandbox_note {
        lines.push(note.to_string());
    }
    lines.push(format!(
        "Original token count: {}",
        truncated.original_tokens
    ));
    lines.push("Output:".to_string());
    lines.push(truncated.text);
    lines.join("\n")
}

/// A fresh random chunk id: six lowercase hex digits, like `6a6f02`.
pub fn new_chunk_id() -> String {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default(),
    );
    format!("{:06x}", hasher.finish() & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn view(exit: ExitView, output: &str) -> ExecOutputView<'_> {
        ExecOutputView {
            chunk_id: Some("6a6f02".into()),
            wall_time: Duration::from_micros(191_200),
            exit,
            output,
            max_output_tokens: 10_000,
            sandbox_note: None,
        }
    }

    #[test]
    fn exited_matches_codex_layout() {
        assert_eq!(
            format_exec_output(view(ExitView::Exited(0), "hello from osprey\n")),
            "Chunk ID: 6a6f02\nWall time: 0.1912 seconds\nProcess exited with code 0\n\
             Original token count: 5\nOutput:\nhello from osprey\n"
        );
    }

    #[test]
    fn running_timed_out_and_killed_lines() {
        let running = format_exec_output(view(ExitView::Running { session_id: 9465 }, ""));
        assert!(running.contains("\nProcess running with session ID 9465\n"));
        let mut timed_out = view(
            ExitView::TimedOut {
                after_ms: 10_000,
                exit_code: Some(124),
            },
            "partial",
        );
        timed_out.chunk_id = None;
        timed_out.sandbox_note = Some("The sandbox blocked a write to /etc/hosts.");
        assert_eq!(
            format_exec_output(timed_out),
            "Wall time: 0.1912 seconds\nCommand timed out after 10000 ms; the process group was \
             killed.\nProcess exited with code 124\nThe sandbox blocked a write to /etc/hosts.\n\
             Original token count: 2\nOutput:\npartial"
        );
        let killed = format_exec_output(view(ExitView::Killed { signal: Some(9) }, ""));
        assert!(killed.contains("\nProcess was killed by signal 9\n"));
    }

    #[test]
    fn long_output_is_truncated_with_warning() {
        let output = "x".repeat(100);
        let mut v = view(ExitView::Exited(1), &output);
        v.max_output_tokens = 5;
        let text = format_exec_output(v);
        assert!(text.ends_with(
            "Original token count: 25\nOutput:\nWarning: truncated output (original token \
             count: 25)\nTotal output lines: 1\n\nxxxxxxxxxx…20 tokens truncated…xxxxxxxxxx"
        ));
    }

    #[test]
    fn chunk_ids_are_six_hex_digits() {
        let id = new_chunk_id();
        assert_eq!(id.len(), 6);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
