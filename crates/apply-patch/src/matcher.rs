//! Finding chunks in a file and building the patched text.
//!
//! A file is viewed as borrowed line slices (without their `\n` / `\r\n`), so
//! a 10 MB file costs one index vector, not a copy. Each chunk is searched
//! from where the previous one ended, with passes of decreasing strictness:
//! exact, ignoring trailing whitespace, ignoring surrounding whitespace, and
//! finally with typographic punctuation folded to ASCII. Every pass scans the
//! whole remaining file before the next, looser one starts, so an exact match
//! later in the file wins over a fuzzy one earlier.
//!
//! The new text is built by copying untouched byte ranges verbatim (so their
//! line endings survive) and writing replacement lines with the file's
//! preferred ending (the first newline's style).

use crate::parser::{Chunk, LineKind};

/// How loosely a chunk had to be compared to be found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchLevel {
    /// Byte-for-byte.
    Exact,
    /// Ignoring trailing whitespace.
    TrimEnd,
    /// Ignoring leading and trailing whitespace.
    Trim,
    /// Ignoring surrounding whitespace, with Unicode dashes, quotes and
    /// spaces read as their ASCII forms.
    Punctuation,
}

const LEVELS: [MatchLevel; 4] = [
    MatchLevel::Exact,
    MatchLevel::TrimEnd,
    MatchLevel::Trim,
    MatchLevel::Punctuation,
];

fn fold(c: char) -> char {
    match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
        | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
        | '\u{3000}' => ' ',
        other => other,
    }
}

fn line_eq(level: MatchLevel, file: &str, pat: &str) -> bool {
    match level {
        MatchLevel::Exact => file == pat,
        MatchLevel::TrimEnd => file.trim_end() == pat.trim_end(),
        MatchLevel::Trim => file.trim() == pat.trim(),
        MatchLevel::Punctuation => file
            .trim()
            .chars()
            .map(fold)
            .eq(pat.trim().chars().map(fold)),
    }
}

/// Finds `pattern` in `lines` at or after `start`. With `eof`, only the
/// position that ends at the last line is tried.
pub(crate) fn seek<L: Lines + ?Sized, S: AsRef<str>>(
    lines: &L,
    pattern: &[S],
    start: usize,
    eof: bool,
) -> Option<(usize, MatchLevel)> {
    if pattern.is_empty() {
        return Some((start, MatchLevel::Exact));
    }
    if pattern.len() > lines.count() {
        return None;
    }
    let last = lines.count() - pattern.len();
    // At the end of the file there is one candidate, and it must not lie
    // before where the previous chunk ended.
    let first = if eof { last } else { start };
    if first > last || start > last {
        return None;
    }
    for level in LEVELS {
        let head = pattern[0].as_ref();
        for i in first..=last {
            if !line_eq(level, lines.line(i), head) {
                continue;
            }
            let rest_ok = pattern[1..]
                .iter()
                .enumerate()
                .all(|(k, pat)| line_eq(level, lines.line(i + 1 + k), pat.as_ref()));
            if rest_ok {
                return Some((i, level));
            }
        }
    }
    None
}

/// Line endings of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    Lf,
    CrLf,
}

impl Eol {
    fn as_str(self) -> &'static str {
        match self {
            Eol::Lf => "\n",
            Eol::CrLf => "\r\n",
        }
    }
}

/// Read access to numbered lines (without their line endings).
pub(crate) trait Lines {
    fn count(&self) -> usize;
    fn line(&self, index: usize) -> &str;
}

impl Lines for [&str] {
    fn count(&self) -> usize {
        self.len()
    }
    fn line(&self, index: usize) -> &str {
        self[index]
    }
}

/// A borrowed, line-indexed view of a text file: one start offset per line,
/// so a large file costs eight bytes a line on top of its text.
pub(crate) struct TextView<'a> {
    src: &'a str,
    starts: Vec<usize>,
    eol: Eol,
}

