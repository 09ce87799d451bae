//! Asking the terminal for its background colour at start-up, for `[tui] theme = "auto"`
//! when `COLORFGBG` does not say.
//!
//! # How it asks
//!
//! Once, in raw mode and before crossterm's input reader starts, [`probe`] writes the OSC 11
//! query (`ESC ] 11 ; ? BEL`) and then a primary device attributes query (DA1, `ESC [ c`),
//! and reads the terminal for at most [`WAIT`]. Terminals answer in order and nearly all
//! answer DA1, so a DA1 reply without an OSC 11 reply before it means "no colour to tell",
//! at once; a terminal that answers neither costs [`WAIT`] and no more (a reply already
//! begun gets [`FINISH_WAIT`] more to end).
//!
//! # The person's keys
//!
//! Whatever else is read meanwhile — keys typed ahead while the program started — is not
//! lost: [`split_replies`] takes the replies out and `crate::keys` turns the rest into key
//! events that the app loop handles before the reader's own.
//!
//! # A late answer
//!
//! A terminal that answers after the wait (a slow link) would have its reply parsed by
//! crossterm as keys: Alt+], `11;rgb:…` typed, and BEL as Ctrl+G, which opens the editor.
//! When neither reply came in time, [`LateReplyFilter`] holds back exactly that sequence of
//! keys and drops it whole once it ends like a reply; anything else is let through. A late
//! DA1 reply needs nothing: crossterm parses it and keeps it out of the events.

use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::render::theme::{Rgb, parse_osc11_reply};

/// What is written to the terminal: the background colour query, then DA1.
pub const QUERY: &[u8] = b"\x1b]11;?\x07\x1b[c";

/// How long a terminal that answers nothing delays the start.
pub const WAIT: Duration = Duration::from_millis(150);

/// How much longer a reply that has begun may take to end.
pub const FINISH_WAIT: Duration = Duration::from_millis(100);

/// The longest colour a reply may carry (`rgba:ffff/ffff/ffff/ffff` is 24 bytes).
const MAX_SPEC: usize = 48;

/// What the terminal said, and what else was read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    /// The background colour, when the terminal told it.
    pub background: Option<Rgb>,
    /// Bytes read that are no reply (keys typed meanwhile), in order.
    pub other: Vec<u8>,
    /// Neither reply came in time: the terminal may still answer, late.
    pub late_reply: bool,
}

/// The bytes read so far, sorted: replies out, everything else kept in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Replies {
    /// An OSC 11 reply was read; its colour when it could be read.
    pub background: Option<Option<Rgb>>,
    /// The DA1 reply was read (the terminal has answered all it will).
    pub device_attributes: bool,
    /// Everything that is not a reply.
    pub other: Vec<u8>,
    /// The last bytes, when they may be the start of a reply (more is to be read).
    pub pending: Vec<u8>,
}

impl Replies {
    /// Nothing more is to be waited for.
    pub fn done(&self) -> bool {
        self.background.is_some() || self.device_attributes
    }
}

/// What a reply starting at the front of `bytes` is.
enum Found {
    /// An OSC 11 reply this many bytes long, with its colour.
    Background(usize, Option<Rgb>),
    /// A DA1 reply this many bytes long.
    DeviceAttributes(usize),
    /// Could be a reply, but the bytes end first.
    Partial,
    /// Not a reply.
    No,
}

/// Takes the terminal's replies out of `bytes` (read after [`QUERY`]).
pub fn split_replies(bytes: &[u8]) -> Replies {
    let mut replies = Replies::default();
    let mut at = 0;
    while at < bytes.len() {
        match reply_at(&bytes[at..]) {
            Found::Background(len, color) => {
                replies.background = Some(color);
                at += len;
            }
            Found::DeviceAttributes(len) => {
                replies.device_attributes = true;
                at += len;
            }
            Found::Partial => {
                replies.pending = bytes[at..].to_vec();
                break;
            }
            Found::No => {
                replies.other.push(bytes[at]);
                at += 1;
            }
        }
    }
    replies
}

