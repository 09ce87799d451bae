//! Shared helpers: corpus cases, tree copies and byte-exact snapshots.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One corpus case: `patch.txt`, an `input/` tree, `case.txt` with the
/// expected exit code and, for intended differences from Codex, Codex's exit
/// code and the reason; `expected/` holds our resulting tree on success.
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub patch: String,
    pub exit: i32,
    pub codex_exit: Option<i32>,
    pub difference: Option<String>,
}

pub fn corpus() -> Vec<Case> {
    corpus_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus"))
}

/// The cases under `root`, in name order. The CLI's test suite includes this file to run
/// the same corpus through the built `osprey` binary.
pub fn corpus_in(root: &Path) -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let patch = std::fs::read_to_string(dir.join("patch.txt")).unwrap();
            let meta = std::fs::read_to_string(dir.join("case.txt")).unwrap();
            let mut exit = None;
            let mut codex_exit = None;
            let mut difference = None;
            for line in meta.lines() {
                match line.split_once('=') {
                    Some(("exit", v)) => exit = Some(v.parse().unwrap()),
                    Some(("codex_exit", v)) => codex_exit = Some(v.parse().unwrap()),
                    Some(("difference", v)) => difference = Some(v.to_string()),
                    _ => panic!("bad line in {}: {line}", dir.display()),
                }
            }
            Case {
                name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                dir,
                patch,
                exit: exit.expect("case.txt has exit="),
                codex_exit,
                difference,
            }
        })
        .collect()
}

/// A temp dir holding `tree/` (the working directory) so escapes from the
/// tree land in the snapshot too.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub tree: PathBuf,
}

impl Sandbox {
    pub fn from_case(case: &Case) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let tree = root.join("tree");
        std::fs::create_dir(&tree).unwrap();
        let input = case.dir.join("input");
        if input.exists() {
            copy_tree(&input, &tree);
        }
        Sandbox {
            _dir: dir,
            root,
            tree,
        }
    }
}

pub fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&src).unwrap();
        if meta.file_type().is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if meta.is_dir() {
            std::fs::create_dir(&dst).unwrap();
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File { bytes: Vec<u8>, mode: u32 },
    Link(PathBuf),
}

/// Every entry under `root`, byte for byte, with permission bits.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            out.insert(rel, Entry::Link(std::fs::read_link(&path).unwrap()));
        } else if meta.is_dir() {
            out.insert(rel, Entry::Dir);
            walk(root, &path, out);
        } else {
            out.insert(
                rel,
                Entry::File {
                    bytes: std::fs::read(&path).unwrap(),
                    mode: mode(&meta),
                },
            );
        }
    }
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode(_meta: &std::fs::Metadata) -> u32 {
    0
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs our CLI entry in-process with the patch as its one argument.
pub fn run_ours(patch: &str, cwd: &Path) -> Run {
    run_ours_args(&[OsString::from(patch)], b"", cwd)
}

pub fn run_ours_args(args: &[OsString], stdin: &[u8], cwd: &Path) -> Run {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut input = stdin;
    let code = osprey_apply_patch::run_cli(args, &mut input, &mut out, &mut err, cwd);
    Run {
        code,
        stdout: String::from_utf8(out).unwrap(),
        stderr: String::from_utf8(err).unwrap(),
    }
}
