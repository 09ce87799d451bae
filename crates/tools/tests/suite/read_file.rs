//! read_file: slices, limits, long lines, encodings, and every bad input.

use std::path::{Path, PathBuf};

use osprey_tools::{FileToolError, IndentationArgs, ReadFileArgs, ReadMode, read_file};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

fn args(path: &Path) -> ReadFileArgs {
    ReadFileArgs {
        file_path: path.display().to_string(),
        offset: None,
        limit: None,
        mode: None,
        indentation: None,
    }
}

fn write(dir: &TempDir, name: &str, contents: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn reads_numbered_lines_and_honours_offset_and_limit() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "a.txt", b"alpha\nbeta\r\ngamma\ndelta");
    assert_eq!(
        read_file(&args(&path), dir.path()).unwrap(),
        "L1: alpha\nL2: beta\nL3: gamma\nL4: delta"
    );
    let slice = ReadFileArgs {
        offset: Some(2),
        limit: Some(2),
        ..args(&path)
    };
    assert_eq!(
        read_file(&slice, dir.path()).unwrap(),
        "L2: beta\nL3: gamma"
    );
}

#[test]
fn default_limit_is_2000_lines() {
    let dir = TempDir::new().unwrap();
    let text: String = (1..=2500).map(|n| format!("{n}\n")).collect();
    let path = write(&dir, "many.txt", text.as_bytes());
    let out = read_file(&args(&path), dir.path()).unwrap();
    assert_eq!(out.lines().count(), 2000);
    assert_eq!(out.lines().last(), Some("L2000: 2000"));
}

#[test]
fn long_lines_are_cut_at_500_bytes_on_a_char_boundary() {
    let dir = TempDir::new().unwrap();
    let line = format!("{}é{}", "x".repeat(499), "y".repeat(100));
    let path = write(&dir, "long.txt", line.as_bytes());
    assert_eq!(
        read_file(&args(&path), dir.path()).unwrap(),
        format!("L1: {}", "x".repeat(499))
    );
}

#[test]
fn non_utf8_is_decoded_lossily_with_a_note() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "latin1.txt", b"caf\xe9\nplain\n");
    assert_eq!(
        read_file(&args(&path), dir.path()).unwrap(),
        format!(
            "L1: caf\u{FFFD}\nL2: plain\nNote: {} is not valid UTF-8; bytes that could not be \
             decoded are shown as \u{FFFD}.",
            path.display()
        )
    );
}

#[test]
fn binary_files_are_refused_in_plain_words() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "blob.bin", b"\x7fELF\x02\x01\x00\x00rest");
    let err = read_file(&args(&path), dir.path()).unwrap_err();
    assert!(matches!(err, FileToolError::BinaryFile { .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "{} looks like a binary file (it contains NUL bytes), so read_file will not show it; \
             inspect it with a command such as `file` or `xxd` through exec_command instead",
            path.display()
        )
    );
}

#[test]
fn relative_path_is_refused_with_the_absolute_suggestion() {
    let dir = TempDir::new().unwrap();
    let rel = ReadFileArgs {
        file_path: "src/main.rs".into(),
        ..args(dir.path())
    };
    let err = read_file(&rel, dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`file_path` must be an absolute path, but \"src/main.rs\" is relative; relative to \
             the working directory that is {:?}, so pass that instead",
            dir.path().join("src/main.rs").display().to_string()
        )
    );
}

#[test]
fn missing_file_is_reported_with_a_place_to_look() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("nope/missing.txt");
    let err = read_file(&args(&path), dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} does not exist; the closest existing directory is {}; call list_dir on it to \
             see what is there",
            path.display(),
            dir.path().display()
        )
    );
}

#[test]
fn a_directory_is_refused_with_a_list_dir_suggestion() {
    let dir = TempDir::new().unwrap();
    let err = read_file(&args(dir.path()), dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{0} is a directory, not a file; call list_dir with {{\"dir_path\": \"{0}\"}} to see \
             its entries",
            dir.path().display()
        )
    );
}

#[test]
fn offset_past_the_end_names_the_line_count() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "three.txt", b"a\nb\nc\n");
    let err = read_file(
        &ReadFileArgs {
            offset: Some(10),
            ..args(&path)
        },
        dir.path(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "offset 10 is past the end: the file {} has 3 lines; use an offset between 1 and 3",
            path.display()
        )
    );
}

