//! The `_in` tools over `LocalFiles` answer exactly as the plain local tools do on the same
//! tree: same text, same errors. The local grep uses `ignore`'s walker, the generic one applies
//! the ignore files itself, so this pins the two together.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

use osprey_tools::{
    GrepFilesArgs, IndentationArgs, ListDirArgs, LocalFiles, ReadFileArgs, ReadMode, grep_files,
    grep_files_in, list_dir, list_dir_in, load_image_for_model, load_image_for_model_in, read_file,
    read_file_in,
};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

fn write_aged(root: &Path, name: &str, contents: &[u8], age_secs: u64) {
    let path = root.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, contents).unwrap();
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(age_secs))
        .unwrap();
}

/// A repository with ignore files at several levels, a nested repository, hidden and binary
/// files, and symlinks.
fn tree() -> TempDir {
    let dir = TempDir::new().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    std::fs::write(root.join(".git/info/exclude"), "excluded.rs\n").unwrap();
    std::fs::write(
        root.join(".gitignore"),
        "target/\n*.log\n/generated\ninner.rs\n",
    )
    .unwrap();
    // A repository inside the repository: the outer `.gitignore` stops at its root.
    std::fs::create_dir_all(root.join("nested/.git")).unwrap();
    write_aged(root, "nested/.gitignore", b"other\n", 1);
    write_aged(root, "nested/inner.rs", b"needle\n", 40);
    write_aged(root, "outer/inner.rs", b"needle\n", 1);
    std::fs::write(root.join(".ignore"), "vendor/\n").unwrap();
    write_aged(root, "old.rs", b"fn needle() {}\n", 300);
    write_aged(
        root,
        "src/lib.rs",
        b"mod a {\n    // helper\n    fn needle() {\n        body();\n    }\n}\n",
        10,
    );
    write_aged(root, "src/mid.ts", b"const needle = 1;\n", 100);
    write_aged(root, "src/none.rs", b"nothing\n", 5);
    write_aged(
        root,
        "src/generated/g.rs",
        b"needle: not the root's /generated\n",
        20,
    );
    write_aged(root, "generated/g.rs", b"needle\n", 1);
    write_aged(root, "target/built.rs", b"needle\n", 1);
    write_aged(root, "vendor/dep.rs", b"needle\n", 1);
    write_aged(root, "excluded.rs", b"needle\n", 1);
    write_aged(root, "app.log", b"needle\n", 1);
    write_aged(root, "sub/.gitignore", b"!keep.log\nskip.rs\n", 1);
    write_aged(root, "sub/keep.log", b"needle\n", 50);
    write_aged(root, "sub/skip.rs", b"needle\n", 1);
    write_aged(root, "sub/deeper/skip.rs", b"needle\n", 1);
    write_aged(root, ".hidden.rs", b"needle\n", 2);
    write_aged(root, ".config/x.rs", b"needle\n", 1);
    write_aged(root, "data.bin", b"needle\0binary", 1);
    write_aged(root, "latin1.txt", b"caf\xe9 needle\n", 30);
    std::os::unix::fs::symlink(root.join("old.rs"), root.join("link.rs")).unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join("srclink")).unwrap();
    dir
}

fn same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    local: Result<T, osprey_tools::FileToolError>,
    generic: Result<T, osprey_tools::FileToolError>,
) {
    let show = |r: Result<T, osprey_tools::FileToolError>| r.map_err(|e| e.to_string());
    assert_eq!(show(local), show(generic), "{what}");
}

