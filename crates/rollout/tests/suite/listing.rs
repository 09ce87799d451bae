//! Finding and listing threads, and the index behind listing.

use super::{assistant, at, meta, turn_context, user, write_rollout};
use osprey_protocol::{ResponseItem, ThreadId};
use osprey_rollout::{
    INDEX_FILE, ListOptions, RolloutItem, RolloutRecorder, SessionSummary, find_latest_rollout,
    find_rollout_by_id, list_sessions, sessions_dir,
};
use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};

fn env_context() -> RolloutItem {
    RolloutItem::ResponseItem(ResponseItem::user_text(
        "<environment_context>\n  <cwd>/a</cwd>\n</environment_context>",
    ))
}

fn agents_md() -> RolloutItem {
    RolloutItem::ResponseItem(ResponseItem::user_text(
        "# AGENTS.md instructions for /a\n\nbe nice",
    ))
}

struct Fixture {
    home: tempfile::TempDir,
    /// Oldest first.
    paths: Vec<PathBuf>,
}

fn fixture() -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let paths = vec![
        write_rollout(home.path(), at(1, 8), meta("/a"), vec![user("oldest in a")]),
        write_rollout(
            home.path(),
            at(2, 8),
            meta("/b"),
            vec![
                turn_context("t1"),
                agents_md(),
                env_context(),
                user("  in b  "),
                assistant("ok"),
            ],
        ),
        write_rollout(home.path(), at(3, 8), meta("/a"), vec![env_context()]),
        write_rollout(home.path(), at(3, 9), meta("/a"), vec![user("newest in a")]),
    ];
    Fixture { home, paths }
}

fn firsts(list: &[SessionSummary]) -> Vec<Option<&str>> {
    list.iter()
        .map(|s| s.first_user_message.as_deref())
        .collect()
}

#[test]
fn lists_newest_first_with_the_first_typed_prompt() {
    let f = fixture();
    let all = list_sessions(f.home.path(), &ListOptions::default()).unwrap();
    assert_eq!(
        firsts(&all),
        vec![Some("newest in a"), None, Some("in b"), Some("oldest in a")]
    );
    let paths: Vec<&Path> = all.iter().map(|s| s.path.as_path()).collect();
    let expected: Vec<&Path> = f.paths.iter().rev().map(PathBuf::as_path).collect();
    assert_eq!(paths, expected);
    assert_eq!(all[0].model_provider.as_deref(), Some("openai"));
    assert_eq!(all[0].timestamp, "2025-06-03T09:00:00.000Z");

    let in_a = ListOptions {
        cwd: Some("/a".into()),
        limit: Some(2),
    };
    let listed = list_sessions(f.home.path(), &in_a).unwrap();
    assert_eq!(firsts(&listed), vec![Some("newest in a"), None]);
}

#[test]
fn long_prompts_are_cut_to_200_characters() {
    let home = tempfile::tempdir().unwrap();
    let long = "ä".repeat(500);
    write_rollout(home.path(), at(1, 1), meta("/a"), vec![user(&long)]);
    let listed = list_sessions(home.path(), &ListOptions::default()).unwrap();
    let first = listed[0].first_user_message.clone().unwrap();
    assert_eq!(first.chars().count(), 200);
    assert!(first.ends_with('…'));
}

#[test]
fn find_by_id_and_latest_with_a_cwd_filter() {
    let f = fixture();
    for path in &f.paths {
        let contents = osprey_rollout::read_rollout(path).unwrap();
        assert_eq!(
            find_rollout_by_id(f.home.path(), &contents.meta.id)
                .unwrap()
                .as_ref(),
            Some(path)
        );
    }
    assert_eq!(
        find_rollout_by_id(f.home.path(), &ThreadId::new()).unwrap(),
        None
    );
    assert_eq!(
        find_latest_rollout(f.home.path(), None).unwrap().as_ref(),
        Some(&f.paths[3])
    );
    assert_eq!(
        find_latest_rollout(f.home.path(), Some(Path::new("/b")))
            .unwrap()
            .as_ref(),
        Some(&f.paths[1])
    );
    assert_eq!(
        find_latest_rollout(f.home.path(), Some(Path::new("/c"))).unwrap(),
        None
    );
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(find_latest_rollout(empty.path(), None).unwrap(), None);
}

#[tokio::test]
async fn a_thread_created_now_is_found_through_its_id_date() {
    let home = tempfile::tempdir().unwrap();
    let header = meta("/a");
    let id = header.id;
    let recorder = RolloutRecorder::create(home.path(), header).unwrap();
    let found = find_rollout_by_id(home.path(), &id).unwrap();
    assert_eq!(found.as_deref(), Some(recorder.path()));
    recorder.shutdown().await.unwrap();
}

