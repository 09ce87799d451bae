//! `read_file`: numbered lines of a text file.
//!
//! Two modes. *Slice* streams the file and returns up to `limit` lines from `offset`, so a
//! large file is never held in memory whole. *Indentation* reads the file, then grows a window
//! outwards from an anchor line while the lines stay at least as indented as a floor derived
//! from the anchor's indentation (the same rules as Codex's tool):
//!
//! * the floor is the anchor's indentation minus `max_levels × 4` columns, or column 0 when
//!   `max_levels` is 0 (the default), so by default the whole top-level item is shown;
//! * blank lines count as indented like the line before them, so they never end a block;
//! * without `include_siblings`, at most one line *at* the floor is taken in each direction
//!   (the block's opening and closing lines), except that comment lines at the floor directly
//!   above the block are taken too when `include_header` is on (the default);
//! * the window alternates one line up and one line down until it holds
//!   `min(limit, max_lines)` lines or cannot grow, and blank lines at its edges are dropped.
//!
//! Every line comes back as `L<n>: <text>`, cut at 500 bytes (at a character boundary). Files
//! with a NUL byte in their first 8 KiB are refused as binary; other bytes that are not UTF-8
//! are shown as U+FFFD and a one-line note says so.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::args::{IndentationArgs, ReadFileArgs, ReadMode};
use crate::error::{FileToolError, ToolInputError};
use crate::file_access::{FileAccess, FileMeta, LocalFiles};
use crate::paths;
use crate::spec::names::READ_FILE;
use crate::truncation::floor_char_boundary;

/// Lines returned when `limit` is not given.
pub const DEFAULT_READ_LIMIT: usize = 2000;
/// Longest line shown, in bytes; the rest of the line is cut.
pub const MAX_LINE_BYTES: usize = 500;
/// How much of the file's start is checked for NUL bytes.
const BINARY_SNIFF_BYTES: u64 = 8 * 1024;
/// Largest file read whole through a [`FileAccess`] (`read_file_in`, `view_image`): the
/// exec server's own `fs/readFile` limit.
pub const MAX_FILE_READ_BYTES: u64 = 48 * 1024 * 1024;
/// Columns a tab counts for when measuring indentation.
const TAB_WIDTH: usize = 4;
/// Line starts that mark a comment, for `include_header`.
const COMMENT_PREFIXES: &[&str] = &["#", "//", "--", "/*"];

/// Read lines of the file named by `args.file_path`, which must be absolute (`cwd` is used
/// only to suggest the absolute form of a relative path).
pub fn read_file(args: &ReadFileArgs, cwd: &Path) -> Result<String, FileToolError> {
    let request = Request::parse(args, cwd)?;
    check_kind(&LocalFiles, &request.path)?;
    let mut reader = open_text(&request.path)?;
    request.render(&mut reader)
}

/// [`read_file`] through `fs`, for files on another machine. The file is read whole, so one
/// larger than [`MAX_FILE_READ_BYTES`] is refused with a pointer to `exec_command`.
pub fn read_file_in(
    fs: &dyn FileAccess,
    args: &ReadFileArgs,
    cwd: &Path,
) -> Result<String, FileToolError> {
    let request = Request::parse(args, cwd)?;
    let path = &request.path;
    let meta = check_kind(fs, path)?;
    let bytes = read_whole(fs, READ_FILE, path, meta.len)?;
    let mut reader = text_reader(path, bytes)?;
    request.render(&mut reader)
}

/// Read the whole file at `path` through `fs`, refusing one over [`MAX_FILE_READ_BYTES`]
/// (`len` is its size as last seen).
pub(crate) fn read_whole(
    fs: &dyn FileAccess,
    tool: &'static str,
    path: &Path,
    len: u64,
) -> Result<Vec<u8>, FileToolError> {
    let too_large = |size| FileToolError::TooLarge {
        tool,
        path: path.to_path_buf(),
        size,
        limit: MAX_FILE_READ_BYTES,
    };
    if len > MAX_FILE_READ_BYTES {
        return Err(too_large(len));
    }
    fs.read(path, MAX_FILE_READ_BYTES)
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::FileTooLarge => too_large(MAX_FILE_READ_BYTES + 1),
            _ => FileToolError::from_io("read", path.to_path_buf(), err),
        })
}