fn reply_at(bytes: &[u8]) -> Found {
    const OSC11: &[u8] = b"\x1b]11;";
    const DA1: &[u8] = b"\x1b[?";
    if bytes.len() < OSC11.len() && OSC11.starts_with(bytes) {
        return Found::Partial;
    }
    if let Some(rest) = bytes.strip_prefix(OSC11) {
        // The colour runs to BEL or ESC \; a reply too long to be one is no reply.
        for (i, &b) in rest.iter().enumerate().take(MAX_SPEC + 1) {
            let end = match (b, rest.get(i + 1)) {
                (0x07, _) => OSC11.len() + i + 1,
                (0x1b, Some(b'\\')) => OSC11.len() + i + 2,
                (0x1b, Some(_)) => return Found::No,
                (0x1b, None) => return Found::Partial,
                _ => continue,
            };
            return Found::Background(end, parse_osc11_reply(&bytes[..end]));
        }
        return if rest.len() > MAX_SPEC {
            Found::No
        } else {
            Found::Partial
        };
    }
    if bytes.len() < DA1.len() && DA1.starts_with(bytes) && bytes.len() > 1 {
        return Found::Partial;
    }
    if let Some(rest) = bytes.strip_prefix(DA1) {
        for (i, b) in rest.iter().enumerate() {
            match b {
                b'0'..=b'9' | b';' => continue,
                b'c' => return Found::DeviceAttributes(DA1.len() + i + 1),
                _ => return Found::No,
            }
        }
        return Found::Partial;
    }
    Found::No
}

/// Whether a terminal of this `TERM` is worth asking: the Linux console prints the part of
/// an OSC it does not know, and a dumb terminal has no escapes at all.
pub fn worth_asking(term: Option<&str>) -> bool {
    !matches!(term, Some("linux" | "dumb"))
}

/// Asks the terminal on stdout and reads stdin (raw mode on, crossterm's reader not started).
#[cfg(unix)]
pub fn probe() -> Probe {
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::time::Instant;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    let mut out = std::io::stdout();
    if out.write_all(QUERY).and_then(|()| out.flush()).is_err() {
        return Probe::default();
    }
    let stdin = std::io::stdin();
    let fd = stdin.as_fd();
    let start = Instant::now();
    let mut read = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let replies = split_replies(&read);
        if replies.done() && replies.pending.is_empty() {
            break;
        }
        let limit = if !replies.pending.is_empty() {
            WAIT + FINISH_WAIT
        } else {
            WAIT
        };
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            break;
        }
        let Ok(timeout) = Timespec::try_from(left) else {
            break;
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => {}
            Ok(_) => match rustix::io::read(fd, &mut chunk) {
                Ok(0) => break,
                Ok(n) => read.extend_from_slice(&chunk[..n]),
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(_) => break,
            },
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
    }
    let mut replies = split_replies(&read);
    // What was left waiting is typed keys (a lone Esc, Alt+[), unless a colour reply had
    // begun: its end comes too late, and its start is not the person's.
    if !replies.pending.starts_with(b"\x1b]") {
        replies.other.append(&mut replies.pending);
    }
    Probe {
        background: replies.background.flatten(),
        late_reply: !replies.done(),
        other: replies.other,
    }
}

/// Elsewhere the terminal is not asked.
#[cfg(not(unix))]
pub fn probe() -> Probe {
    Probe::default()
}

/// Holds back a late OSC 11 reply that crossterm parsed as keys (Alt+], `11;rgb:…`, then
/// Ctrl+G for BEL or Alt+\ for `ESC \`) and drops it; any other keys pass, in order.
#[derive(Debug, Default)]
pub struct LateReplyFilter {
    armed: bool,
    held: Vec<Event>,
    /// The characters held after the Alt+].
    text: String,
}

