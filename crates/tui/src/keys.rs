//! The key reader the app loop awaits: crossterm's event stream, preceded by the keys read
//! while the terminal was asked for its background (`crate::background`) and passed through
//! the filter that drops a late reply to that question.
//!
//! [`decode`] turns bytes typed before the reader started into crossterm events the way
//! crossterm's own parser does for what terminals send for keys: text (UTF-8), Enter, Tab,
//! Backspace, Ctrl+letter, Esc and Alt+key, arrows and the editing keys (legacy and kitty
//! `CSI u` encodings, with modifiers), and bracketed pastes. Sequences it does not know are
//! dropped, as crossterm drops what it cannot parse.

use std::collections::VecDeque;
use std::time::Duration;

use crossterm::event::{Event, EventStream, KeyCode, KeyEvent, KeyModifiers};
use futures::StreamExt;

use crate::background::LateReplyFilter;

/// How long keys that may be a late reply are held back when nothing follows them.
const HOLD: Duration = Duration::from_millis(100);

/// The app loop's key source.
pub struct Keys {
    /// Keys read before the reader started, handled first.
    ready: VecDeque<Event>,
    stream: Option<EventStream>,
    filter: LateReplyFilter,
}

impl Keys {
    /// `early`: bytes typed before now; `late_reply`: the terminal may still answer the
    /// background question.
    pub fn new(early: &[u8], late_reply: bool) -> Self {
        Self {
            ready: decode(early).into(),
            stream: Some(EventStream::new()),
            filter: LateReplyFilter::new(late_reply),
        }
    }

    /// The next event. Cancel-safe: whatever was read is kept in `self` between awaits.
    pub async fn next(&mut self) -> Option<std::io::Result<Event>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            let stream = self.stream.get_or_insert_with(EventStream::new);
            let next = if self.filter.holding() {
                match tokio::time::timeout(HOLD, stream.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        self.ready.extend(self.filter.flush());
                        continue;
                    }
                }
            } else {
                stream.next().await
            };
            match next {
                Some(Ok(event)) => self.ready.extend(self.filter.feed(event)),
                other => {
                    self.ready.extend(self.filter.flush());
                    return other;
                }
            }
        }
    }

    /// Stops reading the terminal (another program, the editor, reads it now).
    pub fn pause(&mut self) {
        self.stream = None;
    }

    /// Reads the terminal again after [`Keys::pause`].
    pub fn resume(&mut self) {
        self.stream = Some(EventStream::new());
    }
}

/// The key events in `bytes` read from a terminal in raw mode.
pub fn decode(bytes: &[u8]) -> Vec<Event> {
    let mut events = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let (used, event) = decode_one(&bytes[at..]);
        events.extend(event);
        at += used.max(1);
    }
    events
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Event> {
    Some(Event::Key(KeyEvent::new(code, modifiers)))
}

/// One event from the front of `bytes` and how many bytes it took.
fn decode_one(bytes: &[u8]) -> (usize, Option<Event>) {
    let none = KeyModifiers::NONE;
    match bytes[0] {
        0x1b => match bytes.get(1) {
            None => (1, key(KeyCode::Esc, none)),
            Some(b'[') => csi(bytes),
            Some(b'O') => match bytes.get(2).and_then(|b| cursor_key(*b)) {
                Some(code) => (3, key(code, none)),
                None => (2.min(bytes.len()), None),
            },
            Some(0x1b) => (1, key(KeyCode::Esc, none)),
            Some(_) => {
                // Alt+key: the key's own encoding after ESC.
                let (used, event) = decode_one(&bytes[1..]);
                let event = match event {
                    Some(Event::Key(mut k)) => {
                        k.modifiers |= KeyModifiers::ALT;
                        Some(Event::Key(k))
                    }
                    other => other,
                };
                (used + 1, event)
            }
        },
        b'\r' | b'\n' => (1, key(KeyCode::Enter, none)),
        b'\t' => (1, key(KeyCode::Tab, none)),
        0x7f | 0x08 => (1, key(KeyCode::Backspace, none)),
        0 => (1, key(KeyCode::Char(' '), KeyModifiers::CONTROL)),
        c @ 0x01..=0x1a => (
            1,
            key(
                KeyCode::Char(char::from(c - 1 + b'a')),
                KeyModifiers::CONTROL,
            ),
        ),
        c @ 0x1c..=0x1f => (
            1,
            key(
                KeyCode::Char(char::from(c - 0x1c + b'4')),
                KeyModifiers::CONTROL,
            ),
        ),
        _ => {
            let len = utf8_len(bytes[0]).min(bytes.len());
            match std::str::from_utf8(&bytes[..len])
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) if c.is_uppercase() => (len, key(KeyCode::Char(c), KeyModifiers::SHIFT)),
                Some(c) => (len, key(KeyCode::Char(c), none)),
                None => (1, None),
            }
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

fn cursor_key(b: u8) -> Option<KeyCode> {
    Some(match b {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        _ => return None,
    })
}

/// `CSI 1;5A`-style modifiers (1 + a bit mask).
fn modifiers(param: Option<&str>) -> KeyModifiers {
    let mask = param
        .and_then(|p| p.split(':').next())
        .and_then(|p| p.parse::<u8>().ok())
        .unwrap_or(1)
        .saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    for (bit, flag) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
    ] {
        if mask & bit != 0 {
            m |= flag;
        }
    }
    m
}