#[test]
fn the_index_is_rebuilt_when_missing_or_corrupt_and_follows_the_files() {
    let f = fixture();
    let index = sessions_dir(f.home.path()).join(INDEX_FILE);
    let expected = list_sessions(f.home.path(), &ListOptions::default()).unwrap();
    assert!(index.exists(), "listing writes the index");
    assert_eq!(
        list_sessions(f.home.path(), &ListOptions::default()).unwrap(),
        expected
    );

    std::fs::remove_file(&index).unwrap();
    assert_eq!(
        list_sessions(f.home.path(), &ListOptions::default()).unwrap(),
        expected
    );
    assert!(index.exists());

    std::fs::write(&index, "{\"osprey_session_index\":1}\nnot json\n").unwrap();
    assert_eq!(
        list_sessions(f.home.path(), &ListOptions::default()).unwrap(),
        expected
    );
    let rewritten = std::fs::read_to_string(&index).unwrap();
    assert!(!rewritten.contains("not json"));

    // A complete entry is served from the index without reading its file (this is what
    // keeps listing fast), so an edited entry shows through.
    let text = std::fs::read_to_string(&index).unwrap();
    std::fs::write(&index, text.replace("oldest in a", "from the index")).unwrap();
    let listed = list_sessions(f.home.path(), &ListOptions::default()).unwrap();
    assert_eq!(
        listed[3].first_user_message.as_deref(),
        Some("from the index")
    );

    // An entry without a first message is re-read once its file grows.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&f.paths[2])
        .unwrap();
    let mut line = Vec::new();
    osprey_rollout::RolloutLine::new("t".into(), user("now typed"))
        .write_to(&mut line)
        .unwrap();
    std::io::Write::write_all(&mut file, &line).unwrap();
    let listed = list_sessions(f.home.path(), &ListOptions::default()).unwrap();
    assert_eq!(listed[1].first_user_message.as_deref(), Some("now typed"));

    // New files appear, removed files disappear (from the listing and the index).
    std::fs::remove_file(&f.paths[0]).unwrap();
    write_rollout(f.home.path(), at(4, 1), meta("/d"), vec![user("brand new")]);
    let listed = list_sessions(f.home.path(), &ListOptions::default()).unwrap();
    assert_eq!(
        firsts(&listed),
        vec![
            Some("brand new"),
            Some("newest in a"),
            Some("now typed"),
            Some("in b")
        ]
    );
    let text = std::fs::read_to_string(&index).unwrap();
    assert_eq!(text.lines().count(), 1 + 4);
    assert!(!text.contains("oldest in a"));
}

#[test]
fn a_rollout_copied_alone_into_an_empty_home_is_found_and_listed() {
    let f = fixture();
    let source = &f.paths[1];
    let id = osprey_rollout::read_rollout(source).unwrap().meta.id;
    for relative in [
        source.strip_prefix(f.home.path()).unwrap().to_path_buf(),
        PathBuf::from("sessions").join(source.file_name().unwrap()),
    ] {
        let home = tempfile::tempdir().unwrap();
        let target = home.path().join(&relative);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(source, &target).unwrap();
        assert_eq!(
            find_rollout_by_id(home.path(), &id).unwrap(),
            Some(target.clone())
        );
        let listed = list_sessions(home.path(), &ListOptions::default()).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, id);
        assert_eq!(listed[0].first_user_message.as_deref(), Some("in b"));
        assert_eq!(listed[0].path, target);
    }
}

#[test]
fn files_that_are_not_rollouts_are_left_out() {
    let f = fixture();
    let dir = f.paths[0].parent().unwrap();
    std::fs::write(
        dir.join(format!(
            "rollout-2025-06-01T09-00-00-{}.jsonl",
            ThreadId::new()
        )),
        "junk\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    let listed = list_sessions(f.home.path(), &ListOptions::default()).unwrap();
    assert_eq!(listed.len(), 4);
}

#[test]
fn a_header_with_huge_base_instructions_is_still_listed() {
    let home = tempfile::tempdir().unwrap();
    let mut header = meta("/a");
    header.base_instructions = Some(osprey_rollout::BaseInstructions {
        text: "x".repeat(3 * 1024 * 1024),
    });
    write_rollout(
        home.path(),
        at(1, 1),
        header,
        vec![env_context(), user("big")],
    );
    let listed = list_sessions(home.path(), &ListOptions::default()).unwrap();
    assert_eq!(firsts(&listed), vec![Some("big")]);
}

#[tokio::test]
async fn the_file_name_follows_the_header_time() {
    let home = tempfile::tempdir().unwrap();
    let mut header = meta("/a");
    header.timestamp = "2024-02-29T23:59:58.500Z".to_string();
    let recorder = RolloutRecorder::create(home.path(), header.clone()).unwrap();
    let name = recorder
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        name,
        format!("rollout-2024-02-29T23-59-58-{}.jsonl", header.id)
    );
    assert!(recorder.path().parent().unwrap().ends_with("2024/02/29"));
    recorder.shutdown().await.unwrap();
}