#[test]
fn zero_offset_and_limit_are_refused() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "a.txt", b"a\n");
    let zero_offset = ReadFileArgs {
        offset: Some(0),
        ..args(&path)
    };
    assert_eq!(
        read_file(&zero_offset, dir.path()).unwrap_err().to_string(),
        "invalid `offset` for read_file: line numbers start at 1; pass 1 to read from the top"
    );
    let zero_limit = ReadFileArgs {
        limit: Some(0),
        ..args(&path)
    };
    assert_eq!(
        read_file(&zero_limit, dir.path()).unwrap_err().to_string(),
        "invalid `limit` for read_file: must be at least 1"
    );
}

#[test]
fn an_empty_file_says_so() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "empty.txt", b"");
    assert_eq!(
        read_file(&args(&path), dir.path()).unwrap(),
        format!("Note: {} is empty.", path.display())
    );
}

#[test]
fn indentation_mode_returns_the_enclosing_block() {
    let dir = TempDir::new().unwrap();
    let source = "\
def outer():
    # prepare
    for item in items:
        if item:
            handle(item)
        else:
            skip(item)
    return None

def other():
    pass
";
    let path = write(&dir, "code.py", source.as_bytes());
    let call = |anchor: u64, levels: u64, siblings: bool| {
        read_file(
            &ReadFileArgs {
                offset: Some(anchor),
                mode: Some(ReadMode::Indentation),
                indentation: Some(IndentationArgs {
                    max_levels: Some(levels),
                    include_siblings: Some(siblings),
                    ..Default::default()
                }),
                ..args(&path)
            },
            dir.path(),
        )
        .unwrap()
    };
    // The floor-level line below the anchor closes the block; the next one is a sibling.
    assert_eq!(
        call(5, 1, false),
        "L4:         if item:\nL5:             handle(item)\nL6:         else:\nL7:             skip(item)"
    );
    // Above the anchor, only one floor-level line is taken unless siblings are wanted.
    assert_eq!(
        call(7, 1, false),
        "L5:             handle(item)\nL6:         else:\nL7:             skip(item)"
    );
    assert_eq!(
        call(7, 1, true),
        "L4:         if item:\nL5:             handle(item)\nL6:         else:\nL7:             skip(item)"
    );
    assert_eq!(
        call(5, 2, false),
        "L2:     # prepare\nL3:     for item in items:\nL4:         if item:\nL5:             \
         handle(item)\nL6:         else:\nL7:             skip(item)\nL8:     return None"
    );
    let whole = call(5, 0, false);
    assert!(whole.starts_with("L1: def outer():\n"));
    assert!(
        whole.ends_with("L10: def other():\nL11:     pass"),
        "{whole}"
    );
}

#[test]
fn indentation_mode_respects_max_lines_and_rejects_a_bad_anchor() {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, "f.rs", b"fn f() {\n    a();\n    b();\n    c();\n}\n");
    let capped = ReadFileArgs {
        mode: Some(ReadMode::Indentation),
        indentation: Some(IndentationArgs {
            anchor_line: Some(3),
            max_lines: Some(3),
            ..Default::default()
        }),
        ..args(&path)
    };
    assert_eq!(
        read_file(&capped, dir.path()).unwrap(),
        "L2:     a();\nL3:     b();\nL4:     c();"
    );
    let past = ReadFileArgs {
        mode: Some(ReadMode::Indentation),
        indentation: Some(IndentationArgs {
            anchor_line: Some(9),
            ..Default::default()
        }),
        ..args(&path)
    };
    assert!(
        read_file(&past, dir.path())
            .unwrap_err()
            .to_string()
            .starts_with("offset 9 is past the end")
    );
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test needs mkfifo to make a FIFO; std has no call for it"
)]
fn a_fifo_is_refused_instead_of_blocking() {
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipping: mkfifo is not available");
        return;
    }
    let err = read_file(&args(&fifo), dir.path()).unwrap_err();
    assert!(
        matches!(err, FileToolError::NotARegularFile { .. }),
        "{err}"
    );
}