impl LateReplyFilter {
    /// A filter that watches for a reply when `armed` (no reply came in time).
    pub fn new(armed: bool) -> Self {
        Self {
            armed,
            ..Self::default()
        }
    }

    /// Whether keys are held back, waiting to see if they are a reply.
    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// The next event read; returns what is to be handled now.
    pub fn feed(&mut self, event: Event) -> Vec<Event> {
        if !self.armed {
            return vec![event];
        }
        let key = match &event {
            Event::Key(key) if key.kind != KeyEventKind::Release => Some(*key),
            _ => None,
        };
        if self.held.is_empty() {
            if key.is_some_and(|k| is(k, ']', KeyModifiers::ALT)) {
                self.held.push(event);
                return Vec::new();
            }
            return vec![event];
        }
        let Some(key) = key else {
            return self.release_with(event);
        };
        let terminator = is(key, 'g', KeyModifiers::CONTROL) || is(key, '\\', KeyModifiers::ALT);
        if terminator {
            if self.text.starts_with("11;")
                && parse_osc11_reply(format!("\x1b]{}\x07", self.text).as_bytes()).is_some()
            {
                // The late reply, whole: dropped, and nothing more is expected.
                self.held.clear();
                self.text.clear();
                self.armed = false;
                return Vec::new();
            }
            return self.release_with(event);
        }
        let plain = (key.modifiers - KeyModifiers::SHIFT).is_empty();
        if let (KeyCode::Char(c), true) = (key.code, plain) {
            let mut text = self.text.clone();
            text.push(c);
            if could_be_reply(&text) {
                self.text = text;
                self.held.push(event);
                return Vec::new();
            }
        }
        self.release_with(event)
    }

    /// Lets the held keys through (they were not a reply, or nothing followed in time).
    pub fn flush(&mut self) -> Vec<Event> {
        self.text.clear();
        std::mem::take(&mut self.held)
    }

    fn release_with(&mut self, event: Event) -> Vec<Event> {
        let mut events = self.flush();
        events.push(event);
        events
    }
}

fn is(key: KeyEvent, c: char, modifiers: KeyModifiers) -> bool {
    key.code == KeyCode::Char(c) && key.modifiers == modifiers
}

