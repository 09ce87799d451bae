//! The bubblewrap command line for a [`Confinement`]: mounts that reproduce the
//! filesystem policy in a fresh mount namespace, then the helper again (`--inner`) to
//! apply seccomp before the command runs.

use std::ffi::OsString;
use std::path::Path;

use crate::helper_args::{HELPER_ARG0, HelperInvocation, HelperMode};
use crate::{Confinement, FsAccess};

/// Where the helper's symlink lives for bubblewrap without `--argv0`.
const COMPAT_DIR: &str = "/dev/.osprey";

/// Whether this `bwrap` binary understands `--argv0` (bubblewrap 0.9 and later). Found by
/// looking for the option's name in the binary, so no process is started.
pub fn bwrap_supports_argv0(bwrap: &Path) -> bool {
    std::fs::read(bwrap).is_ok_and(|bytes| bytes.windows(7).any(|w| w == b"--argv0"))
}

/// Builds bubblewrap's arguments (without the program name).
///
/// Layout: entries are applied ancestors first; `read` is `--ro-bind`, `write` is
/// `--bind`, `none` under an accessible parent is an empty read-only tmpfs (directories)
/// or `/dev/null` (files); `none` with no accessible parent is simply never mounted.
/// `/dev` is a fresh minimal devtmpfs and `/proc` a fresh procfs of the new PID
/// namespace, so policy entries under them are not mounted. Without network access the
/// command also gets its own network namespace (loopback only).
///
/// When `argv0_supported` is false (bubblewrap before 0.9), `--argv0` cannot name the
/// helper; instead a symlink named `osprey-linux-sandbox` to the helper is created in
/// the sandbox's private `/dev` tmpfs and executed by that path, so `argv[0]` still ends
/// in the helper's name (nothing is written to the host).
pub fn bwrap_args(
    confinement: &Confinement,
    cwd: &Path,
    helper_exe: &Path,
    argv0_supported: bool,
    command: &[OsString],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |items: &[&dyn AsRef<std::ffi::OsStr>]| {
        args.extend(items.iter().map(|i| i.as_ref().to_os_string()));
    };
    push(&[&"--die-with-parent", &"--unshare-pid"]);
    if !confinement.network {
        push(&[&"--unshare-net"]);
    }
    let fs = &confinement.filesystem;
    let mut special_done = false;
    // Empty tmpfs masks become read-only only after everything beneath them is mounted,
    // since bubblewrap creates mount points inside them.
    let mut remount_ro: Vec<&Path> = Vec::new();
    for entry in fs.entries() {
        let path = entry.path.as_path();
        if path.starts_with("/dev") || path.starts_with("/proc") {
            continue;
        }
        if !special_done && path != Path::new("/") {
            push(&[&"--dev", &"/dev", &"--proc", &"/proc"]);
            special_done = true;
        }
        let parent = fs.inherited_access(path);
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        match entry.access {
            FsAccess::Read => push(&[&"--ro-bind", &path, &path]),
            FsAccess::Write => push(&[&"--bind", &path, &path]),
            FsAccess::None if parent == FsAccess::None => {}
            FsAccess::None if meta.is_dir() => {
                push(&[&"--tmpfs", &path]);
                remount_ro.push(path);
            }
            FsAccess::None => push(&[&"--ro-bind", &"/dev/null", &path]),
        }
    }
    if !special_done {
        push(&[&"--dev", &"/dev", &"--proc", &"/proc"]);
    }
    for path in remount_ro {
        push(&[&"--remount-ro", &path]);
    }
    push(&[&"--chdir", &cwd]);
    let inner = HelperInvocation {
        mode: HelperMode::Inner,
        confinement: confinement.clone(),
        command: command.to_vec(),
    };
    if argv0_supported {
        push(&[&"--argv0", &HELPER_ARG0, &"--", &helper_exe]);
    } else {
        let link = format!("{COMPAT_DIR}/{HELPER_ARG0}");
        push(&[
            &"--dir",
            &COMPAT_DIR,
            &"--symlink",
            &helper_exe,
            &link,
            &"--",
            &link,
        ]);
    }
    args.extend(inner.to_args());
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FileSystemPolicy, FsEntry};
    use pretty_assertions::assert_eq;

    #[test]
    fn mounts_follow_the_policy() {
        let dir = tempfile::tempdir().unwrap();
        let repo = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(repo.join("secrets/public")).unwrap();
        std::fs::write(repo.join("key.pem"), "k").unwrap();
        let fs = FileSystemPolicy::new([
            FsEntry::new("/", FsAccess::Read),
            FsEntry::new("/dev/null", FsAccess::Write),
            FsEntry::new(&repo, FsAccess::Write),
            FsEntry::new(repo.join("secrets"), FsAccess::None),
            FsEntry::new(repo.join("secrets/public"), FsAccess::Write),
            FsEntry::new(repo.join("key.pem"), FsAccess::None),
            FsEntry::new("/nonexistent-ghost", FsAccess::Write),
        ])
        .unwrap();
        let conf = Confinement {
            filesystem: fs,
            network: false,
        };
        let args = bwrap_args(
            &conf,
            &repo,
            Path::new("/opt/osprey"),
            true,
            &["true".into()],
        );
        let text: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().replace(repo.to_str().unwrap(), "REPO"))
            .collect();
        let json = conf.to_json().replace(repo.to_str().unwrap(), "REPO");
        let expected: Vec<String> = [
            "--die-with-parent",
            "--unshare-pid",
            "--unshare-net",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--bind",
            "REPO",
            "REPO",
            "--ro-bind",
            "/dev/null",
            "REPO/key.pem",
            "--tmpfs",
            "REPO/secrets",
            "--bind",
            "REPO/secrets/public",
            "REPO/secrets/public",
            "--remount-ro",
            "REPO/secrets",
            "--chdir",
            "REPO",
            "--argv0",
            "osprey-linux-sandbox",
            "--",
            "/opt/osprey",
            "--inner",
            "--confinement",
            &json,
            "--",
            "true",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(text, expected);

        let old = bwrap_args(
            &conf,
            &repo,
            Path::new("/opt/osprey"),
            false,
            &["true".into()],
        );
        let text: Vec<String> = old
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let start = text.iter().position(|a| a == "--symlink").unwrap();
        assert_eq!(
            text[start - 2..start + 6],
            [
                "--dir",
                "/dev/.osprey",
                "--symlink",
                "/opt/osprey",
                "/dev/.osprey/osprey-linux-sandbox",
                "--",
                "/dev/.osprey/osprey-linux-sandbox",
                "--inner"
            ]
        );
    }
}
