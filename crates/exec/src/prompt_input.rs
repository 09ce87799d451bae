//! Where the task text comes from: the argument, standard input, or both.
//!
//! Standard input is read only when it is not a terminal. Without a prompt argument it *is*
//! the prompt, so it is read to its end however long that takes. With a prompt argument it
//! is extra context (`cargo test 2>&1 | osprey exec "fix it"`), and an input that never
//! starts must not hold the run forever: under ssh or a CI wrapper stdin is often a pipe
//! nobody writes to or closes. So the reader waits [`STDIN_START_LIMIT`] for the first byte
//! (or the end of the input); if nothing comes, the run goes on with the prompt alone and
//! says so. Once input has started it is read to its end. The reading happens on a plain
//! thread, which a stuck pipe may keep blocked until the process exits; that is harmless.
//!
//! Input that is already there (a file, `</dev/null`, `echo … |`) is read without a word;
//! after a short quiet moment stderr says that stdin is being read and how to skip it.

use std::io::{Read, Write};
use std::sync::mpsc;
use std::time::Duration;

/// How long a prompt argument waits for piped input to start before going on without it.
pub const STDIN_START_LIMIT: Duration = Duration::from_secs(5);

/// Input that starts within this needs no notice on stderr.
const NOTICE_AFTER: Duration = Duration::from_millis(200);

#[derive(Debug, PartialEq, Eq)]
pub enum PromptError {
    /// No prompt argument and standard input is a terminal: nothing to read.
    Missing,
    /// Reading standard input failed.
    Read(String),
    /// Everything was read, and it was empty.
    Empty,
}

impl std::fmt::Display for PromptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => f.write_str(
                "no prompt given: pass the task as an argument (osprey exec \"…\") or pipe it on standard input (echo \"…\" | osprey exec -)",
            ),
            Self::Read(e) => write!(f, "could not read the prompt from standard input: {e}"),
            Self::Empty => f.write_str(
                "the prompt is empty: pass the task as an argument or pipe it on standard input",
            ),
        }
    }
}

/// Standard input as the prompt resolver sees it.
pub struct Stdin<R> {
    pub reader: R,
    /// A terminal is never read: nobody would know it waits for typing.
    pub is_terminal: bool,
    /// How long a prompt argument waits for piped input to start ([`STDIN_START_LIMIT`]).
    pub start_limit: Duration,
}

/// Resolves the prompt; `notices` (stderr) hears when stdin is being read and when it was
/// given up on.
pub fn resolve_prompt<R: Read + Send + 'static>(
    arg: Option<&str>,
    stdin: Stdin<R>,
    notices: &mut dyn Write,
) -> Result<String, PromptError> {
    let prompt = match arg {
        None | Some("-") => {
            if stdin.is_terminal {
                return Err(PromptError::Missing);
            }
            let input = PipedInput::start(stdin.reader)?;
            if !input.started_within(NOTICE_AFTER) && arg.is_none() {
                let _ = writeln!(notices, "Reading prompt from stdin...");
            }
            input.finish()?
        }
        Some(text) if stdin.is_terminal => text.to_string(),
        Some(text) => {
            let input = PipedInput::start(stdin.reader)?;
            let piped = if input.started_within(NOTICE_AFTER) {
                Some(input.finish()?)
            } else {
                let _ = writeln!(
                    notices,
                    "Reading additional input from stdin... (run with </dev/null to skip it)"
                );
                let rest = stdin.start_limit.saturating_sub(NOTICE_AFTER);
                if input.started_within(rest) {
                    Some(input.finish()?)
                } else {
                    let _ = writeln!(
                        notices,
                        "Nothing arrived on stdin within {} s, so it is not read; going on with the prompt alone. Pipe the input in, or run with </dev/null to skip this wait.",
                        stdin.start_limit.as_secs()
                    );
                    None
                }
            };
            match piped {
                Some(piped) if !piped.trim().is_empty() => format!(
                    "{text}\n\n<stdin>\n{}\n</stdin>",
                    piped.trim_end_matches('\n')
                ),
                _ => text.to_string(),
            }
        }
    };
    if prompt.trim().is_empty() {
        return Err(PromptError::Empty);
    }
    Ok(prompt)
}

/// Standard input read to its end on a thread of its own, so the caller can stop waiting for
/// it to start.
struct PipedInput {
    /// A message for every read that returned (data, the end, or an error).
    activity: mpsc::Receiver<()>,
    done: mpsc::Receiver<Result<Vec<u8>, String>>,
}

