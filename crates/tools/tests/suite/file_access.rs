//! The `_in` file tools through a `FileAccess` that is not the local disk: an in-memory tree
//! under `/virtual` (which does not exist here, so any stray `std::fs` call would fail) that
//! records every call and refuses chosen paths.

use std::collections::{BTreeMap, HashSet};
use std::io::{self, Cursor};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use osprey_tools::{
    DirEntryInfo, EntryKind, FileAccess, FileMeta, FileToolError, GREP_WALK_LIMITS, GrepFilesArgs,
    IndentationArgs, ListDirArgs, MAX_FILE_READ_BYTES, MAX_GREP_FILE_BYTES, ReadFileArgs, ReadMode,
    WalkEntry, WalkError, WalkLimits, WalkListing, grep_files_in, list_dir_in,
    load_image_for_model_in, read_file_in,
};
use pretty_assertions::assert_eq;

enum Node {
    Dir,
    File { data: Vec<u8>, age_secs: u64 },
    Symlink(PathBuf),
}

/// An in-memory file system. `fail` paths refuse every call with "permission denied"; `huge`
/// files claim to be one byte over the tools' read limits and refuse to be read;
/// `truncate_walk` makes every walk say it was cut short.
#[derive(Default)]
struct MemFiles {
    nodes: BTreeMap<PathBuf, Node>,
    fail: HashSet<PathBuf>,
    huge: HashSet<PathBuf>,
    truncate_walk: bool,
    calls: Mutex<Vec<String>>,
}

impl MemFiles {
    fn new() -> Self {
        let mut fs = Self::default();
        fs.nodes.insert("/".into(), Node::Dir);
        fs
    }

    fn dir(mut self, path: &str) -> Self {
        for ancestor in Path::new(path).ancestors() {
            self.nodes.entry(ancestor.into()).or_insert(Node::Dir);
        }
        self
    }

    fn file(self, path: &str, data: &[u8], age_secs: u64) -> Self {
        let mut fs = self.dir(Path::new(path).parent().unwrap().to_str().unwrap());
        fs.nodes.insert(
            path.into(),
            Node::File {
                data: data.to_vec(),
                age_secs,
            },
        );
        fs
    }

    fn symlink(mut self, path: &str, target: &str) -> Self {
        self.nodes.insert(path.into(), Node::Symlink(target.into()));
        self
    }

    fn failing(mut self, path: &str) -> Self {
        self.fail.insert(path.into());
        self
    }

    fn huge(mut self, path: &str) -> Self {
        self.huge.insert(path.into());
        self
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }

    fn record(&self, call: &str, path: &Path) -> io::Result<()> {
        self.calls
            .lock()
            .unwrap()
            .push(format!("{call} {}", path.display()));
        if self.fail.contains(path) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        Ok(())
    }

