//! [`RelatedFiles`] (`[local_model] related_files`): after a change to a file, the result
//! names the other files that still mention identifiers the change removed, so a rename or
//! a signature change reaches every file, not only the first.
//!
//! A change is a `write_file` or `edit_file` call that took effect, or an in-place edit
//! through the shell (`sed -i`, `perl -pi`) that removed names from project files. Seen on 2026-12-06 (rename): told how to
//! rename with `sed -i` in one file, the model ran it for that file and then again, until
//! the loop guard stopped the turn; the other files were never named to it.
//!
//! A shell command's changes are found by comparing the project's text files before and
//! after it. That is done only for a command that runs an in-place editor (`sed -i`,
//! `perl -pi`; a program that rewrites its output file is not renaming anything), and only
//! in a project of at most [`SNAPSHOT_FILES`] files and [`SNAPSHOT_BYTES`] in all — the
//! size of the small tasks the local model is for; a larger project gets no note for shell
//! changes rather than a slower turn. The note goes on the batch's last such command.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use osprey_protocol::ResponseItem;

use super::check_aids::command_of;
use super::write_aids::{Before, normal, project_files, read_small_text};
use super::{CallVerdict, TurnInspector, TurnStart, append_note};
use crate::tools::call::ToolCall;

/// Most project files copied before a shell command, and the most bytes they may hold.
const SNAPSHOT_FILES: usize = 300;
const SNAPSHOT_BYTES: usize = 4 * 1024 * 1024;

/// Names, after a change, the other files that still mention identifiers it removed.
pub(crate) struct RelatedFiles {
    before: Before,
    /// The project's text files before the running batch's shell command(s), and the id of
    /// the batch's last shell call, whose result gets the note.
    snapshot: Option<(String, BTreeMap<PathBuf, String>)>,
}

impl RelatedFiles {
    pub(crate) fn new(start: &TurnStart<'_>) -> Self {
        Self {
            before: Before::new(start),
            snapshot: None,
        }
    }
}

impl TurnInspector for RelatedFiles {
    fn before_tool_calls(&mut self, calls: &[ToolCall]) -> CallVerdict {
        self.before.remember(calls);
        self.snapshot = calls
            .iter()
            .rev()
            .find(|call| command_of(call).is_some_and(|command| edits_in_place(&command)))
            .and_then(|last_shell| {
                let files = snapshot(&self.before.cwd)?;
                Some((last_shell.call_id.clone(), files))
            });
        CallVerdict::Run
    }

    fn after_tool_outputs(&mut self, outputs: &mut [ResponseItem]) {
        let cwd = self.before.cwd.clone();
        self.before.annotate(outputs, |_, _, old, new| {
            let removed = removed_names(old, new);
            mention_note(&cwd, &removed, "this file")
        });
        let Some((shell_id, files)) = self.snapshot.take() else {
            return;
        };
        // Files the batch's own write calls changed have had their note above.
        let written: HashSet<PathBuf> = self.before.targets().map(normal).collect();
        let Some(note) = shell_note(&cwd, &files, &written) else {
            return;
        };
        for item in outputs {
            if let ResponseItem::FunctionCallOutput { call_id, output } = item
                && *call_id == shell_id
            {
                append_note(output, &note);
            }
        }
    }
}

/// Whether `command` runs an in-place editor (`sed -i`, `perl -pi`): the way a model renames
/// through the shell. Other commands are not watched — a program's output file, rewritten
/// by a run, is not a rename — and cost no copy of the project.
fn edits_in_place(command: &str) -> bool {
    let words: Vec<&str> = command
        .split(|c: char| c.is_whitespace() || c == ';' || c == '&' || c == '|')
        .collect();
    let editor = words
        .iter()
        .any(|word| matches!(*word, "sed" | "gsed" | "perl"));
    let in_place = words
        .iter()
        .any(|flag| flag.starts_with("-i") || flag.starts_with("-pi") || *flag == "--in-place");
    editor && in_place
}

