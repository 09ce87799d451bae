//! The two error enums of this crate.
//!
//! Every message here is written for the model: it says what was wrong and how to call the
//! tool correctly, in plain words, without Rust `Debug` text. The core returns these messages
//! to the model as a failed tool output it can act on.

use std::io;
use std::path::{Path, PathBuf};

/// The arguments of a tool call could not be used: not JSON, a missing or mistyped field, an
/// unknown field, or a value outside what the tool accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolInputError {
    /// The raw argument text did not parse into the tool's argument struct.
    #[error("failed to parse function arguments: {problem}. {usage}")]
    Parse {
        /// The tool the arguments were meant for.
        tool: String,
        /// What was wrong, e.g. "missing field `cmd`".
        problem: String,
        /// How to call the tool: its required and optional fields.
        usage: String,
    },
    /// The arguments parsed, but one value is not acceptable (offset 0, two steps in progress…).
    #[error("invalid `{field}` for {tool}: {message}")]
    InvalidValue {
        /// The tool the arguments were meant for.
        tool: String,
        /// The field (or dotted path) holding the bad value.
        field: String,
        /// What is wrong and what to send instead.
        message: String,
    },
}

impl ToolInputError {
    pub(crate) fn invalid(tool: &str, field: &str, message: impl Into<String>) -> Self {
        Self::InvalidValue {
            tool: tool.to_string(),
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// A read-only file tool (read_file, list_dir, grep_files, view_image) could not do its work.
#[derive(Debug, thiserror::Error)]
pub enum FileToolError {
    /// The arguments were unusable; see [`ToolInputError`].
    #[error(transparent)]
    Input(#[from] ToolInputError),

    /// A path that must be absolute was relative.
    #[error("{}", relative_path_message(field, path, suggestion.as_ref()))]
    RelativePath {
        /// The argument that held the path.
        field: &'static str,
        /// The path as given.
        path: String,
        /// The path joined onto the working directory, offered as the likely intent.
        suggestion: Option<PathBuf>,
    },

    /// Nothing exists at the path.
    #[error("{} does not exist{}", path.display(), hint_suffix(hint))]
    NotFound {
        /// The missing path.
        path: PathBuf,
        /// What to try next, if there is something useful to say.
        hint: Option<String>,
    },

    /// read_file was given a directory.
    #[error(
        "{} is a directory, not a file; call list_dir with {{\"dir_path\": \"{}\"}} to see its entries",
        path.display(),
        path.display()
    )]
    IsADirectory {
        /// The directory.
        path: PathBuf,
    },

    /// list_dir was given something that is not a directory.
    #[error(
        "{} is not a directory; call read_file with {{\"file_path\": \"{}\"}} to read it",
        path.display(),
        path.display()
    )]
    NotADirectory {
        /// The path that is not a directory.
        path: PathBuf,
    },

    /// The path is a FIFO, socket or device, which the file tools do not read.
    #[error(
        "{} is not a regular file (it is a FIFO, socket or device), so it cannot be read this way",
        path.display()
    )]
    NotARegularFile {
        /// The special file.
        path: PathBuf,
    },

    /// read_file was given a file that holds binary data.
    #[error(
        "{} looks like a binary file (it contains NUL bytes), so read_file will not show it; \
         inspect it with a command such as `file` or `xxd` through exec_command instead",
        path.display()
    )]
    BinaryFile {
        /// The binary file.
        path: PathBuf,
    },

    /// The file is larger than the file tools read in one go (through an exec server a file
    /// is read whole).
    #[error(
        "{} is {size} bytes, more than the {limit} bytes {tool} reads at once; read parts of it \
         with exec_command instead (for example `sed -n '1,200p' {}`)",
        path.display(),
        path.display()
    )]
    TooLarge {
        /// The tool that refused it.
        tool: &'static str,
        /// The file.
        path: PathBuf,
        /// Its size in bytes (at least `limit + 1` when it grew while being read).
        size: u64,
        /// The most bytes the tool reads.
        limit: u64,
    },

    /// The requested starting line or entry lies beyond the end.
    #[error("{}", past_end_message(what, path, *requested, *available))]
    OffsetPastEnd {
        /// "line" or "entry".
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The 1-indexed start that was asked for.
        requested: usize,
        /// How many lines or entries there are.
        available: usize,
    },

    /// The grep_files pattern is not a valid regular expression.
    #[error(
        "the pattern {pattern:?} is not a valid regular expression: {message}. Escape special \
         characters such as `(`, `[`, `{{`, `*`, `+`, `?` and `\\` with a backslash to match \
         them literally"
    )]
    InvalidRegex {
        /// The pattern as given.
        pattern: String,
        /// The regex engine's explanation.
        message: String,
    },

    /// The grep_files `include` value is not a valid glob.
    #[error(
        "the include glob {glob:?} is not valid: {message}. Use a glob such as \"*.rs\" or \
         \"*.{{ts,tsx}}\""
    )]
    InvalidGlob {
        /// The glob as given.
        glob: String,
        /// The glob parser's explanation.
        message: String,
    },

    /// The file exists but is not an image this tool can read.
    #[error(
        "{} is not an image view_image can read ({detail}); it reads PNG, JPEG, GIF and WebP files",
        path.display()
    )]
    NotAnImage {
        /// The file.
        path: PathBuf,
        /// Why it was refused.
        detail: String,
    },

    /// An image could not be re-encoded for the model.
    #[error("could not re-encode the image {} for the model: {detail}", path.display())]
    ImageEncode {
        /// The file.
        path: PathBuf,
        /// The encoder's explanation.
        detail: String,
    },

    /// Reading from the file system failed for another reason (permissions, I/O error).
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done: "read", "list", "open"…
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl FileToolError {
    /// Map an I/O error on `path`, turning "not found" into [`FileToolError::NotFound`].
    pub(crate) fn from_io(action: &'static str, path: PathBuf, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            Self::NotFound { path, hint: None }
        } else {
            Self::Io {
                action,
                path,
                source,
            }
        }
    }
}

fn relative_path_message(field: &str, path: &str, suggestion: Option<&PathBuf>) -> String {
    let mut message = format!("`{field}` must be an absolute path, but {path:?} is relative");
    if let Some(suggestion) = suggestion {
        message.push_str(&format!(
            "; relative to the working directory that is {:?}, so pass that instead",
            suggestion.display().to_string()
        ));
    }
    message
}

fn past_end_message(what: &str, path: &Path, requested: usize, available: usize) -> String {
    let kind = if what == "line" { "file" } else { "directory" };
    let noun = match (what, available) {
        (_, 1) => what.to_string(),
        ("entry", _) => "entries".to_string(),
        _ => format!("{what}s"),
    };
    let mut message = format!(
        "offset {requested} is past the end: the {kind} {} has {available} {noun}",
        path.display()
    );
    if available > 0 {
        message.push_str(&format!("; use an offset between 1 and {available}"));
    }
    message
}

fn hint_suffix(hint: &Option<String>) -> String {
    match hint {
        Some(hint) => format!("; {hint}"),
        None => String::new(),
    }
}
