//! Turn inspectors around the local model's writes (`write_file`, and `edit_file`'s span
//! edits), each asked for by a [`osprey_tools::TurnAid`] and switched by a `[local_model]`
//! key:
//!
//! - [`ReadBeforeWrite`] (`read_before_write`): a whole-file write to an existing file the
//!   model has not read in the turn is not made; the result shows the file's current content
//!   with line numbers and asks for the write again. A small model otherwise rewrites a file
//!   from its guess of what is in it. An `edit_file` call is never refused: it replaces only
//!   text it quotes and that the file holds, so it cannot lose content the model never saw
//!   (and when the quote is wrong, the edit's own error shows the closest lines). Nor is a
//!   write that keeps every line of the file, or every key of a JSON object (as
//!   `keep_content` makes a partial one).
//! - [`WriteDiff`] (`write_diff`): a write's or an edit's result shows the diff it made, so
//!   the model sees what it changed (an integer division turned into a float one, a line it
//!   dropped).
//!
//! The third write aid, [`super::related_files::RelatedFiles`], has its own module.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use osprey_protocol::ResponseItem;
use osprey_tools::names::{EDIT_FILE, READ_FILE, SHELL_COMMAND, WRITE_FILE};

use super::{CallVerdict, TurnInspector, TurnStart, append_note};
use crate::tools::call::{ToolCall, ToolOutput, ToolPayload};

/// Most lines of a file shown when a write is sent back.
const SHOWN_LINES: usize = 400;
/// Most diff lines added to a write's result.
const DIFF_LINES: usize = 80;
/// Most files walked when looking for other mentions, and the largest file read.
const WALK_FILES: usize = 2000;
const WALK_FILE_BYTES: u64 = 256 * 1024;

