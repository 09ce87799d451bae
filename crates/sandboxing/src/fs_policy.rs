//! The filesystem half of a sandbox: per-path `none` / `read` / `write` entries where the
//! most specific path wins ([`FileSystemPolicy`]), and the whole confinement handed to a
//! backend ([`Confinement`]).

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use osprey_protocol::SandboxPolicy;
use serde::{Deserialize, Serialize};

use crate::SandboxError;

/// What a confined command may do beneath one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsAccess {
    /// Neither read nor write (the path looks absent or empty).
    None,
    /// Read, list and execute.
    Read,
    /// Everything `Read` allows, plus create, modify, rename and delete.
    Write,
}

impl FsAccess {
    /// The lowercase name used in JSON and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Read => "read",
            Self::Write => "write",
        }
    }
}

/// One rule: `access` applies to `path` and everything beneath it, unless a more specific
/// entry says otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FsEntry {
    /// An absolute path.
    pub path: PathBuf,
    /// What is allowed beneath it.
    pub access: FsAccess,
}

impl FsEntry {
    /// Builds an entry.
    pub fn new(path: impl Into<PathBuf>, access: FsAccess) -> Self {
        Self {
            path: path.into(),
            access,
        }
    }
}

/// A split filesystem policy: a set of absolute paths, each with an access level, where
/// the most specific (longest) matching path decides. A path with no matching entry at
/// all gets [`FsAccess::None`].
///
/// Paths are normalized when the policy is built: `.` and `..` are resolved lexically and
/// existing paths are canonicalized (symlinks resolved), because every backend enforces
/// rules on the real location. Two entries for the same path: the later one wins.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "Vec<FsEntry>", into = "Vec<FsEntry>")]
pub struct FileSystemPolicy {
    /// Sorted by path (ancestors before descendants), unique paths.
    entries: Vec<FsEntry>,
}

impl TryFrom<Vec<FsEntry>> for FileSystemPolicy {
    type Error = SandboxError;

    fn try_from(entries: Vec<FsEntry>) -> Result<Self, Self::Error> {
        Self::new(entries)
    }
}

impl From<FileSystemPolicy> for Vec<FsEntry> {
    fn from(policy: FileSystemPolicy) -> Self {
        policy.entries
    }
}

/// Device files every confined command may open for writing: without them shells and
/// build tools break in surprising ways.
pub const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Names inside every writable root that stay read-only.
pub const PROTECTED_NAMES: &[&str] = &[".git", ".osprey"];

