//! `grep_files` through a [`FileAccess`]: the same answer as the local search, from one walk
//! and whole-file reads.
//!
//! The local search lets `ignore`'s walker read ignore files as it goes; a remote file system
//! offers one bounded walk instead, so the rules are applied here, after it, the way the
//! walker applies them:
//!
//! * the `include` glob comes first (a file it names is searched even when hidden or ignored;
//!   with a glob, a file it does not name is skipped);
//! * then `.ignore` files, then `.gitignore` files and `.git/info/exclude` (only inside a git
//!   repository, and not from above the nearest one), the deepest directory's rule winning —
//!   read from the searched tree and from every directory above it;
//! * then hidden names; hidden directories are pruned by the walk itself;
//! * an ignored directory hides everything in it. Symlinks are not followed.
//!
//! Not replicated: the user's global git excludes (they live on the agent's machine, not the
//! searched one) and a nested repository inside the tree that has no `.gitignore` of its own
//! (its `.git` directory is pruned from the walk, so the outer repository's rules still apply
//! in it).
//!
//! It stays bounded: the walk is capped ([`GREP_WALK_LIMITS`]), at most [`MAX_GREP_FILES`]
//! files are read, none larger than [`MAX_GREP_FILE_BYTES`]; whenever a cap left something
//! unsearched the answer ends with a `Note:` line saying so. Files are read and searched on a
//! few threads at once, since each read may be a round trip to another machine.

use std::collections::{HashMap, HashSet};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::args::GrepFilesArgs;
use crate::error::FileToolError;
use crate::file_access::{EntryKind, FileAccess, WalkLimits, WalkListing};
use crate::grep_files::{FirstMatch, Query, new_searcher};

/// The walk `grep_files_in` asks for.
pub const GREP_WALK_LIMITS: WalkLimits = WalkLimits {
    max_depth: 64,
    max_directories: 10_000,
    max_entries: 100_000,
    prune_hidden_directories: true,
};
/// Most files `grep_files_in` reads.
pub const MAX_GREP_FILES: usize = 20_000;
/// Largest file `grep_files_in` searches.
pub const MAX_GREP_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Largest ignore file read.
const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;
/// Files read at once.
const READERS: usize = 8;

/// [`grep_files`](crate::grep_files) through `fs`, for trees on another machine.
pub fn grep_files_in(
    fs: &dyn FileAccess,
    args: &GrepFilesArgs,
    cwd: &Path,
) -> Result<String, FileToolError> {
    let query = Query::parse(fs, args, cwd)?;
    let mut notes = Vec::new();
    let mut candidates = if query.root_meta.is_dir {
        let listing = fs
            .walk(&query.root, GREP_WALK_LIMITS)
            .map_err(|err| FileToolError::from_io("search", query.root.clone(), err))?;
        if listing.truncated {
            notes.push(format!(
                "Note: the search stopped early: {} holds more than {} entries or {} \
                 directories, so some files were not searched; narrow `path` or `include`.",
                query.root.display(),
                GREP_WALK_LIMITS.max_entries,
                GREP_WALK_LIMITS.max_directories
            ));
        }
        let rules = IgnoreRules::load(fs, &query.root, &listing);
        searchable(&query, &rules, listing)
    } else if query.root_meta.is_file {
        vec![query.root.clone()]
    } else {
        Vec::new()
    };
    if candidates.len() > MAX_GREP_FILES {
        notes.push(format!(
            "Note: the search stopped early: only the first {MAX_GREP_FILES} of {} files \
             were searched; narrow `path` or `include`.",
            candidates.len()
        ));
        candidates.truncate(MAX_GREP_FILES);
    }
    let (found, too_large) = search(fs, &query, &candidates);
    if too_large > 0 {
        notes.push(format!(
            "Note: {too_large} file(s) larger than {} MiB were not searched.",
            MAX_GREP_FILE_BYTES / (1024 * 1024)
        ));
    }
    Ok(query.answer(found, &notes))
}

