//! Paths of a Windows exec server, seen from an agent on Unix.
//!
//! The server names paths as `file:///C:/Users/x`; on this side they become `/C:/Users/x`
//! (what a `file://` URI's path is here), so that joining, parents and the URIs sent back
//! all work unchanged. The model reads and writes them the Windows way, `C:\Users\x` or
//! `C:/Users/x`: [`WindowsPaths`] turns one form into the other where paths cross.

use std::path::Path;

/// The translation for one Windows environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowsPaths;

fn drive_prefix(text: &str) -> Option<(char, &str)> {
    let mut chars = text.chars();
    let letter = chars.next().filter(char::is_ascii_alphabetic)?;
    let rest = chars.as_str().strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with(['\\', '/'])).then_some((letter, rest))
}

impl WindowsPaths {
    /// A path the model wrote (`C:\x\y`, `C:/x`, `src\lib.rs`) in this side's form
    /// (`/C:/x/y`, `src/lib.rs`). Anything else is left as it is.
    pub fn local_form(self, text: &str) -> String {
        let slashed = text.replace('\\', "/");
        match drive_prefix(&slashed) {
            Some((letter, "")) => format!("/{letter}:/"),
            Some((letter, rest)) => format!("/{letter}:{rest}"),
            None => slashed,
        }
    }

    /// This side's form of a server path (`/C:/x/y`) as the model should read it (`C:\x\y`).
    pub fn model_form(self, path: &Path) -> String {
        let text = path.display().to_string();
        match text.strip_prefix('/').and_then(drive_prefix) {
            Some((letter, rest)) => format!("{letter}:{}", rest.replace('/', "\\")),
            None => text,
        }
    }

    /// A tool's output with every `/C:/…` put back as `C:/…` (forward slashes, which
    /// Windows takes too, so nothing else in the text is touched).
    pub fn output_for_model(self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find('/') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            let starts_path = out.is_empty() || out.ends_with(|c: char| !c.is_alphanumeric());
            match drive_prefix(after) {
                Some((letter, tail)) if starts_path => {
                    out.push(letter);
                    out.push(':');
                    rest = tail;
                }
                _ => {
                    out.push('/');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn model_paths_and_server_paths_translate_both_ways() {
        let w = WindowsPaths;
        assert_eq!(w.local_form(r"Z:\tmp\x\notes.txt"), "/Z:/tmp/x/notes.txt");
        assert_eq!(w.local_form("c:/Users/a"), "/c:/Users/a");
        assert_eq!(w.local_form("C:"), "/C:/");
        assert_eq!(w.local_form(r"src\lib.rs"), "src/lib.rs");
        assert_eq!(w.local_form("/Z:/already"), "/Z:/already");
        assert_eq!(w.model_form(Path::new("/Z:/tmp/x")), r"Z:\tmp\x");
        assert_eq!(w.model_form(Path::new("relative/p")), "relative/p");
        assert_eq!(
            w.output_for_model("Absolute path: /Z:/tmp/x\n/Z:/tmp/x/a.txt and a/b /C:"),
            "Absolute path: Z:/tmp/x\nZ:/tmp/x/a.txt and a/b C:"
        );
        assert_eq!(w.output_for_model("http://x/a:b"), "http://x/a:b");
    }
}