impl FileSystemPolicy {
    /// Builds a policy, normalizing every path. Fails on a relative path.
    pub fn new(entries: impl IntoIterator<Item = FsEntry>) -> Result<Self, SandboxError> {
        let mut out: Vec<FsEntry> = Vec::new();
        for entry in entries {
            if !entry.path.is_absolute() {
                return Err(SandboxError::RelativePath { path: entry.path });
            }
            let path = normalize(&entry.path);
            match out.iter_mut().find(|e| e.path == path) {
                Some(existing) => existing.access = entry.access,
                None => out.push(FsEntry::new(path, entry.access)),
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Self { entries: out })
    }

    /// Everything readable and writable: what `danger-full-access` means for files.
    pub fn full_access() -> Self {
        Self {
            entries: vec![FsEntry::new("/", FsAccess::Write)],
        }
    }

    /// The entries, ancestors before descendants.
    pub fn entries(&self) -> &[FsEntry] {
        &self.entries
    }

    /// What the policy allows at `path` (which should be absolute and normalized).
    pub fn access(&self, path: &Path) -> FsAccess {
        self.entries
            .iter()
            .filter(|e| path.starts_with(&e.path))
            .max_by_key(|e| e.path.components().count())
            .map_or(FsAccess::None, |e| e.access)
    }

    /// What applies at `path` from entries strictly above it.
    pub fn inherited_access(&self, path: &Path) -> FsAccess {
        self.entries
            .iter()
            .filter(|e| e.path != path && path.starts_with(&e.path))
            .max_by_key(|e| e.path.components().count())
            .map_or(FsAccess::None, |e| e.access)
    }

    /// True when nothing is restricted at all.
    pub fn is_unrestricted(&self) -> bool {
        self.access(Path::new("/")) == FsAccess::Write
            && self.entries.iter().all(|e| e.access == FsAccess::Write)
    }

    /// Paths that are writable, in order.
    pub fn writable_paths(&self) -> impl Iterator<Item = &Path> {
        self.entries
            .iter()
            .filter(|e| e.access == FsAccess::Write)
            .map(|e| e.path.as_path())
    }

    /// Converts a coarse [`SandboxPolicy`] for a command running in `cwd`.
    ///
    /// - `read-only`: `/` readable, the [`WRITABLE_DEVICES`] writable.
    /// - `workspace-write`: as read-only, plus `cwd`, each writable root (relative ones
    ///   resolved against `cwd`), `tmpdir` (the command's `$TMPDIR`) unless
    ///   `exclude_tmpdir_env_var`, and `/tmp` unless `exclude_slash_tmp`. Inside each of
    ///   those, an existing `.git` (and the `gitdir:` target of a `.git` file) and
    ///   `.osprey` are read-only.
    /// - `danger-full-access`: [`FileSystemPolicy::full_access`].
    pub fn from_sandbox_policy(policy: &SandboxPolicy, cwd: &Path, tmpdir: Option<&Path>) -> Self {
        let mut entries = vec![FsEntry::new("/", FsAccess::Read)];
        match policy {
            SandboxPolicy::DangerFullAccess => return Self::full_access(),
            SandboxPolicy::ReadOnly => {}
            SandboxPolicy::WorkspaceWrite {
                writable_roots,
                exclude_tmpdir_env_var,
                exclude_slash_tmp,
                ..
            } => {
                let mut roots = vec![cwd.to_path_buf()];
                roots.extend(writable_roots.iter().map(|r| cwd.join(r)));
                // `$TMPDIR=/` would make everything writable: ignore it.
                if !exclude_tmpdir_env_var
                    && let Some(tmp) =
                        tmpdir.filter(|t| t.is_absolute() && normalize(t) != Path::new("/"))
                {
                    roots.push(tmp.to_path_buf());
                }
                if !exclude_slash_tmp {
                    roots.push(PathBuf::from("/tmp"));
                }
                for root in roots {
                    let root = normalize(&root);
                    entries.extend(
                        protected_subpaths(&root)
                            .into_iter()
                            .map(|p| FsEntry::new(p, FsAccess::Read)),
                    );
                    entries.push(FsEntry::new(root, FsAccess::Write));
                }
            }
        }
        entries.extend(
            WRITABLE_DEVICES
                .iter()
                .map(|d| FsEntry::new(*d, FsAccess::Write)),
        );
        // Protected subpaths must win over a writable root that happens to be listed
        // after them for the same path; `new` keeps the last entry for a path, so put
        // them last.
        let (protected, mut rest): (Vec<FsEntry>, Vec<FsEntry>) = entries
            .into_iter()
            .partition(|e| e.access == FsAccess::Read && e.path != Path::new("/"));
        rest.extend(protected);
        // Paths here are all absolute, so this cannot fail; fall back to read-only `/`.
        Self::new(rest).unwrap_or_else(|_| Self {
            entries: vec![FsEntry::new("/", FsAccess::Read)],
        })
    }
}

/// The read-only carve-outs inside one writable root: `.git` (directory or pointer
/// file, plus the pointer's `gitdir:` target) and `.osprey`, when they exist.
pub fn protected_subpaths(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for name in PROTECTED_NAMES {
        let path = root.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        out.push(path.clone());
        if *name == ".git"
            && meta.is_file()
            && let Ok(text) = std::fs::read_to_string(&path)
            && let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
        {
            let target = Path::new(target.trim());
            out.push(normalize(&root.join(target)));
        }
    }
    out
}

/// Lexically resolves `.` and `..`, then canonicalizes the path if it exists (so rules
/// meet the real location behind symlinks).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push("/");
    }
    std::fs::canonicalize(&out).unwrap_or(out)
}

/// Everything a backend needs to confine one command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confinement {
    /// What the command may read and write.
    pub filesystem: FileSystemPolicy,
    /// Whether outbound and inbound network access is allowed.
    pub network: bool,
}

impl Confinement {
    /// The confinement for a coarse policy, or `None` for `danger-full-access` (which is
    /// not confined at all). `env` is the command's environment (for `$TMPDIR`).
    pub fn from_sandbox_policy(
        policy: &SandboxPolicy,
        cwd: &Path,
        env: &HashMap<String, String>,
    ) -> Option<Self> {
        if matches!(policy, SandboxPolicy::DangerFullAccess) {
            return None;
        }
        let tmpdir = env.get("TMPDIR").map(Path::new);
        Some(Self {
            filesystem: FileSystemPolicy::from_sandbox_policy(policy, cwd, tmpdir),
            network: policy.has_full_network_access(),
        })
    }

