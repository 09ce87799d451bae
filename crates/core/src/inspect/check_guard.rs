//! [`ProtectNamedCheck`] (`[local_model] protect_named_check`): a `write_file` or `edit_file`
//! to the file of the check the request names (`sh check.sh`, `node test.js`,
//! `python3 -m unittest test_stats`) is not made; the result says the file is the check and
//! names the code it checks, to change instead.
//!
//! Seen on 2026-12-04 (named): the model rewrote check.sh until it passed. The guard looks
//! only at the request's words and the files on disk, and errs on the side of allowing:
//!
//! - only files that existed when the turn started (creating a check the user asked for is
//!   fine, and so is changing it afterwards);
//! - only files that look like a check — `test`, `check` or `spec` in the name or a `tests/`
//!   directory — and that use other files of the project (`from text_utils import …`,
//!   `require('./max')`): `python3 pages.py` runs the program under repair, not a check;
//! - never when the request asks to change the file: a sentence that names it outside the
//!   command and has an editing verb ("Fix check.sh", "In test_calc.py, add …"), or an
//!   editing verb aimed at a test or check ("add a test for …", "fix the check").
//!
//! Writes through the shell (`sed -i`, `>`) are not seen. A model that keeps trying gets its
//! turn stopped after [`MAX_REFUSALS`] refusals, as the loop guard would.

use std::path::{Path, PathBuf};

use osprey_tools::names::{EDIT_FILE, WRITE_FILE};

use super::check_aids::{CHECK_PROGRAMS, clean, named_commands};
use super::related_files::identifiers;
use super::write_aids::{normal, read_small_text, resolve, string_argument};
use super::{CallVerdict, TurnInspector, TurnStart};
use crate::tools::call::{ToolCall, ToolOutput};

/// Refused writes to protected files before the turn is stopped.
const MAX_REFUSALS: usize = 3;

/// Verbs that ask for a file to be changed.
const EDITING_VERBS: [&str; 21] = [
    "add", "write", "update", "change", "edit", "fix", "modify", "extend", "rewrite", "correct",
    "adjust", "repair", "improve", "rename", "replace", "remove", "delete", "append", "insert",
    "create", "amend",
];

/// Words between an editing verb and what it edits ("add a new test").
const FILLERS: [&str; 16] = [
    "a", "an", "the", "its", "this", "that", "new", "more", "one", "another", "some", "unit",
    "failing", "broken", "existing", "my",
];

/// Words after a module runner that are module names, not files (`-m unittest test_stats`).
const MODULE_RUNNERS: [&str; 2] = ["unittest", "pytest"];

/// Most project files compared with a check's words.
const PROJECT_FILES: usize = 500;

/// A check file the model may not change in this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Protected {
    file: PathBuf,
    /// As the task shows it: relative to the working directory.
    shown: String,
    /// The named command that runs it.
    command: String,
    /// Other project files it uses.
    checks: Vec<String>,
}

/// Refuses writes to the check the request names.
pub(crate) struct ProtectNamedCheck {
    cwd: PathBuf,
    protected: Vec<Protected>,
    refusals: usize,
}

impl ProtectNamedCheck {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            protected: protected_checks(start.request, start.cwd),
            refusals: 0,
        }
    }

    fn refusal(&self, call: &ToolCall) -> Option<String> {
        if call.tool_name != WRITE_FILE && call.tool_name != EDIT_FILE {
            return None;
        }
        let target = normal(&resolve(&self.cwd, &string_argument(call, "path")?));
        let check = self.protected.iter().find(|p| p.file == target)?;
        Some(format!(
            "Not written: the task names `{}` as the check, so {} decides whether your change \
             works and must stay as it is. Change the code it checks instead ({}), then run \
             `{}` again.",
            check.command,
            check.shown,
            check.checks.join(", "),
            check.command
        ))
    }
}

