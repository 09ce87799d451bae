//! Property tests: a patch generated from a random edit of a random file
//! reproduces the edited file; a corrupted patch changes nothing.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use similar::{ChangeTag, TextDiff};

use osprey_apply_patch::apply_patch_text;

const WORDS: [&str; 8] = [
    "alpha", "beta", "  gamma", "delta\t", "", "fn x() {", "}", "é—ü",
];

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, Vec<usize>),
    Delete(usize, usize),
    Replace(usize, usize),
}

/// Lines are made unique by a numeric prefix, so the intended position of
/// every chunk is the only one its lines match.
fn file_strategy() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(0..WORDS.len(), 0..40).prop_map(|words| {
        words
            .into_iter()
            .enumerate()
            .map(|(i, w)| format!("{i}:{}", WORDS[w]))
            .collect()
    })
}

fn edits_strategy() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), prop::collection::vec(0..WORDS.len(), 1..4))
            .prop_map(|(at, w)| Edit::Insert(at, w)),
        (any::<usize>(), 1..4usize).prop_map(|(at, n)| Edit::Delete(at, n)),
        (any::<usize>(), 0..WORDS.len()).prop_map(|(at, w)| Edit::Replace(at, w)),
    ];
    prop::collection::vec(edit, 1..6)
}

fn edit(lines: &[String], edits: &[Edit]) -> Vec<String> {
    let mut out = lines.to_vec();
    let mut fresh = 0;
    for e in edits {
        match e {
            Edit::Insert(at, words) => {
                let at = at % (out.len() + 1);
                for (k, w) in words.iter().enumerate() {
                    fresh += 1;
                    out.insert(at + k, format!("new{fresh}:{}", WORDS[*w]));
                }
            }
            Edit::Delete(at, n) if !out.is_empty() => {
                let at = at % out.len();
                let end = (at + n).min(out.len());
                out.drain(at..end);
            }
            Edit::Replace(at, w) if !out.is_empty() => {
                let at = at % out.len();
                fresh += 1;
                out[at] = format!("rep{fresh}:{}", WORDS[*w]);
            }
            Edit::Delete(..) | Edit::Replace(..) => {}
        }
    }
    out
}

fn join(lines: &[String], eol: &str) -> String {
    lines.iter().map(|l| format!("{l}{eol}")).collect()
}

/// Builds an `*** Update File:` section from a line diff with 3 lines of context.
fn update_section(path: &str, old: &[String], new: &[String]) -> Option<String> {
    let old_text = join(old, "\n");
    let new_text = join(new, "\n");
    let diff = TextDiff::from_lines(&old_text, &new_text);
    let groups = diff.grouped_ops(3);
    if groups.is_empty() {
        return None;
    }
    let mut out = format!("*** Update File: {path}\n");
    for group in groups {
        out.push_str("@@\n");
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                out.push(sign);
                out.push_str(change.value().trim_end_matches('\n'));
                out.push('\n');
            }
        }
    }
    Some(out)
}

/// Where failing seeds are kept and replayed first. Proptest's default looks for a `lib.rs`
/// beside the source, which an integration test under `tests/suite/` does not have.
const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/suite/properties.proptest-regressions"
);

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        ..ProptestConfig::with_cases(cases)
    }
}

fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for (name, content) in files {
        std::fs::write(root.join(name), content).unwrap();
    }
    (dir, root)
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn generated_patch_reproduces_the_edit(
        lines in file_strategy(),
        edits in edits_strategy(),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let eol = if crlf { "\r\n" } else { "\n" };
        let edited = edit(&lines, &edits);
        prop_assume!(edited != lines);
        let mut original = join(&lines, eol);
        if !final_newline {
            original.truncate(original.len() - if lines.is_empty() { 0 } else { eol.len() });
        }
        let (_dir, root) = setup(&[("f.txt", &original)]);
        let section = update_section("f.txt", &lines, &edited).unwrap();
        let patch = format!("*** Begin Patch\n{section}*** End Patch\n");
        let result = apply_patch_text(&patch, &root, Some(std::slice::from_ref(&root)));
        prop_assert!(result.is_ok(), "{patch}\n{:?}", result.err().map(|e| e.to_string()));
        let got = std::fs::read(root.join("f.txt")).unwrap();
        // A file that had no line break yet takes LF for its new lines.
        let want_eol = if original.contains('\n') { eol } else { "\n" };
        let mut want = join(&edited, want_eol);
        // A missing final newline survives when the last line stays last
        // (untouched or as context); lines are unique, so equality shows it.
        if !final_newline && !lines.is_empty() && edited.last() == lines.last() {
            want.truncate(want.len() - want_eol.len());
        }
        prop_assert_eq!(String::from_utf8(got).unwrap(), want);
    }

    #[test]
    fn corrupted_patch_leaves_every_file_unchanged(
        lines in file_strategy(),
        edits in edits_strategy(),
        other_edits in edits_strategy(),
        corrupt_at in any::<usize>(),
    ) {
        let edited = edit(&lines, &edits);
        let other_edited = edit(&lines, &other_edits);
        let original = join(&lines, "\n");
        let first = update_section("a.txt", &lines, &other_edited);
        let second = update_section("b.txt", &lines, &edited);
        let (Some(first), Some(second)) = (first, second) else {
            return Ok(());
        };
        // Corrupt one context or removed line of the second file's section.
        let candidates: Vec<usize> = second
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with(' ') || l.starts_with('-'))
            .map(|(i, _)| i)
            .collect();
        prop_assume!(!candidates.is_empty());
        let target = candidates[corrupt_at % candidates.len()];
        let corrupted: String = second
            .lines()
            .enumerate()
            .map(|(i, l)| if i == target { format!("{l} CORRUPTED\n") } else { format!("{l}\n") })
            .collect();
        let (_dir, root) = setup(&[("a.txt", &original), ("b.txt", &original)]);
        let patch = format!("*** Begin Patch\n{first}{corrupted}*** Add File: c.txt\n+c\n*** End Patch\n");
        let result = apply_patch_text(&patch, &root, None);
        prop_assert!(result.is_err(), "{patch}");
        prop_assert_eq!(&std::fs::read_to_string(root.join("a.txt")).unwrap(), &original);
        prop_assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), original);
        prop_assert!(!root.join("c.txt").exists());
        let entries = std::fs::read_dir(&root).unwrap().count();
        prop_assert_eq!(entries, 2);
    }
}

const TOKENS: [&str; 22] = [
    "*** Begin Patch",
    "*** End Patch",
    "*** Add File: ",
    "*** Delete File: ",
    "*** Update File: ",
    "*** Move to: ",
    "*** End of File",
    "@@",
    "@@ ",
    "+",
    "-",
    " ",
    "\n",
    "\r\n",
    "a.txt",
    "../x",
    "<<'EOF'",
    "EOF",
    "apply_patch ",
    "cd d && ",
    "bash -lc \"",
    "é\u{2014}",
];

proptest! {
    #![proptest_config(config(500))]

    /// Nothing the model sends may panic the parser or the verifier.
    #[test]
    fn arbitrary_patch_text_never_panics(
        picks in prop::collection::vec(0..TOKENS.len(), 0..60),
        noise in ".{0,20}",
    ) {
        let mut text: String = picks.iter().map(|&i| TOKENS[i]).collect();
        text.push_str(&noise);
        let _ = osprey_apply_patch::parse_patch_strict(&text);
        let argv = vec!["bash".to_string(), "-lc".to_string(), text.clone()];
        let _ = osprey_apply_patch::maybe_parse_apply_patch_invocation(&argv);
        if let Ok(patch) = osprey_apply_patch::parse_patch(&text) {
            let (_dir, root) = setup(&[("a.txt", "a\nb\n")]);
            let _ = osprey_apply_patch::verify_patch(&patch, &root, Some(std::slice::from_ref(&root)));
        }
    }
}

proptest! {
    #![proptest_config(config(500))]

    /// Whatever the strict parser accepts, the lenient one reads the same way.
    #[test]
    fn strict_patches_parse_the_same_leniently(
        picks in prop::collection::vec(0..TOKENS.len(), 0..60),
    ) {
        let mut text = String::from("*** Begin Patch\n");
        text.extend(picks.iter().map(|&i| TOKENS[i]));
        text.push_str("\n*** End Patch\n");
        if let Ok(strict) = osprey_apply_patch::parse_patch_strict(&text) {
            let lenient = osprey_apply_patch::parse_patch(&text);
            prop_assert_eq!(lenient.map(|p| p.operations), Ok(strict.operations));
        }
    }
}
