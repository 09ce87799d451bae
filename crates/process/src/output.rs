//! Bounded output capture: keep the first and the last bytes of a stream, count the rest.

use std::collections::VecDeque;
use std::fmt;

use tokio::sync::mpsc::UnboundedSender;

/// How much of a command's output is kept in memory.
///
/// The first `head_bytes` bytes and the last `tail_bytes` bytes are kept; everything in
/// between is counted (bytes and lines) and dropped. A command that prints a gigabyte
/// therefore costs at most `head_bytes + tail_bytes` bytes of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCaps {
    /// Bytes kept from the start of the output.
    pub head_bytes: usize,
    /// Bytes kept from the end of the output.
    pub tail_bytes: usize,
}

impl OutputCaps {
    /// Keep `head_bytes` from the start and `tail_bytes` from the end.
    pub const fn new(head_bytes: usize, tail_bytes: usize) -> Self {
        Self {
            head_bytes,
            tail_bytes,
        }
    }
}

impl Default for OutputCaps {
    /// 512 KiB of head and 512 KiB of tail: 1 MiB in all, far more than a model is shown.
    fn default() -> Self {
        Self::new(512 * 1024, 512 * 1024)
    }
}

/// The kept part of an output stream plus exact totals.
///
/// When `truncated` is false, `head` followed by `tail` is the whole output, byte for byte.
/// When it is true, `total_bytes - head.len() - tail.len()` bytes were dropped between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CappedOutput {
    /// The first bytes of the output (at most `OutputCaps::head_bytes`).
    pub head: Vec<u8>,
    /// The last bytes of the output that are not already in `head`.
    pub tail: Vec<u8>,
    /// Every byte the stream produced, kept or not.
    pub total_bytes: u64,
    /// Lines the stream produced: newline characters, plus one for a final line
    /// without a newline.
    pub total_lines: u64,
    /// Whether bytes were dropped between `head` and `tail`.
    pub truncated: bool,
}

impl CappedOutput {
    /// Bytes dropped between `head` and `tail`.
    pub fn omitted_bytes(&self) -> u64 {
        let kept = (self.head.len() + self.tail.len()) as u64;
        self.total_bytes.saturating_sub(kept)
    }

    /// Whether the stream produced nothing.
    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    /// Head and tail joined into one byte vector; when bytes were dropped, a one-line
    /// marker saying how many stands between them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let omitted = self.omitted_bytes();
        let mut out = Vec::with_capacity(self.head.len() + self.tail.len() + 48);
        out.extend_from_slice(&self.head);
        if omitted > 0 {
            out.extend_from_slice(omission_marker(omitted).as_bytes());
        }
        out.extend_from_slice(&self.tail);
        out
    }

    /// [`CappedOutput::to_bytes`] decoded as UTF-8, invalid sequences replaced by U+FFFD.
    pub fn to_lossy_string(&self) -> String {
        String::from_utf8_lossy(&self.to_bytes()).into_owned()
    }

    /// Shrinks the kept bytes to at most `max_bytes`, taking from the middle, and returns
    /// the joined bytes (with the omission marker if anything was dropped) and the
    /// number of bytes dropped in all.
    pub fn into_bounded_bytes(mut self, max_bytes: usize) -> (Vec<u8>, u64) {
        if self.head.len() + self.tail.len() > max_bytes {
            let half = max_bytes / 2;
            if !self.truncated {
                // No gap yet: the output is one run, so cut its middle.
                let mut all = std::mem::take(&mut self.head);
                all.append(&mut self.tail);
                self.tail = all.split_off(all.len() - (max_bytes - half));
                all.truncate(half);
                self.head = all;
            } else {
                // Bytes cannot move across the existing gap; give any unused half to
                // the other side.
                let (keep_head, keep_tail) = if self.head.len() <= half {
                    (self.head.len(), max_bytes - self.head.len())
                } else if self.tail.len() <= max_bytes - half {
                    (max_bytes - self.tail.len(), self.tail.len())
                } else {
                    (half, max_bytes - half)
                };
                self.head.truncate(keep_head);
                let drop_front = self.tail.len() - keep_tail;
                self.tail.drain(..drop_front);
            }
            self.truncated = true;
        }
        let omitted = self.omitted_bytes();
        (self.to_bytes(), omitted)
    }
}

impl fmt::Display for CappedOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_lossy_string())
    }
}

/// The line that stands where bytes were dropped.
pub fn omission_marker(omitted_bytes: u64) -> String {
    format!("\n[… {omitted_bytes} bytes omitted …]\n")
}

/// Accumulates a stream under [`OutputCaps`]: head filled first, then a ring for the tail.
/// Public for executors that gather output elsewhere (a remote exec server's stream).
#[derive(Debug)]
pub struct HeadTailBuffer {
    caps: OutputCaps,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total_bytes: u64,
    newlines: u64,
    ends_with_newline: bool,
    dropped: bool,
}

impl HeadTailBuffer {
    pub fn new(caps: OutputCaps) -> Self {
        Self {
            caps,
            head: Vec::new(),
            tail: VecDeque::new(),
            total_bytes: 0,
            newlines: 0,
            ends_with_newline: false,
            dropped: false,
        }
    }

