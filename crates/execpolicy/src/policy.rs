//! A loaded set of rules and the check that evaluates a command against it.

use std::collections::HashMap;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

use serde::Serialize;

use crate::decision::Decision;
use crate::error::LoadError;
use crate::network::NetworkRule;
use crate::parser::FileRules;
use crate::parser::merge_hosts;
use crate::parser::parse_file;
use crate::rule::PrefixRule;
use crate::rule::RuleMatch;

/// `host_executable` entries: basename → the absolute paths allowed to stand in for it.
pub type HostExecutables = HashMap<String, Vec<PathBuf>>;

/// Options for [`Policy::check_with_options`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchOptions {
    /// When no rule matches `cmd[0]` literally and `cmd[0]` is a path, also try the rules
    /// written for its basename, limited by any `host_executable` list for that name.
    pub resolve_host_executables: bool,
}

/// The outcome of checking one command.
///
/// Serializes exactly like Codex's `execpolicy check` output:
/// `{"matchedRules":[…],"decision":"…"}`, without `decision` when nothing matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Evaluation {
    /// Every matching rule, in the order the rules were loaded.
    #[serde(rename = "matchedRules")]
    pub matched_rules: Vec<RuleMatch>,
    /// The strictest decision among the matches; `None` when no rule matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

/// Rules loaded from one or more `.rules` files.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    rules: Vec<PrefixRule>,
    /// Program name → indices into `rules`, ascending. A rule whose first pattern position
    /// has alternatives is listed under each of them.
    by_program: HashMap<String, Vec<usize>>,
    host_executables: HostExecutables,
    network_rules: Vec<NetworkRule>,
    failed_files: Vec<PathBuf>,
}

impl Policy {
    /// A policy with no rules: every check returns no match.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Loads rules from source text, naming it `path` in errors and rule origins.
    pub fn from_source(path: &Path, source: &str) -> Result<Self, LoadError> {
        let mut policy = Self::empty();
        let file = parse_file(path, source, &policy.host_executables)?;
        policy.absorb(file);
        Ok(policy)
    }

    /// Loads the given files in order and stops at the first that fails, as
    /// `execpolicy check` does.
    pub fn load_files(paths: &[PathBuf]) -> Result<Self, LoadError> {
        let mut policy = Self::empty();
        for path in paths {
            let file = read_and_parse(path, &policy.host_executables)?;
            policy.absorb(file);
        }
        Ok(policy)
    }

    /// Loads every `*.rules` file of each directory, directories in the given order and files
    /// sorted by name within each. A missing directory is skipped silently.
    ///
    /// A file that fails to load contributes nothing and is reported; the others still
    /// load. **A policy with load errors is incomplete** — a rule that should forbid a
    /// command may be missing — so callers should not let it allow anything on its own:
    /// check [`Policy::has_load_errors`] and, when it is true, ask the user (treat every
    /// command as `prompt` at least) and show the errors, each of which names its file and,
    /// when known, line and column.
    pub fn load_dirs(dirs: &[PathBuf]) -> (Self, Vec<LoadError>) {
        let mut policy = Self::empty();
        let mut errors = Vec::new();
        for dir in dirs {
            let files = match rules_files_in(dir) {
                Ok(files) => files,
                Err(err) => {
                    policy.failed_files.push(dir.clone());
                    errors.push(err);
                    continue;
                }
            };
            for path in files {
                match read_and_parse(&path, &policy.host_executables) {
                    Ok(file) => policy.absorb(file),
                    Err(err) => {
                        policy.failed_files.push(path);
                        errors.push(err);
                    }
                }
            }
        }
        (policy, errors)
    }

    /// True when [`Policy::load_dirs`] could not load some file or directory: the policy is
    /// then incomplete and should make every command at least `prompt`.
    pub fn has_load_errors(&self) -> bool {
        !self.failed_files.is_empty()
    }

    /// Files and directories that failed to load, in the order they were tried.
    pub fn failed_files(&self) -> &[PathBuf] {
        &self.failed_files
    }

    /// Every prefix rule, in load order.
    pub fn rules(&self) -> &[PrefixRule] {
        &self.rules
    }

    /// Every `network_rule`, in load order.
    pub fn network_rules(&self) -> &[NetworkRule] {
        &self.network_rules
    }

    /// The `host_executable` entries in force (a later entry for a name replaces an earlier).
    pub fn host_executables(&self) -> &HostExecutables {
        &self.host_executables
    }

    /// Checks `cmd` (an argv; `cmd[0]` is the program) with literal program matching.
    pub fn check(&self, cmd: &[String]) -> Evaluation {
        self.check_with_options(cmd, &MatchOptions::default())
    }

    /// Checks `cmd`, optionally falling back to basename rules for a program path.
    pub fn check_with_options(&self, cmd: &[String], options: &MatchOptions) -> Evaluation {
        let mut matched_rules = self.exact_matches(cmd);
        if matched_rules.is_empty() && options.resolve_host_executables {
            matched_rules = self.basename_matches(cmd);
        }
        let decision = matched_rules.iter().map(|m| m.decision).max();
        Evaluation {
            matched_rules,
            decision,
        }
    }

