//! Resolved settings that are more than a single scalar: tools, the shell environment policy,
//! and the small enums `config.toml` spells as strings.

use std::collections::BTreeMap;

use crate::choice::choice_enum;

choice_enum! {
    /// Which tool the model uses to run commands.
    pub enum ShellToolType {
        /// `exec_command` + `write_stdin`: PTY sessions that can stay alive between calls.
        ExecCommand = "exec_command",
        /// `shell_command`: one command string run by the user's shell.
        ShellCommand = "shell_command",
        /// `shell`: an argv array (the oldest Codex form).
        Shell = "shell",
    }
}

choice_enum! {
    /// The tools and instructions the embedded local model gets.
    pub enum LocalToolProfile {
        /// `write_file`, `edit_file`, `read_file`, `list_dir` and `shell_command`, with
        /// compact rules written for a small model.
        Local = "local",
        /// The configured `[tools]` and Osprey's normal instructions, as a hosted model
        /// gets them (`apply_patch` as a JSON function tool).
        Standard = "standard",
    }
}

/// `[local_model]`: how the embedded model runs, and its quality aids. Every aid is on by
/// default; switching one off is for measuring what it is worth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalModelConfig {
    /// Context window in tokens (prompt + answer).
    pub context_tokens: u32,
    /// CPU threads for inference; `None` uses every core.
    pub threads: Option<u32>,
    /// Most tokens in one response.
    pub max_output_tokens: u32,
    /// Constrain sampling with a grammar to "a message or a valid call of an offered tool".
    pub constrained_decoding: bool,
    pub tool_profile: LocalToolProfile,
    /// End the turn when the model repeats a call it already made in the turn.
    pub loop_guard: bool,
    /// Answer the first repeated call of a turn with its earlier result instead of running it.
    pub repeat_nudge: bool,
    /// Save and reload the KV state of the fixed prompt prefix under `$OSPREY_HOME/models`.
    pub prefix_cache: bool,
    /// Refuse a write to an existing file not read in the turn, showing the file instead.
    pub read_before_write: bool,
    /// Refuse a write to the check script the request names, pointing to the code it checks.
    pub protect_named_check: bool,
    /// Refuse a write whose text copies the context the harness sent the model.
    pub context_echo: bool,
    /// Make a write whose lines still carry the line numbers the tools showed without them.
    pub strip_line_numbers: bool,
    /// Ask once to run the command (or check the output) the request names.
    pub verify_named_check: bool,
    /// Send a named check that failed on its last run since the last write back once.
    pub fix_failed_check: bool,
    /// Say once when the last run since the last write did not print what the request says
    /// the output should be.
    pub check_expected_output: bool,
    /// Ask once to read the project's files when a question is answered without looking.
    pub answer_from_evidence: bool,
    /// Refuse the first write of a turn whose request is a question asking for no change.
    pub question_read_only: bool,
    /// After a write, name the other files that still mention identifiers it removed.
    pub related_files: bool,
    /// When a command reports a name as not defined that another project file defines, say
    /// which file and the line that imports it.
    pub missing_name: bool,
    /// When a one-line program failed on its quoting, give the command quoted right.
    pub quoted_arguments: bool,
    /// Show each write's diff in its result. Off by default: measured on the task set, the
    /// diff of the model's own rewrite kept it on a wrong fix (docs/local-model.md).
    pub write_diff: bool,
    /// Refuse once a whole-file write that would drop most of an existing file, offering a
    /// write that keeps it.
    pub keep_content: bool,
    /// Leave the text the model wrote beside its earlier calls out of each request (not on a
    /// question that question focus handles).
    pub hide_call_narration: bool,
    /// In a question turn, restate the question under each result and ask once for a
    /// command when a count or sum was answered without one.
    pub question_focus: bool,
    /// Offer `edit_file {path, old, new}`, the exact-span edit, beside `write_file`.
    pub edit_tool: bool,
}

impl LocalModelConfig {
    pub const MIN_CONTEXT_TOKENS: u32 = 512;
    pub const MAX_CONTEXT_TOKENS: u32 = 32768;
}

impl Default for LocalModelConfig {
    fn default() -> Self {
        Self {
            context_tokens: 8192,
            threads: None,
            max_output_tokens: 1536,
            constrained_decoding: true,
            tool_profile: LocalToolProfile::Local,
            loop_guard: true,
            repeat_nudge: true,
            prefix_cache: true,
            read_before_write: true,
            protect_named_check: true,
            context_echo: true,
            strip_line_numbers: true,
            verify_named_check: true,
            fix_failed_check: true,
            check_expected_output: true,
            answer_from_evidence: true,
            question_read_only: true,
            related_files: true,
            missing_name: true,
            quoted_arguments: true,
            write_diff: false,
            keep_content: true,
            hide_call_narration: true,
            question_focus: true,
            edit_tool: true,
        }
    }
}

choice_enum! {
    /// How the `apply_patch` tool is offered to the model.
    pub enum ApplyPatchToolType {
        /// A custom (freeform) tool whose input is the raw patch text.
        Freeform = "freeform",
        /// A JSON function tool with an `input` string argument.
        Function = "function",
    }
}

choice_enum! {
    /// `model_reasoning_summary`: how much reasoning summary to request.
    pub enum ReasoningSummaryMode {
        Auto = "auto",
        Concise = "concise",
        Detailed = "detailed",
        None = "none",
    }
}

choice_enum! {
    /// `[projects."<path>"] trust_level`.
    pub enum TrustLevel {
        Trusted = "trusted",
        Untrusted = "untrusted",
    }
}

choice_enum! {
    /// `shell_environment_policy.inherit`: the starting environment of spawned commands.
    pub enum ShellEnvironmentInherit {
        /// Everything Osprey itself was started with.
        All = "all",
        /// Only [`CORE_ENV_VARS`].
        Core = "core",
        /// Nothing.
        None = "none",
    }
}

