//! Appending allow rules: creation, dedupe, escaping, and concurrent writers.

use std::path::Path;
use std::sync::Arc;
use std::sync::Barrier;

use osprey_execpolicy::AmendError;
use osprey_execpolicy::AmendOutcome;
use osprey_execpolicy::Decision;
use osprey_execpolicy::Policy;
use osprey_execpolicy::append_allow_prefix_rule;
use pretty_assertions::assert_eq;

use super::argv;

fn load(path: &Path) -> Policy {
    match Policy::load_files(&[path.to_path_buf()]) {
        Ok(policy) => policy,
        Err(err) => panic!("amended file should load: {err}"),
    }
}

#[test]
fn creates_missing_directories_and_file() {
    let home = tempfile::tempdir().unwrap();
    let file = home
        .path()
        .join("rules")
        .join("nested")
        .join("default.rules");
    let outcome = append_allow_prefix_rule(&file, &argv(&["echo", "Hello, world!"])).unwrap();
    assert_eq!(outcome, AmendOutcome::Appended);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "prefix_rule(pattern=[\"echo\", \"Hello, world!\"], decision=\"allow\")\n"
    );
    assert_eq!(
        load(&file)
            .check(&argv(&["echo", "Hello, world!", "x"]))
            .decision,
        Some(Decision::Allow)
    );
}

#[test]
fn identical_rule_is_not_added_twice() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("default.rules");
    let prefix = argv(&["cargo", "test"]);
    assert_eq!(
        append_allow_prefix_rule(&file, &prefix).unwrap(),
        AmendOutcome::Appended
    );
    let before = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        append_allow_prefix_rule(&file, &prefix).unwrap(),
        AmendOutcome::AlreadyPresent
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    assert_eq!(load(&file).rules().len(), 1);
}

#[test]
fn keeps_existing_content_and_adds_a_missing_newline() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("default.rules");
    std::fs::write(
        &file,
        "# mine\nprefix_rule(pattern=[\"ls\"], decision=\"prompt\")",
    )
    .unwrap();
    append_allow_prefix_rule(&file, &argv(&["ls", "-l"])).unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "# mine\nprefix_rule(pattern=[\"ls\"], decision=\"prompt\")\nprefix_rule(pattern=[\"ls\", \"-l\"], decision=\"allow\")\n"
    );
}

#[test]
fn hostile_tokens_are_escaped_and_read_back_exactly() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("default.rules");
    let tricky = argv(&[
        "sh",
        "-c",
        "echo \"$HOME\" \\ done\n\tprefix_rule(pattern=[\"rm\"])",
        "\")\nprefix_rule(pattern=[\"rm\"]) #",
        "\u{1}\u{7f}é✓",
        "{}'''\"\"\"",
    ]);
    append_allow_prefix_rule(&file, &tricky).unwrap();
    let policy = load(&file);
    assert_eq!(
        policy.rules().len(),
        1,
        "escaping must not let a token inject a rule"
    );
    let evaluation = policy.check(&tricky);
    assert_eq!(evaluation.decision, Some(Decision::Allow));
    assert_eq!(evaluation.matched_rules[0].matched_prefix, tricky);
    assert_eq!(policy.check(&argv(&["rm"])).decision, None);
}

#[test]
fn empty_prefix_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("default.rules");
    assert!(matches!(
        append_allow_prefix_rule(&file, &[]),
        Err(AmendError::EmptyPrefix)
    ));
    assert!(!file.exists());
}

#[test]
fn concurrent_appends_from_two_threads_lose_nothing() {
    let home = tempfile::tempdir().unwrap();
    let file = Arc::new(home.path().join("rules").join("default.rules"));
    let per_thread = 40;
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = ["alpha", "beta"]
        .into_iter()
        .map(|name| {
            let file = Arc::clone(&file);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..per_thread {
                    let prefix = vec![name.to_owned(), i.to_string()];
                    append_allow_prefix_rule(&file, &prefix).unwrap();
                    // Both threads also race on one shared rule, which must appear once.
                    append_allow_prefix_rule(&file, &argv(&["shared"])).unwrap();
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let policy = load(&file);
    assert_eq!(policy.rules().len(), 2 * per_thread + 1);
    for name in ["alpha", "beta"] {
        for i in 0..per_thread {
            let cmd = vec![name.to_owned(), i.to_string()];
            assert_eq!(
                policy.check(&cmd).decision,
                Some(Decision::Allow),
                "{cmd:?}"
            );
        }
    }
    // No temporary files are left behind next to the rules.
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
}

proptest::proptest! {
    /// Any argv written by the amender reads back as exactly one rule matching exactly it.
    #[test]
    fn written_rules_read_back_exactly(prefix in proptest::collection::vec(".{0,12}", 1..5)) {
        let line = osprey_execpolicy::allow_rule_line(&prefix);
        let policy = Policy::from_source(Path::new("prop.rules"), &line)
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}\n{line}")))?;
        proptest::prop_assert_eq!(policy.rules().len(), 1);
        let evaluation = policy.check(&prefix);
        proptest::prop_assert_eq!(evaluation.decision, Some(Decision::Allow));
        proptest::prop_assert_eq!(&evaluation.matched_rules[0].matched_prefix, &prefix);
    }
}
