//! What the model's tools look like, and the read-only ones' work.
//!
//! This crate owns everything about a tool that does not need the session: the spec the model
//! is shown, the struct its arguments parse into, the text its output becomes, and — for the
//! tools that only read the file system — the work itself, as plain synchronous functions. The
//! core's registry and handlers decide *whether* and *where* a tool runs (approval, sandbox,
//! process spawning); they call into this crate for *what* to offer and *how* to read and
//! answer. Nothing here spawns a process or knows about a session, so it depends on no other
//! internal crate.
//!
//! # Specs ([`spec`])
//!
//! [`ToolSpec`] is a function tool (JSON schema) or a freeform tool (Lark grammar), serialised
//! for the Responses API by [`ToolSpec::to_responses_json`] (and for Chat Completions by
//! [`ToolSpec::to_chat_completions_json`]). One constructor per tool: [`exec_command_spec`],
//! [`write_stdin_spec`], [`shell_spec`], [`shell_command_spec`],
//! [`apply_patch_freeform_spec`]`(grammar)`, [`apply_patch_function_spec`], [`read_file_spec`],
//! [`list_dir_spec`], [`grep_files_spec`], [`view_image_spec`], [`update_plan_spec`]. Names and
//! argument shapes match Codex; descriptions are ours. Tool names are in [`names`].
//!
//! # Profiles ([`profile`])
//!
//! A [`ToolProfile`] lists the tools a thread offers (name + [`ToolVariant`]) and the turn aids
//! that come with them; [`ToolProfile::standard`] is Codex's set, [`ToolProfile::local`] the
//! embedded model's. The compact variants' specs, `write_file` and `edit_file` are in
//! [`compact_spec`]; [`replace_span`] is `edit_file`'s work (one unique span of a file's text
//! replaced, the model's usual slips forgiven).
//!
//! # Arguments ([`args`])
//!
//! One struct per tool ([`ExecCommandArgs`], [`WriteStdinArgs`], [`ShellArgs`],
//! [`ShellCommandArgs`], [`ApplyPatchArgs`], [`ReadFileArgs`], [`ListDirArgs`],
//! [`GrepFilesArgs`], [`ViewImageArgs`], [`UpdatePlanArgs`]). Get one with
//! [`parse_arguments`]`::<T>(tool_name, raw)`: the raw text is checked against the very schema
//! the model was given, so errors name the field at fault, in plain words, followed by how to
//! call the tool:
//!
//! ```text
//! failed to parse function arguments: expected a number for `yield_time_ms`, but got the
//! string "soon". Call exec_command with a JSON object with required `cmd` (string) and
//! optional `justification` (string), `login` (boolean), …
//! ```
//!
//! Negative, fractional or non-numeric numbers are rejected there; numbers that are merely too
//! large are clamped by the accessors ([`ExecCommandArgs::yield_time_ms`]: default 10 000 ms,
//! clamped to 250..=30 000; `max_output_tokens`: default 10 000, clamped to 1..=100 000).
//! [`UpdatePlanArgs::validate`] refuses more than one step in progress.
//!
//! # Output ([`exec_output`], [`truncation`])
//!
//! [`format_exec_output`] renders an exec result in Codex's layout (`Chunk ID`, `Wall time`,
//! exit or session line, `Original token count`, `Output:`), plus a plain timeout line and an
//! optional sandbox note. [`truncate_middle`] fits text into a token budget — tokens are
//! approximated as `ceil(bytes / 4)` — keeping its head and tail with a `…N tokens truncated…`
//! marker and a warning header.
//!
//! # Read-only file tools
//!
//! Called by the core's handlers with the parsed arguments and the turn's working directory;
//! each returns the text for the model or a [`FileToolError`] whose message says what was wrong
//! and how to call the tool correctly:
//!
//! * [`read_file`]`(&ReadFileArgs, cwd) -> Result<String, FileToolError>` — `L<n>: ` lines,
//!   slice or indentation mode;
//! * [`list_dir`]`(&ListDirArgs, cwd) -> Result<String, FileToolError>` — stable pages of a
//!   name-ordered tree;
//! * [`grep_files`]`(&GrepFilesArgs, cwd) -> Result<String, FileToolError>` — paths of
//!   matching files, newest first, searched in parallel with ripgrep's libraries;
//! * [`load_image_for_model`]`(path, max_dimension) -> Result<LoadedImage, FileToolError>` —
//!   a `data:` URL for `view_image` (the caller resolves a relative path against the cwd).
//!
//! They are synchronous and may block on the file system: call them from
//! `tokio::task::spawn_blocking`.
//!
//! # Files elsewhere ([`FileAccess`])
//!
//! Each of those tools also comes in a form that reads through a [`FileAccess`] — metadata,
//! whole-file reads, one directory's entries, a bounded walk — so the files may live on
//! another machine behind an exec server: [`read_file_in`], [`list_dir_in`],
//! [`grep_files_in`] and [`load_image_for_model_in`], each taking `&dyn FileAccess` first and
//! otherwise the same arguments and output. [`LocalFiles`] is this machine. The plain
//! functions above keep their own local paths (streaming reads, `ignore`'s parallel walker);
//! the `_in` forms read files whole (at most [`MAX_FILE_READ_BYTES`]) and `grep_files_in`
//! applies the ignore rules itself to one walk, within [`GREP_WALK_LIMITS`],
//! [`MAX_GREP_FILES`] and [`MAX_GREP_FILE_BYTES`], saying in its answer when a cap cut the
//! search short.

