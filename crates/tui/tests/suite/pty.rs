//! Runs the `osprey` binary in a pseudo-terminal and reads its screen through a vt100
//! parser: type keys, wait for text. The terminal's cursor-position queries are answered
//! from the parser, as a real terminal would; its background-colour query (OSC 11) is
//! answered as the test chooses ([`Background`]): not at all by default, like a terminal
//! without OSC 11.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use osprey_test_support::TempHome;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// How long a wait for the screen may take (the machine may be busy building).
pub const WAIT: Duration = Duration::from_secs(60);

/// The `osprey` binary built next to this test.
pub fn osprey_bin() -> std::path::PathBuf {
    osprey_test_support::workspace_binary("osprey")
}

/// How the pretend terminal answers `ESC ] 11 ; ? BEL`.
#[derive(Debug, Clone, Default)]
pub enum Background {
    /// Never (nor the DA1 query after it).
    #[default]
    Silent,
    /// At once with this colour (`rgb:ffff/ffff/ffff`), ended by `ESC \`.
    Answer(&'static str),
    /// With this colour, but only after this long (a slow link), ended by BEL.
    Late(&'static str, Duration),
}

pub struct PtySession {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn Child + Send + Sync>,
    /// Kept open while the program runs; resizing it sends SIGWINCH.
    master: Box<dyn MasterPty + Send>,
    /// Everything the program wrote, for failure messages.
    raw: Arc<Mutex<Vec<u8>>>,
    /// When each background query was read, and when the program next wrote after it.
    queries: Queries,
    /// How many background answers were written to the program.
    answered: Arc<AtomicUsize>,
}

/// When each background query was read, and when the program next wrote after it.
type Queries = Arc<Mutex<Vec<(Instant, Option<Instant>)>>>;

const DSR: &[u8] = b"\x1b[6n";
const OSC11: &[u8] = b"\x1b]11;?\x07";

impl PtySession {
    pub fn spawn(home: &TempHome, cwd: &Path, args: &[&str], rows: u16, cols: u16) -> Self {
        Self::spawn_with_env(home, cwd, args, rows, cols, &[])
    }

    /// As [`PtySession::spawn`], with more environment variables.
    pub fn spawn_with_env(
        home: &TempHome,
        cwd: &Path,
        args: &[&str],
        rows: u16,
        cols: u16,
        extra_env: &[(&str, &str)],
    ) -> Self {
        Self::spawn_with_terminal(home, cwd, args, rows, cols, extra_env, Background::Silent)
    }

    /// As [`PtySession::spawn_with_env`], with a terminal that answers the background query
    /// as `background` says.
    pub fn spawn_with_terminal(
        home: &TempHome,
        cwd: &Path,
        args: &[&str],
        rows: u16,
        cols: u16,
        extra_env: &[(&str, &str)],
        background: Background,
    ) -> Self {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let mut cmd = CommandBuilder::new(osprey_bin());
        cmd.args(args);
        cmd.cwd(cwd);
        cmd.env_clear();
        cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd.env("HOME", home.path());
        cmd.env("SHELL", "/bin/bash");
        cmd.env("TERM", "xterm-256color");
        for (key, value) in home.env() {
            cmd.env(key, value);
        }
        for (key, value) in extra_env {
            cmd.env(key, value);
        }
        let child = pair.slave.spawn_command(cmd).expect("osprey starts");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 2000)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let queries: Queries = Arc::default();
        let answered = Arc::new(AtomicUsize::new(0));
        {
            let answered = Arc::clone(&answered);
            let parser = Arc::clone(&parser);
            let writer = Arc::clone(&writer);
            let raw = Arc::clone(&raw);
            let queries = Arc::clone(&queries);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let mut pending: Vec<u8> = Vec::new();
                loop {
                    let n = match reader.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => n,
                    };
                    if let Some((_, next)) = queries.lock().unwrap().last_mut() {
                        next.get_or_insert_with(Instant::now);
                    }
                    raw.lock().unwrap().extend_from_slice(&buf[..n]);
                    pending.extend_from_slice(&buf[..n]);
                    // Feed up to each query, answer it, and go on.
                    while let Some((at, query)) = first_query(&pending) {
                        let mut parser = parser.lock().unwrap();
                        parser.process(&pending[..at]);
                        if query == DSR {
                            let (row, col) = parser.screen().cursor_position();
                            let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                            let mut w = writer.lock().unwrap();
                            let _ = w.write_all(answer.as_bytes());
                            let _ = w.flush();
                        } else {
                            // Output after the query and its DA1 in the same read came
                            // after the wait too (read late, it cannot be timed).
                            let rest = &pending[at + query.len()..];
                            let rest = rest.strip_prefix(b"\x1b[c").unwrap_or(rest);
                            let now = Instant::now();
                            let next = (!rest.is_empty()).then_some(now);
                            queries.lock().unwrap().push((now, next));
                            answer_background(&background, &writer, &answered);
                        }
                        pending.drain(..at + query.len());
                    }
                    // Keep a possible partial query for the next read.
                    let keep = [DSR, OSC11]
                        .iter()
                        .flat_map(|q| {
                            (1..q.len()).rev().find(|k| {
                                pending.len() >= *k && q.starts_with(&pending[pending.len() - k..])
                            })
                        })
                        .max()
                        .unwrap_or(0);
                    let upto = pending.len() - keep;
                    parser.lock().unwrap().process(&pending[..upto]);
                    pending.drain(..upto);
                }
            });
        }
        Self {
            parser,
            writer,
            child,
            master: pair.master,
            raw,
            queries,
            answered,
        }
    }

    /// How many answers to the background query the terminal has written.
    pub fn background_answers(&self) -> usize {
        self.answered.load(Ordering::SeqCst)
    }

    /// When the program asked for the background, and how long it then went without
    /// writing anything (it waits for the answer in between), once per query.
    pub fn background_queries(&self) -> Vec<Option<Duration>> {
        self.queries
            .lock()
            .unwrap()
            .iter()
            .map(|(asked, next)| next.map(|n| n.saturating_duration_since(*asked)))
            .collect()
    }

    /// The scrollback and the screen, top to bottom.
    pub fn history(&self) -> String {
        let mut parser = self.parser.lock().unwrap();
        let (rows, cols) = parser.screen().size();
        let rows = usize::from(rows);
        parser.set_scrollback(usize::MAX);
        // vt100 0.15 cannot show a scrollback offset larger than the screen (its
        // visible_rows underflows), so only the last screenful of scrollback is read.
        let depth = parser.screen().scrollback().min(rows);
        let mut lines: Vec<String> = Vec::new();
        // Pages of the scrollback, oldest first; the last page may overlap the one before.
        let mut offset = depth;
        let mut seen_until = 0usize;
        loop {
            parser.set_scrollback(offset);
            let first_line = depth - offset;
            for (i, row) in parser.screen().rows(0, cols).enumerate() {
                if first_line + i >= seen_until {
                    lines.push(row.trim_end().to_owned());
                }
            }
            seen_until = first_line + rows;
            if offset == 0 {
                break;
            }
            offset = offset.saturating_sub(rows);
        }
        parser.set_scrollback(0);
        lines.join("\n")
    }

    /// Resizes the terminal, as a person dragging the window would.
    pub fn resize(&self, rows: u16, cols: u16) {
        self.parser.lock().unwrap().set_size(rows, cols);
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the pty");
    }

    /// The pty's local mode flags as words (`ICANON`, `ECHO`, …): raw mode clears
    /// `ICANON` and `ECHO`, a restored terminal has them again. They outlive the program.
    pub fn local_flags(&self) -> Vec<String> {
        let termios = self.master.get_termios().expect("the pty's termios");
        format!("{:?}", termios.local_flags)
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    }

    pub fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().unwrap();
        w.write_all(bytes).expect("write to the pty");
        w.flush().expect("flush the pty");
    }

    /// Whether the screen (with its scrollback) satisfies `check` within `within`.
    pub fn wait_for_within(&self, within: Duration, check: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if check(&self.history()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        check(&self.history())
    }

    /// Waits until the screen (with its scrollback) satisfies `check`.
    pub fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let text = self.history();
            if check(&text) {
                return text;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting for {what}; the screen and scrollback:\n{text}\n--- raw output tail:\n{}",
                    self.raw_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(text, |screen| screen.contains(text))
    }

    /// How many bytes the program has written so far.
    pub fn raw_len(&self) -> usize {
        self.raw.lock().unwrap().len()
    }

    /// Everything the program wrote, escapes included.
    pub fn raw(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    fn raw_tail(&self) -> String {
        let raw = self.raw.lock().unwrap();
        let start = raw.len().saturating_sub(3000);
        String::from_utf8_lossy(&raw[start..])
            .escape_debug()
            .to_string()
    }

    /// The program's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Waits for the program to exit and returns whether it succeeded.
    pub fn wait_exit(&mut self) -> bool {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("child status") {
                return status.success();
            }
            if Instant::now() > deadline {
                panic!(
                    "osprey did not exit; the screen:\n{}\n--- raw output tail:\n{}",
                    self.history(),
                    self.raw_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The first query in `bytes` (where, and which).
fn first_query(bytes: &[u8]) -> Option<(usize, &'static [u8])> {
    [DSR, OSC11]
        .into_iter()
        .filter_map(|q| {
            bytes
                .windows(q.len())
                .position(|w| w == q)
                .map(|at| (at, q))
        })
        .min_by_key(|(at, _)| *at)
}

fn answer_background(
    background: &Background,
    writer: &Arc<Mutex<Box<dyn Write + Send>>>,
    answered: &Arc<AtomicUsize>,
) {
    let (reply, delay) = match background {
        Background::Silent => return,
        Background::Answer(color) => (format!("\x1b]11;{color}\x1b\\"), Duration::ZERO),
        Background::Late(color, delay) => (format!("\x1b]11;{color}\x07"), *delay),
    };
    let writer = Arc::clone(writer);
    let answered = Arc::clone(answered);
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let mut w = writer.lock().unwrap();
        let _ = w.write_all(reply.as_bytes());
        let _ = w.flush();
        answered.fetch_add(1, Ordering::SeqCst);
    });
}

impl Drop for PtySession {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