    /// The JSON form passed to the helper.
    pub fn to_json(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses the JSON form.
    pub fn from_json(text: &str) -> Result<Self, SandboxError> {
        serde_json::from_str(text).map_err(|source| SandboxError::PolicyJson { source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn fsp(entries: &[(&str, FsAccess)]) -> FileSystemPolicy {
        FileSystemPolicy::new(entries.iter().map(|(p, a)| FsEntry::new(*p, *a))).unwrap()
    }

    #[test]
    fn most_specific_path_wins() {
        let p = fsp(&[
            ("/nonexistent-repo", FsAccess::Write),
            ("/nonexistent-repo/secrets", FsAccess::None),
            ("/nonexistent-repo/secrets/public", FsAccess::Write),
            ("/", FsAccess::Read),
        ]);
        assert_eq!(p.access(Path::new("/etc/passwd")), FsAccess::Read);
        assert_eq!(p.access(Path::new("/nonexistent-repo/a")), FsAccess::Write);
        assert_eq!(
            p.access(Path::new("/nonexistent-repo/secrets/k")),
            FsAccess::None
        );
        assert_eq!(
            p.access(Path::new("/nonexistent-repo/secrets/public/x")),
            FsAccess::Write
        );
        // A sibling sharing a name prefix is not beneath the entry.
        assert_eq!(
            p.access(Path::new("/nonexistent-repo/secretsX")),
            FsAccess::Write
        );
        assert_eq!(p.entries()[0].path, PathBuf::from("/"));
    }

    #[test]
    fn no_entry_means_no_access() {
        let p = fsp(&[("/nonexistent-repo", FsAccess::Read)]);
        assert_eq!(p.access(Path::new("/etc")), FsAccess::None);
    }

    #[test]
    fn relative_paths_are_rejected() {
        let err = FileSystemPolicy::new([FsEntry::new("repo", FsAccess::Write)]).unwrap_err();
        assert!(err.to_string().contains("not an absolute path"), "{err}");
    }

    #[test]
    fn dot_dot_is_resolved_and_later_entries_win() {
        let p = fsp(&[
            ("/nonexistent-a/b/../c", FsAccess::Write),
            ("/nonexistent-a/c", FsAccess::Read),
        ]);
        assert_eq!(
            p.entries(),
            &[FsEntry::new("/nonexistent-a/c", FsAccess::Read)]
        );
    }

    #[test]
    fn json_round_trip_validates() {
        let p = fsp(&[("/", FsAccess::Read), ("/nonexistent-x", FsAccess::None)]);
        let text = serde_json::to_string(&p).unwrap();
        assert_eq!(
            text,
            r#"[{"path":"/","access":"read"},{"path":"/nonexistent-x","access":"none"}]"#
        );
        assert_eq!(serde_json::from_str::<FileSystemPolicy>(&text).unwrap(), p);
        assert!(
            serde_json::from_str::<FileSystemPolicy>(r#"[{"path":"rel","access":"read"}]"#)
                .is_err()
        );
    }

    #[test]
    fn workspace_write_protects_git_and_osprey() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::create_dir(root.join(".osprey")).unwrap();
        let policy = SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access: false,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        };
        let p = FileSystemPolicy::from_sandbox_policy(&policy, &root, None);
        assert_eq!(p.access(&root.join("src/main.rs")), FsAccess::Write);
        assert_eq!(p.access(&root.join(".git/config")), FsAccess::Read);
        assert_eq!(p.access(&root.join(".osprey/config.toml")), FsAccess::Read);
        assert_eq!(p.access(Path::new("/usr/bin")), FsAccess::Read);
        assert_eq!(p.access(Path::new("/dev/null")), FsAccess::Write);
    }

    #[test]
    fn gitdir_pointer_target_is_protected() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let wt = base.join("wt");
        let gitdir = base.join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        let got = protected_subpaths(&wt);
        assert_eq!(got, vec![wt.join(".git"), gitdir]);
    }

    #[test]
    fn read_only_and_tmp_handling() {
        let cwd = Path::new("/nonexistent-cwd");
        let ro = FileSystemPolicy::from_sandbox_policy(&SandboxPolicy::ReadOnly, cwd, None);
        assert_eq!(ro.access(cwd), FsAccess::Read);
        assert_eq!(ro.access(Path::new("/tmp/x")), FsAccess::Read);
        let ww = |tmpdir_ex, slash_ex| SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![PathBuf::from("extra")],
            network_access: false,
            exclude_tmpdir_env_var: tmpdir_ex,
            exclude_slash_tmp: slash_ex,
        };
        let tmpdir = Path::new("/nonexistent-tmpdir");
        let p = FileSystemPolicy::from_sandbox_policy(&ww(false, false), cwd, Some(tmpdir));
        assert_eq!(p.access(&cwd.join("extra/f")), FsAccess::Write);
        assert_eq!(p.access(&tmpdir.join("f")), FsAccess::Write);
        assert_eq!(
            p.access(&normalize(Path::new("/tmp")).join("f")),
            FsAccess::Write
        );
        let p = FileSystemPolicy::from_sandbox_policy(&ww(false, true), cwd, Some(Path::new("/")));
        assert_eq!(
            p.access(Path::new("/etc/passwd")),
            FsAccess::Read,
            "TMPDIR=/ is ignored"
        );
        let p = FileSystemPolicy::from_sandbox_policy(&ww(true, true), cwd, Some(tmpdir));
        assert_eq!(p.access(&tmpdir.join("f")), FsAccess::Read);
        assert_eq!(
            p.access(&normalize(Path::new("/tmp")).join("f")),
            FsAccess::Read
        );
        assert!(
            FileSystemPolicy::from_sandbox_policy(&SandboxPolicy::DangerFullAccess, cwd, None)
                .is_unrestricted()
        );
    }
}
