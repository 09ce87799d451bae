//! Loading whole rules directories: sorted order, skipping, and broken files.

use std::path::PathBuf;

use osprey_execpolicy::Decision;
use osprey_execpolicy::LoadError;
use osprey_execpolicy::Policy;
use pretty_assertions::assert_eq;

use super::argv;

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn one_broken_file_does_not_stop_the_others() {
    let home = tempfile::tempdir().unwrap();
    write(home.path(), "a.rules", "prefix_rule(pattern=[\"ls\"])\n");
    let broken = write(
        home.path(),
        "b.rules",
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\"\nx = (\n",
    );
    write(
        home.path(),
        "c.rules",
        "prefix_rule(pattern=[\"cat\"], decision=\"prompt\")\n",
    );
    write(home.path(), "notes.txt", "this is not a rules file (");
    std::fs::create_dir(home.path().join("sub.rules")).unwrap();

    let (policy, errors) = Policy::load_dirs(&[home.path().to_path_buf()]);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path(), broken.as_path());
    assert!(matches!(
        errors[0],
        LoadError::Invalid {
            position: Some(_),
            ..
        }
    ));
    assert!(policy.has_load_errors());
    assert_eq!(policy.failed_files(), &[broken]);
    assert_eq!(policy.check(&argv(&["ls"])).decision, Some(Decision::Allow));
    assert_eq!(
        policy.check(&argv(&["cat", "x"])).decision,
        Some(Decision::Prompt)
    );
    // The broken file's rule is absent, which is why callers must not trust this policy.
    assert_eq!(policy.check(&argv(&["rm", "-rf", "/"])).decision, None);
}

#[test]
fn files_load_sorted_within_each_directory_and_directories_in_order() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        home.path(),
        "z.rules",
        "prefix_rule(pattern=[\"git\"], justification=\"home z\")\n",
    );
    write(
        home.path(),
        "a.rules",
        "prefix_rule(pattern=[\"git\"], justification=\"home a\")\n",
    );
    write(
        project.path(),
        "0.rules",
        "prefix_rule(pattern=[\"git\"], justification=\"project 0\")\n",
    );
    let missing = home.path().join("does-not-exist");

    let (policy, errors) = Policy::load_dirs(&[
        home.path().to_path_buf(),
        missing,
        project.path().to_path_buf(),
    ]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!policy.has_load_errors());
    let order: Vec<String> = policy
        .check(&argv(&["git"]))
        .matched_rules
        .iter()
        .filter_map(|m| m.justification.clone())
        .collect();
    assert_eq!(order, vec!["home a", "home z", "project 0"]);
}

#[test]
fn host_executables_from_earlier_files_apply_to_later_examples() {
    let home = tempfile::tempdir().unwrap();
    write(
        home.path(),
        "a.rules",
        "host_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n",
    );
    let b = write(
        home.path(),
        "b.rules",
        "prefix_rule(pattern=[\"git\"], match=[\"/opt/git log\"])\n",
    );
    let (_, errors) = Policy::load_dirs(&[home.path().to_path_buf()]);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].path(), b.as_path());
}

#[test]
fn a_file_given_as_directory_is_reported() {
    let home = tempfile::tempdir().unwrap();
    let file = write(home.path(), "x.rules", "");
    let (policy, errors) = Policy::load_dirs(std::slice::from_ref(&file));
    assert_eq!(errors.len(), 1);
    assert!(matches!(&errors[0], LoadError::ReadDir { dir, .. } if *dir == file));
    assert!(policy.has_load_errors());
}