pub mod args;
pub mod collab;
pub mod compact_spec;
mod error;
pub mod exec_output;
mod file_access;
mod grep_files;
mod grep_listing;
mod image;
mod list_dir;
mod overview;
mod paths;
mod plan;
pub mod profile;
mod read_file;
mod span_edit;
pub mod spec;
pub mod truncation;
mod validate;

pub use args::{
    ApplyPatchArgs, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_WRITE_STDIN_YIELD_TIME_MS,
    DEFAULT_YIELD_TIME_MS, ExecCommandArgs, GrepFilesArgs, IndentationArgs, ListDirArgs,
    MAX_MAX_OUTPUT_TOKENS, MAX_YIELD_TIME_MS, MIN_YIELD_TIME_MS, PlanItemArg, ReadFileArgs,
    ReadMode, SandboxPermissions, ShellArgs, ShellCommandArgs, StepStatus, ToolArguments,
    UpdatePlanArgs, ViewImageArgs, WriteStdinArgs, clamp_max_output_tokens, clamp_yield_time_ms,
    parse_arguments,
};
pub use collab::{
    CloseAgentArgs, CollabInputItem, ResumeAgentArgs, SendInputArgs, SpawnAgentArgs, WaitAgentArgs,
};
pub use compact_spec::{
    EditFileArgs, WriteFileArgs, edit_file_spec, list_dir_compact_spec, read_file_compact_spec,
    shell_command_compact_spec, write_file_spec,
};
pub use error::{FileToolError, ToolInputError};
pub use exec_output::{ExecOutputView, ExitView, format_exec_output, new_chunk_id};
pub use file_access::{
    DirEntryInfo, EntryKind, FileAccess, FileMeta, LocalFiles, WalkEntry, WalkError, WalkLimits,
    WalkListing,
};
pub use grep_files::{DEFAULT_GREP_LIMIT, MAX_GREP_LIMIT, NO_MATCHES, grep_files};
pub use grep_listing::{GREP_WALK_LIMITS, MAX_GREP_FILE_BYTES, MAX_GREP_FILES, grep_files_in};
pub use image::{LoadedImage, load_image_for_model, load_image_for_model_in};
pub use list_dir::{
    DEFAULT_LIST_DEPTH, DEFAULT_LIST_LIMIT, MAX_LIST_ENTRIES, list_dir, list_dir_in,
};
pub use overview::project_overview;
pub use plan::PLAN_UPDATED;
pub use profile::{ProfileTool, ShellTool, StandardTools, ToolProfile, ToolVariant, TurnAid};
pub use read_file::{
    DEFAULT_READ_LIMIT, MAX_FILE_READ_BYTES, MAX_LINE_BYTES, read_file, read_file_in,
};
pub use span_edit::{SpanEdit, SpanEditError, replace_span};
pub use spec::{
    FreeformFormat, JsonSchema, ToolSpec, apply_patch_freeform_spec, apply_patch_function_spec,
    exec_command_spec, grep_files_spec, list_dir_spec, names, read_file_spec, shell_command_spec,
    shell_spec, update_plan_spec, view_image_spec, write_stdin_spec,
};
pub use truncation::{TruncationResult, approx_token_count, truncate_middle};
