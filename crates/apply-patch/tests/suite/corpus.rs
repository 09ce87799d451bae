//! Every corpus case applied by our CLI entry: the exit code is the one in
//! `case.txt`, a failure leaves the sandbox byte-for-byte unchanged, and a
//! success leaves exactly the tree in `expected/`.
//! Set OSPREY_BLESS_CORPUS=1 to (re)write `expected/` from our results.

use pretty_assertions::assert_eq;

use super::common::{Sandbox, copy_tree, corpus, run_ours, snapshot};

#[test]
fn corpus_cases_apply_as_recorded() {
    let cases = corpus();
    assert!(cases.len() >= 30, "the corpus shrank to {}", cases.len());
    let bless = std::env::var_os("OSPREY_BLESS_CORPUS").is_some();
    for case in &cases {
        let sandbox = Sandbox::from_case(case);
        let before = snapshot(&sandbox.root);
        let run = run_ours(&case.patch, &sandbox.tree);
        assert_eq!(run.code, case.exit, "{}: stderr: {}", case.name, run.stderr);
        let expected_dir = case.dir.join("expected");
        if run.code != 0 {
            assert_eq!(
                snapshot(&sandbox.root),
                before,
                "{} changed the tree",
                case.name
            );
            assert!(run.stdout.is_empty(), "{}: {}", case.name, run.stdout);
            assert!(
                !run.stderr.is_empty(),
                "{}: failure without a message",
                case.name
            );
            assert!(
                !expected_dir.exists(),
                "{}: failing case has expected/",
                case.name
            );
            continue;
        }
        assert!(
            run.stdout
                .starts_with("Success. Updated the following files:\n"),
            "{}: {}",
            case.name,
            run.stdout
        );
        if bless {
            let _ = std::fs::remove_dir_all(&expected_dir);
            std::fs::create_dir(&expected_dir).unwrap();
            copy_tree(&sandbox.tree, &expected_dir);
        }
        assert_eq!(
            snapshot(&sandbox.tree),
            snapshot(&expected_dir),
            "{}: result differs from expected/",
            case.name
        );
    }
}
