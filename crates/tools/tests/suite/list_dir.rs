//! list_dir: layout, markers, depth, stable pagination, and bad inputs.

use std::path::Path;

use osprey_tools::{ListDirArgs, list_dir};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

fn args(path: &Path) -> ListDirArgs {
    ListDirArgs {
        dir_path: path.display().to_string(),
        offset: None,
        limit: None,
        depth: None,
    }
}

/// A small tree with a name (`a-b`) that sorts between a directory and its children when paths
/// are compared as strings, to show children stay under their parent.
fn tree() -> TempDir {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("a/inner/deep")).unwrap();
    std::fs::write(root.join("a/x.txt"), "x").unwrap();
    std::fs::write(root.join("a/inner/deep/too-deep.txt"), "x").unwrap();
    std::fs::write(root.join("a-b"), "x").unwrap();
    std::fs::write(root.join("Cargo.toml"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
    dir
}

#[test]
fn lists_a_tree_with_markers_and_indentation() {
    let dir = tree();
    assert_eq!(
        list_dir(&args(dir.path()), dir.path()).unwrap(),
        format!(
            "Absolute path: {}\nCargo.toml\na/\n  inner/\n  x.txt\na-b\nlink@",
            dir.path().display()
        )
    );
}

#[test]
fn depth_one_lists_only_direct_entries_and_depth_three_goes_deeper() {
    let dir = tree();
    let shallow = ListDirArgs {
        depth: Some(1),
        ..args(dir.path())
    };
    assert_eq!(
        list_dir(&shallow, dir.path()).unwrap(),
        format!(
            "Absolute path: {}\nCargo.toml\na/\na-b\nlink@",
            dir.path().display()
        )
    );
    let deep = ListDirArgs {
        depth: Some(3),
        ..args(dir.path())
    };
    assert!(
        list_dir(&deep, dir.path())
            .unwrap()
            .contains("\n  inner/\n    deep/\n  x.txt\n")
    );
}

#[test]
fn special_files_are_marked_with_a_question_mark() {
    let dir = TempDir::new().unwrap();
    let socket = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    assert!(
        list_dir(&args(dir.path()), dir.path())
            .unwrap()
            .ends_with("\nsock?")
    );
}

#[test]
fn pages_are_stable_and_join_into_the_full_listing() {
    let dir = TempDir::new().unwrap();
    for i in 0..7 {
        let sub = dir.path().join(format!("d{i}"));
        std::fs::create_dir(&sub).unwrap();
        for j in 0..3 {
            std::fs::write(sub.join(format!("f{j}")), "").unwrap();
        }
    }
    let page = |offset: u64, limit: u64| {
        list_dir(
            &ListDirArgs {
                offset: Some(offset),
                limit: Some(limit),
                ..args(dir.path())
            },
            dir.path(),
        )
        .unwrap()
    };
    let body = |text: &str| -> Vec<String> {
        text.lines()
            .skip(1)
            .filter(|l| !l.starts_with("More than"))
            .map(str::to_string)
            .collect()
    };
    let all = page(1, 1000);
    assert_eq!(body(&all).len(), 28);
    assert!(!all.contains("More than"));

    let first = page(1, 10);
    assert!(first.ends_with("\nMore than 10 entries found; pass offset 11 to see the next page."));
    let mut joined = body(&first);
    joined.extend(body(&page(11, 10)));
    joined.extend(body(&page(21, 10)));
    assert_eq!(joined, body(&all));
    assert!(!page(21, 10).contains("More than"));
    assert_eq!(page(1, 10), first, "the same page twice is identical");
}

#[test]
fn an_empty_directory_lists_only_its_header() {
    let dir = TempDir::new().unwrap();
    assert_eq!(
        list_dir(&args(dir.path()), dir.path()).unwrap(),
        format!("Absolute path: {}", dir.path().display())
    );
}

#[test]
fn bad_inputs_get_plain_errors() {
    let dir = tree();
    let err = |args: ListDirArgs| list_dir(&args, dir.path()).unwrap_err().to_string();

    assert_eq!(
        err(ListDirArgs {
            dir_path: "a".into(),
            ..args(dir.path())
        }),
        format!(
            "`dir_path` must be an absolute path, but \"a\" is relative; relative to the working \
             directory that is {:?}, so pass that instead",
            dir.path().join("a").display().to_string()
        )
    );
    let missing = dir.path().join("missing");
    assert!(err(args(&missing)).starts_with(&format!("{} does not exist", missing.display())));
    let file = dir.path().join("Cargo.toml");
    assert_eq!(
        err(args(&file)),
        format!(
            "{0} is not a directory; call read_file with {{\"file_path\": \"{0}\"}} to read it",
            file.display()
        )
    );
    assert_eq!(
        err(ListDirArgs {
            offset: Some(50),
            ..args(dir.path())
        }),
        format!(
            "offset 50 is past the end: the directory {} has 6 entries; use an offset between 1 \
             and 6",
            dir.path().display()
        )
    );
    assert_eq!(
        err(ListDirArgs {
            offset: Some(0),
            ..args(dir.path())
        }),
        "invalid `offset` for list_dir: entry numbers start at 1; pass 1 for the first page"
    );
    assert!(
        err(ListDirArgs {
            depth: Some(0),
            ..args(dir.path())
        })
        .starts_with("invalid `depth` for list_dir: must be at least 1")
    );
    assert!(
        err(ListDirArgs {
            limit: Some(0),
            ..args(dir.path())
        })
        .starts_with("invalid `limit` for list_dir")
    );
}

#[test]
fn absurd_offsets_and_limits_stay_bounded() {
    let dir = tree();
    let err = list_dir(
        &ListDirArgs {
            offset: Some(u64::MAX),
            ..args(dir.path())
        },
        dir.path(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("at most 100000 entries"), "{err}");
    let all = list_dir(
        &ListDirArgs {
            limit: Some(u64::MAX),
            depth: Some(u64::MAX),
            ..args(dir.path())
        },
        dir.path(),
    )
    .unwrap();
    assert_eq!(all.lines().count(), 1 + 8);
}
