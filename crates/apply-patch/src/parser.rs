//! The patch language: data types and the strict and lenient parsers.
//!
//! Both parsers share one body parser; they differ only in how they find the
//! `*** Begin Patch` / `*** End Patch` frame and how exactly marker lines must
//! be spelled. The strict parser accepts exactly the grammar in
//! [`crate::PATCH_LARK_GRAMMAR`] (the last newline is optional). The lenient
//! parser additionally strips the wrappers models send (heredocs, `bash -lc`,
//! surrounding whitespace) and tolerates padding around marker lines.

use std::path::PathBuf;

use crate::invocation::unwrap_patch_text;

pub(crate) const BEGIN_PATCH: &str = "*** Begin Patch";
pub(crate) const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// A parsed patch: the file operations in the order they appear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations, applied in order.
    pub operations: Vec<FileOp>,
    /// The patch text itself, from `*** Begin Patch` to `*** End Patch`, without
    /// any heredoc or shell wrapper it arrived in.
    pub text: String,
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File: <path>` followed by `+` lines: create a new file.
    Add {
        /// The path as written in the patch.
        path: PathBuf,
        /// The new file's content; every line ends with a newline.
        contents: String,
    },
    /// `*** Delete File: <path>`: remove an existing file.
    Delete {
        /// The path as written in the patch.
        path: PathBuf,
    },
    /// `*** Update File: <path>` with an optional `*** Move to:` and chunks.
    Update {
        /// The path as written in the patch.
        path: PathBuf,
        /// The destination when the file is also renamed.
        move_to: Option<PathBuf>,
        /// The chunks, in file order.
        chunks: Vec<Chunk>,
    },
}

impl FileOp {
    /// The path the operation names first (the source of a move).
    pub fn path(&self) -> &PathBuf {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// What one line of a chunk does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// ` line`: must be present, is kept (with the file's text for it).
    Context,
    /// `-line`: must be present, is removed.
    Removed,
    /// `+line`: is added.
    Added,
}

/// One `@@` chunk of an update: lines to find and what replaces them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Text after `@@ `: a line that must occur before the chunk (usually a
    /// function or class header); the search for the chunk starts after it.
    pub anchor: Option<String>,
    /// The context and removed lines, in order: what must be found.
    pub old_lines: Vec<String>,
    /// The context and added lines, in order: what replaces `old_lines`.
    pub new_lines: Vec<String>,
    /// The kind of every chunk line in order; context lines count in both
    /// `old_lines` and `new_lines`.
    pub kinds: Vec<LineKind>,
    /// Set by `*** End of File`: the chunk must match at the end of the file.
    pub end_of_file: bool,
    /// The patch line on which the chunk starts (1-based), for messages.
    pub line: usize,
}

/// Why a patch text could not be parsed. Every message names the line and
/// what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The input held nothing but whitespace.
    #[error(
        "Invalid patch: the patch is empty; send text from '*** Begin Patch' to '*** End Patch'"
    )]
    Empty,
    /// The first line is not `*** Begin Patch`.
    #[error(
        "Invalid patch: line {line}: expected '*** Begin Patch' as the first line, found '{found}'"
    )]
    MissingBegin { line: usize, found: String },
    /// The last line is not `*** End Patch`.
    #[error(
        "Invalid patch: line {line}: expected '*** End Patch' as the last line, found '{found}'"
    )]
    MissingEnd { line: usize, found: String },
    /// A line where a file operation header should start.
    #[error(
        "Invalid patch: line {line}: expected a file operation ('*** Add File: <path>', \
         '*** Delete File: <path>' or '*** Update File: <path>'), found '{found}'"
    )]
    InvalidHeader { line: usize, found: String },
    /// A header whose path is empty.
    #[error("Invalid patch: line {line}: '{marker}' must be followed by a file path")]
    EmptyPath { line: usize, marker: String },
    /// `*** Update File:` with no chunk.
    #[error(
        "Invalid patch: line {line}: '*** Update File: {path}' has no changes; add at least one \
         chunk of ' ', '-' and '+' lines"
    )]
    EmptyUpdate { line: usize, path: String },
    /// An `@@` header (or `*** End of File`) with no lines in its chunk.
    #[error(
        "Invalid patch: line {line}: expected chunk lines starting with ' ', '-' or '+' after the '@@' header"
    )]
    EmptyChunk { line: usize },
    /// A chunk whose first line is neither context, removal nor addition.
    #[error(
        "Invalid patch: line {line}: expected a chunk line starting with ' ' (context), '-' \
         (removed) or '+' (added), found '{found}'"
    )]
    BadChunkLine { line: usize, found: String },
    /// A second chunk that does not start with `@@`.
    #[error("Invalid patch: line {line}: expected '@@' to start the next chunk, found '{found}'")]
    MissingChunkHeader { line: usize, found: String },
    /// A shell or heredoc wrapper that could not be understood.
    #[error("Invalid patch: {message}")]
    Wrapper { message: String },
    /// A bare patch given as a command, without `apply_patch` in front.
    #[error(
        "Invalid patch: the patch was given as a command without 'apply_patch'; call it as \
         [\"apply_patch\", \"<patch>\"]"
    )]
    ImplicitInvocation,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Strict,
    Lenient,
}

/// Parses a patch leniently: accepts the text as models send it (inside a
/// heredoc, a `bash -lc` script, with padding around markers or without a
/// final newline). Line numbers in errors count from the start of the patch
/// text after any wrapper was removed.
pub fn parse_patch(text: &str) -> Result<Patch, ParseError> {
    let unwrapped = unwrap_patch_text(text)?;
    match unwrapped {
        Some((_, Some(dir))) => Err(ParseError::Wrapper {
            message: format!(
                "the patch text starts with 'cd {dir} &&', which a bare patch cannot honour; \
                 send the patch alone, with paths relative to the working directory"
            ),
        }),
        Some((body, None)) => parse_framed(&body, Mode::Lenient),
        None => parse_framed(text, Mode::Lenient),
    }
}

/// Parses a patch exactly by the grammar: first line `*** Begin Patch`, last
/// line `*** End Patch` (final newline optional), markers spelled exactly.
pub fn parse_patch_strict(text: &str) -> Result<Patch, ParseError> {
    parse_framed(text, Mode::Strict)
}

fn parse_framed(text: &str, mode: Mode) -> Result<Patch, ParseError> {
    // In lenient mode leading blank lines are skipped but still counted, so
    // line numbers match what the sender wrote.
    let (first_line_no, body) = match mode {
        Mode::Strict => {
            let body = text
                .strip_suffix("\r\n")
                .or_else(|| text.strip_suffix('\n'))
                .unwrap_or(text);
            (1, body)
        }
        Mode::Lenient => {
            let trimmed_start = text.trim_start();
            let skipped = &text[..text.len() - trimmed_start.len()];
            let newlines = skipped.bytes().filter(|b| *b == b'\n').count();
            (1 + newlines, trimmed_start.trim_end())
        }
    };
    if body.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    let lines: Vec<&str> = body.lines().collect();
    let marker = |line: &str| -> String {
        match mode {
            Mode::Strict => line.to_string(),
            Mode::Lenient => line.trim().to_string(),
        }
    };
    let first = lines.first().copied().unwrap_or_default();
    if marker(first) != BEGIN_PATCH {
        return Err(ParseError::MissingBegin {
            line: first_line_no,
            found: first.to_string(),
        });
    }
    let last = lines.last().copied().unwrap_or_default();
    if lines.len() < 2 || marker(last) != END_PATCH {
        return Err(ParseError::MissingEnd {
            line: first_line_no + lines.len() - 1,
            found: last.to_string(),
        });
    }
    let inner = &lines[1..lines.len() - 1];
    let operations = BodyParser {
        lines: inner,
        pos: 0,
        first_line_no: first_line_no + 1,
        mode,
    }
    .parse()?;
    Ok(Patch {
        operations,
        text: lines.join("\n"),
    })
}

struct BodyParser<'a> {
    lines: &'a [&'a str],
    pos: usize,
    /// Patch line number of `lines[0]`.
    first_line_no: usize,
    mode: Mode,
}

impl<'a> BodyParser<'a> {
    fn line_no(&self, index: usize) -> usize {
        self.first_line_no + index
    }

    fn marker(&self, line: &'a str) -> &'a str {
        match self.mode {
            Mode::Strict => line,
            Mode::Lenient => line.trim(),
        }
    }

    /// Marker spelling inside an update, where a leading space means a
    /// context line: lenient mode forgives only trailing whitespace there.
    fn inner_marker(&self, line: &'a str) -> &'a str {
        match self.mode {
            Mode::Strict => line,
            Mode::Lenient => line.trim_end(),
        }
    }

    fn parse(mut self) -> Result<Vec<FileOp>, ParseError> {
        let mut ops = Vec::new();
        while self.pos < self.lines.len() {
            let raw = self.lines[self.pos];
            if self.mode == Mode::Lenient && raw.trim().is_empty() {
                self.pos += 1;
                continue;
            }
            ops.push(self.parse_operation()?);
        }
        Ok(ops)
    }

    fn header_path(&self, rest: &str, marker: &str) -> Result<PathBuf, ParseError> {
        // Surrounding whitespace is never part of a path a model means.
        let path = rest.trim();
        if path.is_empty() {
            return Err(ParseError::EmptyPath {
                line: self.line_no(self.pos),
                marker: marker.trim_end().to_string(),
            });
        }
        Ok(PathBuf::from(path))
    }

    /// Strips a marker prefix; lenient mode also accepts the marker without
    /// the space before the path (`*** Add File:foo`) once trimmed.
    fn strip_header(&self, line: &'a str, marker: &str) -> Option<&'a str> {
        let line = if marker == MOVE_TO {
            self.inner_marker(line)
        } else {
            self.marker(line)
        };
        if let Some(rest) = line.strip_prefix(marker) {
            return Some(rest);
        }
        if self.mode == Mode::Lenient {
            return line.strip_prefix(marker.trim_end());
        }
        None
    }

    fn parse_operation(&mut self) -> Result<FileOp, ParseError> {
        let raw = self.lines[self.pos];
        if let Some(rest) = self.strip_header(raw, ADD_FILE) {
            let path = self.header_path(rest, ADD_FILE)?;
            self.pos += 1;
            let mut contents = String::new();
            while let Some(line) = self.lines.get(self.pos) {
                let Some(text) = line.strip_prefix('+') else {
                    break;
                };
                contents.push_str(text);
                contents.push('\n');
                self.pos += 1;
            }
            return Ok(FileOp::Add { path, contents });
        }
        if let Some(rest) = self.strip_header(raw, DELETE_FILE) {
            let path = self.header_path(rest, DELETE_FILE)?;
            self.pos += 1;
            return Ok(FileOp::Delete { path });
        }
        if let Some(rest) = self.strip_header(raw, UPDATE_FILE) {
            let header_index = self.pos;
            let path = self.header_path(rest, UPDATE_FILE)?;
            self.pos += 1;
            let mut move_to = None;
            if let Some(next) = self.lines.get(self.pos)
                && let Some(rest) = self.strip_header(next, MOVE_TO)
            {
                move_to = Some(self.header_path(rest, MOVE_TO)?);
                self.pos += 1;
            }
            let chunks = self.parse_chunks()?;
            if chunks.is_empty() {
                return Err(ParseError::EmptyUpdate {
                    line: self.line_no(header_index),
                    path: path.display().to_string(),
                });
            }
            return Ok(FileOp::Update {
                path,
                move_to,
                chunks,
            });
        }
        Err(ParseError::InvalidHeader {
            line: self.line_no(self.pos),
            found: raw.to_string(),
        })
    }

    fn parse_chunks(&mut self) -> Result<Vec<Chunk>, ParseError> {
        let mut chunks = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.trim().is_empty() && !line.starts_with(' ') && self.blank_run_is_separator() {
                // Blank lines before an `@@`, a marker or the end separate;
                // before diff lines they are empty context lines, and so is
                // a line holding a space (the context marker) anywhere.
                self.pos += 1;
                continue;
            }
            if self.inner_marker(line).starts_with('*') {
                break;
            }
            chunks.push(self.parse_chunk(chunks.is_empty())?);
        }
        Ok(chunks)
    }

    /// Whether the blank lines starting at `pos` are followed by an `@@`
    /// header, a `***` marker or nothing.
    fn blank_run_is_separator(&self) -> bool {
        let is_separator = |l: &&str| l.trim().is_empty() && !l.starts_with(' ');
        match self.lines[self.pos..].iter().find(|l| !is_separator(l)) {
            None => true,
            Some(next) => {
                let next = self.inner_marker(next);
                next.starts_with("@@") || next.starts_with('*')
            }
        }
    }

    fn parse_chunk(&mut self, first: bool) -> Result<Chunk, ParseError> {
        let start = self.pos;
        let head = self.lines[self.pos];
        let head_marker = match self.mode {
            Mode::Strict => head,
            Mode::Lenient => head.trim_end(),
        };
        let anchor = if head_marker == "@@" {
            self.pos += 1;
            None
        } else if let Some(anchor) = head.strip_prefix("@@ ") {
            self.pos += 1;
            // The anchor is the rest of the line as written, trailing spaces included, in
            // both modes (as Codex reads it; the matcher forgives trailing whitespace).
            // An anchor of nothing but spaces narrows nothing.
            (!anchor.trim().is_empty()).then(|| anchor.to_string())
        } else if first {
            None
        } else {
            return Err(ParseError::MissingChunkHeader {
                line: self.line_no(self.pos),
                found: head.to_string(),
            });
        };
        let mut chunk = Chunk {
            anchor,
            old_lines: Vec::new(),
            new_lines: Vec::new(),
            kinds: Vec::new(),
            end_of_file: false,
            line: self.line_no(start),
        };
        let mut count = 0usize;
        while let Some(line) = self.lines.get(self.pos) {
            if self.inner_marker(line) == END_OF_FILE {
                if count == 0 {
                    return Err(ParseError::EmptyChunk {
                        line: self.line_no(self.pos),
                    });
                }
                chunk.end_of_file = true;
                self.pos += 1;
                break;
            }
            match line.chars().next() {
                None => {
                    chunk.old_lines.push(String::new());
                    chunk.new_lines.push(String::new());
                    chunk.kinds.push(LineKind::Context);
                }
                Some(' ') => {
                    chunk.old_lines.push(line[1..].to_string());
                    chunk.new_lines.push(line[1..].to_string());
                    chunk.kinds.push(LineKind::Context);
                }
                Some('-') => {
                    chunk.old_lines.push(line[1..].to_string());
                    chunk.kinds.push(LineKind::Removed);
                }
                Some('+') => {
                    chunk.new_lines.push(line[1..].to_string());
                    chunk.kinds.push(LineKind::Added);
                }
                Some(_) => {
                    if count == 0 {
                        return Err(ParseError::BadChunkLine {
                            line: self.line_no(self.pos),
                            found: line.to_string(),
                        });
                    }
                    break;
                }
            }
            count += 1;
            self.pos += 1;
        }
        if count == 0 {
            return Err(ParseError::EmptyChunk {
                line: self.line_no(start),
            });
        }
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ops(text: &str) -> Vec<FileOp> {
        parse_patch(text).expect("parses").operations
    }

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn add_file_lines_each_end_with_newline() {
        assert_eq!(
            ops("*** Begin Patch\n*** Add File: a/b.txt\n+one\n+\n+three\n*** End Patch\n"),
            vec![FileOp::Add {
                path: "a/b.txt".into(),
                contents: "one\n\nthree\n".to_string()
            }]
        );
    }

    #[test]
    fn add_file_may_be_empty() {
        assert_eq!(
            ops("*** Begin Patch\n*** Add File: e.txt\n*** End Patch"),
            vec![FileOp::Add {
                path: "e.txt".into(),
                contents: String::new()
            }]
        );
    }

    #[test]
    fn delete_file() {
        assert_eq!(
            ops("*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch"),
            vec![FileOp::Delete {
                path: "gone.txt".into()
            }]
        );
    }

    #[test]
    fn update_with_move_anchor_and_eof() {
        let text = "*** Begin Patch\n*** Update File: src/a.py\n*** Move to: src/b.py\n@@ def f():\n-    pass\n+    return 1\n@@\n context\n-old\n+new\n*** End of File\n*** End Patch";
        assert_eq!(
            ops(text),
            vec![FileOp::Update {
                path: "src/a.py".into(),
                move_to: Some("src/b.py".into()),
                chunks: vec![
                    Chunk {
                        anchor: Some("def f():".to_string()),
                        old_lines: s(&["    pass"]),
                        new_lines: s(&["    return 1"]),
                        kinds: vec![LineKind::Removed, LineKind::Added],
                        end_of_file: false,
                        line: 4,
                    },
                    Chunk {
                        anchor: None,
                        old_lines: s(&["context", "old"]),
                        new_lines: s(&["context", "new"]),
                        kinds: vec![LineKind::Context, LineKind::Removed, LineKind::Added],
                        end_of_file: true,
                        line: 7,
                    },
                ],
            }]
        );
    }

    #[test]
    fn first_chunk_may_omit_header() {
        let got = ops("*** Begin Patch\n*** Update File: f\n import x\n+import y\n*** End Patch");
        let FileOp::Update { chunks, .. } = &got[0] else {
            panic!("expected update")
        };
        assert_eq!(chunks[0].anchor, None);
        assert_eq!(chunks[0].old_lines, s(&["import x"]));
        assert_eq!(chunks[0].new_lines, s(&["import x", "import y"]));
    }

    #[test]
    fn empty_line_in_chunk_is_empty_context() {
        let got = ops("*** Begin Patch\n*** Update File: f\n@@\n a\n\n-b\n*** End Patch");
        let FileOp::Update { chunks, .. } = &got[0] else {
            panic!("expected update")
        };
        assert_eq!(chunks[0].old_lines, s(&["a", "", "b"]));
        assert_eq!(chunks[0].new_lines, s(&["a", ""]));
    }

    #[test]
    fn blank_line_before_diff_lines_is_context_but_before_header_is_skipped() {
        let got = ops("*** Begin Patch\n*** Update File: f\n\n-b\n*** End Patch");
        let FileOp::Update { chunks, .. } = &got[0] else {
            panic!("expected update")
        };
        assert_eq!(chunks[0].old_lines, s(&["", "b"]));
        let got = ops("*** Begin Patch\n*** Update File: f\n\n@@\n-b\n\n*** End Patch");
        let FileOp::Update { chunks, .. } = &got[0] else {
            panic!("expected update")
        };
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].old_lines, s(&["b", ""]));
        // A line holding one space is a context line wherever it is.
        let got = ops("*** Begin Patch\n*** Update File: f\n \n*** End Patch");
        let FileOp::Update { chunks, .. } = &got[0] else {
            panic!("expected update")
        };
        assert_eq!(chunks[0].old_lines, s(&[""]));
    }

    #[test]
    fn context_lines_that_look_like_markers_stay_context() {
        let got = ops("*** Begin Patch\n*** Update File: f\n *** End of File\n *x\n*** End Patch");
        let FileOp::Update { chunks, .. } = &got[0] else {
            panic!("expected update")
        };
        assert_eq!(chunks[0].old_lines, s(&["*** End of File", "*x"]));
        assert!(!chunks[0].end_of_file);
    }

    #[test]
    fn several_operations_in_order() {
        let got = ops(
            "*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** Update File: c\n@@\n-1\n+2\n*** Add File: d\n+y\n*** End Patch",
        );
        let paths: Vec<_> = got.iter().map(|o| o.path().display().to_string()).collect();
        assert_eq!(paths, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn empty_patch_has_no_operations() {
        assert_eq!(ops("*** Begin Patch\n*** End Patch"), vec![]);
    }

    #[test]
    fn missing_begin_names_line_one() {
        assert_eq!(
            parse_patch("hello\n*** End Patch"),
            Err(ParseError::MissingBegin {
                line: 1,
                found: "hello".to_string()
            })
        );
    }

    #[test]
    fn missing_end_names_last_line() {
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Add File: a\n+x"),
            Err(ParseError::MissingEnd {
                line: 3,
                found: "+x".to_string()
            })
        );
    }

    #[test]
    fn empty_input() {
        assert_eq!(parse_patch("  \n "), Err(ParseError::Empty));
        assert_eq!(parse_patch_strict(""), Err(ParseError::Empty));
    }

    #[test]
    fn invalid_header() {
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Frobnicate: x\n*** End Patch"),
            Err(ParseError::InvalidHeader {
                line: 2,
                found: "*** Frobnicate: x".to_string()
            })
        );
    }

    #[test]
    fn add_body_line_without_plus_is_a_bad_header() {
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch"),
            Err(ParseError::InvalidHeader {
                line: 4,
                found: "y".to_string()
            })
        );
    }

    #[test]
    fn empty_update() {
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Update File: t.py\n*** End Patch"),
            Err(ParseError::EmptyUpdate {
                line: 2,
                path: "t.py".to_string()
            })
        );
    }

    #[test]
    fn header_without_lines_is_empty_chunk() {
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Update File: t\n@@\n*** End Patch"),
            Err(ParseError::EmptyChunk { line: 3 })
        );
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Update File: t\n@@\n*** End of File\n*** End Patch"),
            Err(ParseError::EmptyChunk { line: 4 })
        );
    }

    #[test]
    fn bad_first_chunk_line() {
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Update File: t\n@@\nnope\n*** End Patch"),
            Err(ParseError::BadChunkLine {
                line: 4,
                found: "nope".to_string()
            })
        );
    }

    #[test]
    fn second_chunk_needs_header() {
        assert_eq!(
            parse_patch(
                "*** Begin Patch\n*** Update File: t\n@@\n-a\n+b\n*** End of File\n c\n*** End Patch"
            ),
            Err(ParseError::MissingChunkHeader {
                line: 7,
                found: " c".to_string()
            })
        );
    }

    #[test]
    fn empty_path_is_rejected() {
        assert_eq!(
            parse_patch("*** Begin Patch\n*** Delete File: \n*** End Patch"),
            Err(ParseError::EmptyPath {
                line: 2,
                marker: "*** Delete File:".to_string()
            })
        );
    }

    #[test]
    fn lenient_accepts_padding_and_missing_newline() {
        let text = "\n\n  *** Begin Patch  \n  *** Add File: a.txt  \n+x\n *** End Patch ";
        assert_eq!(
            ops(text),
            vec![FileOp::Add {
                path: "a.txt".into(),
                contents: "x\n".to_string()
            }]
        );
    }

    #[test]
    fn lenient_accepts_missing_space_after_colon() {
        assert_eq!(
            ops("*** Begin Patch\n*** Delete File:gone.txt\n*** End Patch"),
            vec![FileOp::Delete {
                path: "gone.txt".into()
            }]
        );
        assert!(
            parse_patch_strict("*** Begin Patch\n*** Delete File:gone.txt\n*** End Patch").is_err()
        );
    }

    #[test]
    fn lenient_skips_blank_lines_between_operations() {
        let got = ops("*** Begin Patch\n*** Add File: a\n+x\n\n*** Delete File: b\n*** End Patch");
        assert_eq!(got.len(), 2);
        assert!(
            parse_patch_strict(
                "*** Begin Patch\n*** Add File: a\n+x\n\n*** Delete File: b\n*** End Patch"
            )
            .is_err()
        );
    }

    #[test]
    fn lenient_line_numbers_count_leading_blank_lines() {
        assert_eq!(
            parse_patch("\n\n*** Begin Patch\n*** Nope\n*** End Patch"),
            Err(ParseError::InvalidHeader {
                line: 4,
                found: "*** Nope".to_string()
            })
        );
    }

    #[test]
    fn lenient_accepts_heredoc_wrappers() {
        let body = "*** Begin Patch\n*** Delete File: x\n*** End Patch";
        for text in [
            format!("<<'EOF'\n{body}\nEOF\n"),
            format!("apply_patch <<'EOF'\n{body}\nEOF\n"),
            format!("bash -lc \"apply_patch <<'EOF'\n{body}\nEOF\n\""),
        ] {
            assert_eq!(ops(&text).len(), 1, "{text}");
        }
    }

    #[test]
    fn lenient_accepts_crlf_patch_text() {
        let got = ops("*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n");
        assert_eq!(
            got,
            vec![FileOp::Add {
                path: "a".into(),
                contents: "x\n".to_string()
            }]
        );
    }

    #[test]
    fn strict_rejects_padding_and_wrappers() {
        assert!(matches!(
            parse_patch_strict(" *** Begin Patch\n*** End Patch"),
            Err(ParseError::MissingBegin { line: 1, .. })
        ));
        assert!(matches!(
            parse_patch_strict("*** Begin Patch\n*** Delete File: a\n*** End Patch \n"),
            Err(ParseError::MissingEnd { line: 3, .. })
        ));
        assert!(matches!(
            parse_patch_strict("<<EOF\n*** Begin Patch\n*** End Patch\nEOF"),
            Err(ParseError::MissingBegin { .. })
        ));
        assert!(matches!(
            parse_patch_strict("*** Begin Patch\n  *** Delete File: a\n*** End Patch"),
            Err(ParseError::InvalidHeader { line: 2, .. })
        ));
    }

    #[test]
    fn strict_accepts_exact_grammar_with_or_without_final_newline() {
        let text = "*** Begin Patch\n*** Update File: a\n@@ x\n-1\n+2\n*** End Patch";
        assert_eq!(parse_patch_strict(text), parse_patch(text));
        assert_eq!(
            parse_patch_strict(&format!("{text}\n")).map(|p| p.operations),
            parse_patch(text).map(|p| p.operations)
        );
    }

    #[test]
    fn anchor_keeps_its_trailing_spaces_in_both_modes() {
        // Regression: the lenient parser trimmed `@@ fn x() ` to `fn x()` while the strict
        // one kept the space, so a strict patch read differently leniently (proptest seed
        // in tests/suite/properties.proptest-regressions).
        let text = "*** Begin Patch\n*** Update File: a\n@@ fn x() \n-1\n+2\n*** End Patch\n";
        let anchors =
            |patch: Result<Patch, ParseError>| match patch.expect("parses").operations[0].clone() {
                FileOp::Update { chunks, .. } => chunks[0].anchor.clone(),
                other => panic!("not an update: {other:?}"),
            };
        assert_eq!(anchors(parse_patch(text)), Some("fn x() ".to_string()));
        assert_eq!(
            anchors(parse_patch_strict(text)),
            Some("fn x() ".to_string())
        );
        // A header of `@@` and spaces still has no anchor.
        let blank = "*** Begin Patch\n*** Update File: a\n@@   \n-1\n+2\n*** End Patch\n";
        assert_eq!(anchors(parse_patch(blank)), None);
        assert_eq!(anchors(parse_patch_strict(blank)), None);
    }

    #[test]
    fn cd_wrapper_in_bare_text_is_refused() {
        let text =
            "cd sub && apply_patch <<EOF\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF";
        let err = parse_patch(text).expect_err("refused");
        assert!(matches!(err, ParseError::Wrapper { .. }));
        // Regression: a broken string continuation put a run of spaces mid-sentence.
        assert_eq!(
            err.to_string(),
            "Invalid patch: the patch text starts with 'cd sub &&', which a bare patch cannot \
             honour; send the patch alone, with paths relative to the working directory"
        );
    }

    #[test]
    fn no_error_text_has_a_run_of_spaces_or_debug_text() {
        let bad = [
            "",
            "hello",
            "*** Begin Patch\n*** Add File: a\n+x",
            "*** Begin Patch\nnope\n*** End Patch",
            "*** Begin Patch\n*** Add File: \n*** End Patch",
            "*** Begin Patch\n*** Update File: t\n*** End Patch",
            "*** Begin Patch\n*** Update File: t\n@@\n*** End Patch",
            "*** Begin Patch\n*** Update File: t\n@@\nnope\n*** End Patch",
            "*** Begin Patch\n*** Update File: t\n@@\n-a\nnope\n*** End Patch",
            "cd sub && apply_patch <<EOF\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF",
        ];
        for text in bad {
            let message = match parse_patch(text) {
                Ok(patch) => panic!("{text:?} parsed as {patch:?}"),
                Err(err) => err.to_string(),
            };
            for garbled in ["  ", "Some(", "None", "{ ", "\\n"] {
                assert!(!message.contains(garbled), "{text:?}: {message}");
            }
        }
    }

    #[test]
    fn patch_text_is_unwrapped() {
        let body = "*** Begin Patch\n*** Delete File: x\n*** End Patch";
        let got = parse_patch(&format!("apply_patch <<EOF\n{body}\nEOF")).expect("parses");
        assert_eq!(got.text, body);
    }

    #[test]
    fn error_texts_are_plain_words() {
        let err = parse_patch("*** Begin Patch\n*** Update File: t\n@@\nnope\n*** End Patch")
            .expect_err("fails");
        assert_eq!(
            err.to_string(),
            "Invalid patch: line 4: expected a chunk line starting with ' ' (context), '-' \
             (removed) or '+' (added), found 'nope'"
        );
    }
}