/// The file must exist and be a regular file.
fn check_kind(fs: &dyn FileAccess, path: &Path) -> Result<FileMeta, FileToolError> {
    let meta = paths::stat(fs, path, "read")?;
    if meta.is_dir {
        return Err(FileToolError::IsADirectory { path: path.into() });
    }
    if !meta.is_file {
        return Err(FileToolError::NotARegularFile { path: path.into() });
    }
    Ok(meta)
}

/// A checked read_file call: where to start, how much, and which file.
struct Request<'a> {
    args: &'a ReadFileArgs,
    offset: usize,
    limit: usize,
    path: PathBuf,
}

impl<'a> Request<'a> {
    fn parse(args: &'a ReadFileArgs, cwd: &Path) -> Result<Self, FileToolError> {
        let offset = to_usize(args.offset.unwrap_or(1));
        if offset == 0 {
            return Err(invalid(
                "offset",
                "line numbers start at 1; pass 1 to read from the top",
            ));
        }
        let limit = to_usize(args.limit.unwrap_or(DEFAULT_READ_LIMIT as u64));
        if limit == 0 {
            return Err(invalid("limit", "must be at least 1"));
        }
        let path = paths::require_absolute(READ_FILE, "file_path", &args.file_path, cwd)?;
        Ok(Self {
            args,
            offset,
            limit,
            path,
        })
    }

    fn render(&self, reader: &mut impl BufRead) -> Result<String, FileToolError> {
        let path = &self.path;
        let (lines, lossy) = match self.args.mode.unwrap_or_default() {
            ReadMode::Slice => read_slice(reader, path, self.offset, self.limit)?,
            ReadMode::Indentation => {
                let options = self.args.indentation.clone().unwrap_or_default();
                read_block(reader, path, self.offset, self.limit, &options)?
            }
        };
        if lines.is_empty() {
            return Ok(format!("Note: {} is empty.", path.display()));
        }
        let mut out = lines.join("\n");
        if lossy {
            out.push_str(&format!(
                "\nNote: {} is not valid UTF-8; bytes that could not be decoded are shown as \u{FFFD}.",
                path.display()
            ));
        }
        Ok(out)
    }
}

fn invalid(field: &str, message: &str) -> FileToolError {
    ToolInputError::invalid(READ_FILE, field, message).into()
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// Open `path`, refuse it if its start holds a NUL byte, and return a reader over all of it.
fn open_text(path: &Path) -> Result<impl BufRead, FileToolError> {
    let mut file =
        File::open(path).map_err(|err| FileToolError::from_io("open", path.into(), err))?;
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES as usize);
    (&mut file)
        .take(BINARY_SNIFF_BYTES)
        .read_to_end(&mut head)
        .map_err(|err| FileToolError::from_io("read", path.into(), err))?;
    if head.contains(&0) {
        return Err(FileToolError::BinaryFile { path: path.into() });
    }
    Ok(BufReader::with_capacity(
        64 * 1024,
        std::io::Cursor::new(head).chain(file),
    ))
}

/// A reader over a file already read whole, refused as [`open_text`] refuses it.
fn text_reader(path: &Path, bytes: Vec<u8>) -> Result<impl BufRead, FileToolError> {
    let head = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES as usize)];
    if head.contains(&0) {
        return Err(FileToolError::BinaryFile { path: path.into() });
    }
    Ok(std::io::Cursor::new(bytes))
}

/// Read the next line into `buf` without its `\n` or `\r\n`; false at end of file.
fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    path: &Path,
) -> Result<bool, FileToolError> {
    buf.clear();
    let read = reader
        .read_until(b'\n', buf)
        .map_err(|err| FileToolError::from_io("read", path.into(), err))?;
    if read == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    Ok(true)
}

