//! `list_dir`: a directory tree as an indented, paged list.
//!
//! Entries are visited depth-first with the entries of each directory sorted by name, so every
//! directory's contents follow it directly and the order is the same on every call. Offset and
//! limit apply to that order, which makes pages stable: page 1 followed by page 2 is exactly
//! the first two pages' worth of one big listing. Because the order is fixed before paging, the
//! walk stops as soon as it has the requested page plus one entry (to know whether more
//! remain), so a deep tree costs only what is shown.
//!
//! Output, in Codex's layout:
//!
//! ```text
//! Absolute path: /repo
//! Cargo.toml
//! src/
//!   lib.rs
//! link@
//! More than 4 entries found; pass offset 5 to see the next page.
//! ```
//!
//! `/` marks directories, `@` symlinks (never followed), `?` other special files; each level
//! of depth indents two spaces; names longer than 500 bytes are cut. A subdirectory that
//! cannot be read is listed but not descended into. One call walks at most
//! [`MAX_LIST_ENTRIES`] entries, so a huge `limit` or `depth` on `/` stays bounded.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::args::ListDirArgs;
use crate::error::{FileToolError, ToolInputError};
use crate::file_access::{EntryKind, FileAccess, LocalFiles};
use crate::paths;
use crate::spec::names::LIST_DIR;
use crate::truncation::floor_char_boundary;

/// Entries returned when `limit` is not given.
pub const DEFAULT_LIST_LIMIT: usize = 25;
/// Depth walked when `depth` is not given.
pub const DEFAULT_LIST_DEPTH: usize = 2;
/// Most entries one listing walks; deeper pages must list a subdirectory instead.
pub const MAX_LIST_ENTRIES: usize = 100_000;
const MAX_NAME_BYTES: usize = 500;
const INDENT: &str = "  ";

struct Entry {
    name: String,
    depth: usize,
    kind: EntryKind,
}

/// List the directory `args.dir_path`, which must be absolute (`cwd` is used only to suggest
/// the absolute form of a relative path).
pub fn list_dir(args: &ListDirArgs, cwd: &Path) -> Result<String, FileToolError> {
    list_dir_in(&LocalFiles, args, cwd)
}

/// [`list_dir`] through `fs`, for directories on another machine: one
/// [`FileAccess::read_dir`] per directory shown, stopping once the page is full.
pub fn list_dir_in(
    fs: &dyn FileAccess,
    args: &ListDirArgs,
    cwd: &Path,
) -> Result<String, FileToolError> {
    let offset = to_usize(args.offset.unwrap_or(1));
    if offset == 0 {
        return Err(invalid(
            "offset",
            "entry numbers start at 1; pass 1 for the first page",
        ));
    }
    if offset > MAX_LIST_ENTRIES {
        return Err(invalid(
            "offset",
            &format!(
                "at most {MAX_LIST_ENTRIES} entries are listed from one directory; call \
                 list_dir on a subdirectory instead"
            ),
        ));
    }
    let limit = to_usize(args.limit.unwrap_or(DEFAULT_LIST_LIMIT as u64));
    if limit == 0 {
        return Err(invalid("limit", "must be at least 1"));
    }
    let depth = to_usize(args.depth.unwrap_or(DEFAULT_LIST_DEPTH as u64));
    if depth == 0 {
        return Err(invalid(
            "depth",
            "must be at least 1 (1 lists only the directory's own entries)",
        ));
    }
    let path = paths::require_absolute(LIST_DIR, "dir_path", &args.dir_path, cwd)?;
    let metadata = paths::stat(fs, &path, "list")?;
    if !metadata.is_dir {
        return Err(FileToolError::NotADirectory { path });
    }

    // One entry beyond the page tells us whether more remain.
    let wanted = offset
        .saturating_sub(1)
        .saturating_add(limit)
        .saturating_add(1);
    let root =
        read_sorted(fs, &path).map_err(|err| FileToolError::from_io("list", path.clone(), err))?;
    let mut entries = Vec::new();
    walk(fs, root, 0, depth, wanted, &mut entries);

    let mut out = vec![format!("Absolute path: {}", path.display())];
    if entries.is_empty() && offset == 1 {
        return Ok(out.join("\n"));
    }
    let start = offset - 1;
    if start >= entries.len() {
        return Err(FileToolError::OffsetPastEnd {
            what: "entry",
            path,
            requested: offset,
            available: entries.len(),
        });
    }
    let end = start.saturating_add(limit).min(entries.len());
    out.extend(entries[start..end].iter().map(format_entry));
    if end < entries.len() {
        out.push(format!(
            "More than {} entries found; pass offset {} to see the next page.",
            end - start,
            end + 1
        ));
    }
    Ok(out.join("\n"))
}

fn invalid(field: &str, message: &str) -> FileToolError {
    ToolInputError::invalid(LIST_DIR, field, message).into()
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// The directory's entries as (name, path, kind), sorted by name.
fn read_sorted(
    fs: &dyn FileAccess,
    dir: &Path,
) -> std::io::Result<Vec<(OsString, PathBuf, EntryKind)>> {
    let mut children: Vec<_> = fs
        .read_dir(dir)?
        .into_iter()
        .map(|entry| {
            let path = dir.join(&entry.name);
            (entry.name, path, entry.kind)
        })
        .collect();
    children.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(children)
}

/// Depth-first, name-ordered; stops once `entries` holds `wanted` items.
fn walk(
    fs: &dyn FileAccess,
    children: Vec<(OsString, PathBuf, EntryKind)>,
    level: usize,
    max_depth: usize,
    wanted: usize,
    entries: &mut Vec<Entry>,
) {
    for (name, child_path, kind) in children {
        if entries.len() >= wanted {
            return;
        }
        let lossy = name.to_string_lossy();
        let name = lossy[..floor_char_boundary(&lossy, MAX_NAME_BYTES)].to_string();
        entries.push(Entry {
            name,
            depth: level,
            kind,
        });
        if kind == EntryKind::Directory && level + 1 < max_depth {
            // An unreadable subdirectory is listed but not descended into.
            if let Ok(grandchildren) = read_sorted(fs, &child_path) {
                walk(fs, grandchildren, level + 1, max_depth, wanted, entries);
            }
        }
    }
}

fn format_entry(entry: &Entry) -> String {
    let marker = match entry.kind {
        EntryKind::Directory => "/",
        EntryKind::Symlink => "@",
        EntryKind::Other => "?",
        EntryKind::File => "",
    };
    format!("{}{}{marker}", INDENT.repeat(entry.depth), entry.name)
}