#[test]
fn read_file_in_matches_read_file() {
    let dir = tree();
    let root = dir.path();
    let at = |name: &str| root.join(name).display().to_string();
    let cases = [
        ReadFileArgs {
            file_path: at("src/lib.rs"),
            offset: None,
            limit: None,
            mode: None,
            indentation: None,
        },
        ReadFileArgs {
            file_path: at("src/lib.rs"),
            offset: Some(2),
            limit: Some(2),
            mode: None,
            indentation: None,
        },
        ReadFileArgs {
            file_path: at("src/lib.rs"),
            offset: Some(4),
            limit: None,
            mode: Some(ReadMode::Indentation),
            indentation: Some(IndentationArgs {
                max_levels: Some(1),
                ..Default::default()
            }),
        },
        ReadFileArgs {
            file_path: at("src/lib.rs"),
            offset: Some(99),
            limit: None,
            mode: None,
            indentation: None,
        },
        ReadFileArgs {
            file_path: at("latin1.txt"),
            offset: None,
            limit: None,
            mode: None,
            indentation: None,
        },
        ReadFileArgs {
            file_path: at("data.bin"),
            offset: None,
            limit: None,
            mode: None,
            indentation: None,
        },
        ReadFileArgs {
            file_path: at("src"),
            offset: None,
            limit: None,
            mode: None,
            indentation: None,
        },
        ReadFileArgs {
            file_path: at("src/missing.rs"),
            offset: None,
            limit: None,
            mode: None,
            indentation: None,
        },
        ReadFileArgs {
            file_path: "src/lib.rs".into(),
            offset: None,
            limit: None,
            mode: None,
            indentation: None,
        },
    ];
    for args in cases {
        same(
            &format!("{args:?}"),
            read_file(&args, root),
            read_file_in(&LocalFiles, &args, root),
        );
    }
}

#[test]
fn list_dir_in_matches_list_dir() {
    let dir = tree();
    let root = dir.path();
    let args = |path: &Path, offset, limit, depth| ListDirArgs {
        dir_path: path.display().to_string(),
        offset,
        limit,
        depth,
    };
    let cases = [
        args(root, None, None, None),
        args(root, None, Some(500), Some(5)),
        args(root, Some(3), Some(4), Some(3)),
        args(root, Some(10_000), None, None),
        args(&root.join("sub"), None, None, Some(1)),
        args(&root.join("old.rs"), None, None, None),
        args(&root.join("gone/deeper"), None, None, None),
    ];
    for args in cases {
        same(
            &format!("{args:?}"),
            list_dir(&args, root),
            list_dir_in(&LocalFiles, &args, root),
        );
    }
}

#[test]
fn grep_files_in_matches_grep_files_with_ignore_files() {
    let dir = tree();
    let root = dir.path();
    let grep = |pattern: &str, include: Option<&str>, path: Option<&str>| GrepFilesArgs {
        pattern: pattern.into(),
        include: include.map(Into::into),
        path: path.map(Into::into),
        limit: None,
    };
    let everything = grep("needle", None, None);
    let local = grep_files(&everything, root).unwrap();
    // The tree really exercises the rules: the .gitignore'd, .ignore'd, excluded, hidden,
    // binary and nested-ignored files are all absent, the re-admitted one present.
    let names: Vec<String> = local
        .lines()
        .map(|l| {
            Path::new(l)
                .strip_prefix(root)
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(
        names,
        [
            "src/lib.rs",
            "src/generated/g.rs",
            "latin1.txt",
            "nested/inner.rs",
            "sub/keep.log",
            "src/mid.ts",
            "old.rs"
        ]
    );
    let cases = [
        everything,
        grep("needle", Some("*.rs"), None),
        grep("needle", Some("*.{ts,log}"), None),
        grep("needle", Some("!*.rs"), None),
        grep("needle", None, Some("sub")),
        grep("needle", None, Some("target/built.rs")),
        grep(r"fn \w+\(", None, None),
        grep("haystack", None, None),
        grep("needle", None, Some("nowhere")),
        grep("fn (", None, None),
        grep("needle", Some("[abc"), None),
        GrepFilesArgs {
            limit: Some(2),
            ..grep("needle", None, None)
        },
    ];
    for args in cases {
        same(
            &format!("{args:?}"),
            grep_files(&args, root),
            grep_files_in(&LocalFiles, &args, root),
        );
    }
}

#[test]
fn view_image_in_matches_view_image() {
    let dir = TempDir::new().unwrap();
    let img = image::RgbaImage::from_fn(64, 32, |x, y| image::Rgba([x as u8, y as u8, 9, 255]));
    let png = dir.path().join("a.png");
    img.save(&png).unwrap();
    std::fs::write(dir.path().join("t.txt"), "text").unwrap();
    for (path, max) in [
        (png.clone(), 2048),
        (png, 16),
        (dir.path().join("t.txt"), 16),
        (dir.path().join("none.png"), 16),
    ] {
        same(
            &path.display().to_string(),
            load_image_for_model(&path, max),
            load_image_for_model_in(&LocalFiles, &path, max),
        );
    }
}