impl<'a> TextView<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        let mut starts = Vec::with_capacity(src.len() / 40 + 1);
        let mut eol = None;
        let mut pos = 0;
        let bytes = src.as_bytes();
        while pos < bytes.len() {
            starts.push(pos);
            match src[pos..].find('\n') {
                Some(nl) => {
                    let end = pos + nl;
                    if eol.is_none() {
                        eol = Some(if end > pos && bytes[end - 1] == b'\r' {
                            Eol::CrLf
                        } else {
                            Eol::Lf
                        });
                    }
                    pos = end + 1;
                }
                None => pos = bytes.len(),
            }
        }
        Self {
            src,
            starts,
            eol: eol.unwrap_or(Eol::Lf),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Byte offset where line `index` starts (`src.len()` past the end).
    fn offset(&self, index: usize) -> usize {
        self.starts.get(index).copied().unwrap_or(self.src.len())
    }

    fn text(&self, index: usize) -> &'a str {
        let start = self.offset(index);
        let next = self.offset(index + 1);
        let line = &self.src[start..next];
        match line.strip_suffix('\n') {
            Some(text) => text.strip_suffix('\r').unwrap_or(text),
            None => line,
        }
    }
}

impl Lines for TextView<'_> {
    fn count(&self) -> usize {
        self.len()
    }
    fn line(&self, index: usize) -> &str {
        self.text(index)
    }
}

/// One line of a planned edit's output.
#[derive(Debug, Clone, Copy)]
enum Piece<'c> {
    /// A context line: the file's line at this index, copied verbatim.
    Keep(usize),
    /// An added line, written with the file's line ending.
    Insert(&'c str),
}

/// One planned edit: the `old_len` file lines at `start` become `pieces`.
#[derive(Debug)]
pub(crate) struct Replacement<'c> {
    start: usize,
    old_len: usize,
    pieces: Vec<Piece<'c>>,
}

/// Why a chunk could not be placed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum MatchFailure {
    /// The `@@` anchor line was not found.
    Anchor { chunk: usize, anchor: String },
    /// The chunk's old lines were not found.
    Lines { chunk: usize },
    /// Two chunks claim the same lines.
    Overlap { chunk: usize },
}

/// The chunk's lines in order: (kind, index into old_lines, index into
/// new_lines). With `drop_final_old`, the last line the file must contain is
/// left out, and so is the last new line when it is empty (see [`plan`]).
fn chunk_kinds(chunk: &Chunk, drop_final_old: bool) -> Vec<(LineKind, usize, usize)> {
    let mut out = Vec::with_capacity(chunk.kinds.len());
    let (mut o, mut n) = (0, 0);
    for kind in &chunk.kinds {
        out.push((*kind, o, n));
        match kind {
            LineKind::Context => {
                o += 1;
                n += 1;
            }
            LineKind::Removed => o += 1,
            LineKind::Added => n += 1,
        }
    }
    if !drop_final_old {
        return out;
    }
    let old_side = out.iter().rposition(|(k, ..)| *k != LineKind::Added);
    let new_side = if chunk.new_lines.last().is_some_and(String::is_empty) {
        out.iter().rposition(|(k, ..)| *k != LineKind::Removed)
    } else {
        None
    };
    // Take the old side off one entry and the new side off another (or both
    // off the same context line); an entry left with neither side goes.
    let mut keep: Vec<(bool, bool)> = out
        .iter()
        .map(|(k, ..)| (*k != LineKind::Added, *k != LineKind::Removed))
        .collect();
    if let Some(j) = old_side {
        keep[j].0 = false;
    }
    if let Some(j) = new_side {
        keep[j].1 = false;
    }
    out.into_iter()
        .zip(keep)
        .filter_map(|((_, o, n), sides)| match sides {
            (true, true) => Some((LineKind::Context, o, n)),
            (true, false) => Some((LineKind::Removed, o, n)),
            (false, true) => Some((LineKind::Added, o, n)),
            (false, false) => None,
        })
        .collect()
}

fn pieces<'c>(chunk: &'c Chunk, at: usize, drop_final_old: bool) -> Vec<Piece<'c>> {
    let mut out = Vec::new();
    for (kind, o, n) in chunk_kinds(chunk, drop_final_old) {
        match kind {
            LineKind::Context => out.push(Piece::Keep(at + o)),
            LineKind::Removed => {}
            LineKind::Added => {
                if let Some(line) = chunk.new_lines.get(n) {
                    out.push(Piece::Insert(line));
                }
            }
        }
    }
    out
}