/// The project's text files and what they hold, or `None` when the project is larger than
/// [`SNAPSHOT_FILES`] files or [`SNAPSHOT_BYTES`] bytes.
fn snapshot(cwd: &Path) -> Option<BTreeMap<PathBuf, String>> {
    let paths = project_files(cwd);
    if paths.len() > SNAPSHOT_FILES {
        return None;
    }
    let mut files = BTreeMap::new();
    let mut bytes = 0;
    for path in paths {
        let Some(text) = read_small_text(&path) else {
            continue;
        };
        bytes += text.len();
        if bytes > SNAPSHOT_BYTES {
            return None;
        }
        files.insert(normal(&path), text);
    }
    Some(files)
}

/// The note for the files a shell command changed (those in `before` whose text lost names
/// it used, leaving out `written`): the other files that still mention what it removed.
fn shell_note(
    cwd: &Path,
    before: &BTreeMap<PathBuf, String>,
    written: &HashSet<PathBuf>,
) -> Option<String> {
    let mut changed: Vec<String> = Vec::new();
    let mut removed: BTreeSet<String> = BTreeSet::new();
    for (path, old) in before {
        if written.contains(path) {
            continue;
        }
        let Some(new) = read_small_text(path) else {
            continue;
        };
        let lost = removed_names(old, &new);
        if lost.is_empty() {
            continue;
        }
        removed.extend(lost);
        changed.push(shown(cwd, path));
    }
    if changed.is_empty() {
        return None;
    }
    let removed: Vec<String> = removed.into_iter().collect();
    mention_note(cwd, &removed, &changed.join(", "))
}

/// `path` relative to `cwd` when it is inside it.
fn shown(cwd: &Path, path: &Path) -> String {
    path.strip_prefix(normal(cwd))
        .or_else(|_| path.strip_prefix(cwd))
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Identifiers of at least three characters in `text`.
pub(super) fn identifiers(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 3 && w.starts_with(|c: char| c.is_alphabetic() || c == '_'))
        .collect()
}

/// Words that introduce a definition in the languages small tasks use.
const DEFINING: [&str; 12] = [
    "def",
    "fn",
    "class",
    "function",
    "struct",
    "enum",
    "const",
    "let",
    "var",
    "type",
    "interface",
    "trait",
];

/// Whether `name` stands for something in `text`'s code rather than prose: somewhere it is
/// called or assigned (`name(`, `name =`, `name:`) or defined (`def name`, `class name`).
/// A word removed from a comment or a string ("the", "total") is not a rename.
fn names_code(text: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = &text[..at];
        let after = &text[at + name.len()..];
        if before.ends_with(is_word) || after.starts_with(is_word) {
            return false;
        }
        let next = after.trim_start_matches([' ', '\t']);
        let called_or_set = next.starts_with('(')
            || (next.starts_with('=') && !next.starts_with("=="))
            || next.starts_with(':');
        let defined = before
            .trim_end_matches([' ', '\t'])
            .rsplit(|c: char| !is_word(c))
            .next()
            .is_some_and(|word| DEFINING.contains(&word));
        called_or_set || defined
    })
}

/// Identifiers of `old` that `new` no longer has and that `old`'s code used (not words of
/// its comments or strings).
fn removed_names(old: &str, new: &str) -> Vec<String> {
    let kept = identifiers(new);
    identifiers(old)
        .difference(&kept)
        .filter(|name| names_code(old, name))
        .map(|name| name.to_string())
        .collect()
}

/// Most identifiers and files a related-files note names.
const NOTE_NAMES: usize = 5;
const NOTE_FILES: usize = 10;