/// Reads `path` as text when it is a regular file of at most [`WALK_FILE_BYTES`]: never a
/// device, a FIFO (which would block) or a huge file (the aids hold what they read). `None`
/// for anything else, or text that is not UTF-8.
pub(super) fn read_small_text(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > WALK_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(WALK_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if u64::try_from(bytes.len()).ok()? > WALK_FILE_BYTES {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// One string argument of a JSON function call.
pub(super) fn string_argument(call: &ToolCall, key: &str) -> Option<String> {
    let ToolPayload::Function { arguments } = &call.payload else {
        return None;
    };
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    value.get(key)?.as_str().map(str::to_owned)
}

/// `path` as the tools resolve it: relative to the working directory, or absolute.
pub(super) fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// A path without `.` components, so `./a.py` and `a.py` are the same file.
pub(super) fn normal(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// The target of a `write_file` call, with its new content.
pub(super) fn write_target(cwd: &Path, call: &ToolCall) -> Option<(String, PathBuf, String)> {
    if call.tool_name != WRITE_FILE {
        return None;
    }
    let path = string_argument(call, "path")?;
    let content = string_argument(call, "content")?;
    let target = normal(&resolve(cwd, &path));
    Some((path, target, content))
}

/// The file a `write_file` or `edit_file` call changes, its content now and the content the
/// call gives it (for an edit, the span replaced in the current content; `None` when the edit
/// will fail).
fn change_target(cwd: &Path, call: &ToolCall) -> Option<(String, PathBuf, String, String)> {
    if call.tool_name == EDIT_FILE {
        let path = string_argument(call, "path")?;
        let target = normal(&resolve(cwd, &path));
        let old = read_small_text(&target)?;
        let edit = osprey_tools::replace_span(
            &old,
            &string_argument(call, "old")?,
            &string_argument(call, "new")?,
        )
        .ok()?;
        return Some((path, target, old, edit.text));
    }
    let (path, target, content) = write_target(cwd, call)?;
    let old = read_small_text(&target)?;
    Some((path, target, old, content))
}

/// Commands that show a file's content when given its name.
const READING_COMMANDS: [&str; 8] = ["cat", "head", "tail", "nl", "sed", "less", "more", "grep"];

/// Refuses a write to an existing file the model has not seen in this turn, and shows the
/// file instead. Seen means: read with `read_file`, shown by a reading command (`cat a.py`),
/// written by the model itself, or shown by this refusal — so each file is refused at most
/// once, and the write that follows the refusal goes through.
pub(crate) struct ReadBeforeWrite {
    cwd: PathBuf,
    seen: HashSet<PathBuf>,
    /// `edit_file` is offered: the refusal names it for changing part of a file.
    edit_offered: bool,
}

impl ReadBeforeWrite {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            seen: HashSet::new(),
            edit_offered: start.tool_names.iter().any(|name| name == EDIT_FILE),
        }
    }

    /// Notes the files a call reads; returns the refusal for a write of an unseen file.
    fn check(&mut self, call: &ToolCall) -> Option<String> {
        if call.tool_name == READ_FILE {
            if let Some(path) = string_argument(call, "file_path") {
                self.seen.insert(normal(&resolve(&self.cwd, &path)));
            }
            return None;
        }
        if call.tool_name == SHELL_COMMAND {
            let command = string_argument(call, "command")?;
            self.note_shell_reads(&command);
            return None;
        }
        let (path, target, content) = write_target(&self.cwd, call)?;
        if self.seen.contains(&target) {
            return None;
        }
        if !target.is_file() {
            // The model creates it: it knows what is in it.
            self.seen.insert(target);
            return None;
        }
        let old = read_small_text(&target)?;
        if super::keep_content::keeps_everything(&old, &content) {
            // Like an edit, it cannot lose what the model has not seen.
            return None;
        }
        self.seen.insert(target);
        let next = if self.edit_offered {
            "To change part of it, call edit_file with the exact lines to replace. To \
             rewrite it, call write_file with the whole file: keep what should stay, change \
             only what the task asks for."
        } else {
            "Write the whole file again with write_file: keep what should stay, change only \
             what the task asks for."
        };
        Some(format!(
            "Not written: {path} already exists and you have not read it in this task. Its \
             current content (the line numbers are not part of the file):\n{}\n{next}",
            numbered(&old)
        ))
    }

    /// `cat a.py`, `sed -n 1,20p src/b.py`, …: the named files count as read.
    fn note_shell_reads(&mut self, command: &str) {
        for part in command.split(['|', ';', '&']) {
            let mut words = part.split_whitespace();
            let Some(program) = words.next() else {
                continue;
            };
            if !READING_COMMANDS.contains(&program) {
                continue;
            }
            for word in words.filter(|w| !w.starts_with('-')) {
                let word = word.trim_matches(|c| c == '"' || c == '\'');
                let target = normal(&resolve(&self.cwd, word));
                if target.is_file() {
                    self.seen.insert(target);
                }
            }
        }
    }
}

impl TurnInspector for ReadBeforeWrite {
    /// Only the writes of unread files are refused, each with its own file shown; the rest
    /// of the batch (reads included, so they count as read) runs.
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        let outputs: Vec<(String, ToolOutput)> = calls
            .iter()
            .filter_map(|c| Some((c.call_id.clone(), ToolOutput::failure(self.check(c)?))))
            .collect();
        CallVerdict::answering(outputs)
    }
}

/// `text` with right-aligned 1-based line numbers and a tab, at most [`SHOWN_LINES`] lines.
fn numbered(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let width = lines.len().max(1).to_string().len();
    let mut out = String::new();
    for (n, line) in lines.iter().take(SHOWN_LINES).enumerate() {
        out.push_str(&format!("{:>width$}\t{line}\n", n + 1));
    }
    if lines.is_empty() {
        out.push_str("(the file is empty)\n");
    }
    if lines.len() > SHOWN_LINES {
        out.push_str(&format!(
            "(… {} more lines; read them with read_file and offset {})\n",
            lines.len() - SHOWN_LINES,
            SHOWN_LINES + 1
        ));
    }
    out
}

/// The content each write of a batch replaces, remembered before the batch runs, by call id.
#[derive(Default)]
pub(super) struct Before {
    pub(super) cwd: PathBuf,
    /// call id → (path as the model gave it, file, old content, new content).
    writes: HashMap<String, (String, PathBuf, String, String)>,
}

impl Before {
    pub(super) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            cwd: start.cwd.to_path_buf(),
            writes: HashMap::new(),
        }
    }

    pub(super) fn remember(&mut self, calls: &[ToolCall]) {
        self.writes.clear();
        for call in calls {
            if let Some(change) = change_target(&self.cwd, call) {
                self.writes.insert(call.call_id.clone(), change);
            }
        }
    }

    /// The files the remembered write calls change.
    pub(super) fn targets(&self) -> impl Iterator<Item = &Path> {
        self.writes
            .values()
            .map(|(_, target, _, _)| target.as_path())
    }

    /// Applies `note` to each output of a write that took effect (the file now holds the new
    /// content and it differs from the old); `note` returns text to append. `note` gets the
    /// old and new content each ending in one line break, as the patch leaves a file: a
    /// model's `content` often lacks the final one, and compared as given, the file's last
    /// line would look changed when it is not (a diff showed it "removed and added again"
    /// under a no-newline marker, and the model took that as a change to a line it had not
    /// touched — in the fix benchmark, the very line with the bug).
    pub(super) fn annotate(
        &self,
        outputs: &mut [ResponseItem],
        mut note: impl FnMut(&str, &Path, &str, &str) -> Option<String>,
    ) {
        for item in outputs {
            let ResponseItem::FunctionCallOutput { call_id, output } = item else {
                continue;
            };
            let Some((path, target, old, new)) = self.writes.get(call_id.as_str()) else {
                continue;
            };
            let (old, new) = (with_final_line_break(old), with_final_line_break(new));
            let written =
                read_small_text(target).is_some_and(|now| with_final_line_break(&now) == new);
            if !written || old == new {
                continue;
            }
            if let Some(extra) = note(path, target, &old, &new) {
                append_note(output, &extra);
            }
        }
    }
}