/// Places every chunk and returns the edits in file order.
pub(crate) fn plan<'c>(
    view: &TextView<'_>,
    chunks: &'c [Chunk],
) -> Result<Vec<Replacement<'c>>, MatchFailure> {
    let lines = view;
    let mut out: Vec<Replacement<'c>> = Vec::with_capacity(chunks.len());
    let mut cursor = 0usize;
    for (index, chunk) in chunks.iter().enumerate() {
        let number = index + 1;
        let mut anchored = false;
        if let Some(anchor) = &chunk.anchor {
            match seek(lines, std::slice::from_ref(anchor), cursor, false) {
                Some((at, _)) => {
                    cursor = at + 1;
                    anchored = true;
                }
                None => {
                    return Err(MatchFailure::Anchor {
                        chunk: number,
                        anchor: anchor.clone(),
                    });
                }
            }
        }
        if chunk.old_lines.is_empty() {
            // A pure insertion goes right after its anchor, or else at the
            // end of the file.
            let at = if anchored { cursor } else { lines.count() };
            out.push(Replacement {
                start: at,
                old_len: 0,
                pieces: pieces(chunk, at, false),
            });
            if anchored {
                cursor = at;
            }
            continue;
        }
        let mut old: &[String] = &chunk.old_lines;
        let mut dropped = false;
        let mut appended = false;
        let mut found = seek(lines, old, cursor, chunk.end_of_file);
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            // A trailing empty line usually stands for the file's final
            // newline, which is not a line of its own here.
            old = &old[..old.len() - 1];
            dropped = true;
            found = if old.is_empty() && chunk.end_of_file {
                // Nothing left to find: an end-of-file chunk adds at the end
                // (and, like any empty match, does not move the cursor).
                appended = true;
                Some((lines.count().max(cursor), MatchLevel::Exact))
            } else {
                seek(lines, old, cursor, chunk.end_of_file)
            };
        }
        let Some((at, _level)) = found else {
            return Err(MatchFailure::Lines { chunk: number });
        };
        out.push(Replacement {
            start: at,
            old_len: old.len(),
            pieces: pieces(chunk, at, dropped),
        });
        if !appended {
            cursor = at + old.len();
        }
    }
    // Insertions at the end may sort after later chunks; a stable sort keeps
    // same-position edits in patch order.
    out.sort_by_key(|r| r.start);
    let mut end = 0usize;
    for (i, r) in out.iter().enumerate() {
        if r.start < end {
            return Err(MatchFailure::Overlap { chunk: i + 1 });
        }
        end = r.start + r.old_len;
    }
    Ok(out)
}