    fn node(&self, path: &Path) -> io::Result<&Node> {
        self.nodes
            .get(path)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn kind(node: &Node) -> EntryKind {
        match node {
            Node::Dir => EntryKind::Directory,
            Node::File { .. } => EntryKind::File,
            Node::Symlink(_) => EntryKind::Symlink,
        }
    }

    fn children(&self, dir: &Path) -> Vec<(PathBuf, EntryKind)> {
        self.nodes
            .iter()
            .filter(|(path, _)| path.parent() == Some(dir) && path.as_path() != dir)
            .map(|(path, node)| (path.clone(), Self::kind(node)))
            .collect()
    }
}

impl FileAccess for MemFiles {
    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        self.record("metadata", path)?;
        let (target, is_symlink) = match self.node(path)? {
            Node::Symlink(target) => (self.nodes.get(target), true),
            node => (Some(node), false),
        };
        Ok(match target {
            // A dangling link, reported as an exec server reports it.
            None | Some(Node::Symlink(_)) => FileMeta {
                is_dir: false,
                is_file: false,
                is_symlink,
                len: 0,
                modified: None,
            },
            Some(Node::Dir) => FileMeta {
                is_dir: true,
                is_file: false,
                is_symlink,
                len: 0,
                modified: None,
            },
            Some(Node::File { data, age_secs }) => FileMeta {
                is_dir: false,
                is_file: true,
                is_symlink,
                len: if self.huge.contains(path) {
                    MAX_FILE_READ_BYTES.max(MAX_GREP_FILE_BYTES) + 1
                } else {
                    data.len() as u64
                },
                modified: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 - age_secs)),
            },
        })
    }

    fn read(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        self.record("read", path)?;
        let node = match self.node(path)? {
            Node::Symlink(target) => self.node(target)?,
            node => node,
        };
        match node {
            Node::File { .. } if self.huge.contains(path) => {
                Err(io::Error::from(io::ErrorKind::FileTooLarge))
            }
            Node::File { data, .. } if data.len() as u64 > max_bytes => {
                Err(io::Error::from(io::ErrorKind::FileTooLarge))
            }
            Node::File { data, .. } => Ok(data.clone()),
            _ => Err(io::Error::other("not a regular file")),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntryInfo>> {
        self.record("read_dir", path)?;
        let Node::Dir = self.node(path)? else {
            return Err(io::Error::other("not a directory"));
        };
        // Reverse name order: callers must sort.
        Ok(self
            .children(path)
            .into_iter()
            .rev()
            .map(|(child, kind)| DirEntryInfo {
                name: child.file_name().unwrap().to_owned(),
                kind,
            })
            .collect())
    }

    /// Lists each directory whole before going into its subdirectories, as an exec server's
    /// `fs/walk` does.
    fn walk(&self, root: &Path, limits: WalkLimits) -> io::Result<WalkListing> {
        self.record("walk", root)?;
        self.node(root)?;
        let mut listing = WalkListing {
            truncated: self.truncate_walk,
            ..WalkListing::default()
        };
        let mut stack = vec![(root.to_path_buf(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            if depth >= limits.max_depth {
                continue;
            }
            if dir != root && self.fail.contains(&dir) {
                listing.errors.push(WalkError {
                    path: dir,
                    message: "permission denied".into(),
                });
                continue;
            }
            let mut subdirs = Vec::new();
            for (path, kind) in self.children(&dir) {
                let hidden = path.file_name().unwrap().to_string_lossy().starts_with('.');
                if kind == EntryKind::Directory && hidden && limits.prune_hidden_directories {
                    continue;
                }
                if kind == EntryKind::Directory {
                    subdirs.push(path.clone());
                }
                listing.entries.push(WalkEntry { path, kind });
            }
            stack.extend(subdirs.into_iter().rev().map(|d| (d, depth + 1)));
        }
        Ok(listing)
    }
}

fn read_args(path: &str) -> ReadFileArgs {
    ReadFileArgs {
        file_path: path.into(),
        offset: None,
        limit: None,
        mode: None,
        indentation: None,
    }
}

fn grep_args(pattern: &str) -> GrepFilesArgs {
    GrepFilesArgs {
        pattern: pattern.into(),
        include: None,
        path: None,
        limit: None,
    }
}

fn list_args(path: &str) -> ListDirArgs {
    ListDirArgs {
        dir_path: path.into(),
        offset: None,
        limit: None,
        depth: None,
    }
}

fn cwd() -> &'static Path {
    Path::new("/virtual/repo")
}

#[test]
fn read_file_in_reads_through_the_trait_only() {
    let fs = MemFiles::new().file("/virtual/repo/a.rs", b"one\ntwo\r\nthree\n", 0);
    let args = ReadFileArgs {
        offset: Some(2),
        ..read_args("/virtual/repo/a.rs")
    };
    assert_eq!(
        read_file_in(&fs, &args, cwd()).unwrap(),
        "L2: two\nL3: three"
    );
    assert_eq!(
        fs.calls(),
        ["metadata /virtual/repo/a.rs", "read /virtual/repo/a.rs"]
    );
    let block = ReadFileArgs {
        mode: Some(ReadMode::Indentation),
        indentation: Some(IndentationArgs {
            anchor_line: Some(2),
            ..Default::default()
        }),
        ..read_args("/virtual/repo/f.rs")
    };
    let fs = MemFiles::new().file(
        "/virtual/repo/f.rs",
        b"fn f() {\n    body();\n}\nfn g() {}\n",
        0,
    );
    assert_eq!(
        read_file_in(&fs, &block, cwd()).unwrap(),
        "L1: fn f() {\nL2:     body();\nL3: }"
    );
}

#[test]
fn read_file_in_reports_what_the_file_system_refused() {
    let fs = MemFiles::new()
        .file("/virtual/repo/secret", b"x", 0)
        .file("/virtual/repo/blob", b"ab\0cd", 0)
        .file("/virtual/repo/big.log", b"small really", 0)
        .symlink("/virtual/repo/dangling", "/virtual/nowhere")
        .failing("/virtual/repo/secret")
        .huge("/virtual/repo/big.log");
    assert_eq!(
        read_file_in(&fs, &read_args("/virtual/repo/secret"), cwd())
            .unwrap_err()
            .to_string(),
        "could not read /virtual/repo/secret: permission denied"
    );
    assert!(matches!(
        read_file_in(&fs, &read_args("/virtual/repo/blob"), cwd()),
        Err(FileToolError::BinaryFile { .. })
    ));
    let too_large = read_file_in(&fs, &read_args("/virtual/repo/big.log"), cwd()).unwrap_err();
    assert!(
        too_large.to_string().starts_with(&format!(
            "/virtual/repo/big.log is {} bytes, more than the {MAX_FILE_READ_BYTES} bytes \
             read_file reads at once; read parts of it with exec_command",
            MAX_FILE_READ_BYTES.max(MAX_GREP_FILE_BYTES) + 1
        )),
        "{too_large}"
    );
    assert!(
        !fs.calls()
            .contains(&"read /virtual/repo/big.log".to_string()),
        "a file known to be too large is never read"
    );
    assert_eq!(
        read_file_in(&fs, &read_args("/virtual/repo/dangling"), cwd())
            .unwrap_err()
            .to_string(),
        "/virtual/repo/dangling does not exist; the closest existing directory is \
         /virtual/repo; call list_dir on it to see what is there"
    );
    assert!(matches!(
        read_file_in(&fs, &read_args("/virtual/repo"), cwd()),
        Err(FileToolError::IsADirectory { .. })
    ));
}

#[test]
fn list_dir_in_sorts_marks_and_skips_unreadable_subdirectories() {
    let fs = MemFiles::new()
        .file("/virtual/repo/b.txt", b"", 0)
        .file("/virtual/repo/a/inner.txt", b"", 0)
        .file("/virtual/repo/locked/hidden.txt", b"", 0)
        .symlink("/virtual/repo/link", "/virtual/repo/a")
        .failing("/virtual/repo/locked");
    assert_eq!(
        list_dir_in(&fs, &list_args("/virtual/repo"), cwd()).unwrap(),
        "Absolute path: /virtual/repo\na/\n  inner.txt\nb.txt\nlink@\nlocked/"
    );
    assert!(
        !fs.calls()
            .contains(&"read_dir /virtual/repo/link".to_string()),
        "symlinks are not followed"
    );
    let paged = ListDirArgs {
        offset: Some(2),
        limit: Some(2),
        ..list_args("/virtual/repo")
    };
    assert_eq!(
        list_dir_in(&fs, &paged, cwd()).unwrap(),
        "Absolute path: /virtual/repo\n  inner.txt\nb.txt\nMore than 2 entries found; pass \
         offset 4 to see the next page."
    );
    assert_eq!(
        list_dir_in(&fs, &list_args("/virtual/repo/locked"), cwd())
            .unwrap_err()
            .to_string(),
        "could not list /virtual/repo/locked: permission denied"
    );
    assert!(matches!(
        list_dir_in(&fs, &list_args("/virtual/repo/b.txt"), cwd()),
        Err(FileToolError::NotADirectory { .. })
    ));
    assert!(
        list_dir_in(&fs, &list_args("/virtual/gone"), cwd())
            .unwrap_err()
            .to_string()
            .starts_with(
                "/virtual/gone does not exist; the closest existing directory is /virtual;"
            )
    );
}

/// A repository under /virtual/repo: `.git` marks it, `.gitignore` drops `target/` and
/// `*.log`, `sub/.gitignore` re-admits `keep.log`, `.ignore` drops `vendor/`.
fn repo() -> MemFiles {
    MemFiles::new()
        .dir("/virtual/repo/.git")
        .file("/virtual/repo/.git/info/exclude", b"excluded.rs\n", 0)
        .file("/virtual/repo/.gitignore", b"target/\n*.log\n", 0)
        .file("/virtual/repo/.ignore", b"vendor/\n", 0)
        .file("/virtual/repo/old.rs", b"fn needle() {}\n", 300)
        .file("/virtual/repo/src/new.rs", b"// needle\n", 10)
        .file("/virtual/repo/src/mid.ts", b"needle\n", 100)
        .file("/virtual/repo/src/none.rs", b"nothing\n", 1)
        .file("/virtual/repo/target/built.rs", b"needle\n", 1)
        .file("/virtual/repo/vendor/dep.rs", b"needle\n", 1)
        .file("/virtual/repo/excluded.rs", b"needle\n", 1)
        .file("/virtual/repo/app.log", b"needle\n", 1)
        .file("/virtual/repo/sub/.gitignore", b"!keep.log\n", 0)
        .file("/virtual/repo/sub/keep.log", b"needle\n", 50)
        .file("/virtual/repo/.hidden.rs", b"needle\n", 1)
        .file("/virtual/repo/.config/x.rs", b"needle\n", 1)
        .file("/virtual/repo/data.bin", b"needle\0binary", 1)
        .symlink("/virtual/repo/link.rs", "/virtual/repo/old.rs")
}

#[test]
fn grep_files_in_applies_ignore_files_hidden_binary_and_mtime_order() {
    let fs = repo()
        .file("/virtual/repo/src/locked.rs", b"needle\n", 1)
        .failing("/virtual/repo/src/locked.rs");
    assert_eq!(
        grep_files_in(&fs, &grep_args("needle"), cwd()).unwrap(),
        "/virtual/repo/src/new.rs\n/virtual/repo/sub/keep.log\n/virtual/repo/src/mid.ts\n\
         /virtual/repo/old.rs"
    );
    let calls = fs.calls();
    let reads: Vec<&str> = calls
        .iter()
        .filter_map(|c| c.strip_prefix("read "))
        .filter(|p| !p.ends_with("ignore") && !p.ends_with("exclude"))
        .collect();
    let mut reads = reads;
    reads.sort();
    assert_eq!(
        reads,
        [
            "/virtual/repo/data.bin",
            "/virtual/repo/old.rs",
            "/virtual/repo/src/locked.rs",
            "/virtual/repo/src/mid.ts",
            "/virtual/repo/src/new.rs",
            "/virtual/repo/src/none.rs",
            "/virtual/repo/sub/keep.log",
        ],
        "ignored, hidden and symlinked files are never read"
    );
    assert_eq!(
        calls.iter().filter(|c| c.starts_with("walk ")).count(),
        1,
        "one walk, not one call per directory"
    );
}

#[test]
fn grep_files_in_gitignore_applies_only_inside_a_repository() {
    let fs = MemFiles::new()
        .file("/virtual/repo/.gitignore", b"*.rs\n", 0)
        .file("/virtual/repo/a.rs", b"needle\n", 0)
        .file("/virtual/repo/.ignore", b"b.rs\n", 0)
        .file("/virtual/repo/b.rs", b"needle\n", 0);
    assert_eq!(
        grep_files_in(&fs, &grep_args("needle"), cwd()).unwrap(),
        "/virtual/repo/a.rs"
    );
    // A `.gitignore` above the repository root does not apply inside it.
    let nested = MemFiles::new()
        .file("/virtual/.gitignore", b"*.rs\n", 0)
        .dir("/virtual/.git")
        .dir("/virtual/repo/.git")
        .file("/virtual/repo/a.rs", b"needle\n", 0);
    assert_eq!(
        grep_files_in(&nested, &grep_args("needle"), cwd()).unwrap(),
        "/virtual/repo/a.rs"
    );
}

#[test]
fn grep_files_in_include_glob_overrides_hidden_but_not_ignored_directories() {
    let fs = repo();
    let rs = GrepFilesArgs {
        include: Some("*.rs".into()),
        ..grep_args("needle")
    };
    assert_eq!(
        grep_files_in(&fs, &rs, cwd()).unwrap(),
        "/virtual/repo/.hidden.rs\n/virtual/repo/excluded.rs\n/virtual/repo/src/new.rs\n\
         /virtual/repo/old.rs"
    );
}

#[test]
fn grep_files_in_says_when_it_stopped_early() {
    let mut fs = repo().huge("/virtual/repo/src/mid.ts");
    fs.truncate_walk = true;
    assert_eq!(
        grep_files_in(&fs, &grep_args("needle"), cwd()).unwrap(),
        format!(
            "/virtual/repo/src/new.rs\n/virtual/repo/sub/keep.log\n/virtual/repo/old.rs\n\
             Note: the search stopped early: /virtual/repo holds more than {} entries or {} \
             directories, so some files were not searched; narrow `path` or `include`.\n\
             Note: 1 file(s) larger than {} MiB were not searched.",
            GREP_WALK_LIMITS.max_entries,
            GREP_WALK_LIMITS.max_directories,
            MAX_GREP_FILE_BYTES / (1024 * 1024)
        )
    );
    assert_eq!(
        grep_files_in(&repo(), &grep_args("haystack"), cwd()).unwrap(),
        "No matches found."
    );
}

#[test]
fn grep_files_in_single_file_missing_root_and_refused_walk() {
    let fs = repo().failing("/virtual/repo/src");
    let single = GrepFilesArgs {
        path: Some("target/built.rs".into()),
        ..grep_args("needle")
    };
    assert_eq!(
        grep_files_in(&fs, &single, cwd()).unwrap(),
        "/virtual/repo/target/built.rs",
        "a file named as the path is searched even if ignored"
    );
    let missing = GrepFilesArgs {
        path: Some("nope".into()),
        ..grep_args("needle")
    };
    assert_eq!(
        grep_files_in(&fs, &missing, cwd()).unwrap_err().to_string(),
        "/virtual/repo/nope does not exist; the closest existing directory is /virtual/repo; \
         call list_dir on it to see what is there"
    );
    let refused = GrepFilesArgs {
        path: Some("src".into()),
        ..grep_args("needle")
    };
    assert_eq!(
        grep_files_in(&fs, &refused, cwd()).unwrap_err().to_string(),
        "could not search /virtual/repo/src: permission denied"
    );
    // An unreadable subdirectory is skipped, as ripgrep skips it.
    assert_eq!(
        grep_files_in(&fs, &grep_args("needle"), cwd()).unwrap(),
        "/virtual/repo/sub/keep.log\n/virtual/repo/old.rs"
    );
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(width, height, |x, _| image::Rgba([x as u8, 0, 0, 255]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgba8(img)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

#[test]
fn view_image_in_reads_and_resizes_through_the_trait() {
    let fs = MemFiles::new()
        .file("/virtual/repo/shot.png", &png(300, 100), 0)
        .file("/virtual/repo/notes.txt", b"not an image", 0)
        .file("/virtual/repo/huge.png", &png(2, 2), 0)
        .huge("/virtual/repo/huge.png")
        .file("/virtual/repo/locked.png", &png(2, 2), 0)
        .failing("/virtual/repo/locked.png");
    let loaded = load_image_for_model_in(&fs, Path::new("/virtual/repo/shot.png"), 150).unwrap();
    assert_eq!(
        (loaded.width, loaded.height, loaded.resized),
        (150, 50, true)
    );
    assert!(loaded.data_url.starts_with("data:image/png;base64,"));
    assert!(matches!(
        load_image_for_model_in(&fs, Path::new("/virtual/repo/notes.txt"), 150),
        Err(FileToolError::NotAnImage { .. })
    ));
    assert!(matches!(
        load_image_for_model_in(&fs, Path::new("/virtual/repo/huge.png"), 150),
        Err(FileToolError::TooLarge {
            tool: "view_image",
            ..
        })
    ));
    assert_eq!(
        load_image_for_model_in(&fs, Path::new("/virtual/repo/locked.png"), 150)
            .unwrap_err()
            .to_string(),
        "could not read /virtual/repo/locked.png: permission denied"
    );
    assert!(matches!(
        load_image_for_model_in(&fs, Path::new("/virtual/repo"), 150),
        Err(FileToolError::NotAnImage { .. })
    ));
}
