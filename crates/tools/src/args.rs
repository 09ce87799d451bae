//! Argument structs for every tool, and [`parse_arguments`] to get one from the model's text.
//!
//! Each struct mirrors its tool's schema in [`crate::spec`]: optional fields are `Option`s and
//! accept `null`; numbers accept JSON integers (and whole floats such as `2.0`); unknown fields
//! are refused because every schema says `additionalProperties: false`. Defaults live in
//! accessor methods so a handler never has to remember them.
//!
//! Numbers that are negative, fractional or not numbers at all are *rejected* at parse time
//! with a message naming the field. Numbers that are merely too large for their purpose are
//! *clamped* by the helpers ([`clamp_yield_time_ms`], [`clamp_max_output_tokens`]).

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolInputError;
use crate::spec::{self, ToolSpec};
use crate::validate;

/// Default wait for output before exec_command returns: 10 s.
pub const DEFAULT_YIELD_TIME_MS: u64 = 10_000;
/// Default wait for write_stdin, which usually just polls: 250 ms (as in Codex).
pub const DEFAULT_WRITE_STDIN_YIELD_TIME_MS: u64 = 250;
/// Shortest wait honoured.
pub const MIN_YIELD_TIME_MS: u64 = 250;
/// Longest wait honoured.
pub const MAX_YIELD_TIME_MS: u64 = 30_000;
/// Default output budget, in approximate tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 10_000;
/// Largest output budget honoured.
pub const MAX_MAX_OUTPUT_TOKENS: usize = 100_000;

/// `requested` (or `default` when absent), clamped to `MIN_YIELD_TIME_MS..=MAX_YIELD_TIME_MS`.
pub fn clamp_yield_time_ms(requested: Option<u64>, default: u64) -> u64 {
    requested
        .unwrap_or(default)
        .clamp(MIN_YIELD_TIME_MS, MAX_YIELD_TIME_MS)
}

/// `requested` (or [`DEFAULT_MAX_OUTPUT_TOKENS`]), clamped to `1..=MAX_MAX_OUTPUT_TOKENS`.
/// Zero becomes 1 and absurdly large values become the maximum; negative values never get here
/// because [`parse_arguments`] rejects them.
pub fn clamp_max_output_tokens(requested: Option<u64>) -> usize {
    match requested {
        None => DEFAULT_MAX_OUTPUT_TOKENS,
        Some(tokens) => usize::try_from(tokens)
            .unwrap_or(MAX_MAX_OUTPUT_TOKENS)
            .clamp(1, MAX_MAX_OUTPUT_TOKENS),
    }
}

/// An argument struct tied to the tool whose schema it follows.
pub trait ToolArguments: DeserializeOwned {
    /// The spec the model was given; its `parameters` schema is what the arguments are
    /// checked against.
    fn spec() -> ToolSpec;
}

/// Parse a function tool's raw argument text into `T`.
///
/// The text must be a JSON object matching `T`'s schema. Empty text counts as `{}`. On failure
/// the error reads `failed to parse function arguments: <what was wrong>. Call <tool> with …`,
/// naming the field at fault and listing the required and optional fields.
pub fn parse_arguments<T: ToolArguments>(tool_name: &str, raw: &str) -> Result<T, ToolInputError> {
    let spec = T::spec();
    let schema = match &spec {
        ToolSpec::Function { parameters, .. } => parameters.0.clone(),
        ToolSpec::Freeform { .. } => Value::Null,
    };
    let fail = |problem: String| ToolInputError::Parse {
        tool: tool_name.to_string(),
        problem,
        usage: validate::usage(tool_name, &schema),
    };

    let text = if raw.trim().is_empty() { "{}" } else { raw };
    let value: Value = serde_json::from_str(text).map_err(|err| {
        fail(format!(
            "the arguments are not valid JSON ({err}); send one JSON object"
        ))
    })?;
    validate::check(&schema, &value).map_err(fail)?;
    serde_json::from_value(value).map_err(|err| fail(err.to_string()))
}