/// Variables kept by `inherit = "core"`.
pub const CORE_ENV_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP",
];

/// Name patterns removed unless `ignore_default_excludes` is true.
pub const DEFAULT_ENV_EXCLUDES: &[&str] = &["*KEY*", "*SECRET*", "*TOKEN*"];

/// How the environment of commands the model runs is built.
///
/// Steps, in order: start from `inherit`; unless `ignore_default_excludes`, drop names
/// matching [`DEFAULT_ENV_EXCLUDES`]; drop names matching `exclude`; add `set`; if
/// `include_only` is non-empty, keep only names matching it. Patterns are case-insensitive
/// globs (`*` any run of characters, `?` one character).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellEnvironmentPolicy {
    pub inherit: ShellEnvironmentInherit,
    pub ignore_default_excludes: bool,
    pub exclude: Vec<String>,
    pub include_only: Vec<String>,
    pub set: BTreeMap<String, String>,
}

impl Default for ShellEnvironmentPolicy {
    fn default() -> Self {
        Self {
            inherit: ShellEnvironmentInherit::All,
            ignore_default_excludes: true,
            exclude: Vec::new(),
            include_only: Vec::new(),
            set: BTreeMap::new(),
        }
    }
}

impl ShellEnvironmentPolicy {
    /// The environment for a spawned command, given Osprey's own environment.
    pub fn apply<K, V>(&self, env: impl IntoIterator<Item = (K, V)>) -> BTreeMap<String, String>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let matches_any =
            |name: &str, patterns: &[String]| patterns.iter().any(|p| glob_matches(p, name));
        let mut out: BTreeMap<String, String> = env
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .filter(|(k, _)| match self.inherit {
                ShellEnvironmentInherit::All => true,
                ShellEnvironmentInherit::Core => CORE_ENV_VARS.contains(&k.as_str()),
                ShellEnvironmentInherit::None => false,
            })
            .collect();
        if !self.ignore_default_excludes {
            out.retain(|k, _| !DEFAULT_ENV_EXCLUDES.iter().any(|p| glob_matches(p, k)));
        }
        out.retain(|k, _| !matches_any(k, &self.exclude));
        out.extend(self.set.iter().map(|(k, v)| (k.clone(), v.clone())));
        if !self.include_only.is_empty() {
            out.retain(|k, _| matches_any(k, &self.include_only));
        }
        out
    }
}

/// Case-insensitive glob match with `*` and `?`.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().flat_map(char::to_lowercase).collect();
    let n: Vec<char> = name.chars().flat_map(char::to_lowercase).collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(c) if *c == '?' || *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// The tools offered to the model, resolved for the configured model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsConfig {
    /// The command-running tool; `None` when switched off.
    pub shell: Option<ShellToolType>,
    /// The patch tool; `None` when switched off.
    pub apply_patch: Option<ApplyPatchToolType>,
    pub read_file: bool,
    pub list_dir: bool,
    pub grep_files: bool,
    pub view_image: bool,
    pub update_plan: bool,
    pub web_search: bool,
    /// Images larger than this (either side, pixels) are scaled down before sending.
    pub view_image_max_dimension: u32,
    /// Most `exec_command` sessions alive at once.
    pub unified_exec_max_sessions: usize,
    /// Run shell commands through a login shell (`-l`).
    pub login_shell: bool,
}

impl ToolsConfig {
    pub const DEFAULT_VIEW_IMAGE_MAX_DIMENSION: u32 = 2048;
    pub const DEFAULT_UNIFIED_EXEC_MAX_SESSIONS: usize = 16;
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            shell: Some(ShellToolType::ExecCommand),
            apply_patch: Some(ApplyPatchToolType::Freeform),
            read_file: true,
            list_dir: true,
            grep_files: true,
            view_image: true,
            update_plan: true,
            web_search: false,
            view_image_max_dimension: Self::DEFAULT_VIEW_IMAGE_MAX_DIMENSION,
            unified_exec_max_sessions: Self::DEFAULT_UNIFIED_EXEC_MAX_SESSIONS,
            login_shell: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn glob_matching() {
        assert!(glob_matches("*KEY*", "openai_api_key"));
        assert!(glob_matches("AWS_*", "AWS_REGION"));
        assert!(glob_matches("PAT?", "path"));
        assert!(!glob_matches("PAT?", "PATHS"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("A*B", "ACBD"));
        assert!(glob_matches("A*B*", "ACBD"));
    }

    #[test]
    fn environment_policy_steps_run_in_order() {
        let env = [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("OPENAI_API_KEY", "k"),
            ("AWS_REGION", "eu"),
            ("EDITOR", "vi"),
        ];
        let policy = ShellEnvironmentPolicy {
            inherit: ShellEnvironmentInherit::All,
            ignore_default_excludes: false,
            exclude: vec!["aws_*".into()],
            include_only: vec!["PATH".into(), "HOME".into(), "CI".into()],
            set: BTreeMap::from([("CI".into(), "1".into())]),
        };
        let expected: BTreeMap<String, String> = [("CI", "1"), ("HOME", "/h"), ("PATH", "/bin")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        assert_eq!(policy.apply(env), expected);

        let core = ShellEnvironmentPolicy {
            inherit: ShellEnvironmentInherit::Core,
            ..ShellEnvironmentPolicy::default()
        };
        assert_eq!(
            core.apply(env).keys().collect::<Vec<_>>(),
            vec!["HOME", "PATH"]
        );
        // by default, secrets are inherited (Codex-compatible)
        assert!(
            ShellEnvironmentPolicy::default()
                .apply(env)
                .contains_key("OPENAI_API_KEY")
        );
    }
}