/// Decode a line for display: lossy UTF-8, cut at [`MAX_LINE_BYTES`]. The flag says whether
/// decoding replaced anything.
fn display_line(bytes: &[u8]) -> (String, bool) {
    let (text, lossy) = match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_string(), false),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    };
    if text.len() > MAX_LINE_BYTES {
        let end = floor_char_boundary(&text, MAX_LINE_BYTES);
        (text[..end].to_string(), lossy)
    } else {
        (text, lossy)
    }
}

fn read_slice(
    reader: &mut impl BufRead,
    path: &Path,
    offset: usize,
    limit: usize,
) -> Result<(Vec<String>, bool), FileToolError> {
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut lossy = false;
    let mut number = 0usize;
    while out.len() < limit && next_line(reader, &mut buf, path)? {
        number += 1;
        if number < offset {
            continue;
        }
        let (text, replaced) = display_line(&buf);
        lossy |= replaced;
        out.push(format!("L{number}: {text}"));
    }
    if number < offset && !(number == 0 && offset == 1) {
        return Err(FileToolError::OffsetPastEnd {
            what: "line",
            path: path.into(),
            requested: offset,
            available: number,
        });
    }
    Ok((out, lossy))
}

struct Line {
    display: String,
    blank: bool,
    comment: bool,
    indent: usize,
}

fn read_block(
    reader: &mut impl BufRead,
    path: &Path,
    offset: usize,
    limit: usize,
    options: &IndentationArgs,
) -> Result<(Vec<String>, bool), FileToolError> {
    let anchor = options.anchor_line.map(to_usize).unwrap_or(offset);
    if anchor == 0 {
        return Err(invalid(
            "indentation.anchor_line",
            "line numbers start at 1; pass the number of the line whose block you want",
        ));
    }
    let max_lines = options.max_lines.map(to_usize).unwrap_or(limit);
    if max_lines == 0 {
        return Err(invalid("indentation.max_lines", "must be at least 1"));
    }
    let max_levels = options.max_levels.map(to_usize).unwrap_or(0);
    let include_siblings = options.include_siblings.unwrap_or(false);
    let include_header = options.include_header.unwrap_or(true);

    let mut lines = Vec::new();
    let mut lossy = false;
    let mut buf = Vec::new();
    while next_line(reader, &mut buf, path)? {
        let (display, replaced) = display_line(&buf);
        lossy |= replaced;
        let raw = String::from_utf8_lossy(&buf);
        let trimmed = raw.trim();
        lines.push(Line {
            blank: trimmed.is_empty(),
            comment: COMMENT_PREFIXES.iter().any(|p| trimmed.starts_with(p)),
            indent: measure_indent(&raw),
            display,
        });
    }
    if lines.is_empty() && anchor == 1 {
        return Ok((Vec::new(), false));
    }
    if anchor > lines.len() {
        return Err(FileToolError::OffsetPastEnd {
            what: "line",
            path: path.into(),
            requested: anchor,
            available: lines.len(),
        });
    }

    let indents = effective_indents(&lines);
    let anchor_index = anchor - 1;
    let floor = if max_levels == 0 {
        0
    } else {
        indents[anchor_index].saturating_sub(max_levels.saturating_mul(TAB_WIDTH))
    };
    let wanted = limit.min(max_lines).min(lines.len());

    let mut window: VecDeque<usize> = VecDeque::from([anchor_index]);
    let mut up = anchor_index.checked_sub(1);
    let mut down = Some(anchor_index + 1).filter(|&j| j < lines.len());
    let mut floor_lines_up = 0usize;
    let mut floor_lines_down = 0usize;

    while window.len() < wanted && (up.is_some() || down.is_some()) {
        if let Some(i) = up {
            up = None;
            if indents[i] >= floor {
                let at_floor = indents[i] == floor && !include_siblings;
                let header_comment = include_header && lines[i].comment;
                if !at_floor || header_comment || floor_lines_up == 0 {
                    if at_floor {
                        floor_lines_up += 1;
                    }
                    window.push_front(i);
                    up = i.checked_sub(1);
                }
            }
            if window.len() >= wanted {
                break;
            }
        }
        if let Some(j) = down {
            down = None;
            if indents[j] >= floor {
                let at_floor = indents[j] == floor && !include_siblings;
                if !at_floor || floor_lines_down == 0 {
                    if at_floor {
                        floor_lines_down += 1;
                    }
                    window.push_back(j);
                    down = Some(j + 1).filter(|&next| next < lines.len());
                }
            }
        }
    }

    while window.front().is_some_and(|&i| lines[i].blank) {
        window.pop_front();
    }
    while window.back().is_some_and(|&i| lines[i].blank) {
        window.pop_back();
    }
    let out = window
        .into_iter()
        .map(|i| format!("L{}: {}", i + 1, lines[i].display))
        .collect();
    Ok((out, lossy))
}