/// Whether a command runs inside the sandbox or asks to leave it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxPermissions {
    /// Run under the turn's sandbox policy.
    #[default]
    UseDefault,
    /// Ask the user to run it without the sandbox.
    RequireEscalated,
}

/// Arguments of `exec_command`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecCommandArgs {
    /// The command line.
    pub cmd: String,
    /// Working directory (relative ones resolve against the turn's cwd).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Shell program; the user's shell when absent.
    #[serde(default)]
    pub shell: Option<String>,
    /// Login shell; see [`ExecCommandArgs::login`].
    #[serde(default)]
    pub login: Option<bool>,
    /// Allocate a PTY; see [`ExecCommandArgs::tty`].
    #[serde(default)]
    pub tty: Option<bool>,
    /// See [`ExecCommandArgs::yield_time_ms`].
    #[serde(default, deserialize_with = "opt_whole")]
    pub yield_time_ms: Option<u64>,
    /// See [`ExecCommandArgs::max_output_tokens`].
    #[serde(default, deserialize_with = "opt_whole")]
    pub max_output_tokens: Option<u64>,
    /// Sandbox request; see [`ExecCommandArgs::sandbox_permissions`].
    #[serde(default)]
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Why escalation is needed.
    #[serde(default)]
    pub justification: Option<String>,
    /// Suggested prefix to approve for later commands.
    #[serde(default)]
    pub prefix_rule: Option<Vec<String>>,
}

impl ExecCommandArgs {
    /// Login shell, default true.
    pub fn login(&self) -> bool {
        self.login.unwrap_or(true)
    }
    /// PTY, default false.
    pub fn tty(&self) -> bool {
        self.tty.unwrap_or(false)
    }
    /// Wait in ms: default 10 000, clamped to 250..=30 000.
    pub fn yield_time_ms(&self) -> u64 {
        clamp_yield_time_ms(self.yield_time_ms, DEFAULT_YIELD_TIME_MS)
    }
    /// Output budget in tokens: default 10 000, clamped to 1..=100 000.
    pub fn max_output_tokens(&self) -> usize {
        clamp_max_output_tokens(self.max_output_tokens)
    }
    /// Sandbox request, default [`SandboxPermissions::UseDefault`].
    pub fn sandbox_permissions(&self) -> SandboxPermissions {
        self.sandbox_permissions.unwrap_or_default()
    }
}

impl ToolArguments for ExecCommandArgs {
    fn spec() -> ToolSpec {
        spec::exec_command_spec()
    }
}

/// Arguments of `write_stdin`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteStdinArgs {
    /// The session to write to.
    #[serde(deserialize_with = "whole")]
    pub session_id: u64,
    /// Text to send; see [`WriteStdinArgs::chars`].
    #[serde(default)]
    pub chars: Option<String>,
    /// See [`WriteStdinArgs::yield_time_ms`].
    #[serde(default, deserialize_with = "opt_whole")]
    pub yield_time_ms: Option<u64>,
    /// See [`WriteStdinArgs::max_output_tokens`].
    #[serde(default, deserialize_with = "opt_whole")]
    pub max_output_tokens: Option<u64>,
}

impl WriteStdinArgs {
    /// Text to send, default empty (a poll).
    pub fn chars(&self) -> &str {
        self.chars.as_deref().unwrap_or("")
    }
    /// Wait in ms: default 250, clamped to 250..=30 000.
    pub fn yield_time_ms(&self) -> u64 {
        clamp_yield_time_ms(self.yield_time_ms, DEFAULT_WRITE_STDIN_YIELD_TIME_MS)
    }
    /// Output budget in tokens: default 10 000, clamped to 1..=100 000.
    pub fn max_output_tokens(&self) -> usize {
        clamp_max_output_tokens(self.max_output_tokens)
    }
}

impl ToolArguments for WriteStdinArgs {
    fn spec() -> ToolSpec {
        spec::write_stdin_spec()
    }
}