impl TurnInspector for ProtectNamedCheck {
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        let outputs: Vec<(String, ToolOutput)> = calls
            .iter()
            .filter_map(|c| Some((c.call_id.clone(), ToolOutput::failure(self.refusal(c)?))))
            .collect();
        if outputs.is_empty() {
            return CallVerdict::Run;
        }
        self.refusals += outputs.len();
        if self.refusals > MAX_REFUSALS {
            let shown: Vec<&str> = self.protected.iter().map(|p| p.shown.as_str()).collect();
            return CallVerdict::StopTurn {
                output: ToolOutput::failure("not run: the check the task names stays as it is"),
                warning: format!(
                    "Stopped: the model kept trying to change {}, which the task names as the \
                     check, so the task may be incomplete.",
                    shown.join(", ")
                ),
            };
        }
        CallVerdict::Answer { outputs }
    }
}

/// The checks the request names that the model may not change.
fn protected_checks(request: &str, cwd: &Path) -> Vec<Protected> {
    let mut found: Vec<Protected> = Vec::new();
    for command in named_commands(request) {
        for (file, names) in check_files(cwd, &command) {
            let file = normal(&file);
            if !file.is_file() || found.iter().any(|p| p.file == file) {
                continue;
            }
            let shown = file
                .strip_prefix(cwd)
                .unwrap_or(&file)
                .display()
                .to_string();
            if !looks_like_a_check(&shown) || asks_to_change(request, &shown, &names) {
                continue;
            }
            let checks = used_files(cwd, &file);
            if checks.is_empty() {
                continue;
            }
            found.push(Protected {
                file,
                shown,
                command: command.clone(),
                checks,
            });
        }
    }
    found
}

/// The files a named command runs or tests, each with the words the request may call it by
/// (`check.sh`, `./check.sh`; `test_stats` for `-m unittest test_stats`).
fn check_files(cwd: &Path, command: &str) -> Vec<(PathBuf, Vec<String>)> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let mut files = Vec::new();
    for (i, word) in words.iter().enumerate().skip(1) {
        let previous = words[i - 1];
        if word.starts_with('-') || previous == "-m" {
            continue;
        }
        let word = word.split("::").next().unwrap_or(word);
        let path = word.trim_start_matches("./");
        let modules = words[..i].iter().any(|w| MODULE_RUNNERS.contains(w));
        if path.contains('/') || has_extension(path) {
            files.push((cwd.join(path), vec![word.to_string(), path.to_string()]));
        } else if modules {
            // `a.b.test_c` is a/b/test_c.py (or a/b.py with a class after it, …).
            let parts: Vec<&str> = path.split('.').collect();
            let module = (1..=parts.len())
                .rev()
                .map(|n| cwd.join(format!("{}.py", parts[..n].join("/"))))
                .find(|candidate| candidate.is_file());
            if let Some(module) = module {
                files.push((module, vec![word.to_string()]));
            }
        }
    }
    files
}

