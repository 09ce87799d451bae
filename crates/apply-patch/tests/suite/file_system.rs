//! Patches applied through the `PatchFileSystem` seam: an in-memory file
//! system (standing in for a remote machine reached through an exec server's
//! `fs/*` calls) that can be told to refuse any operation on any path.

use std::collections::{BTreeMap, HashMap};
use std::fs::Permissions;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use osprey_apply_patch::{
    ApplyError, EntryKind, LocalFileSystem, PatchFileSystem, apply_verified_in, parse_patch,
    verify_patch_in,
};
use pretty_assertions::assert_eq;

use super::common::{Sandbox, corpus, run_ours};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir,
    File {
        bytes: Vec<u8>,
        version: u64,
    },
    /// A link the file system can report but neither read nor create, like
    /// a symlink seen through an exec server's `fs/getMetadata`.
    Link,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    Entry,
    Read,
    Write,
    RemoveFile,
    CreateDir,
}

/// A HashMap-backed file system with no links to follow, no permission bits
/// and no staging: only what a remote exec server offers.
struct MemFs {
    nodes: Mutex<HashMap<PathBuf, Node>>,
    /// (operation, path) → how many calls succeed before every later one fails.
    failures: Mutex<HashMap<(Op, PathBuf), usize>>,
    clock: AtomicU64,
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} does not exist", path.display()),
    )
}

impl MemFs {
    fn new() -> Self {
        let fs = MemFs {
            nodes: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
            clock: AtomicU64::new(1),
        };
        fs.mkdir_all(Path::new("/mem/tree"));
        fs
    }

    fn root() -> PathBuf {
        PathBuf::from("/mem/tree")
    }

    fn mkdir_all(&self, path: &Path) {
        let mut cur = PathBuf::new();
        for c in path.components() {
            cur.push(c);
            self.nodes.lock().unwrap().insert(cur.clone(), Node::Dir);
        }
    }

    fn put(&self, rel: &str, bytes: &[u8]) {
        let path = Self::root().join(rel);
        self.mkdir_all(path.parent().unwrap());
        let version = self.clock.fetch_add(1, Ordering::Relaxed);
        self.nodes.lock().unwrap().insert(
            path,
            Node::File {
                bytes: bytes.to_vec(),
                version,
            },
        );
    }

    fn put_link(&self, rel: &str) {
        self.nodes
            .lock()
            .unwrap()
            .insert(Self::root().join(rel), Node::Link);
    }

    /// `op` on `rel` succeeds `after` more times, then fails.
    fn fail(&self, op: Op, rel: &str, after: usize) {
        self.failures
            .lock()
            .unwrap()
            .insert((op, Self::root().join(rel)), after);
    }

    fn check(&self, op: Op, path: &Path) -> io::Result<()> {
        let mut failures = self.failures.lock().unwrap();
        match failures.get_mut(&(op, normalize(path))) {
            Some(0) => Err(io::Error::other(format!(
                "the file system refused {op:?} (no space left on device)"
            ))),
            Some(n) => {
                *n -= 1;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The node at `path`: NotFound / NotADirectory when it or an ancestor is
    /// missing or an ancestor is not a directory.
    fn lookup(&self, path: &Path) -> io::Result<Node> {
        let path = normalize(path);
        let nodes = self.nodes.lock().unwrap();
        for ancestor in path.ancestors().skip(1) {
            match nodes.get(ancestor) {
                Some(Node::Dir) => {}
                Some(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("{} is not a directory", ancestor.display()),
                    ));
                }
                None => return Err(not_found(ancestor)),
            }
        }
        nodes.get(&path).cloned().ok_or_else(|| not_found(&path))
    }

    fn parent_is_dir(&self, path: &Path) -> io::Result<()> {
        match path.parent().map(|p| self.lookup(p)) {
            Some(Ok(Node::Dir)) => Ok(()),
            _ => Err(not_found(path.parent().unwrap_or(path))),
        }
    }

    /// Every file and directory under the tree, relative to it.
    fn snapshot(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        let root = Self::root();
        self.nodes
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(path, node)| {
                let rel = path.strip_prefix(&root).ok()?.to_path_buf();
                let bytes = match node {
                    Node::File { bytes, .. } => Some(bytes.clone()),
                    Node::Dir | Node::Link => None,
                };
                (!rel.as_os_str().is_empty()).then_some((rel, bytes))
            })
            .collect()
    }

    fn text(&self, rel: &str) -> Option<String> {
        match self.lookup(&Self::root().join(rel)) {
            Ok(Node::File { bytes, .. }) => Some(String::from_utf8(bytes).unwrap()),
            _ => None,
        }
    }
}

