//! [`KeepContent`] (`keep_content`): a whole-file write that would drop most of an existing
//! file, including things the file defines, is not made as given the first time.
//!
//! Asked to set two keys of a JSON file, the small model wrote a file holding only those two
//! keys, even after being shown the whole file — and when offered the full content to copy,
//! it copied it without a nested object; asked to add a function to a module, it wrote the
//! module with only the new function. Where what it meant is plain — a JSON object with some
//! keys set (so: the old object with those keys set), or code that shares no name with the
//! file (so: the file with that code added) — the write is made that way, and its result
//! says so. Otherwise the write is refused with what would be lost. Either way a second
//! write of the same file in the turn is made as given, so a rewrite that is meant happens.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use osprey_protocol::ResponseItem;

use super::write_aids::{read_small_text, write_target};
use super::{CallVerdict, TurnInspector, TurnStart, append_note};
use crate::tools::call::{ToolCall, ToolOutput, ToolPayload};

mod ordered_json;

use ordered_json::Json;

/// Most names listed as lost in a refusal.
const LISTED_NAMES: usize = 12;

/// What to do with a write over an existing file.
#[derive(Debug, PartialEq)]
enum Plan {
    /// Make it as given.
    AsGiven,
    /// Write `content` instead, and add `note` to the result.
    Keep { content: String, note: String },
    /// Do not make it; the result is this message.
    Refuse(String),
}

/// Keeps, or refuses once per file and turn, a write that would lose what a file defines.
pub(crate) struct KeepContent {
    cwd: PathBuf,
    /// Files whose write was kept or refused in this turn; the next write is made as given.
    handled: HashSet<PathBuf>,
    /// call id → (file, content written instead, note for the result).
    kept: HashMap<String, (PathBuf, String, String)>,
}

impl KeepContent {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            handled: HashSet::new(),
            kept: HashMap::new(),
        }
    }

    /// The plan for a write call, when it writes over an existing file not handled yet.
    fn plan_for(&self, call: &ToolCall) -> Option<(String, PathBuf, Plan)> {
        let (path, target, new) = write_target(&self.cwd, call)?;
        if self.handled.contains(&target) {
            return None;
        }
        let old = read_small_text(&target)?;
        let plan = plan(&path, &old, &new);
        Some((path, target, plan))
    }
}

impl TurnInspector for KeepContent {
    fn adjust_calls(&mut self, calls: &mut [ToolCall]) {
        self.kept.clear();
        for call in calls.iter_mut() {
            let Some((path, target, Plan::Keep { content, note })) = self.plan_for(call) else {
                continue;
            };
            call.payload = ToolPayload::Function {
                arguments: serde_json::json!({"path": path, "content": content}).to_string(),
            };
            self.handled.insert(target.clone());
            self.kept
                .insert(call.call_id.clone(), (target, content, note));
        }
    }

    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        let mut outputs = Vec::new();
        for call in calls {
            if let Some((_, target, Plan::Refuse(message))) = self.plan_for(call) {
                self.handled.insert(target);
                outputs.push((call.call_id.clone(), ToolOutput::failure(message)));
            }
        }
        CallVerdict::answering(outputs)
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        for item in outputs {
            let ResponseItem::FunctionCallOutput { call_id, output } = item else {
                continue;
            };
            let Some((target, content, note)) = self.kept.get(call_id.as_str()) else {
                continue;
            };
            let written = read_small_text(target)
                .is_some_and(|now| now.trim_end_matches('\n') == content.trim_end_matches('\n'));
            if written {
                append_note(output, note);
            }
        }
    }
}

/// Whether writing `new` over `old` keeps everything `old` has: every key of a JSON object
/// (values may change), or else every non-blank line. Such a write cannot lose what the
/// model has not seen.
pub(super) fn keeps_everything(old: &str, new: &str) -> bool {
    if let (Some(old), Some(new)) = (Json::parse_object(old), Json::parse_object(new)) {
        return old.keys_missing_from(&new).is_empty();
    }
    LineOverlap::of(old, new).keeps_all()
}

/// The plan for writing `new` over `old`.
fn plan(path: &str, old: &str, new: &str) -> Plan {
    if let (Some(old_json), Some(new_json)) = (Json::parse_object(old), Json::parse_object(new)) {
        return json_plan(path, old, &old_json, &new_json);
    }
    let lost = lost_names(old, new);
    let overlap = LineOverlap::of(old, new);
    if lost.is_empty() || !overlap.drops_most() {
        return Plan::AsGiven;
    }
    let listed = listed(&lost);
    // Added code shares nothing with the file: no defined name, no line. A rewrite that
    // renames a function still shares its body's lines, and is refused instead.
    let shared_names = defined_names(old).intersection(&defined_names(new)).count();
    if shared_names == 0 && !overlap.shares_a_line() && !is_structured(path) {
        let mut content = old.trim_end_matches('\n').to_string();
        content.push_str("\n\n");
        content.push_str(new.trim_start_matches('\n'));
        if !content.ends_with('\n') {
            content.push('\n');
        }
        let note = format!(
            "Your content did not have {listed}, which {path} defines, so it was added after \
             what the file holds instead of replacing it. If you meant to replace the whole \
             file, write it again: a second write is made as given."
        );
        return Plan::Keep { content, note };
    }
    Plan::Refuse(format!(
        "Not written: this would drop most of {path}, including {listed}, which your content \
         does not have. Change only what the task asks for: call edit_file with the exact \
         lines to replace, or write the whole file keeping what should stay. If you do mean \
         to remove {listed}, send the same write again."
    ))
}