    fn exact_matches(&self, cmd: &[String]) -> Vec<RuleMatch> {
        let Some(program) = cmd.first() else {
            return Vec::new();
        };
        self.matches_for(program, cmd, None)
    }

    fn basename_matches(&self, cmd: &[String]) -> Vec<RuleMatch> {
        let Some(first) = cmd.first() else {
            return Vec::new();
        };
        let Some((basename, resolved)) = resolve_program(first, &self.host_executables) else {
            return Vec::new();
        };
        let resolved = resolved.to_string_lossy().into_owned();
        self.matches_for(&basename, cmd, Some(&resolved))
    }

    fn matches_for(&self, program: &str, cmd: &[String], resolved: Option<&str>) -> Vec<RuleMatch> {
        let Some(indices) = self.by_program.get(program) else {
            return Vec::new();
        };
        indices
            .iter()
            .filter_map(|&index| {
                let rule = self.rules.get(index)?;
                let matched_prefix = rule.match_with_program(program, cmd)?;
                Some(RuleMatch {
                    matched_prefix,
                    decision: rule.decision,
                    resolved_program: resolved.map(str::to_owned),
                    justification: rule.justification.clone(),
                    rule_index: index,
                })
            })
            .collect()
    }

    fn absorb(&mut self, file: FileRules) {
        for rule in file.rules {
            let index = self.rules.len();
            if let Some(first) = rule.pattern.first() {
                for program in first.choices() {
                    let bucket = self.by_program.entry(program.clone()).or_default();
                    if bucket.last() != Some(&index) {
                        bucket.push(index);
                    }
                }
            }
            self.rules.push(rule);
        }
        merge_hosts(&mut self.host_executables, &file.host_executables);
        self.network_rules.extend(file.network_rules);
    }
}

fn read_and_parse(path: &Path, hosts: &HostExecutables) -> Result<FileRules, LoadError> {
    let source = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_file(path, &source, hosts)
}

/// The `*.rules` files directly inside `dir`, sorted by name; empty when `dir` does not exist.
fn rules_files_in(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(LoadError::ReadDir {
                dir: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| LoadError::ReadDir {
            dir: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let is_rules = path.extension().is_some_and(|ext| ext == "rules");
        // Follow symlinks: a linked rules file counts; a directory named `x.rules` does not.
        if is_rules && !path.is_dir() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Resolves a program path to (basename, absolute normalized path) if basename rules may
/// apply to it: it must have a UTF-8 file name, and if `host_executable` lists paths for
/// that name, the normalized path must be one of them.
fn resolve_program(first: &str, hosts: &HostExecutables) -> Option<(String, PathBuf)> {
    let raw = Path::new(first);
    let basename = raw.file_name()?.to_str()?.to_owned();
    let absolute = if raw.is_absolute() {
        normalize_absolute(raw)
    } else {
        normalize_absolute(&std::env::current_dir().ok()?.join(raw))
    };
    if let Some(allowed) = hosts.get(&basename)
        && !allowed.contains(&absolute)
    {
        return None;
    }
    Some((basename, absolute))
}

/// Removes `.` and `..` components lexically (without touching the file system).
pub(crate) fn normalize_absolute(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
        }
    }
    out
}

/// Whether `rule` alone matches `example`, with basename resolution on, as load-time
/// example checks require.
pub(crate) fn rule_matches_example(
    rule: &PrefixRule,
    example: &[String],
    hosts: &HostExecutables,
) -> bool {
    let Some(first) = example.first() else {
        return false;
    };
    if rule.match_with_program(first, example).is_some() {
        return true;
    }
    resolve_program(first, hosts)
        .is_some_and(|(basename, _)| rule.match_with_program(&basename, example).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn normalization_is_lexical() {
        assert_eq!(
            normalize_absolute(Path::new("/usr/bin/../bin/./git")),
            PathBuf::from("/usr/bin/git")
        );
        assert_eq!(
            normalize_absolute(Path::new("/../../git")),
            PathBuf::from("/git")
        );
        assert_eq!(
            normalize_absolute(Path::new("//usr//bin/git")),
            PathBuf::from("/usr/bin/git")
        );
    }

    #[test]
    fn listed_host_paths_gate_basename_resolution() {
        let mut hosts = HostExecutables::new();
        assert_eq!(
            resolve_program("/opt/x/git", &hosts),
            Some(("git".to_owned(), PathBuf::from("/opt/x/git")))
        );
        hosts.insert("git".to_owned(), vec![PathBuf::from("/usr/bin/git")]);
        assert_eq!(resolve_program("/opt/x/git", &hosts), None);
        assert!(resolve_program("/usr/bin/../bin/git", &hosts).is_some());
        hosts.insert("git".to_owned(), Vec::new());
        assert_eq!(resolve_program("/usr/bin/git", &hosts), None);
        assert_eq!(resolve_program("/", &hosts), None);
    }
}