/// Builds the patched text. Untouched bytes and context lines are copied
/// verbatim, so a file without a final newline keeps that state unless an
/// edit reaches its end.
pub(crate) fn render(view: &TextView<'_>, edits: &[Replacement<'_>]) -> String {
    let eol = view.eol.as_str();
    let mut size = view.src.len() + eol.len();
    for r in edits {
        for piece in &r.pieces {
            if let Piece::Insert(line) = piece {
                size += line.len() + eol.len();
            }
        }
    }
    let mut out = String::with_capacity(size);
    let mut copied_to = 0usize; // line index
    for r in edits {
        out.push_str(&view.src[view.offset(copied_to)..view.offset(r.start)]);
        for piece in &r.pieces {
            match piece {
                Piece::Keep(i) => {
                    out.push_str(&view.src[view.offset(*i)..view.offset(*i + 1)]);
                }
                Piece::Insert(line) => {
                    if !out.is_empty() && !out.ends_with('\n') {
                        // Adding after an unterminated last line: end it first.
                        out.push_str(eol);
                    }
                    out.push_str(line);
                    out.push_str(eol);
                }
            }
        }
        copied_to = r.start + r.old_len;
    }
    out.push_str(&view.src[view.offset(copied_to)..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn exact_match() {
        let lines = ["foo", "bar", "baz"];
        assert_eq!(
            seek(&lines[..], &s(&["bar", "baz"]), 0, false),
            Some((1, MatchLevel::Exact))
        );
    }

    #[test]
    fn trailing_whitespace_fallback() {
        let lines = ["foo   ", "bar\t"];
        assert_eq!(
            seek(&lines[..], &s(&["foo", "bar"]), 0, false),
            Some((0, MatchLevel::TrimEnd))
        );
    }

    #[test]
    fn surrounding_whitespace_fallback() {
        let lines = ["    foo  ", "\tbar"];
        assert_eq!(
            seek(&lines[..], &s(&["foo", "bar"]), 0, false),
            Some((0, MatchLevel::Trim))
        );
    }

    #[test]
    fn punctuation_fallback() {
        let lines = ["let s = \u{201C}hi\u{201D} \u{2014} it\u{2019}s\u{00A0}ok"];
        assert_eq!(
            seek(&lines[..], &s(&["let s = \"hi\" - it's ok"]), 0, false),
            Some((0, MatchLevel::Punctuation))
        );
    }

    #[test]
    fn exact_later_beats_fuzzy_earlier() {
        let lines = ["x ", "x"];
        assert_eq!(
            seek(&lines[..], &s(&["x"]), 0, false),
            Some((1, MatchLevel::Exact))
        );
    }

    #[test]
    fn search_starts_at_cursor() {
        let lines = ["a", "b", "a"];
        assert_eq!(
            seek(&lines[..], &s(&["a"]), 1, false),
            Some((2, MatchLevel::Exact))
        );
    }

    #[test]
    fn eof_only_matches_at_end() {
        let lines = ["a", "b", "a", "c"];
        assert_eq!(seek(&lines[..], &s(&["a"]), 0, true), None);
        assert_eq!(
            seek(&lines[..], &s(&["a", "c"]), 0, true),
            Some((2, MatchLevel::Exact))
        );
    }

    #[test]
    fn pattern_longer_than_file_is_no_match() {
        assert_eq!(seek(&["one"][..], &s(&["a", "b"]), 0, false), None);
    }

    #[test]
    fn view_keeps_crlf_and_missing_newline() {
        let view = TextView::new("a\r\nb\r\nc");
        let lines: Vec<&str> = (0..view.len()).map(|i| view.text(i)).collect();
        assert_eq!(lines, vec!["a", "b", "c"]);
        assert_eq!(view.eol, Eol::CrLf);
        assert_eq!(view.offset(2), 6);
        assert_eq!(view.offset(3), 7);
    }

    /// A chunk from diff-style lines (' ', '-', '+' prefixes).
    fn chunk(anchor: Option<&str>, diff: &[&str], eof: bool) -> Chunk {
        let mut c = Chunk {
            anchor: anchor.map(str::to_string),
            old_lines: Vec::new(),
            new_lines: Vec::new(),
            kinds: Vec::new(),
            end_of_file: eof,
            line: 1,
        };
        for l in diff {
            let (kind, text) = l.split_at(1);
            match kind {
                " " => {
                    c.old_lines.push(text.to_string());
                    c.new_lines.push(text.to_string());
                    c.kinds.push(LineKind::Context);
                }
                "-" => {
                    c.old_lines.push(text.to_string());
                    c.kinds.push(LineKind::Removed);
                }
                _ => {
                    c.new_lines.push(text.to_string());
                    c.kinds.push(LineKind::Added);
                }
            }
        }
        c
    }

    fn apply(src: &str, chunks: &[Chunk]) -> Result<String, MatchFailure> {
        let view = TextView::new(src);
        let edits = plan(&view, chunks)?;
        Ok(render(&view, &edits))
    }

    #[test]
    fn render_preserves_crlf_in_new_lines() {
        let got = apply(
            "a\r\nb\r\nc\r\n",
            &[chunk(None, &["-b", "+B", "+B2"], false)],
        );
        assert_eq!(got, Ok("a\r\nB\r\nB2\r\nc\r\n".to_string()));
    }

    #[test]
    fn untouched_missing_final_newline_is_kept() {
        let got = apply("x\ny\nz", &[chunk(None, &["-x", "+X"], false)]);
        assert_eq!(got, Ok("X\ny\nz".to_string()));
    }

    #[test]
    fn replacing_last_unterminated_line_adds_newline() {
        let got = apply("x\ny\nz", &[chunk(None, &["-z", "+Z"], false)]);
        assert_eq!(got, Ok("x\ny\nZ\n".to_string()));
    }

    #[test]
    fn append_after_unterminated_line_terminates_it() {
        let got = apply("x\ny", &[chunk(None, &["+z"], false)]);
        assert_eq!(got, Ok("x\ny\nz\n".to_string()));
    }

    #[test]
    fn anchor_narrows_search() {
        let src = "fn a() {\n    x = 1;\n}\nfn b() {\n    x = 1;\n}\n";
        let got = apply(
            src,
            &[chunk(
                Some("fn b() {"),
                &["-    x = 1;", "+    x = 2;"],
                false,
            )],
        );
        assert_eq!(
            got,
            Ok("fn a() {\n    x = 1;\n}\nfn b() {\n    x = 2;\n}\n".to_string())
        );
    }

    #[test]
    fn missing_anchor_fails() {
        let got = apply("a\n", &[chunk(Some("nope"), &["-a", "+b"], false)]);
        assert_eq!(
            got,
            Err(MatchFailure::Anchor {
                chunk: 1,
                anchor: "nope".to_string()
            })
        );
    }

    #[test]
    fn anchored_insertion_goes_after_anchor() {
        let got = apply("a\nb\nc\n", &[chunk(Some("a"), &["+new"], false)]);
        assert_eq!(got, Ok("a\nnew\nb\nc\n".to_string()));
    }

    #[test]
    fn unanchored_insertion_goes_to_end() {
        let got = apply("a\nb\n", &[chunk(None, &["+new"], false)]);
        assert_eq!(got, Ok("a\nb\nnew\n".to_string()));
    }

    #[test]
    fn unanchored_insertion_goes_after_trailing_blank_lines() {
        let got = apply("a\n\n", &[chunk(None, &["+new"], false)]);
        assert_eq!(got, Ok("a\n\nnew\n".to_string()));
    }

    #[test]
    fn trailing_empty_old_line_is_retried_without_it() {
        let got = apply("a\nb\n", &[chunk(None, &["-b", "+B", " "], false)]);
        assert_eq!(got, Ok("a\nB\n".to_string()));
    }

    #[test]
    fn end_of_file_chunk_targets_last_occurrence() {
        let got = apply("a\nb\na\n", &[chunk(None, &["-a", "+Z"], true)]);
        assert_eq!(got, Ok("a\nb\nZ\n".to_string()));
    }

    #[test]
    fn several_chunks_apply_in_order() {
        let got = apply(
            "1\n2\n3\n4\n5\n",
            &[
                chunk(None, &["-2", "+two"], false),
                chunk(None, &["-4", "+four"], false),
            ],
        );
        assert_eq!(got, Ok("1\ntwo\n3\nfour\n5\n".to_string()));
    }

    #[test]
    fn chunks_must_be_in_file_order() {
        let got = apply(
            "1\n2\n3\n",
            &[
                chunk(None, &["-3", "+three"], false),
                chunk(None, &["-1", "+one"], false),
            ],
        );
        assert_eq!(got, Err(MatchFailure::Lines { chunk: 2 }));
    }

    #[test]
    fn mixed_endings_use_first_line_style() {
        let got = apply("a\r\nb\nc\n", &[chunk(None, &[" b", "+new"], false)]);
        assert_eq!(got, Ok("a\r\nb\nnew\r\nc\n".to_string()));
    }

    #[test]
    fn fuzzy_context_lines_keep_file_text() {
        let got = apply(
            "  a  \nb\n c \n",
            &[chunk(None, &[" a", "-b", "+B", " c"], false)],
        );
        assert_eq!(got, Ok("  a  \nB\n c \n".to_string()));
    }

    #[test]
    fn end_of_file_chunk_may_not_reach_back_before_the_cursor() {
        let got = apply(
            "x\ny\n",
            &[
                chunk(None, &["-y", "+Y"], false),
                chunk(None, &[" y"], true),
            ],
        );
        assert_eq!(got, Err(MatchFailure::Lines { chunk: 2 }));
    }

    #[test]
    fn context_lines_between_changes_keep_file_text() {
        let got = apply(
            "x\ndelta \ny\n",
            &[chunk(None, &["-x", " delta", "+  gamma"], false)],
        );
        assert_eq!(got, Ok("delta \n  gamma\ny\n".to_string()));
    }

    #[test]
    fn dropped_final_empty_line_also_drops_empty_last_addition() {
        let got = apply("a\nb\n", &[chunk(None, &["-", "+x", "+"], true)]);
        assert_eq!(got, Ok("a\nb\nx\n".to_string()));
    }

    #[test]
    fn empty_file_insertion() {
        let got = apply("", &[chunk(None, &["+x"], false)]);
        assert_eq!(got, Ok("x\n".to_string()));
    }
}