/// Arguments of `shell`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// argv.
    pub command: Vec<String>,
    /// Working directory.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Timeout in ms; the caller picks the default.
    #[serde(default, deserialize_with = "opt_whole")]
    pub timeout_ms: Option<u64>,
    /// Sandbox request.
    #[serde(default)]
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Why escalation is needed.
    #[serde(default)]
    pub justification: Option<String>,
    /// Suggested prefix to approve for later commands.
    #[serde(default)]
    pub prefix_rule: Option<Vec<String>>,
}

impl ShellArgs {
    /// Sandbox request, default [`SandboxPermissions::UseDefault`].
    pub fn sandbox_permissions(&self) -> SandboxPermissions {
        self.sandbox_permissions.unwrap_or_default()
    }
}

impl ToolArguments for ShellArgs {
    fn spec() -> ToolSpec {
        spec::shell_spec()
    }
}

/// Arguments of `shell_command`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellCommandArgs {
    /// The script.
    pub command: String,
    /// Working directory.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Timeout in ms; the caller picks the default.
    #[serde(default, deserialize_with = "opt_whole")]
    pub timeout_ms: Option<u64>,
    /// Login shell; see [`ShellCommandArgs::login`].
    #[serde(default)]
    pub login: Option<bool>,
    /// Sandbox request.
    #[serde(default)]
    pub sandbox_permissions: Option<SandboxPermissions>,
    /// Why escalation is needed.
    #[serde(default)]
    pub justification: Option<String>,
    /// Suggested prefix to approve for later commands.
    #[serde(default)]
    pub prefix_rule: Option<Vec<String>>,
}

impl ShellCommandArgs {
    /// Login shell, default true.
    pub fn login(&self) -> bool {
        self.login.unwrap_or(true)
    }
    /// Sandbox request, default [`SandboxPermissions::UseDefault`].
    pub fn sandbox_permissions(&self) -> SandboxPermissions {
        self.sandbox_permissions.unwrap_or_default()
    }
}

impl ToolArguments for ShellCommandArgs {
    fn spec() -> ToolSpec {
        spec::shell_command_spec()
    }
}

/// Arguments of the function variant of `apply_patch`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch text.
    pub input: String,
}

impl ToolArguments for ApplyPatchArgs {
    fn spec() -> ToolSpec {
        spec::apply_patch_function_spec()
    }
}

/// How read_file picks lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadMode {
    /// `limit` lines from `offset`.
    #[default]
    Slice,
    /// The indentation block around the anchor line.
    Indentation,
}

/// Options of read_file's indentation mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndentationArgs {
    /// The line to centre on; defaults to `offset`.
    #[serde(default, deserialize_with = "opt_whole")]
    pub anchor_line: Option<u64>,
    /// Enclosing levels to include; 0 (default) means all.
    #[serde(default, deserialize_with = "opt_whole")]
    pub max_levels: Option<u64>,
    /// Include sibling blocks at the anchor's level (default false).
    #[serde(default)]
    pub include_siblings: Option<bool>,
    /// Include comment lines above the block (default true).
    #[serde(default)]
    pub include_header: Option<bool>,
    /// Cap on returned lines; defaults to `limit`.
    #[serde(default, deserialize_with = "opt_whole")]
    pub max_lines: Option<u64>,
}

/// Arguments of `read_file`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Absolute path of the file.
    pub file_path: String,
    /// First line, 1-indexed (default 1).
    #[serde(default, deserialize_with = "opt_whole")]
    pub offset: Option<u64>,
    /// Maximum lines (default 2000).
    #[serde(default, deserialize_with = "opt_whole")]
    pub limit: Option<u64>,
    /// Slice or indentation (default slice).
    #[serde(default)]
    pub mode: Option<ReadMode>,
    /// Indentation options.
    #[serde(default)]
    pub indentation: Option<IndentationArgs>,
}

impl ToolArguments for ReadFileArgs {
    fn spec() -> ToolSpec {
        spec::read_file_spec()
    }
}