impl PipedInput {
    fn start<R: Read + Send + 'static>(mut reader: R) -> Result<Self, PromptError> {
        let (activity_tx, activity) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("osprey-exec-stdin".to_string())
            .spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let result = loop {
                    let read = reader.read(&mut chunk);
                    let _ = activity_tx.send(());
                    match read {
                        Ok(0) => break Ok(buf),
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e.to_string()),
                    }
                };
                let _ = done_tx.send(result);
            })
            .map_err(|e| PromptError::Read(format!("no thread to read it on: {e}")))?;
        Ok(Self { activity, done })
    }

    /// Whether input (or its end) arrived within `limit`.
    fn started_within(&self, limit: Duration) -> bool {
        !matches!(
            self.activity.recv_timeout(limit),
            Err(mpsc::RecvTimeoutError::Timeout)
        )
    }

    /// Waits for the end of the input.
    fn finish(self) -> Result<String, PromptError> {
        let bytes = self
            .done
            .recv()
            .map_err(|_| PromptError::Read("the reading thread stopped".to_string()))?
            .map_err(PromptError::Read)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn piped(input: &'static [u8]) -> Stdin<&'static [u8]> {
        Stdin {
            reader: input,
            is_terminal: false,
            start_limit: STDIN_START_LIMIT,
        }
    }

    fn terminal() -> Stdin<&'static [u8]> {
        Stdin {
            reader: b"never read",
            is_terminal: true,
            start_limit: STDIN_START_LIMIT,
        }
    }

    fn resolve<R: Read + Send + 'static>(
        arg: Option<&str>,
        stdin: Stdin<R>,
    ) -> (Result<String, PromptError>, String) {
        let mut notices = Vec::new();
        let result = resolve_prompt(arg, stdin, &mut notices);
        (result, String::from_utf8(notices).unwrap())
    }

    #[test]
    fn argument_alone() {
        assert_eq!(
            resolve(Some("do it"), terminal()),
            (Ok("do it".to_string()), String::new())
        );
    }

    #[test]
    fn dash_reads_stdin() {
        assert_eq!(
            resolve(Some("-"), piped(b"from stdin\n")),
            (Ok("from stdin\n".to_string()), String::new())
        );
    }

    #[test]
    fn argument_with_piped_stdin_appends_a_block() {
        assert_eq!(
            resolve(Some("explain"), piped(b"log line\n")).0.unwrap(),
            "explain\n\n<stdin>\nlog line\n</stdin>"
        );
    }

    #[test]
    fn terminal_stdin_without_prompt_is_an_error_not_a_hang() {
        assert_eq!(resolve(None, terminal()).0, Err(PromptError::Missing));
    }

    #[test]
    fn empty_prompt_is_an_error() {
        assert_eq!(resolve(None, piped(b"  \n")).0, Err(PromptError::Empty));
    }

    #[test]
    fn an_idle_pipe_is_given_up_on_with_a_prompt_argument() {
        let (reader, writer) = std::io::pipe().unwrap();
        let stdin = Stdin {
            reader,
            is_terminal: false,
            start_limit: Duration::from_millis(400),
        };
        let started = std::time::Instant::now();
        let (result, notices) = resolve(Some("task"), stdin);
        assert_eq!(result, Ok("task".to_string()));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            notices.contains("Reading additional input from stdin"),
            "{notices}"
        );
        assert!(notices.contains("</dev/null"), "{notices}");
        assert!(
            notices.contains("going on with the prompt alone"),
            "{notices}"
        );
        drop(writer);
    }

    #[test]
    fn input_that_starts_late_is_still_read_to_its_end() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let feeder = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            writer.write_all(b"late\n").unwrap();
            std::thread::sleep(Duration::from_millis(300));
            writer.write_all(b"and slow\n").unwrap();
        });
        let stdin = Stdin {
            reader,
            is_terminal: false,
            start_limit: Duration::from_secs(5),
        };
        let (result, notices) = resolve(Some("task"), stdin);
        feeder.join().unwrap();
        assert_eq!(
            result,
            Ok("task\n\n<stdin>\nlate\nand slow\n</stdin>".to_string())
        );
        assert!(
            notices.contains("Reading additional input from stdin"),
            "{notices}"
        );
        assert!(!notices.contains("prompt alone"), "{notices}");
    }
}