/// Indentation of each line, where a blank line takes the indentation of the line before it.
fn effective_indents(lines: &[Line]) -> Vec<usize> {
    let mut previous = 0;
    lines
        .iter()
        .map(|line| {
            if !line.blank {
                previous = line.indent;
            }
            previous
        })
        .collect()
}

fn measure_indent(line: &str) -> usize {
    line.chars()
        .map_while(|c| match c {
            ' ' => Some(1),
            '\t' => Some(TAB_WIDTH),
            _ => None,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn block(text: &str, anchor: usize, options: IndentationArgs) -> Vec<String> {
        let mut reader = std::io::Cursor::new(text.as_bytes().to_vec());
        let options = IndentationArgs {
            anchor_line: Some(anchor as u64),
            ..options
        };
        read_block(&mut reader, Path::new("/t"), 1, 200, &options)
            .unwrap()
            .0
    }

    const NESTED: &str = "\
mod outer {
    // helper
    fn first() {
        let a = 1;

        if a > 0 {
            run();
        }
    }

    fn second() {
        stop();
    }
}
";

    #[test]
    fn one_level_shows_the_enclosing_block() {
        let lines = block(
            NESTED,
            7,
            IndentationArgs {
                max_levels: Some(1),
                ..Default::default()
            },
        );
        assert_eq!(
            lines,
            [
                "L6:         if a > 0 {",
                "L7:             run();",
                "L8:         }"
            ]
        );
    }

    #[test]
    fn two_levels_include_the_function_and_its_header_comment() {
        let lines = block(
            NESTED,
            7,
            IndentationArgs {
                max_levels: Some(2),
                ..Default::default()
            },
        );
        assert_eq!(
            lines,
            [
                "L2:     // helper",
                "L3:     fn first() {",
                "L4:         let a = 1;",
                "L5: ",
                "L6:         if a > 0 {",
                "L7:             run();",
                "L8:         }",
                "L9:     }",
            ]
        );
    }

    #[test]
    fn header_can_be_left_out_and_siblings_included() {
        let options = IndentationArgs {
            max_levels: Some(2),
            include_header: Some(false),
            ..Default::default()
        };
        assert_eq!(block(NESTED, 7, options.clone())[0], "L3:     fn first() {");
        let with_siblings = block(
            NESTED,
            7,
            IndentationArgs {
                include_siblings: Some(true),
                ..options
            },
        );
        assert_eq!(with_siblings.first().unwrap(), "L2:     // helper");
        assert_eq!(with_siblings.last().unwrap(), "L13:     }");
    }

    #[test]
    fn unlimited_levels_show_the_whole_top_level_item() {
        let lines = block(NESTED, 7, IndentationArgs::default());
        assert_eq!(lines.len(), 14);
        assert_eq!(lines[0], "L1: mod outer {");
        assert_eq!(lines[13], "L14: }");
    }

    #[test]
    fn tabs_count_as_four_columns() {
        assert_eq!(measure_indent("\t  x"), 6);
    }
}