    pub fn push(&mut self, mut chunk: &[u8]) {
        let Some(&last) = chunk.last() else {
            return;
        };
        self.total_bytes += chunk.len() as u64;
        self.newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        self.ends_with_newline = last == b'\n';

        let head_room = self.caps.head_bytes.saturating_sub(self.head.len());
        if head_room > 0 {
            let take = head_room.min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.is_empty() {
            return;
        }
        let cap = self.caps.tail_bytes;
        if chunk.len() >= cap {
            self.dropped |= !self.tail.is_empty() || chunk.len() > cap;
            self.tail.clear();
            self.tail.extend(&chunk[chunk.len() - cap..]);
            return;
        }
        let overflow = (self.tail.len() + chunk.len()).saturating_sub(cap);
        if overflow > 0 {
            self.dropped = true;
            self.tail.drain(..overflow);
        }
        self.tail.extend(chunk);
    }

    /// Returns what was collected and leaves the buffer empty (same caps).
    pub fn take(&mut self) -> CappedOutput {
        let taken = std::mem::replace(self, Self::new(self.caps));
        taken.finish()
    }

    /// What was collected.
    pub fn finish(self) -> CappedOutput {
        let total_lines = if self.total_bytes > 0 && !self.ends_with_newline {
            self.newlines + 1
        } else {
            self.newlines
        };
        CappedOutput {
            head: self.head,
            tail: Vec::from(self.tail),
            total_bytes: self.total_bytes,
            total_lines,
            truncated: self.dropped,
        }
    }
}

/// Where live output goes while a command runs, chunk by chunk in arrival order.
///
/// The sink sees every byte, including those the capped result drops. Chunks are raw
/// reads: not aligned to lines, and a UTF-8 character may be split between two. It is
/// called on the task that reads the pipes, so it should be quick: forward to a channel,
/// or count.
pub struct OutputSink(Box<SinkFn>);

type SinkFn = dyn FnMut(&[u8]) + Send;

impl OutputSink {
    /// Calls `f` with each chunk as it arrives.
    pub fn callback(f: impl FnMut(&[u8]) + Send + 'static) -> Self {
        Self(Box::new(f))
    }

    /// Sends a copy of each chunk into `tx`; a closed receiver is ignored.
    pub fn channel(tx: UnboundedSender<Vec<u8>>) -> Self {
        Self::callback(move |chunk| {
            let _ = tx.send(chunk.to_vec());
        })
    }

    /// Hands `chunk` to the sink.
    pub fn emit(&mut self, chunk: &[u8]) {
        (self.0)(chunk);
    }
}

impl From<UnboundedSender<Vec<u8>>> for OutputSink {
    fn from(tx: UnboundedSender<Vec<u8>>) -> Self {
        Self::channel(tx)
    }
}

impl fmt::Debug for OutputSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OutputSink(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn collect(caps: OutputCaps, chunks: &[&[u8]]) -> CappedOutput {
        let mut buf = HeadTailBuffer::new(caps);
        for chunk in chunks {
            buf.push(chunk);
        }
        buf.finish()
    }

    #[test]
    fn small_output_is_kept_whole_across_head_and_tail() {
        let out = collect(OutputCaps::new(3, 4), &[b"ab", b"cde", b"f\n"]);
        assert_eq!(
            out,
            CappedOutput {
                head: b"abc".to_vec(),
                tail: b"def\n".to_vec(),
                total_bytes: 7,
                total_lines: 1,
                truncated: false,
            }
        );
        assert_eq!(out.to_lossy_string(), "abcdef\n");
    }

    #[test]
    fn large_output_keeps_first_and_last_bytes() {
        let out = collect(OutputCaps::new(2, 3), &[b"0123", b"4567", b"89"]);
        assert_eq!(out.head, b"01");
        assert_eq!(out.tail, b"789");
        assert_eq!(out.total_bytes, 10);
        assert!(out.truncated);
        assert_eq!(out.omitted_bytes(), 5);
        assert_eq!(out.to_lossy_string(), "01\n[… 5 bytes omitted …]\n789");
    }

    #[test]
    fn chunk_longer_than_tail_cap_keeps_its_end() {
        let out = collect(OutputCaps::new(0, 3), &[b"abcdefg"]);
        assert_eq!(out.tail, b"efg");
        assert!(out.truncated);
    }

    #[test]
    fn chunk_exactly_tail_cap_into_empty_tail_is_not_truncation() {
        let out = collect(OutputCaps::new(1, 3), &[b"abcd"]);
        assert_eq!(
            (out.head.as_slice(), out.tail.as_slice()),
            (&b"a"[..], &b"bcd"[..])
        );
        assert!(!out.truncated);
    }

    #[test]
    fn lines_count_a_final_line_without_newline() {
        assert_eq!(collect(OutputCaps::default(), &[b"a\nb"]).total_lines, 2);
        assert_eq!(collect(OutputCaps::default(), &[b"a\nb\n"]).total_lines, 2);
        assert_eq!(collect(OutputCaps::default(), &[]).total_lines, 0);
    }

    #[test]
    fn take_empties_the_buffer() {
        let mut buf = HeadTailBuffer::new(OutputCaps::new(4, 4));
        buf.push(b"first");
        assert_eq!(buf.take().to_lossy_string(), "first");
        assert_eq!(buf.total_bytes, 0);
        buf.push(b"x");
        assert_eq!(buf.take().to_lossy_string(), "x");
    }

    #[test]
    fn bounded_bytes_cut_the_middle() {
        let out = collect(OutputCaps::new(100, 100), &[b"0123456789"]);
        let (bytes, omitted) = out.into_bounded_bytes(4);
        assert_eq!(omitted, 6);
        assert_eq!(
            String::from_utf8_lossy(&bytes),
            "01\n[… 6 bytes omitted …]\n89"
        );

        let out = collect(OutputCaps::new(100, 100), &[b"0123"]);
        assert_eq!(out.into_bounded_bytes(4), (b"0123".to_vec(), 0));
    }
}