fn has_extension(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && (1..=5).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
            && extension.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// `test`, `check` or `spec` in the file name, or a `test`/`tests`/`spec` directory.
fn looks_like_a_check(shown: &str) -> bool {
    let lower = shown.to_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    ["test", "check", "spec"].iter().any(|w| name.contains(w))
        || parts
            .iter()
            .any(|dir| ["test", "tests", "spec", "specs"].contains(dir))
}

/// The other project files whose name (without extension, at least three characters) the
/// check's text uses as a word.
fn used_files(cwd: &Path, check: &Path) -> Vec<String> {
    let Some(text) = read_small_text(check) else {
        return Vec::new();
    };
    let words = identifiers(&text);
    let (entries, _) = osprey_tools::project_overview(cwd, 3, PROJECT_FILES);
    entries
        .into_iter()
        .filter(|entry| !entry.ends_with('/'))
        .filter(|entry| normal(&cwd.join(entry)) != *check)
        .filter(|entry| {
            Path::new(entry)
                .file_stem()
                .and_then(|stem| stem.to_str())
                .is_some_and(|stem| stem.len() >= 3 && words.contains(stem))
        })
        .collect()
}

/// Whether the request asks to change the check file itself: a sentence that names it
/// outside the command and has an editing verb, or an editing verb aimed at a test or check
/// of the kind the file is.
fn asks_to_change(request: &str, shown: &str, names: &[String]) -> bool {
    let basename = shown.rsplit('/').next().unwrap_or(shown);
    let mut names: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    names.extend([shown.to_lowercase(), basename.to_lowercase()]);
    let kinds: Vec<&str> = [
        ("test", &["test", "tests", "testcase", "testcases"][..]),
        ("check", &["check", "checks"][..]),
        ("spec", &["spec", "specs"][..]),
    ]
    .iter()
    .filter(|(part, _)| basename.to_lowercase().contains(part))
    .flat_map(|(_, words)| words.iter().copied())
    .collect();
    sentences(request).iter().any(|sentence| {
        let words: Vec<String> = sentence
            .split_whitespace()
            .map(|w| clean(w).0.trim_start_matches("./").to_lowercase())
            .collect();
        let verbs: Vec<usize> = (0..words.len())
            .filter(|&i| EDITING_VERBS.contains(&words[i].as_str()))
            .collect();
        if verbs.is_empty() {
            return false;
        }
        let named_plainly = words.iter().enumerate().any(|(i, word)| {
            let by_command = i > 0 && {
                let previous = words[i - 1].as_str();
                CHECK_PROGRAMS.contains(&previous)
                    || MODULE_RUNNERS.contains(&previous)
                    || previous.starts_with('-')
            };
            names.contains(word) && !by_command
        });
        let aimed_at_kind = verbs.iter().any(|&verb| {
            words[verb + 1..]
                .iter()
                .take(3)
                .find(|w| !FILLERS.contains(&w.as_str()))
                .is_some_and(|object| kinds.contains(&object.as_str()))
        });
        named_plainly || aimed_at_kind
    })
}

/// The request cut into sentences and clauses (at `.`, `!`, `?`, `;` and line ends that
/// are followed by a space or the end, so `check.sh` stays whole).
fn sentences(request: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = request.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if (matches!(c, '.' | '!' | '?' | ';') && next_is_space) || c == '\n' {
            out.push(&request[start..at]);
            start = at + c.len_utf8();
        }
    }
    out.push(&request[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{call, project, start};
    use pretty_assertions::assert_eq;

    const NAMED: &str = "Add a function slugify(text) to text_utils.py that lowercases the \
                         text and replaces spaces with hyphens. Check your work with sh check.sh.";

    fn named_project() -> tempfile::TempDir {
        project(&[
            (
                "text_utils.py",
                "def shout(text):\n    return text.upper() + '!'\n",
            ),
            (
                "check.sh",
                "#!/bin/sh\nset -e\npython3 -c \"from text_utils import slugify, shout\"\n",
            ),
        ])
    }

    fn new_guard(request: &str, cwd: &Path) -> ProtectNamedCheck {
        ProtectNamedCheck::new(&start(request, cwd))
    }

    fn write(id: &str, path: &str) -> ToolCall {
        crate::inspect::test_support::write(id, path, "exit 0\n")
    }

    #[test]
    fn a_write_or_edit_of_the_named_check_is_refused_with_the_code_to_change() {
        let dir = named_project();
        let mut guard = new_guard(NAMED, dir.path());
        let edit = call(
            "e",
            EDIT_FILE,
            serde_json::json!({"path": "./check.sh", "old": "set -e", "new": ""}),
        );
        let code = call(
            "c",
            WRITE_FILE,
            serde_json::json!({"path": "text_utils.py", "content": "x\n"}),
        );
        let CallVerdict::Answer { outputs } =
            guard.before_tool_calls(&[write("w", "check.sh"), edit, code])
        else {
            panic!("the check is not written");
        };
        let ids: Vec<&str> = outputs.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["w", "e"], "the code itself is written");
        assert_eq!(
            outputs[0].1.text,
            "Not written: the task names `sh check.sh` as the check, so check.sh decides \
             whether your change works and must stay as it is. Change the code it checks \
             instead (text_utils.py), then run `sh check.sh` again."
        );
        assert!(!outputs[0].1.success);
    }

    #[test]
    fn a_model_that_keeps_trying_has_its_turn_stopped() {
        let dir = named_project();
        let mut guard = new_guard(NAMED, dir.path());
        for id in ["1", "2", "3"] {
            assert!(matches!(
                guard.before_tool_calls(&[write(id, "check.sh")]),
                CallVerdict::Answer { .. }
            ));
        }
        let CallVerdict::StopTurn { warning, .. } =
            guard.before_tool_calls(&[write("4", "check.sh")])
        else {
            panic!("the fourth try stops the turn");
        };
        assert!(warning.contains("check.sh"), "{warning}");
    }

    #[test]
    fn a_unittest_module_named_by_the_request_is_protected() {
        let dir = project(&[
            ("stats.py", "def average(values):\n    return sum(values)\n"),
            (
                "test_stats.py",
                "import unittest\nfrom stats import average\n",
            ),
        ]);
        let request = "The test fails when I run python3 -m unittest test_stats. Find the bug \
                       in stats.py, fix it, and run the test again.";
        let mut guard = new_guard(request, dir.path());
        let CallVerdict::Answer { outputs } =
            guard.before_tool_calls(&[write("w", "test_stats.py")])
        else {
            panic!("the named test module is the check");
        };
        assert!(
            outputs[0].1.text.contains("(stats.py)"),
            "{}",
            outputs[0].1.text
        );
    }

    #[test]
    fn the_check_may_change_when_the_request_asks_for_it_or_it_is_not_a_check() {
        let dir = named_project();
        let allowed = [
            // Named outside the command, with an editing verb.
            "Fix check.sh so it also tests shout, then run sh check.sh.",
            "In check.sh, add a line for slugify. Run `sh check.sh` when done.",
            // An editing verb aimed at a check.
            "Add a check for slugify and run sh check.sh.",
            // No check named at all.
            "Add slugify to text_utils.py.",
        ];
        for request in allowed {
            let mut guard = new_guard(request, dir.path());
            assert!(
                matches!(
                    guard.before_tool_calls(&[write("w", "check.sh")]),
                    CallVerdict::Run
                ),
                "{request}"
            );
        }

        // The program under repair is not a check, even when the request runs it.
        let dir = project(&[
            (
                "max.js",
                "function largest(n) { return n[0]; }\nconsole.log(largest([1, 9]));\n",
            ),
            ("test_data.js", "module.exports = [1, 9];\n"),
        ]);
        let request = "node max.js should print 9. Fix it and run node max.js to check.";
        let mut guard = new_guard(request, dir.path());
        assert!(matches!(
            guard.before_tool_calls(&[write("w", "max.js")]),
            CallVerdict::Run
        ));

        // A check that uses no other file of the project, and one created in the turn.
        let dir = project(&[("check.sh", "#!/bin/sh\ntest -s notes.txt\n")]);
        let mut guard = new_guard("Run sh check.sh to see.", dir.path());
        assert!(matches!(
            guard.before_tool_calls(&[write("w", "check.sh")]),
            CallVerdict::Run
        ));
        let dir = project(&[("calc.py", "def add(a, b):\n    return a + b\n")]);
        let mut guard = new_guard("Then run python3 -m unittest test_calc.", dir.path());
        std::fs::write(dir.path().join("test_calc.py"), "from calc import add\n").unwrap();
        assert!(matches!(
            guard.before_tool_calls(&[write("w", "test_calc.py")]),
            CallVerdict::Run
        ));
    }

    #[test]
    fn check_files_come_from_paths_and_unittest_modules() {
        let dir = project(&[("tests/test_io.py", ""), ("a.py", "")]);
        let files = |command: &str| -> Vec<PathBuf> {
            check_files(dir.path(), command)
                .into_iter()
                .map(|(path, _)| path)
                .collect()
        };
        assert_eq!(files("sh ./check.sh"), [dir.path().join("check.sh")]);
        assert_eq!(
            files("python3 -m unittest tests.test_io.TestIo"),
            [dir.path().join("tests/test_io.py")]
        );
        assert_eq!(
            files("pytest tests/test_io.py::test_read -q"),
            [dir.path().join("tests/test_io.py")]
        );
        assert!(files("python3 -m unittest").is_empty());
        assert!(files("make test").is_empty());
        assert!(looks_like_a_check("tests/io.py"));
        assert!(looks_like_a_check("run_checks.sh"));
        assert!(!looks_like_a_check("pages.py"));
    }
}