impl PatchFileSystem for MemFs {
    fn entry(&self, path: &Path) -> io::Result<Option<EntryKind>> {
        self.check(Op::Entry, path)?;
        match self.lookup(path) {
            Ok(Node::Dir) => Ok(Some(EntryKind::Directory)),
            Ok(Node::Link) => Ok(Some(EntryKind::Symlink)),
            Ok(Node::File { bytes, version }) => Ok(Some(EntryKind::File {
                len: bytes.len() as u64,
                modified: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(version)),
                permissions: None,
            })),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        self.lookup(path).map(|node| node == Node::Dir)
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.check(Op::Read, path)?;
        match self.lookup(path)? {
            Node::File { bytes, .. } => Ok(bytes),
            Node::Dir | Node::Link => Err(io::Error::other("not a regular file")),
        }
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.lookup(path)?;
        Ok(normalize(path))
    }

    fn write_atomic(
        &self,
        path: &Path,
        bytes: &[u8],
        _permissions: Option<&Permissions>,
    ) -> io::Result<()> {
        self.check(Op::Write, path)?;
        self.parent_is_dir(path)?;
        if matches!(self.lookup(path), Ok(Node::Dir)) {
            return Err(io::Error::other("is a directory"));
        }
        let version = self.clock.fetch_add(1, Ordering::Relaxed);
        self.nodes.lock().unwrap().insert(
            normalize(path),
            Node::File {
                bytes: bytes.to_vec(),
                version,
            },
        );
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(Op::RemoveFile, path)?;
        match self.lookup(path)? {
            Node::File { .. } | Node::Link => {
                self.nodes.lock().unwrap().remove(&normalize(path));
                Ok(())
            }
            Node::Dir => Err(io::Error::other("is a directory")),
        }
    }

    fn create_dir(&self, path: &Path) -> io::Result<()> {
        self.check(Op::CreateDir, path)?;
        self.parent_is_dir(path)?;
        if self.lookup(path).is_ok() {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "exists"));
        }
        self.nodes
            .lock()
            .unwrap()
            .insert(normalize(path), Node::Dir);
        Ok(())
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        let path = normalize(path);
        let mut nodes = self.nodes.lock().unwrap();
        if nodes.keys().any(|p| p.parent() == Some(path.as_path())) {
            return Err(io::Error::other("directory not empty"));
        }
        match nodes.get(&path) {
            Some(Node::Dir) => {
                nodes.remove(&path);
                Ok(())
            }
            _ => Err(not_found(&path)),
        }
    }
}

fn apply(fs: &MemFs, patch: &str) -> Result<String, ApplyError> {
    let patch = parse_patch(patch)?;
    let root = MemFs::root();
    let verified = verify_patch_in(fs, &patch, &root, Some(std::slice::from_ref(&root)))?;
    apply_verified_in(fs, &verified).map(|summary| summary.text)
}

fn seeded() -> MemFs {
    let fs = MemFs::new();
    fs.put("a.txt", b"a1\na2\n");
    fs.put("b.txt", b"b1\nb2\n");
    fs.put("gone.txt", b"bye\n");
    fs.put("dir/keep.txt", b"k\n");
    fs
}

const BIG: &str = "*** Begin Patch
*** Update File: a.txt
@@
-a1
+A1
*** Add File: new/dir/c.txt
+c
*** Delete File: gone.txt
*** Update File: b.txt
*** Move to: moved/b.txt
@@
-b2
+B2
*** End Patch";

#[test]
fn add_update_delete_and_move_go_through_the_file_system() {
    let fs = seeded();
    let text = apply(&fs, BIG).unwrap();
    assert_eq!(
        text,
        "Success. Updated the following files:\nA new/dir/c.txt\nM a.txt\nM moved/b.txt\nD gone.txt\n"
    );
    let file = |b: &[u8]| Some(b.to_vec());
    assert_eq!(
        fs.snapshot(),
        BTreeMap::from([
            (PathBuf::from("a.txt"), file(b"A1\na2\n")),
            (PathBuf::from("dir"), None),
            (PathBuf::from("dir/keep.txt"), file(b"k\n")),
            (PathBuf::from("moved"), None),
            (PathBuf::from("moved/b.txt"), file(b"b1\nB2\n")),
            (PathBuf::from("new"), None),
            (PathBuf::from("new/dir"), None),
            (PathBuf::from("new/dir/c.txt"), file(b"c\n")),
        ])
    );
}

