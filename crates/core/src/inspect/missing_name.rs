//! [`MissingName`] (`missing_name`): a command's output says a name is not defined in a
//! project file — Python's `NameError: name 'add' is not defined`, JavaScript's
//! `ReferenceError: add is not defined` — and another file of the project defines it at its
//! top level. The command's result then says which file defines it and gives the line that
//! brings it in (`from add import add`, `const { add } = require('./add.js');`); a Python
//! standard-library module used without its import (`math`) gets its `import` line.
//!
//! Seen on 2026-12-06 (task add): the model wrote add.py and a test_add.py that calls `add`
//! without importing it, ran the tests, read `NameError: name 'add' is not defined`, and
//! concluded that add.py lacked the function — it wrote it there a second time.

use osprey_protocol::ResponseItem;
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use super::check_aids::command_of;
use super::keep_content::defined_name;
use super::write_aids::{project_files, read_small_text, resolve};
use super::{CallVerdict, TurnInspector, TurnStart, append_note};
use crate::tools::call::ToolCall;

/// Standard-library modules small programs use, which a NameError names when the import is
/// missing (`math.ceil` without `import math`).
const PYTHON_MODULES: [&str; 24] = [
    "argparse",
    "collections",
    "csv",
    "datetime",
    "decimal",
    "fractions",
    "functools",
    "itertools",
    "json",
    "logging",
    "math",
    "os",
    "pathlib",
    "random",
    "re",
    "shutil",
    "statistics",
    "string",
    "subprocess",
    "sys",
    "tempfile",
    "time",
    "typing",
    "unittest",
];

/// Most defining files a note names.
const NAMED_FILES: usize = 3;

/// Adds where a missing name is defined to the result of the command that reported it.
pub(crate) struct MissingName {
    cwd: PathBuf,
    /// Shell calls of the batch being run, by call id.
    shell_calls: HashSet<String>,
}

impl MissingName {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            // Tracebacks name files by their real path (Python and node resolve symlinks).
            cwd: real(start.cwd),
            shell_calls: HashSet::new(),
        }
    }
}

impl TurnInspector for MissingName {
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.shell_calls = calls
            .iter()
            .filter(|call| command_of(call).is_some())
            .map(|call| call.call_id.clone())
            .collect();
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        for item in outputs.iter_mut() {
            let ResponseItem::FunctionCallOutput { call_id, output } = item else {
                continue;
            };
            if !self.shell_calls.contains(call_id.as_str()) {
                continue;
            }
            let text = output.text();
            if let Some(note) = missing_name_note(&self.cwd, &text) {
                append_note(output, &note);
            }
        }
    }
}

/// The languages whose "not defined" errors are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    Python,
    JavaScript,
}

impl Language {
    fn of(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "py" => Some(Self::Python),
            "js" | "cjs" | "mjs" => Some(Self::JavaScript),
            _ => None,
        }
    }
}

/// A "not defined" error: the name, and the project file whose code used it.
#[derive(Debug, PartialEq, Eq)]
struct Undefined {
    name: String,
    used_in: PathBuf,
}

/// The note for a command's output, when it reports a name some other project file defines.
fn missing_name_note(cwd: &Path, output: &str) -> Option<String> {
    let undefined = python_name_error(cwd, output).or_else(|| js_reference_error(cwd, output))?;
    let language = Language::of(&undefined.used_in)?;
    let definitions = definitions(cwd, &undefined, language);
    let used = shown(cwd, &undefined.used_in);
    let name = &undefined.name;
    if definitions.is_empty()
        && language == Language::Python
        && PYTHON_MODULES.contains(&name.as_str())
    {
        let line = format!("import {name}");
        let mut note = format!(
            "Note: `{name}` is a module of Python's standard library, and {used} does not \
             import it. Import it at the top of {used}: `{line}`."
        );
        push_insertion(&mut note, &undefined.used_in, &line);
        return Some(note);
    }
    let (first, line) = definitions.first()?;
    let defining = shown(cwd, first);
    let mut note = format!(
        "Note: `{name}` is defined in {defining} (`{}`), not in {used}.",
        line.trim()
    );
    if definitions.len() > 1 {
        let others: Vec<String> = definitions[1..]
            .iter()
            .take(NAMED_FILES - 1)
            .map(|(path, _)| shown(cwd, path))
            .collect();
        note.push_str(&format!(" It is also defined in {}.", others.join(", ")));
    }
    let (bring_in, line) = match language {
        Language::Python => {
            let line = format!("from {} import {name}", python_module(cwd, first)?);
            (format!(" Import it at the top of {used}: `{line}`."), line)
        }
        Language::JavaScript => {
            let path = js_require_path(&undefined.used_in, first)?;
            let line = format!("const {{ {name} }} = require('{path}');");
            let text = if js_exports(first, name) {
                format!(" Require it at the top of {used}: `{line}`")
            } else {
                format!(
                    " Export it at the end of {defining} (`module.exports = {{ {name} }};`) \
                     and require it at the top of {used}: `{line}`"
                )
            };
            (text, line)
        }
    };
    note.push_str(&bring_in);
    push_insertion(&mut note, &undefined.used_in, &line);
    Some(note)
}

/// Adds the `edit_file` call that puts `line` at the top of `path`, when there is one.
fn push_insertion(note: &mut String, path: &Path, line: &str) {
    if let Some(edit) = insertion(path, line) {
        note.push_str(&format!(" Keep the lines already there: {edit}."));
    }
}