/// The files of the walk that the rules let through, in walk order.
fn searchable(query: &Query, rules: &IgnoreRules, listing: WalkListing) -> Vec<PathBuf> {
    let mut entries: Vec<_> = listing
        .entries
        .into_iter()
        .filter(|e| matches!(e.kind, EntryKind::File | EntryKind::Directory))
        .collect();
    // Parents before children, whatever order the walk used.
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let mut pruned: HashSet<PathBuf> = HashSet::new();
    let mut files = Vec::new();
    for entry in entries {
        let is_dir = entry.kind == EntryKind::Directory;
        let parent_pruned = entry.path.parent().is_some_and(|p| pruned.contains(p));
        if parent_pruned || !rules.admits(query, &entry.path, is_dir) {
            if is_dir {
                pruned.insert(entry.path);
            }
            continue;
        }
        if !is_dir {
            files.push(entry.path);
        }
    }
    files
}

/// Read and search `files` on a few threads; the matching ones with their modification times,
/// and how many were too large to read.
fn search(
    fs: &dyn FileAccess,
    query: &Query,
    files: &[PathBuf],
) -> (Vec<(PathBuf, SystemTime)>, usize) {
    let next = AtomicUsize::new(0);
    let too_large = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..READERS.min(files.len()) {
            scope.spawn(|| {
                let mut searcher = new_searcher();
                let matcher = query.matcher.clone();
                loop {
                    let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        return;
                    };
                    let bytes = match fs.read(path, MAX_GREP_FILE_BYTES) {
                        Ok(bytes) => bytes,
                        Err(err) => {
                            if err.kind() == std::io::ErrorKind::FileTooLarge {
                                too_large.fetch_add(1, Ordering::Relaxed);
                            }
                            continue;
                        }
                    };
                    let mut sink = FirstMatch(false);
                    let searched = searcher.search_reader(&matcher, Cursor::new(bytes), &mut sink);
                    if searched.is_ok() && sink.0 {
                        let modified = fs
                            .metadata(path)
                            .ok()
                            .and_then(|m| m.modified)
                            .unwrap_or(SystemTime::UNIX_EPOCH);
                        if let Ok(mut found) = found.lock() {
                            found.push((path.clone(), modified));
                        }
                    }
                }
            });
        }
    });
    let found = found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    (found, too_large.into_inner())
}

/// The ignore rules of one directory.
#[derive(Default)]
struct DirRules {
    /// From `.ignore`.
    ignore: Option<Gitignore>,
    /// From `.gitignore`.
    gitignore: Option<Gitignore>,
    /// From `.git/info/exclude`.
    exclude: Option<Gitignore>,
    /// The directory holds `.git`: a repository starts here.
    has_git: bool,
}

/// Every directory's rules that matter for one search.
struct IgnoreRules {
    dirs: HashMap<PathBuf, DirRules>,
}

impl IgnoreRules {
    /// Read the rules of `root`, of every directory above it, and of every directory in
    /// `listing` that holds an ignore file (with the `.git` markers above those).
    fn load(fs: &dyn FileAccess, root: &Path, listing: &WalkListing) -> Self {
        let mut rules = Self {
            dirs: HashMap::new(),
        };
        let mut git_known: HashMap<PathBuf, bool> = HashMap::new();
        // The root and its ancestors: `.gitignore` matters only up to the nearest repository.
        let mut git_found = false;
        for dir in root.ancestors() {
            if dir.as_os_str().is_empty() {
                break;
            }
            let mut dir_rules = DirRules {
                ignore: read_rules(fs, dir, &dir.join(".ignore")),
                ..DirRules::default()
            };
            if !git_found {
                dir_rules.has_git = probe_git(fs, dir, &mut dir_rules);
                git_known.insert(dir.to_path_buf(), dir_rules.has_git);
                dir_rules.gitignore = read_rules(fs, dir, &dir.join(".gitignore"));
                git_found = dir_rules.has_git;
            }
            rules.dirs.insert(dir.to_path_buf(), dir_rules);
        }
        // Below the root: only directories the walk showed an ignore file or `.git` in.
        for entry in &listing.entries {
            if !matches!(entry.kind, EntryKind::File | EntryKind::Symlink) {
                continue;
            }
            let (Some(dir), Some(name)) = (entry.path.parent(), entry.path.file_name()) else {
                continue;
            };
            if dir == root {
                continue;
            }
            let dir_rules = rules.dirs.entry(dir.to_path_buf()).or_default();
            match name.to_str() {
                Some(".ignore") => dir_rules.ignore = read_rules(fs, dir, &entry.path),
                Some(".gitignore") => dir_rules.gitignore = read_rules(fs, dir, &entry.path),
                Some(".git") => {
                    dir_rules.has_git = true;
                    git_known.insert(dir.to_path_buf(), true);
                }
                _ => {}
            }
        }
        // A `.gitignore` applies only inside a repository: find the `.git` markers between
        // each such directory and the root (a `.git` directory is pruned from the walk).
        let with_gitignore: Vec<PathBuf> = rules
            .dirs
            .iter()
            .filter(|(dir, r)| r.gitignore.is_some() && dir.starts_with(root) && *dir != root)
            .map(|(dir, _)| dir.clone())
            .collect();
        for dir in with_gitignore {
            for ancestor in dir.ancestors().take_while(|a| *a != root) {
                if git_known.contains_key(ancestor) {
                    continue;
                }
                let dir_rules = rules.dirs.entry(ancestor.to_path_buf()).or_default();
                let has_git = probe_git(fs, ancestor, dir_rules);
                dir_rules.has_git = has_git;
                git_known.insert(ancestor.to_path_buf(), has_git);
            }
        }
        rules
    }