#[test]
fn crlf_file_stays_crlf_through_the_file_system() {
    let fs = MemFs::new();
    fs.put("w.txt", b"one\r\ntwo\r\nthree\r\n");
    apply(
        &fs,
        "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+TWO\n*** End Patch",
    )
    .unwrap();
    assert_eq!(fs.text("w.txt").unwrap(), "one\r\nTWO\r\nthree\r\n");
}

#[test]
fn a_write_failing_on_the_second_file_restores_the_first() {
    let fs = seeded();
    fs.fail(Op::Write, "b.txt", 0);
    let before = fs.snapshot();
    let err = apply(
        &fs,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** Update File: b.txt\n@@\n-b1\n+B1\n*** End Patch",
    )
    .unwrap_err();
    assert!(
        matches!(&err, ApplyError::Commit { restore_failures, .. } if restore_failures.is_empty()),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "Failed to replace /mem/tree/b.txt: the file system refused Write (no space left on \
         device); files already replaced were restored, so nothing was changed"
    );
    assert_eq!(fs.snapshot(), before);
}

#[test]
fn every_failing_step_rolls_back_created_files_and_directories() {
    for (op, rel) in [
        (Op::Write, "a.txt"),
        (Op::Write, "new/dir/c.txt"),
        (Op::RemoveFile, "gone.txt"),
        (Op::RemoveFile, "b.txt"),
        (Op::Write, "moved/b.txt"),
        (Op::CreateDir, "new/dir"),
        (Op::CreateDir, "moved"),
    ] {
        let fs = seeded();
        fs.fail(op, rel, 0);
        let before = fs.snapshot();
        let err = apply(&fs, BIG).expect_err("injected failure");
        assert!(
            matches!(
                &err,
                ApplyError::Commit { restore_failures, .. } if restore_failures.is_empty()
            ) || matches!(&err, ApplyError::Io { .. }),
            "{op:?} {rel}: {err}"
        );
        assert!(err.to_string().contains("nothing was changed"), "{err}");
        assert_eq!(fs.snapshot(), before, "{op:?} {rel}");
    }
}

#[test]
fn a_failed_restore_is_named_in_the_error() {
    let fs = seeded();
    // a.txt is written once (the patch) and then refuses the restore.
    fs.fail(Op::Write, "a.txt", 1);
    fs.fail(Op::Write, "b.txt", 0);
    let err = apply(
        &fs,
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** Update File: b.txt\n@@\n-b1\n+B1\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Failed to replace /mem/tree/b.txt: the file system refused Write (no space left on \
         device); these files could not be restored: /mem/tree/a.txt: the file system refused \
         Write (no space left on device)"
    );
    assert_eq!(fs.text("a.txt").unwrap(), "A1\na2\n");
}

#[test]
fn a_deleted_link_that_cannot_be_recreated_is_named_in_the_error() {
    let fs = seeded();
    fs.put_link("link");
    fs.fail(Op::Write, "a.txt", 0);
    let err = apply(
        &fs,
        "*** Begin Patch\n*** Delete File: link\n*** Update File: a.txt\n@@\n-a1\n+A1\n*** End Patch",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Failed to replace /mem/tree/a.txt: the file system refused Write (no space left on \
         device); these files could not be restored: /mem/tree/link: the link's target could not \
         be read before it was deleted, so it was not recreated"
    );
}

#[test]
fn a_file_changed_after_verification_is_refused() {
    let fs = seeded();
    let patch = parse_patch(BIG).unwrap();
    let root = MemFs::root();
    let verified = verify_patch_in(&fs, &patch, &root, None).unwrap();
    fs.put("b.txt", b"b1\nb2\n");
    let before = fs.snapshot();
    let err = apply_verified_in(&fs, &verified).unwrap_err();
    assert!(matches!(err, ApplyError::Changed { .. }), "{err}");
    assert_eq!(fs.snapshot(), before);
}

#[test]
fn refusals_of_the_file_system_are_reported_before_anything_is_written() {
    let fs = seeded();
    fs.fail(Op::Entry, "a.txt", 0);
    let err = apply(&fs, BIG).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "Failed to inspect /mem/tree/a.txt: the file system refused Entry (no space left on \
             device); nothing was changed"
        ),
        "{err}"
    );
    let fs = seeded();
    fs.fail(Op::Read, "b.txt", 0);
    let before = fs.snapshot();
    let err = apply(&fs, BIG).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("Failed to read /mem/tree/b.txt"),
        "{err}"
    );
    assert_eq!(fs.snapshot(), before);
}

