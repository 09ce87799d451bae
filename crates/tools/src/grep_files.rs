//! `grep_files`: which files contain a match for a regex, newest first.
//!
//! Codex shells out to `rg --files-with-matches --sortr=modified`; we do the same search in
//! process with ripgrep's own libraries, so no binary needs to be installed and the walk stays
//! parallel (ripgrep turns its parallelism off when asked to sort). The behaviour follows
//! ripgrep's defaults:
//!
//! * the tree is walked with `ignore`: `.gitignore` (inside git repositories), `.ignore` and
//!   global git excludes are honoured, hidden files and directories are skipped, symlinks are
//!   not followed;
//! * `include` is a ripgrep `--glob`: `*.rs` matches file names at any depth, `*.{ts,tsx}`
//!   alternatives work, and directories are still descended into; as in ripgrep, a hidden
//!   file whose name the glob matches is searched;
//! * each file is searched with `grep-searcher` until its first match; a file with a NUL byte
//!   is treated as binary and the search of it stops there (ripgrep's default when walking);
//! * files that cannot be read are skipped silently (ripgrep's `--no-messages`).
//!
//! Matching paths are sorted by modification time, newest first (ties by path), cut to
//! `limit` (default 100, at most 2000) and printed one per line, as absolute paths when the
//! search root is absolute. No match gives `No matches found.`.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::SystemTime;

use grep::regex::{RegexMatcher, RegexMatcherBuilder};
use grep::searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::{WalkBuilder, WalkState};

use crate::args::GrepFilesArgs;
use crate::error::{FileToolError, ToolInputError};
use crate::file_access::{FileAccess, FileMeta, LocalFiles};
use crate::paths;
use crate::spec::names::GREP_FILES;

/// Paths returned when `limit` is not given.
pub const DEFAULT_GREP_LIMIT: usize = 100;
/// Most paths ever returned.
pub const MAX_GREP_LIMIT: usize = 2000;
/// The text returned when nothing matches.
pub const NO_MATCHES: &str = "No matches found.";

/// Search `args.path` (default `cwd`; relative paths resolve against `cwd`) for files whose
/// contents match `args.pattern`.
pub fn grep_files(args: &GrepFilesArgs, cwd: &Path) -> Result<String, FileToolError> {
    let query = Query::parse(&LocalFiles, args, cwd)?;
    let mut walker = WalkBuilder::new(&query.root);
    if let Some(overrides) = query.overrides.clone() {
        walker.overrides(overrides);
    }
    let found = search(&walker, &query.matcher);
    Ok(query.answer(found, &[]))
}

/// A checked grep_files call.
pub(crate) struct Query {
    pub(crate) matcher: RegexMatcher,
    pub(crate) root: PathBuf,
    /// What `root` is (it exists).
    pub(crate) root_meta: FileMeta,
    /// The `include` glob, as ripgrep's `--glob` over `root`.
    pub(crate) overrides: Option<Override>,
    limit: usize,
}

impl Query {
    pub(crate) fn parse(
        fs: &dyn FileAccess,
        args: &GrepFilesArgs,
        cwd: &Path,
    ) -> Result<Self, FileToolError> {
        if args.pattern.trim().is_empty() {
            return Err(ToolInputError::invalid(
                GREP_FILES,
                "pattern",
                "the pattern is empty; pass the regular expression to look for",
            )
            .into());
        }
        let limit = match args.limit {
            None => DEFAULT_GREP_LIMIT,
            Some(0) => {
                return Err(
                    ToolInputError::invalid(GREP_FILES, "limit", "must be at least 1").into(),
                );
            }
            Some(n) => usize::try_from(n)
                .unwrap_or(MAX_GREP_LIMIT)
                .min(MAX_GREP_LIMIT),
        };
        let root = match args.path.as_deref().map(str::trim) {
            None | Some("") => cwd.to_path_buf(),
            Some(raw) => paths::resolve(raw, cwd),
        };
        let root_meta = paths::stat(fs, &root, "search")?;
        let matcher = RegexMatcherBuilder::new()
            .line_terminator(Some(b'\n'))
            .build(&args.pattern)
            .map_err(|err| FileToolError::InvalidRegex {
                pattern: args.pattern.clone(),
                message: err.to_string().trim().to_string(),
            })?;
        let overrides = match args
            .include
            .as_deref()
            .map(str::trim)
            .filter(|g| !g.is_empty())
        {
            None => None,
            Some(glob) => {
                let invalid = |err: ignore::Error| FileToolError::InvalidGlob {
                    glob: glob.to_string(),
                    message: err.to_string(),
                };
                Some(
                    OverrideBuilder::new(&root)
                        .add(glob)
                        .map_err(invalid)?
                        .build()
                        .map_err(invalid)?,
                )
            }
        };
        Ok(Self {
            matcher,
            root,
            root_meta,
            overrides,
            limit,
        })
    }

    /// The text for the model: the newest `limit` matches, then any notes on what was left
    /// unsearched.
    pub(crate) fn answer(&self, mut found: Vec<(PathBuf, SystemTime)>, notes: &[String]) -> String {
        let mut lines: Vec<String> = if found.is_empty() {
            vec![NO_MATCHES.to_string()]
        } else {
            found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            found.truncate(self.limit);
            found
                .into_iter()
                .map(|(path, _)| path.display().to_string())
                .collect()
        };
        lines.extend(notes.iter().cloned());
        lines.join("\n")
    }
}

/// A searcher configured as ripgrep searches while walking: stop a file at its first NUL.
pub(crate) fn new_searcher() -> Searcher {
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(false)
        .build()
}

/// Walk in parallel; every worker searches with its own searcher and matcher and sends the
/// matching files, with their modification times, back over a channel.
fn search(walker: &WalkBuilder, matcher: &RegexMatcher) -> Vec<(PathBuf, SystemTime)> {
    let (sender, receiver) = mpsc::channel();
    walker.build_parallel().run(|| {
        let sender = sender.clone();
        let matcher = matcher.clone();
        let mut searcher = new_searcher();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let mut sink = FirstMatch(false);
            let searched = searcher.search_path(&matcher, entry.path(), &mut sink);
            if searched.is_ok() && sink.0 {
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                if sender.send((entry.into_path(), modified)).is_err() {
                    return WalkState::Quit;
                }
            }
            WalkState::Continue
        })
    });
    drop(sender);
    receiver.into_iter().collect()
}

/// A sink that records whether there was a match and stops the search at the first one.
pub(crate) struct FirstMatch(pub(crate) bool);

impl Sink for FirstMatch {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.0 = true;
        Ok(false)
    }
}