/// Shows the diff of each write that replaced an existing file in the write's result.
pub(crate) struct WriteDiff {
    before: Before,
}

impl WriteDiff {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            before: Before::new(start),
        }
    }
}

impl TurnInspector for WriteDiff {
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.before.remember(calls);
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        self.before
            .annotate(outputs, |path, _, old, new| Some(diff_note(path, old, new)));
    }
}

/// `text` ending in exactly one line break (none when empty), as the patch leaves a file.
fn with_final_line_break(text: &str) -> String {
    let body = text.trim_end_matches('\n');
    if body.is_empty() {
        String::new()
    } else {
        format!("{body}\n")
    }
}

/// "What changed" for a write: a unified diff with one line of context, at most
/// [`DIFF_LINES`] lines.
fn diff_note(path: &str, old: &str, new: &str) -> String {
    // A deadline keeps a wholesale rewrite of a big file from costing quadratic time.
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(1)
        .header(&format!("{path} (before)"), &format!("{path} (now)"))
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut note = String::from("What changed (- removed, + added):\n");
    for line in lines.iter().take(DIFF_LINES) {
        note.push_str(line);
        note.push('\n');
    }
    if lines.len() > DIFF_LINES {
        note.push_str(&format!(
            "(… {} more diff lines)\n",
            lines.len() - DIFF_LINES
        ));
    }
    note.push_str("Check that this is the change you meant.");
    note
}