/// Whether `text` can begin the body of an OSC 11 reply (`11;rgb:ffff/…`).
fn could_be_reply(text: &str) -> bool {
    if text.len() <= 3 {
        return "11;".starts_with(text);
    }
    text.starts_with("11;")
        && text.len() <= 3 + MAX_SPEC
        && text[3..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ':' || c == '/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const WHITE: Rgb = Rgb {
        r: 1.0,
        g: 1.0,
        b: 1.0,
    };

    #[test]
    fn the_replies_are_taken_out_and_typed_keys_kept_in_order() {
        let replies = split_replies(b"ab\x1b]11;rgb:ffff/ffff/ffff\x07c\x1b[?62;22c\r");
        assert_eq!(
            replies,
            Replies {
                background: Some(Some(WHITE)),
                device_attributes: true,
                other: b"abc\r".to_vec(),
                pending: Vec::new(),
            }
        );
        let st = split_replies(b"\x1b]11;rgb:ff/ff/ff\x1b\\x");
        assert_eq!(st.background, Some(Some(WHITE)));
        assert_eq!(st.other, b"x");
    }

    #[test]
    fn a_reply_cut_short_is_waited_for_and_not_typed() {
        for cut in [
            &b"k\x1b"[..],
            b"k\x1b]1",
            b"k\x1b]11;rgb:ff",
            b"k\x1b]11;rgb:ff/ff/ff\x1b",
            b"k\x1b[?62;",
        ] {
            let replies = split_replies(cut);
            assert_eq!(replies.pending, cut[1..], "{}", cut.escape_ascii());
            assert_eq!(replies.other, b"k", "{}", cut.escape_ascii());
            assert!(!replies.done());
        }
    }

    #[test]
    fn da1_alone_means_no_colour_and_no_more_waiting() {
        let replies = split_replies(b"\x1b[?1;2c");
        assert!(replies.done());
        assert_eq!(replies.background, None);
        let unreadable = split_replies(b"\x1b]11;nonsense\x07");
        assert_eq!(
            unreadable.background,
            Some(None),
            "answered, colour unknown"
        );
        assert!(unreadable.other.is_empty());
    }

    #[test]
    fn keys_that_only_look_like_a_reply_are_kept() {
        // An arrow key, Alt+] and text, an overlong "reply": all typed.
        let bytes = b"\x1b[A\x1b]x";
        assert_eq!(split_replies(bytes).other, bytes.to_vec());
        let long = [&b"\x1b]11;"[..], &[b'a'; 60]].concat();
        let replies = split_replies(&long);
        assert!(replies.pending.is_empty());
        assert_eq!(replies.other, long);
    }

    #[test]
    fn the_linux_console_and_dumb_terminals_are_not_asked() {
        assert!(worth_asking(Some("xterm-256color")));
        assert!(worth_asking(None));
        assert!(!worth_asking(Some("linux")));
        assert!(!worth_asking(Some("dumb")));
    }

    fn key(c: char, modifiers: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(KeyCode::Char(c), modifiers))
    }

    /// The keys crossterm makes of a reply.
    fn reply_keys(body: &str, bel: bool) -> Vec<Event> {
        let mut keys = vec![key(']', KeyModifiers::ALT)];
        keys.extend(body.chars().map(|c| {
            let shift = if c.is_uppercase() {
                KeyModifiers::SHIFT
            } else {
                KeyModifiers::NONE
            };
            key(c, shift)
        }));
        keys.push(if bel {
            key('g', KeyModifiers::CONTROL)
        } else {
            key('\\', KeyModifiers::ALT)
        });
        keys
    }

    fn feed_all(filter: &mut LateReplyFilter, events: Vec<Event>) -> Vec<Event> {
        events.into_iter().flat_map(|e| filter.feed(e)).collect()
    }

    #[test]
    fn a_late_reply_parsed_as_keys_is_dropped_and_the_keys_around_it_pass() {
        let mut filter = LateReplyFilter::new(true);
        let mut events = vec![key('a', KeyModifiers::NONE)];
        events.extend(reply_keys("11;rgb:FFFF/ffff/ffff", true));
        events.push(key('b', KeyModifiers::NONE));
        assert_eq!(
            feed_all(&mut filter, events),
            vec![key('a', KeyModifiers::NONE), key('b', KeyModifiers::NONE)]
        );
        // Only one reply is expected: a second one is typed as it comes.
        let again = reply_keys("11;rgb:0/0/0", false);
        assert_eq!(feed_all(&mut filter, again.clone()), again);
    }

    #[test]
    fn keys_that_are_not_a_reply_are_released_in_order() {
        let mut filter = LateReplyFilter::new(true);
        let typed = vec![
            key(']', KeyModifiers::ALT),
            key('1', KeyModifiers::NONE),
            key('x', KeyModifiers::NONE),
        ];
        assert_eq!(feed_all(&mut filter, typed.clone()), typed);
        // Ctrl+G after something that is no colour opens the editor as usual.
        let edit = reply_keys("11;", true);
        assert_eq!(feed_all(&mut filter, edit.clone()), edit);
        // Held keys come out when nothing follows in time.
        assert!(filter.feed(key(']', KeyModifiers::ALT)).is_empty());
        assert!(filter.holding());
        assert_eq!(filter.flush(), vec![key(']', KeyModifiers::ALT)]);
        // Unarmed (the terminal answered in time), nothing is held.
        let mut off = LateReplyFilter::new(false);
        let reply = reply_keys("11;rgb:ff/ff/ff", true);
        assert_eq!(feed_all(&mut off, reply.clone()), reply);
    }
}
