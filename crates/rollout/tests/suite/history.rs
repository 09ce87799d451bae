//! Rebuilding the model's history and forking.

use super::{assistant, at, meta, turn_context, user, write_rollout};
use osprey_protocol::{ResponseItem, ThreadId, TurnId};
use osprey_rollout::{CompactedItem, RolloutError, RolloutItem, fork_rollout, read_rollout};
use pretty_assertions::assert_eq;

fn compacted(message: &str, replacement: Option<Vec<ResponseItem>>) -> RolloutItem {
    RolloutItem::Compacted(CompactedItem {
        message: message.to_string(),
        replacement_history: replacement,
    })
}

#[test]
fn compaction_replaces_what_came_before_it() {
    let home = tempfile::tempdir().unwrap();
    let kept = vec![
        ResponseItem::user_text("fix the bug"),
        ResponseItem::user_text("summary: looked at main.rs"),
    ];
    let path = write_rollout(
        home.path(),
        at(2, 10),
        meta("/w"),
        vec![
            turn_context("turn-1"),
            user("fix the bug"),
            assistant("looking"),
            compacted("old summary", None),
            user("between"),
            compacted("looked at main.rs", Some(kept.clone())),
            turn_context("turn-2"),
            user("now test it"),
            assistant("tests pass"),
        ],
    );
    let history = read_rollout(&path).unwrap().reconstruct_history();
    let mut expected = kept;
    expected.push(ResponseItem::user_text("now test it"));
    expected.push(ResponseItem::assistant_text("tests pass"));
    assert_eq!(history, expected);
}

#[test]
fn compaction_without_replacement_history_keeps_the_summary_as_a_user_message() {
    let home = tempfile::tempdir().unwrap();
    let path = write_rollout(
        home.path(),
        at(2, 10),
        meta("/w"),
        vec![
            user("a"),
            assistant("b"),
            compacted("we did a and b", None),
            user("c"),
        ],
    );
    assert_eq!(
        read_rollout(&path).unwrap().reconstruct_history(),
        vec![
            ResponseItem::user_text("we did a and b"),
            ResponseItem::user_text("c")
        ]
    );
}

fn three_turns(home: &std::path::Path) -> std::path::PathBuf {
    write_rollout(
        home,
        at(3, 9),
        meta("/w"),
        vec![
            turn_context("turn-1"),
            user("one"),
            assistant("1"),
            turn_context("turn-2"),
            user("two"),
            assistant("2"),
            turn_context("turn-3"),
            user("three"),
        ],
    )
}

#[test]
fn turns_are_counted_by_turn_context_records() {
    let home = tempfile::tempdir().unwrap();
    let contents = read_rollout(&three_turns(home.path())).unwrap();
    assert_eq!(
        contents.turn_ids(),
        vec![
            Some(TurnId("turn-1".into())),
            Some(TurnId("turn-2".into())),
            Some(TurnId("turn-3".into()))
        ]
    );
    assert_eq!(
        contents.last_turn_context().and_then(|c| c.turn_id.clone()),
        Some(TurnId("turn-3".into()))
    );
    assert_eq!(contents.history_before_turn(0).map(<[_]>::len), Some(0));
    assert_eq!(contents.history_before_turn(1).map(<[_]>::len), Some(3));
    assert_eq!(contents.history_before_turn(3).map(<[_]>::len), Some(8));
    assert_eq!(contents.history_before_turn(4), None);
    assert_eq!(contents.first_user_message().as_deref(), Some("one"));
}

#[test]
fn fork_before_a_turn_copies_the_earlier_records_under_a_new_id() {
    let home = tempfile::tempdir().unwrap();
    let source = three_turns(home.path());
    let original = read_rollout(&source).unwrap();
    let new_id = ThreadId::new();

    let forked = fork_rollout(home.path(), &source, Some(1), new_id).unwrap();
    assert_ne!(forked, source);
    assert!(
        forked
            .to_string_lossy()
            .ends_with(&format!("-{new_id}.jsonl"))
    );
    let copy = read_rollout(&forked).unwrap();
    assert_eq!(copy.meta.id, new_id);
    assert_eq!(copy.meta.forked_from_id, Some(original.meta.id));
    assert_eq!(copy.meta.cwd, original.meta.cwd);
    assert_eq!(copy.lines, original.lines[..3].to_vec());
    assert_eq!(
        copy.reconstruct_history(),
        vec![
            ResponseItem::user_text("one"),
            ResponseItem::assistant_text("1")
        ]
    );

    let whole = fork_rollout(home.path(), &source, None, ThreadId::new()).unwrap();
    assert_eq!(read_rollout(&whole).unwrap().lines, original.lines);

    let err = fork_rollout(home.path(), &source, Some(7), ThreadId::new()).unwrap_err();
    assert!(
        matches!(err, RolloutError::NoSuchTurn { available: 3, .. }),
        "{err}"
    );
}