    /// Whether the search may use `path`: the include glob, then ignore files, then hidden
    /// names, as `ignore`'s walker decides.
    fn admits(&self, query: &Query, path: &Path, is_dir: bool) -> bool {
        if let Some(overrides) = &query.overrides {
            match overrides.matched(path, is_dir) {
                Match::Ignore(_) => return false,
                Match::Whitelist(_) => return true,
                Match::None => {}
            }
        }
        match self.matched(path, is_dir) {
            Match::Ignore(()) => false,
            Match::Whitelist(()) => true,
            Match::None => !path
                .file_name()
                .is_some_and(|n| n.as_encoded_bytes().starts_with(b".")),
        }
    }

    /// The ignore files' verdict on `path`, with the walker's precedence: `.ignore` over
    /// `.gitignore` over `.git/info/exclude`, deeper directories first, git rules only inside
    /// a repository and not from above the nearest one.
    fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let chain: Vec<&DirRules> = path
            .ancestors()
            .skip(1)
            .filter_map(|dir| self.dirs.get(dir))
            .collect();
        let any_git = chain.iter().any(|r| r.has_git);
        let (mut m_ignore, mut m_gi, mut m_exclude) = (Match::None, Match::None, Match::None);
        let mut saw_git = false;
        for rules in chain {
            if m_ignore.is_none() {
                m_ignore = verdict(rules.ignore.as_ref(), path, is_dir);
            }
            if any_git && !saw_git {
                if m_gi.is_none() {
                    m_gi = verdict(rules.gitignore.as_ref(), path, is_dir);
                }
                if m_exclude.is_none() {
                    m_exclude = verdict(rules.exclude.as_ref(), path, is_dir);
                }
            }
            saw_git = saw_git || rules.has_git;
        }
        m_ignore.or(m_gi).or(m_exclude)
    }
}

fn verdict(rules: Option<&Gitignore>, path: &Path, is_dir: bool) -> Match<()> {
    match rules.map(|r| r.matched(path, is_dir)) {
        Some(Match::Ignore(_)) => Match::Ignore(()),
        Some(Match::Whitelist(_)) => Match::Whitelist(()),
        Some(Match::None) | None => Match::None,
    }
}

/// Whether `dir` holds `.git`; when it is a directory, its `info/exclude` is read into
/// `rules`.
fn probe_git(fs: &dyn FileAccess, dir: &Path, rules: &mut DirRules) -> bool {
    let git = dir.join(".git");
    match fs.metadata(&git) {
        Ok(meta) => {
            if meta.is_dir {
                rules.exclude = read_rules(fs, dir, &git.join("info").join("exclude"));
            }
            true
        }
        Err(_) => false,
    }
}

/// The gitignore-syntax rules in `file`, relative to `dir`; `None` when it cannot be read
/// (as the walker, which ignores unreadable ignore files).
fn read_rules(fs: &dyn FileAccess, dir: &Path, file: &Path) -> Option<Gitignore> {
    let bytes = fs.read(file, MAX_IGNORE_FILE_BYTES).ok()?;
    let mut builder = GitignoreBuilder::new(dir);
    for (index, line) in bytes.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // Lines that are not UTF-8 are skipped, as the walker skips them.
        let Ok(mut line) = std::str::from_utf8(line) else {
            continue;
        };
        if index == 0 {
            line = line.trim_start_matches('\u{feff}');
        }
        // A malformed pattern is dropped, the rest of the file still counts.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    builder.build().ok()
}
