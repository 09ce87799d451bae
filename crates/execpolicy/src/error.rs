//! Why a rules file did not load.

use std::fmt;
use std::io;
use std::path::Path;
use std::path::PathBuf;

/// A 1-based line and column inside a rules file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextPosition {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl fmt::Display for TextPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// `path:line:col` when the position is known, `path` otherwise.
struct At<'a>(&'a Path, Option<TextPosition>);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(pos) => write!(f, "{}:{pos}", self.0.display()),
            None => write!(f, "{}", self.0.display()),
        }
    }
}

/// A rules file (or directory) that could not be loaded. The file contributes no rules.
///
/// Callers must not treat a policy with load errors as complete: see
/// [`crate::Policy::has_load_errors`].
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read rules file {}: {source}; check that it exists and is readable", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A rules directory exists but could not be listed.
    #[error("cannot list rules directory {}: {source}; check its permissions", dir.display())]
    ReadDir {
        /// The directory.
        dir: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A syntax error, a wrong argument type, an unknown decision, an empty pattern, …
    #[error("{}: {message}", At(path, *position))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where in the file, when Starlark could tell.
        position: Option<TextPosition>,
        /// What is wrong, in Starlark's or our words.
        message: String,
    },
    /// A `match=` example that the rule does not match.
    #[error(
        "{}: rule with pattern {rule} does not match its `match` example `{example}`; fix the pattern or the example",
        At(path, *position)
    )]
    ExampleNotMatched {
        /// The file.
        path: PathBuf,
        /// Where the `prefix_rule` call is.
        position: Option<TextPosition>,
        /// The rule's pattern, in rules-file syntax.
        rule: String,
        /// The example, shell-quoted.
        example: String,
    },
    /// A `not_match=` example that the rule matches.
    #[error(
        "{}: rule with pattern {rule} matches its `not_match` example `{example}`; fix the pattern or the example",
        At(path, *position)
    )]
    ExampleMatched {
        /// The file.
        path: PathBuf,
        /// Where the `prefix_rule` call is.
        position: Option<TextPosition>,
        /// The rule's pattern, in rules-file syntax.
        rule: String,
        /// The example, shell-quoted.
        example: String,
    },
}

impl LoadError {
    /// The file or directory the error is about.
    pub fn path(&self) -> &Path {
        match self {
            LoadError::Read { path, .. }
            | LoadError::Invalid { path, .. }
            | LoadError::ExampleNotMatched { path, .. }
            | LoadError::ExampleMatched { path, .. } => path,
            LoadError::ReadDir { dir, .. } => dir,
        }
    }

    /// The line and column inside the file, when known.
    pub fn position(&self) -> Option<TextPosition> {
        match self {
            LoadError::Invalid { position, .. }
            | LoadError::ExampleNotMatched { position, .. }
            | LoadError::ExampleMatched { position, .. } => *position,
            LoadError::Read { .. } | LoadError::ReadDir { .. } => None,
        }
    }
}