/// `ESC [ params final`: a key, a bracketed paste, or something dropped.
fn csi(bytes: &[u8]) -> (usize, Option<Event>) {
    const PASTE_START: &[u8] = b"\x1b[200~";
    const PASTE_END: &[u8] = b"\x1b[201~";
    if let Some(rest) = bytes.strip_prefix(PASTE_START) {
        let (text, used) = match rest.windows(PASTE_END.len()).position(|w| w == PASTE_END) {
            Some(end) => (&rest[..end], PASTE_START.len() + end + PASTE_END.len()),
            None => (rest, bytes.len()),
        };
        let text = String::from_utf8_lossy(text).into_owned();
        return (used, Some(Event::Paste(text)));
    }
    // Parameter and intermediate bytes, then one final byte in 0x40..=0x7e.
    let Some(end) = bytes[2..].iter().position(|b| (0x40..=0x7e).contains(b)) else {
        return (bytes.len(), None);
    };
    let used = 2 + end + 1;
    let params = String::from_utf8_lossy(&bytes[2..2 + end]).into_owned();
    let mut parts = params.split(';');
    let first = parts.next().filter(|p| !p.is_empty());
    let second = parts.next();
    let event = match bytes[2 + end] {
        f @ (b'A' | b'B' | b'C' | b'D' | b'H' | b'F') => {
            cursor_key(f).and_then(|code| key(code, modifiers(second)))
        }
        b'Z' => key(KeyCode::BackTab, KeyModifiers::SHIFT),
        b'~' => {
            let code = match first.and_then(|p| p.parse::<u8>().ok()) {
                Some(1 | 7) => Some(KeyCode::Home),
                Some(2) => Some(KeyCode::Insert),
                Some(3) => Some(KeyCode::Delete),
                Some(4 | 8) => Some(KeyCode::End),
                Some(5) => Some(KeyCode::PageUp),
                Some(6) => Some(KeyCode::PageDown),
                _ => None,
            };
            code.and_then(|code| key(code, modifiers(second)))
        }
        b'u' => {
            // kitty: CSI codepoint ; modifiers u
            let code = first
                .and_then(|p| p.split(':').next())
                .and_then(|p| p.parse::<u32>().ok())
                .and_then(|n| match n {
                    13 => Some(KeyCode::Enter),
                    9 => Some(KeyCode::Tab),
                    27 => Some(KeyCode::Esc),
                    127 | 8 => Some(KeyCode::Backspace),
                    n => char::from_u32(n).map(KeyCode::Char),
                });
            code.and_then(|code| key(code, modifiers(second)))
        }
        _ => None,
    };
    (used, event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn k(code: KeyCode, modifiers: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(code, modifiers))
    }

    proptest::proptest! {
        /// Bytes typed before the reader starts come from the terminal, and from the person:
        /// any of them decode without a panic, cut sequences and invalid UTF-8 included, and
        /// so do the late-reply filter's checks on them.
        #[test]
        fn any_bytes_decode_without_panicking(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let events = decode(&bytes);
            proptest::prop_assert!(events.len() <= bytes.len());
            let _ = crate::background::split_replies(&bytes);
        }
    }

    #[test]
    fn typed_text_and_control_keys_decode_as_crossterm_reads_them() {
        let none = KeyModifiers::NONE;
        assert_eq!(
            decode("hé W\r\t\x7f\x01".as_bytes()),
            vec![
                k(KeyCode::Char('h'), none),
                k(KeyCode::Char('é'), none),
                k(KeyCode::Char(' '), none),
                k(KeyCode::Char('W'), KeyModifiers::SHIFT),
                k(KeyCode::Enter, none),
                k(KeyCode::Tab, none),
                k(KeyCode::Backspace, none),
                k(KeyCode::Char('a'), KeyModifiers::CONTROL),
            ]
        );
    }

    #[test]
    fn escape_sequences_become_keys_and_unknown_ones_are_dropped() {
        let none = KeyModifiers::NONE;
        assert_eq!(
            decode(b"\x1b[A\x1bOB\x1b[1;5C\x1b[3~\x1b[5;2~\x1bx\x1b[99;5u\x1b[27u\x1b[Z\x1b[I\x1b"),
            vec![
                k(KeyCode::Up, none),
                k(KeyCode::Down, none),
                k(KeyCode::Right, KeyModifiers::CONTROL),
                k(KeyCode::Delete, none),
                k(KeyCode::PageUp, KeyModifiers::SHIFT),
                k(KeyCode::Char('x'), KeyModifiers::ALT),
                k(KeyCode::Char('c'), KeyModifiers::CONTROL),
                k(KeyCode::Esc, none),
                k(KeyCode::BackTab, KeyModifiers::SHIFT),
                k(KeyCode::Esc, none),
            ]
        );
    }

    #[test]
    fn a_bracketed_paste_is_one_event() {
        assert_eq!(
            decode(b"a\x1b[200~two\nlines\x1b[201~b"),
            vec![
                k(KeyCode::Char('a'), KeyModifiers::NONE),
                Event::Paste("two\nlines".to_owned()),
                k(KeyCode::Char('b'), KeyModifiers::NONE),
            ]
        );
    }
}