/// Runs `patch` on a real directory holding `files` and on the in-memory one
/// holding the same, and returns both outcomes with the real root replaced
/// by the in-memory one.
fn both(files: &[(&str, &str)], dirs: &[&str], patch: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let real = base.join("tree");
    std::fs::create_dir(&real).unwrap();
    let fs = MemFs::new();
    for d in dirs {
        std::fs::create_dir_all(real.join(d)).unwrap();
        fs.mkdir_all(&MemFs::root().join(d));
    }
    for (rel, text) in files {
        std::fs::write(real.join(rel), text).unwrap();
        fs.put(rel, text.as_bytes());
    }
    let parsed = parse_patch(patch).unwrap();
    let local = verify_patch_in(
        &LocalFileSystem,
        &parsed,
        &real,
        Some(std::slice::from_ref(&real)),
    )
    .and_then(|v| apply_verified_in(&LocalFileSystem, &v));
    let local = match local {
        Ok(s) => s.text,
        Err(e) => e
            .to_string()
            .replace(&real.display().to_string(), "/mem/tree")
            .replace(&base.display().to_string(), "/mem"),
    };
    let remote = match apply(&fs, patch) {
        Ok(text) => text,
        Err(e) => e.to_string(),
    };
    (local, remote)
}

#[test]
fn directories_and_missing_parents_are_reported_as_on_the_local_disk() {
    for patch in [
        "*** Begin Patch\n*** Update File: dir\n@@\n-a\n+b\n*** End Patch",
        "*** Begin Patch\n*** Delete File: dir\n*** End Patch",
        "*** Begin Patch\n*** Add File: dir\n+x\n*** End Patch",
        "*** Begin Patch\n*** Update File: f.txt\n*** Move to: dir\n@@\n-a\n+b\n*** End Patch",
        "*** Begin Patch\n*** Update File: missing/f.txt\n@@\n-a\n+b\n*** End Patch",
        "*** Begin Patch\n*** Delete File: missing/f.txt\n*** End Patch",
        "*** Begin Patch\n*** Add File: f.txt/inner.txt\n+x\n*** End Patch",
        "*** Begin Patch\n*** Update File: f.txt/inner.txt\n@@\n-a\n+b\n*** End Patch",
        "*** Begin Patch\n*** Add File: ../outside.txt\n+x\n*** End Patch",
        "*** Begin Patch\n*** Add File: deep/new/x.txt\n+x\n*** End Patch",
    ] {
        let (local, remote) = both(&[("f.txt", "a\n"), ("dir/k", "k\n")], &["dir"], patch);
        assert_eq!(remote, local, "{patch}");
    }
}

/// Every corpus case without symlinks, applied through the in-memory file
/// system, gives the same summary or error text and the same tree as the
/// CLI on the local disk.
#[test]
fn corpus_cases_apply_through_the_file_system_as_on_disk() {
    let mut ran = 0;
    for case in corpus() {
        let sandbox = Sandbox::from_case(&case);
        let input = case.dir.join("input");
        let mut files = Vec::new();
        let mut has_link = false;
        collect(&input, &input, &mut files, &mut has_link);
        if has_link {
            continue;
        }
        let fs = MemFs::new();
        for (rel, bytes) in &files {
            match bytes {
                Some(bytes) => fs.put(rel, bytes),
                None => fs.mkdir_all(&MemFs::root().join(rel)),
            }
        }
        let disk = run_ours(&case.patch, &sandbox.tree);
        let remote = match apply(&fs, &case.patch) {
            Ok(text) => (0, text, String::new()),
            Err(e) => (1, String::new(), format!("{e}\n")),
        };
        let tree = sandbox.tree.display().to_string();
        let base = sandbox.root.display().to_string();
        let stderr = disk
            .stderr
            .replace(&tree, "/mem/tree")
            .replace(&base, "/mem");
        assert_eq!(remote, (disk.code, disk.stdout, stderr), "{}", case.name);
        let mut on_disk = Vec::new();
        collect(&sandbox.tree, &sandbox.tree, &mut on_disk, &mut has_link);
        let on_disk: BTreeMap<PathBuf, Option<Vec<u8>>> = on_disk
            .into_iter()
            .map(|(rel, bytes)| (PathBuf::from(rel), bytes))
            .collect();
        assert_eq!(fs.snapshot(), on_disk, "{}", case.name);
        ran += 1;
    }
    assert!(ran >= 40, "only {ran} corpus cases ran");
}

/// Files (with bytes) and directories (None) under `dir`, relative to `root`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>, has_link: &mut bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            *has_link = true;
        } else if meta.is_dir() {
            out.push((rel, None));
            collect(root, &path, out, has_link);
        } else {
            out.push((rel, Some(std::fs::read(&path).unwrap())));
        }
    }
}