/// Arguments of `list_dir`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Absolute path of the directory.
    pub dir_path: String,
    /// First entry, 1-indexed (default 1).
    #[serde(default, deserialize_with = "opt_whole")]
    pub offset: Option<u64>,
    /// Maximum entries (default 25).
    #[serde(default, deserialize_with = "opt_whole")]
    pub limit: Option<u64>,
    /// Levels to descend (default 2).
    #[serde(default, deserialize_with = "opt_whole")]
    pub depth: Option<u64>,
}

impl ToolArguments for ListDirArgs {
    fn spec() -> ToolSpec {
        spec::list_dir_spec()
    }
}

/// Arguments of `grep_files`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepFilesArgs {
    /// The regex.
    pub pattern: String,
    /// Glob on file names.
    #[serde(default)]
    pub include: Option<String>,
    /// File or directory to search (default: the cwd).
    #[serde(default)]
    pub path: Option<String>,
    /// Maximum paths (default 100, at most 2000).
    #[serde(default, deserialize_with = "opt_whole")]
    pub limit: Option<u64>,
}

impl ToolArguments for GrepFilesArgs {
    fn spec() -> ToolSpec {
        spec::grep_files_spec()
    }
}

/// Arguments of `view_image`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewImageArgs {
    /// Path of the image.
    pub path: String,
}

impl ToolArguments for ViewImageArgs {
    fn spec() -> ToolSpec {
        spec::view_image_spec()
    }
}

/// A plan step's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One plan step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanItemArg {
    /// What the step does.
    pub step: String,
    /// Its status.
    pub status: StepStatus,
}

/// Arguments of `update_plan`; check them with [`UpdatePlanArgs::validate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdatePlanArgs {
    /// Why the plan changed.
    #[serde(default)]
    pub explanation: Option<String>,
    /// All steps, in order.
    pub plan: Vec<PlanItemArg>,
}

impl ToolArguments for UpdatePlanArgs {
    fn spec() -> ToolSpec {
        spec::update_plan_spec()
    }
}

/// A JSON number that is a whole number of zero or more (`2.0` allowed).
struct Whole(u64);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Whole;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number of 0 or more")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Whole, E> {
                Ok(Whole(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Whole, E> {
                u64::try_from(v)
                    .map(Whole)
                    .map_err(|_| E::custom(format!("expected 0 or more, got {v}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Whole, E> {
                if v >= 0.0 && v.fract() == 0.0 && v < u64::MAX as f64 {
                    // The checks above make this conversion exact.
                    Ok(Whole(v as u64))
                } else {
                    Err(E::custom(format!(
                        "expected a whole number of 0 or more, got {v}"
                    )))
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

fn whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    Whole::deserialize(deserializer).map(|w| w.0)
}

fn opt_whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Option::<Whole>::deserialize(deserializer).map(|w| w.map(|w| w.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn clamps_yield_and_tokens() {
        assert_eq!(clamp_yield_time_ms(None, DEFAULT_YIELD_TIME_MS), 10_000);
        assert_eq!(clamp_yield_time_ms(Some(0), DEFAULT_YIELD_TIME_MS), 250);
        assert_eq!(
            clamp_yield_time_ms(Some(u64::MAX), DEFAULT_YIELD_TIME_MS),
            30_000
        );
        assert_eq!(clamp_max_output_tokens(None), 10_000);
        assert_eq!(clamp_max_output_tokens(Some(0)), 1);
        assert_eq!(clamp_max_output_tokens(Some(u64::MAX)), 100_000);
        assert_eq!(clamp_max_output_tokens(Some(512)), 512);
    }

    #[test]
    fn whole_floats_and_nulls_deserialise() {
        let args: ExecCommandArgs = serde_json::from_str(
            r#"{"cmd":"ls","yield_time_ms":2000.0,"max_output_tokens":null,"login":null}"#,
        )
        .unwrap();
        assert_eq!(args.yield_time_ms, Some(2000));
        assert_eq!(args.max_output_tokens, None);
        assert!(args.login());
        assert!(!args.tty());
    }
}