/// The `edit_file` call that adds `line` at the top of `path` and keeps what is there: after
/// the first line when that is an import, a comment or a directive, else before it. `None`
/// when the first line is not unique (an edit could not name it).
fn insertion(path: &Path, line: &str) -> Option<String> {
    let text = read_small_text(path)?;
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    if text.matches(first).count() != 1 {
        return None;
    }
    let heading = [
        "import ",
        "from ",
        "#",
        "//",
        "'use strict'",
        "\"use strict\"",
    ]
    .iter()
    .any(|start| first.starts_with(start))
        || (first.starts_with("const ") && first.contains("require("));
    let new = if heading {
        format!("{first}\\n{line}")
    } else {
        format!("{line}\\n{first}")
    };
    Some(format!("edit_file with old `{first}` and new `{new}`"))
}

/// `NameError: name 'x' is not defined` and the project file of the traceback's last frame.
fn python_name_error(cwd: &Path, output: &str) -> Option<Undefined> {
    let lines: Vec<&str> = output.lines().collect();
    let error_at = lines.iter().rposition(|line| {
        line.trim_start().starts_with("NameError: name '") && line.contains("' is not defined")
    })?;
    let name = lines[error_at]
        .split_once("name '")?
        .1
        .split_once('\'')?
        .0
        .to_string();
    let used_in = lines[..error_at].iter().rev().find_map(|line| {
        let path = line
            .trim_start()
            .strip_prefix("File \"")?
            .split_once('"')?
            .0;
        project_path(cwd, path)
    })?;
    is_identifier(&name).then_some(Undefined { name, used_in })
}

/// `ReferenceError: x is not defined` and the project file of the first stack frame (or of
/// the `file.js:line` header node prints above the error).
fn js_reference_error(cwd: &Path, output: &str) -> Option<Undefined> {
    let lines: Vec<&str> = output.lines().collect();
    let error_at = lines.iter().position(|line| {
        line.trim_start().starts_with("ReferenceError: ") && line.ends_with(" is not defined")
    })?;
    let name = lines[error_at]
        .trim_start()
        .strip_prefix("ReferenceError: ")?
        .strip_suffix(" is not defined")?
        .to_string();
    let frame = lines[error_at + 1..].iter().find_map(|line| {
        let at = line.trim_start().strip_prefix("at ")?;
        let location = at
            .rsplit_once('(')
            .map_or(at, |(_, inside)| inside.trim_end_matches(')'));
        js_location_file(cwd, location)
    });
    let header = lines[..error_at]
        .iter()
        .rev()
        .find_map(|line| js_location_file(cwd, line.trim()));
    let used_in = frame.or(header)?;
    is_identifier(&name).then_some(Undefined { name, used_in })
}

/// The project file of `path:line[:column]`.
fn js_location_file(cwd: &Path, location: &str) -> Option<PathBuf> {
    let location = location.strip_prefix("file://").unwrap_or(location);
    let mut parts = location.rsplitn(3, ':');
    let last = parts.next()?;
    let second = parts.next()?;
    let path = match parts.next() {
        Some(path) if second.parse::<u32>().is_ok() => path,
        _ => second,
    };
    last.parse::<u32>().ok()?;
    project_path(cwd, path)
}

/// `path` with symlinks and `..` resolved, or as given when it cannot be.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `path` (absolute, or relative to `cwd`), resolved, when it is a file inside `cwd` (which
/// is resolved already).
fn project_path(cwd: &Path, path: &str) -> Option<PathBuf> {
    let full = std::fs::canonicalize(resolve(cwd, path)).ok()?;
    (full.starts_with(cwd) && full.is_file()).then_some(full)
}

/// The other project files of `language` that define `name` at their top level, with the
/// defining line.
fn definitions(cwd: &Path, undefined: &Undefined, language: Language) -> Vec<(PathBuf, String)> {
    project_files(cwd)
        .into_iter()
        .filter(|path| Language::of(path) == Some(language))
        .map(|path| real(&path))
        .filter(|path| *path != undefined.used_in)
        .filter_map(|path| {
            let text = read_small_text(&path)?;
            let line = text.lines().find(|line| {
                !line.starts_with(char::is_whitespace)
                    && defined_name(line).as_deref() == Some(undefined.name.as_str())
            })?;
            Some((path, line.to_string()))
        })
        .collect()
}

/// `path` relative to `cwd`, as the model names files.
fn shown(cwd: &Path, path: &Path) -> String {
    path.strip_prefix(cwd)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The module a Python file is imported as when commands run in `cwd` (`pkg/mod.py` →
/// `pkg.mod`).
fn python_module(cwd: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(cwd).ok()?.with_extension("");
    let parts: Vec<&str> = relative
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    parts
        .iter()
        .all(|part| is_identifier(part))
        .then(|| parts.join("."))
}

/// The `require` path of `target` from `from`'s directory (`./max.js`, `../lib/util.js`).
fn js_require_path(from: &Path, target: &Path) -> Option<String> {
    let from_dir: Vec<Component<'_>> = from.parent()?.components().collect();
    let target_parts: Vec<Component<'_>> = target.components().collect();
    let common = from_dir
        .iter()
        .zip(&target_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut path = String::new();
    if common == from_dir.len() {
        path.push_str("./");
    }
    for _ in common..from_dir.len() {
        path.push_str("../");
    }
    let rest: Vec<&str> = target_parts[common..]
        .iter()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    path.push_str(&rest.join("/"));
    Some(path)
}

/// Whether a JavaScript file already exports `name` (`module.exports = { name }`,
/// `exports.name =`, `export function name`).
fn js_exports(path: &Path, name: &str) -> bool {
    let Some(text) = read_small_text(path) else {
        return false;
    };
    text.lines().any(|line| {
        let line = line.trim();
        let mentions = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .any(|word| word == name);
        mentions
            && (line.starts_with("module.exports")
                || line.starts_with(&format!("exports.{name}"))
                || line.starts_with("export "))
    })
}

fn is_identifier(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests;