/// "Other files still mention `calc_tax` (removed from this file): invoice.py,
/// test_invoice.py. …" for the `removed` identifiers (removed from `from`); `None` when no
/// project file mentions any.
fn mention_note(cwd: &Path, removed: &[String], from: &str) -> Option<String> {
    if removed.is_empty() {
        return None;
    }
    let mut mentioned: BTreeSet<&str> = BTreeSet::new();
    let mut files: Vec<String> = Vec::new();
    for file in project_files(cwd) {
        let Some(text) = read_small_text(&file) else {
            continue;
        };
        let words = identifiers(&text);
        let hits: Vec<&str> = removed
            .iter()
            .map(String::as_str)
            .filter(|r| words.contains(r))
            .collect();
        if hits.is_empty() {
            continue;
        }
        mentioned.extend(hits);
        files.push(shown(cwd, &file));
    }
    if files.is_empty() {
        return None;
    }
    let names: Vec<String> = mentioned
        .iter()
        .take(NOTE_NAMES)
        .map(|n| format!("`{n}`"))
        .collect();
    files.sort();
    let more = files.len().saturating_sub(NOTE_FILES);
    files.truncate(NOTE_FILES);
    let mut note = format!(
        "Other files still mention {} (removed from {from}): {}",
        names.join(", "),
        files.join(", ")
    );
    if more > 0 {
        note.push_str(&format!(" and {more} more"));
    }
    note.push_str(". Update them too if they should change.");
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::test_support::{output, output_text, project, shell, start, write};
    use pretty_assertions::assert_eq;

    #[test]
    fn only_names_the_code_uses_count_as_renamed() {
        let old = "# the total tax\ndef calc_tax(total):\n    rate = 0.2\n    return total * rate\nclass Invoice:\n    pass\n";
        assert!(names_code(old, "calc_tax"), "a definition");
        assert!(names_code(old, "rate"), "an assignment");
        assert!(names_code(old, "Invoice"), "a class");
        assert!(!names_code(old, "the"), "prose in a comment");
        assert!(
            !names_code("if x == limit:\n", "x"),
            "a comparison is not an assignment"
        );
        assert!(
            !names_code("calc_taxes(1)\n", "calc_tax"),
            "whole words only"
        );
    }

    #[test]
    fn a_rename_is_noted_where_other_files_use_the_old_name_but_not_in_ignored_ones() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::fs::write(root.join("build/copy.py"), "calc_tax(1)\n").unwrap();
        std::fs::write(
            root.join("invoice.py"),
            "from tax import calc_tax\ncalc_tax(2)\n",
        )
        .unwrap();
        std::fs::write(root.join("notes.md"), "the total is shown\n").unwrap();
        let old = "# the total\ndef calc_tax(total):\n    return total\n";
        let new = "# sum\ndef compute_tax(amount):\n    return amount\n";
        std::fs::write(root.join("tax.py"), new).unwrap();
        let removed = removed_names(old, new);
        let note = mention_note(root, &removed, "this file").expect("invoice.py still calls it");
        assert!(note.contains("`calc_tax`"), "{note}");
        assert!(note.contains("invoice.py"), "{note}");
        assert!(!note.contains("build/copy.py"), ".gitignore holds: {note}");
        assert!(
            !note.contains("notes.md"),
            "prose words are not renames: {note}"
        );
        assert!(!note.contains("`the`"), "{note}");
        assert_eq!(
            mention_note(root, &removed_names(old, old), "this file"),
            None
        );
    }

    const TAX: &str = "def calc_tax(amount):\n    return amount * 0.2\n";
    const INVOICE: &str =
        "from tax import calc_tax\n\n\ndef total(a):\n    return a + calc_tax(a)\n";

    fn rename_project() -> tempfile::TempDir {
        project(&[
            ("tax.py", TAX),
            ("invoice.py", INVOICE),
            ("test_invoice.py", "from tax import calc_tax\n"),
            ("README.md", "Taxes.\n"),
        ])
    }

    /// Runs `command` through `aid` as call `id`; `effect` stands for what the command does
    /// to the files. Returns the result the model reads.
    fn through_shell(
        aid: &mut RelatedFiles,
        id: &str,
        command: &str,
        effect: impl FnOnce(),
    ) -> String {
        aid.before_tool_calls(&[shell(id, command)]);
        effect();
        let mut outputs = vec![output(id, "Exit code: 0\nOutput:\n")];
        aid.after_tool_outputs(&mut outputs);
        output_text(&outputs[0])
    }

    #[test]
    fn a_shell_command_that_renamed_in_one_file_gets_the_others_named() {
        let dir = rename_project();
        let root = dir.path().to_path_buf();
        let mut aid = RelatedFiles::new(&start("Rename calc_tax to compute_tax.", &root));
        let text = through_shell(
            &mut aid,
            "s1",
            "sed -i 's/\\bcalc_tax\\b/compute_tax/g' invoice.py",
            || {
                let renamed = INVOICE.replace("calc_tax", "compute_tax");
                std::fs::write(root.join("invoice.py"), renamed).unwrap();
            },
        );
        assert_eq!(
            text,
            "Exit code: 0\nOutput:\n\n\nOther files still mention `calc_tax` (removed from \
             invoice.py): tax.py, test_invoice.py. Update them too if they should change."
        );

        // A command that changes nothing, or only adds names, gets no note.
        let text = through_shell(&mut aid, "s2", "python3 -m unittest", || {});
        assert_eq!(text, "Exit code: 0\nOutput:\n");
        let text = through_shell(
            &mut aid,
            "s3",
            "sed -i 's/Taxes/Tax rules/' README.md",
            || {
                std::fs::write(root.join("README.md"), "Tax rules.\nx = 1\n").unwrap();
            },
        );
        assert_eq!(
            text, "Exit code: 0\nOutput:\n",
            "nothing the code used was removed"
        );
        // A program that rewrites its output file is not an in-place edit: not watched.
        std::fs::write(root.join("out.txt"), "calc_tax(1)\n").unwrap();
        let text = through_shell(&mut aid, "s5", "python3 tax.py > out.txt", || {
            std::fs::write(root.join("out.txt"), "0.2\n").unwrap();
        });
        assert_eq!(text, "Exit code: 0\nOutput:\n");
        std::fs::remove_file(root.join("out.txt")).unwrap();

        // Once the command renames everywhere, nothing is left to name.
        let text = through_shell(
            &mut aid,
            "s4",
            "sed -i 's/calc_tax/compute_tax/g' tax.py test_invoice.py",
            || {
                for name in ["tax.py", "test_invoice.py"] {
                    let old = std::fs::read_to_string(root.join(name)).unwrap();
                    std::fs::write(root.join(name), old.replace("calc_tax", "compute_tax"))
                        .unwrap();
                }
            },
        );
        assert_eq!(text, "Exit code: 0\nOutput:\n");
    }

    #[test]
    fn a_batch_notes_the_shell_change_once_and_leaves_write_calls_to_their_own_note() {
        let dir = rename_project();
        let root = dir.path().to_path_buf();
        let mut aid = RelatedFiles::new(&start("Rename calc_tax to compute_tax.", &root));
        let renamed_tax = TAX.replace("calc_tax", "compute_tax");
        let calls = [
            write("w", "tax.py", &renamed_tax),
            shell("s", "sed -i 's/calc_tax/compute_tax/g' invoice.py"),
        ];
        aid.before_tool_calls(&calls);
        std::fs::write(root.join("tax.py"), &renamed_tax).unwrap();
        std::fs::write(
            root.join("invoice.py"),
            INVOICE.replace("calc_tax", "compute_tax"),
        )
        .unwrap();
        let mut outputs = vec![output("w", "Wrote tax.py"), output("s", "Exit code: 0")];
        aid.after_tool_outputs(&mut outputs);
        let texts: Vec<String> = outputs.iter().map(output_text).collect();
        assert_eq!(
            texts,
            [
                "Wrote tax.py\n\nOther files still mention `calc_tax` (removed from this \
                 file): test_invoice.py. Update them too if they should change.",
                "Exit code: 0\n\nOther files still mention `calc_tax` (removed from \
                 invoice.py): test_invoice.py. Update them too if they should change.",
            ]
        );
    }

    #[test]
    fn a_project_too_large_to_copy_gets_no_shell_note() {
        let dir = rename_project();
        let root = dir.path().to_path_buf();
        for i in 0..=SNAPSHOT_FILES {
            std::fs::write(root.join(format!("m{i}.py")), "x = 1\n").unwrap();
        }
        let mut aid = RelatedFiles::new(&start("Rename calc_tax to compute_tax.", &root));
        let text = through_shell(&mut aid, "s", "sed -i s/calc_tax/t/ invoice.py", || {
            std::fs::write(root.join("invoice.py"), "t\n").unwrap();
        });
        assert_eq!(text, "Exit code: 0\nOutput:\n");
    }
}