/// The project's regular files under `cwd`, hidden entries and build output skipped, at
/// most [`WALK_FILES`], none larger than [`WALK_FILE_BYTES`].
pub(super) fn project_files(cwd: &Path) -> Vec<PathBuf> {
    // The same walk as the project overview (`.gitignore` honoured), without the hidden
    // entries it shows: tool state and caches (`.venv/`, `.tox/`) are not the project's code.
    let (entries, _) = osprey_tools::project_overview(cwd, 32, WALK_FILES * 4);
    entries
        .into_iter()
        .filter(|entry| !entry.ends_with('/') && !entry.starts_with('.'))
        .map(|entry| cwd.join(entry))
        .filter(|path| {
            std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() <= WALK_FILE_BYTES)
        })
        .take(WALK_FILES)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::related_files::RelatedFiles;
    use crate::inspect::test_support::{self, call, output, output_text, write};
    use pretty_assertions::assert_eq;

    #[test]
    fn only_small_regular_text_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.py");
        std::fs::write(&small, "x = 1\n").unwrap();
        assert_eq!(read_small_text(&small).as_deref(), Some("x = 1\n"));
        let big = dir.path().join("big.js");
        std::fs::write(&big, "a".repeat(300 * 1024)).unwrap();
        assert_eq!(read_small_text(&big), None);
        let binary = dir.path().join("blob.bin");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(read_small_text(&binary), None);
        // A device would never end (and a FIFO would block): neither is a regular file.
        assert_eq!(read_small_text(Path::new("/dev/zero")), None);
        assert_eq!(read_small_text(dir.path()), None);
    }
    fn start(cwd: &Path) -> TurnStart<'_> {
        test_support::start("fix it", cwd)
    }

    #[test]
    fn an_unread_existing_file_is_shown_instead_of_overwritten_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pages.py"),
            "def pages(n, k):\n    return n // k\n",
        )
        .unwrap();
        let mut aid = ReadBeforeWrite::new(&start(dir.path()));
        let guess = write("a", "./pages.py", "def pages(n, k):\n    return n / k\n");
        let CallVerdict::Answer { outputs } = aid.before_tool_calls(std::slice::from_ref(&guess))
        else {
            panic!("the first write of an unread file is refused");
        };
        let [(_, output)] = outputs.as_slice() else {
            panic!("one answer: {outputs:?}");
        };
        assert!(!output.success);
        assert!(
            output
                .text
                .contains("1\tdef pages(n, k):\n2\t    return n // k\n"),
            "{}",
            output.text
        );
        assert!(output.text.contains("Write the whole file again"));
        // Shown now: the write that follows goes through.
        assert!(matches!(
            aid.before_tool_calls(&[write("b", "pages.py", "x\n")]),
            CallVerdict::Run
        ));
    }

    #[test]
    fn read_new_and_own_files_are_written_at_once() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.py", "b.py"] {
            std::fs::write(dir.path().join(name), "old\n").unwrap();
        }
        let mut aid = ReadBeforeWrite::new(&start(dir.path()));
        // A new file, then the model's own file again.
        assert!(matches!(
            aid.before_tool_calls(&[write("1", "new.py", "x\n")]),
            CallVerdict::Run
        ));
        std::fs::write(dir.path().join("new.py"), "x\n").unwrap();
        assert!(matches!(
            aid.before_tool_calls(&[write("2", "new.py", "y\n")]),
            CallVerdict::Run
        ));
        // Read with read_file (absolute path), or shown with cat.
        let a = dir.path().join("a.py").display().to_string();
        aid.before_tool_calls(&[call("3", READ_FILE, serde_json::json!({"file_path": a}))]);
        aid.before_tool_calls(&[call(
            "4",
            SHELL_COMMAND,
            serde_json::json!({"command": "cat -n b.py | head"}),
        )]);
        for (id, name) in [("5", "a.py"), ("6", "b.py")] {
            assert!(
                matches!(
                    aid.before_tool_calls(&[write(id, name, "new\n")]),
                    CallVerdict::Run
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn a_write_result_shows_its_diff() {
        let dir = tempfile::tempdir().unwrap();
        let old = "def pages(n, k):\n    \"\"\"Pages.\"\"\"\n    return n // k\n";
        let new = "def pages(n, k):\n    \"\"\"Pages.\"\"\"\n    return n / k\n";
        std::fs::write(dir.path().join("pages.py"), old).unwrap();
        let mut aid = WriteDiff::new(&start(dir.path()));
        aid.before_tool_calls(&[write("w", "pages.py", new)]);
        std::fs::write(dir.path().join("pages.py"), new).unwrap();
        let mut outputs = vec![output("w", "Wrote pages.py")];
        aid.after_tool_outputs(&mut outputs);
        assert_eq!(
            output_text(&outputs[0]),
            "Wrote pages.py\n\nWhat changed (- removed, + added):\n\
             --- pages.py (before)\n+++ pages.py (now)\n@@ -2,2 +2,2 @@\n     \"\"\"Pages.\"\"\"\n\
             -    return n // k\n+    return n / k\nCheck that this is the change you meant."
        );
    }

    #[test]
    fn a_write_without_the_final_line_break_does_not_show_the_last_line_as_changed() {
        let dir = tempfile::tempdir().unwrap();
        let old = "def average(values):\n    \"\"\"Mean.\"\"\"\n    total = sum(values)\n    \
                   return total / (len(values) + 1)\n";
        // The model's content has no final line break; the patch adds one on disk.
        let new = "def average(values):\n    if not values:\n        raise ValueError('empty')\n    \
                   total = sum(values)\n    return total / (len(values) + 1)";
        std::fs::write(dir.path().join("stats.py"), old).unwrap();
        let mut aid = WriteDiff::new(&start(dir.path()));
        aid.before_tool_calls(&[write("w", "stats.py", new)]);
        std::fs::write(dir.path().join("stats.py"), format!("{new}\n")).unwrap();
        let mut outputs = vec![output("w", "Wrote stats.py")];
        aid.after_tool_outputs(&mut outputs);
        assert_eq!(
            output_text(&outputs[0]),
            "Wrote stats.py\n\nWhat changed (- removed, + added):\n\
             --- stats.py (before)\n+++ stats.py (now)\n@@ -1,3 +1,4 @@\n def average(values):\n\
             -    \"\"\"Mean.\"\"\"\n+    if not values:\n+        raise ValueError('empty')\n     \
             total = sum(values)\nCheck that this is the change you meant."
        );

        // A write that only adds or drops the final line break changed nothing to show.
        let mut aid = WriteDiff::new(&start(dir.path()));
        let now = format!("{new}\n");
        aid.before_tool_calls(&[write("v", "stats.py", new)]);
        std::fs::write(dir.path().join("stats.py"), &now).unwrap();
        let mut outputs = vec![output("v", "Wrote stats.py")];
        aid.after_tool_outputs(&mut outputs);
        assert_eq!(output_text(&outputs[0]), "Wrote stats.py");
    }

    fn edit(id: &str, path: &str, old: &str, new: &str) -> ToolCall {
        call(
            id,
            EDIT_FILE,
            serde_json::json!({"path": path, "old": old, "new": new}),
        )
    }

    #[test]
    fn an_edit_of_an_unread_file_is_not_refused_and_does_not_count_as_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\ny = 2\n").unwrap();
        let names = ["edit_file".to_string()];
        let mut aid = ReadBeforeWrite::new(&TurnStart {
            tool_names: &names,
            ..start(dir.path())
        });
        assert!(matches!(
            aid.before_tool_calls(&[edit("e", "a.py", "x = 1", "x = 3")]),
            CallVerdict::Run
        ));
        // A whole-file write after it is still refused, and the refusal names edit_file.
        let CallVerdict::Answer { outputs } = aid.before_tool_calls(&[write("w", "a.py", "x\n")])
        else {
            panic!("an edit does not show the model the whole file");
        };
        assert!(outputs[0].1.text.contains("call edit_file"), "{outputs:?}");
    }

    #[test]
    fn an_edit_result_shows_its_diff_and_the_files_that_still_use_a_removed_name() {
        let dir = tempfile::tempdir().unwrap();
        let old = "def calc_tax(amount):\n    return amount * 0.2\n";
        std::fs::write(dir.path().join("tax.py"), old).unwrap();
        std::fs::write(dir.path().join("invoice.py"), "from tax import calc_tax\n").unwrap();
        let call = edit("e", "tax.py", "def calc_tax(", "def compute_tax(");
        let mut diff = WriteDiff::new(&start(dir.path()));
        let mut related = RelatedFiles::new(&start(dir.path()));
        diff.before_tool_calls(std::slice::from_ref(&call));
        related.before_tool_calls(std::slice::from_ref(&call));
        let new = "def compute_tax(amount):\n    return amount * 0.2\n";
        std::fs::write(dir.path().join("tax.py"), new).unwrap();
        let mut outputs = vec![output("e", "Edited tax.py")];
        diff.after_tool_outputs(&mut outputs);
        related.after_tool_outputs(&mut outputs);
        let text = output_text(&outputs[0]);
        assert!(
            text.contains("-def calc_tax(amount):\n+def compute_tax(amount):"),
            "{text}"
        );
        assert!(
            text.ends_with(
                "Other files still mention `calc_tax` (removed from this file): \
                 invoice.py. Update them too if they should change."
            ),
            "{text}"
        );

        // An edit that does not match changes nothing: no note.
        let mut diff = WriteDiff::new(&start(dir.path()));
        diff.before_tool_calls(&[edit("f", "tax.py", "def nowhere(", "def x(")]);
        let mut outputs = vec![output("f", "edit_file: not changed")];
        diff.after_tool_outputs(&mut outputs);
        assert_eq!(output_text(&outputs[0]), "edit_file: not changed");
    }

    #[test]
    fn a_write_that_did_not_happen_gets_no_diff() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "old\n").unwrap();
        let mut aid = WriteDiff::new(&start(dir.path()));
        aid.before_tool_calls(&[write("w", "a.py", "new\n")]);
        // The patch was refused (sandbox, approval): the file still holds the old text.
        let mut outputs = vec![output("w", "write refused")];
        aid.after_tool_outputs(&mut outputs);
        assert_eq!(output_text(&outputs[0]), "write refused");
    }

    #[test]
    fn a_write_result_names_other_files_that_mention_a_removed_name() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("tax.py", "def calc_tax(amount):\n    return amount * 0.2\n"),
            ("invoice.py", "from tax import calc_tax\n"),
            ("lib/test_tax.py", "from tax import calc_tax\n"),
            ("notes.md", "calc_taxes is a different word\n"),
            (".hidden/x.py", "calc_tax\n"),
        ];
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let new = "def compute_tax(amount):\n    return amount * 0.2\n";
        let mut aid = RelatedFiles::new(&start(dir.path()));
        aid.before_tool_calls(&[write("w", "tax.py", new)]);
        std::fs::write(dir.path().join("tax.py"), new).unwrap();
        let mut outputs = vec![output("w", "Wrote tax.py")];
        aid.after_tool_outputs(&mut outputs);
        assert_eq!(
            output_text(&outputs[0]),
            "Wrote tax.py\n\nOther files still mention `calc_tax` (removed from this file): \
             invoice.py, lib/test_tax.py. Update them too if they should change."
        );

        // Once every file is updated, nothing is added.
        let mut aid = RelatedFiles::new(&start(dir.path()));
        let updated = "from tax import compute_tax\n";
        aid.before_tool_calls(&[write("v", "invoice.py", updated)]);
        std::fs::write(dir.path().join("invoice.py"), updated).unwrap();
        std::fs::write(dir.path().join("lib/test_tax.py"), updated).unwrap();
        let mut outputs = vec![output("v", "Wrote invoice.py")];
        aid.after_tool_outputs(&mut outputs);
        assert_eq!(output_text(&outputs[0]), "Wrote invoice.py");
    }
}