/// A JSON object written over a JSON object that leaves out keys the old one has: the old
/// object with the written keys set is written instead.
fn json_plan(path: &str, old_text: &str, old: &Json, new: &Json) -> Plan {
    let lost = old.keys_missing_from(new);
    if lost.is_empty() {
        return Plan::AsGiven;
    }
    let listed = listed(&lost);
    let mut merged = old.clone();
    merged.merge(new);
    let mut content = merged.render(&ordered_json::indent_of(old_text));
    content.push('\n');
    let note = format!(
        "Your content left out {listed}, which {path} has, so they were kept: only the keys \
         you wrote were set. If you meant to remove them, write {path} again: a second write \
         is made as given."
    );
    Plan::Keep { content, note }
}

/// `a, b and c`, at most [`LISTED_NAMES`] of them.
fn listed(names: &BTreeSet<String>) -> String {
    let mut shown: Vec<String> = names
        .iter()
        .take(LISTED_NAMES)
        .map(|n| format!("`{n}`"))
        .collect();
    if names.len() > LISTED_NAMES {
        shown.push(format!("{} more", names.len() - LISTED_NAMES));
    }
    match shown.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => shown.concat(),
    }
}

/// Files where adding text at the end is not a safe way to "add" something.
fn is_structured(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [
        ".json", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".xml", ".lock",
    ]
    .iter()
    .any(|ext| lower.ends_with(ext))
}

/// How many of the old content's non-blank lines (trimmed) the new content still has.
struct LineOverlap {
    old_lines: usize,
    kept: usize,
}

impl LineOverlap {
    fn of(old: &str, new: &str) -> Self {
        let now: HashSet<&str> = new.lines().map(str::trim).collect();
        let old_lines: Vec<&str> = old
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        let kept = old_lines.iter().filter(|line| now.contains(*line)).count();
        Self {
            old_lines: old_lines.len(),
            kept,
        }
    }

    fn keeps_all(&self) -> bool {
        self.kept == self.old_lines
    }

    fn shares_a_line(&self) -> bool {
        self.kept > 0
    }

    /// At least half of the old lines are gone (and there were at least two).
    fn drops_most(&self) -> bool {
        self.old_lines >= 2 && (self.old_lines - self.kept) * 2 >= self.old_lines
    }
}

/// Names the old content defines and the new one does not.
fn lost_names(old: &str, new: &str) -> BTreeSet<String> {
    let now = defined_names(new);
    defined_names(old)
        .into_iter()
        .filter(|name| !now.contains(name))
        .collect()
}

/// Keywords that introduce a definition in the languages a small project holds.
const DEFINING_WORDS: [&str; 12] = [
    "def",
    "class",
    "function",
    "fn",
    "func",
    "const",
    "let",
    "var",
    "struct",
    "enum",
    "type",
    "interface",
];

/// Words that end in `:` at a line's start without defining anything (Python's blocks).
const NOT_NAMES: [&str; 8] = [
    "else", "elif", "try", "except", "finally", "with", "for", "while",
];

/// What a text defines, line by line: `def f`, `class C`, `function f`, `fn f`, `const x`,
/// a shell function `f() {`, a `[section]`, a `key =` or `key:` at the start of a line.
fn defined_names(text: &str) -> BTreeSet<String> {
    text.lines().filter_map(defined_name).collect()
}

pub(super) fn defined_name(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    if trimmed.starts_with(['#', '/', '*', '-']) {
        return None;
    }
    if let Some(section) = trimmed.strip_prefix('[') {
        let name = section.split(']').next()?.trim();
        return is_name(name).then(|| format!("[{name}]"));
    }
    let mut words = trimmed
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'))
        .filter(|w| !w.is_empty());
    let first = words.next()?;
    let first = ["export", "pub", "async", "static"]
        .contains(&first)
        .then(|| words.next())
        .flatten()
        .unwrap_or(first);
    if NOT_NAMES.contains(&first) {
        return None;
    }
    if DEFINING_WORDS.contains(&first) {
        let name = words.next()?;
        return is_name(name).then(|| name.to_string());
    }
    // `name() {` (shell), `name = …` / `name: …` (settings) — only at the line's start.
    let rest = trimmed[trimmed.find(first)? + first.len()..].trim_start();
    let defines = rest.starts_with("()")
        || (line.len() == trimmed.len()
            && (rest.starts_with('=') && !rest.starts_with("==") || rest.starts_with(':')));
    (defines && is_name(first)).then(|| first.to_string())
}

fn is_name(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-')
}

#[cfg(test)]
mod tests;
