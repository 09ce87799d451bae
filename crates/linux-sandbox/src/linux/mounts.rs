//! The helper's own view of the filesystem: a private mount namespace in which everything
//! but the writable paths is mounted read-only, and the user namespace check for the
//! bubblewrap path.
//!
//! Landlock decides which paths may be *written*, but it does not govern metadata:
//! `chmod`, `chown`, `utimensat` and `setxattr` on a file outside the writable roots pass
//! Landlock untouched. A read-only mount refuses all of them (`EROFS`), together with every
//! write, whatever the file's owner or mode. So the whole tree is made read-only, the
//! writable paths are mounted back read-write on top, and the read-only carve-outs inside
//! them (`.git`, `.osprey`) read-only again:
//!
//! 1. `unshare` a mount namespace (inside a new user namespace unless root) and make every
//!    mount private, so nothing here propagates to the host.
//! 2. `open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)` each writable path: a detached copy of
//!    that subtree, still read-write.
//! 3. `mount_setattr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY)`: every mount read-only at once,
//!    `/proc`, `/sys`, `/dev` and the temp directories included. Device files stay usable
//!    (a read-only mount does not stop writes to a device node), so `/dev/null` works.
//! 4. `move_mount` each copy back onto its path, ancestors first.
//! 5. Each carve-out: a recursive copy made read-only, moved onto itself. A mount point
//!    cannot be renamed or removed either, so `.git` cannot be swapped out.
//! 6. `chdir` to the working directory again, so the process's cwd is the read-write copy
//!    on top and not the read-only mount beneath it.
//!
//! The new mount API (Linux 5.12) is always there where Landlock (5.13) is.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::HelperError;

/// Builds the read-only view described in the module comment. `writable` are the paths
/// Landlock grants write access (outermost first, as [`osprey_sandboxing::landlock_plan`]
/// lists them); `readonly` the carve-outs inside them.
pub(crate) fn build_view(writable: &[PathBuf], readonly: &[PathBuf]) -> Result<(), HelperError> {
    let cwd = std::env::current_dir().map_err(|source| HelperError::ReadOnlyMount {
        path: PathBuf::from("."),
        step: "reading the working directory",
        source,
    })?;
    enter_namespaces()?;
    make_private()?;
    let mut copies = Vec::new();
    for path in mount_targets(writable) {
        let fd = open_tree(&path).map_err(|source| mount_error(&path, "copying", source))?;
        copies.push((path, fd));
    }
    mount_setattr_rdonly(None, c"/")
        .map_err(|source| mount_error(Path::new("/"), "making every mount read-only", source))?;
    for (path, fd) in &copies {
        move_mount(fd, path).map_err(|source| mount_error(path, "mounting read-write", source))?;
    }
    for path in readonly {
        let fd = open_tree(path).map_err(|source| mount_error(path, "copying", source))?;
        mount_setattr_rdonly(Some(&fd), c"")
            .map_err(|source| mount_error(path, "making read-only", source))?;
        move_mount(&fd, path).map_err(|source| mount_error(path, "mounting read-only", source))?;
    }
    std::env::set_current_dir(&cwd).map_err(|source| mount_error(&cwd, "re-entering", source))
}

/// The writable paths that need a read-write mount: existing, not device files (a device
/// stays writable on a read-only mount), and not beneath another one (whose copy already
/// carries them).
fn mount_targets(writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut sorted: Vec<&PathBuf> = writable.iter().collect();
    sorted.sort();
    let mut out: Vec<PathBuf> = Vec::new();
    for path in sorted {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let kind = meta.file_type();
        if kind.is_char_device() || kind.is_block_device() {
            continue;
        }
        if out.iter().any(|outer| path.starts_with(outer)) {
            continue;
        }
        out.push(path.clone());
    }
    out
}

fn mount_error(path: &Path, step: &'static str, source: io::Error) -> HelperError {
    HelperError::ReadOnlyMount {
        path: path.to_path_buf(),
        step,
        source,
    }
}

/// A private mount namespace, inside a new user namespace unless this process is root
/// with `CAP_SYS_ADMIN`.
fn enter_namespaces() -> Result<(), HelperError> {
    let fail = |step: &'static str, source: io::Error| mount_error(Path::new("/"), step, source);
    // SAFETY: geteuid/getegid cannot fail and take no pointers.
    #[expect(unsafe_code, reason = "libc identity calls")]
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // As root, a mount namespace alone suffices; otherwise (or if root lacks
    // CAP_SYS_ADMIN, as in some containers) a user namespace grants it.
    // SAFETY: unshare takes flags only; the helper is single-threaded here.
    #[expect(unsafe_code, reason = "unshare has no safe wrapper")]
    let as_root = uid == 0 && unsafe { libc::unshare(libc::CLONE_NEWNS) } == 0;
    if as_root {
        return Ok(());
    }
    // SAFETY: as above.
    #[expect(unsafe_code, reason = "unshare has no safe wrapper")]
    let rc = unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) };
    if rc != 0 {
        return Err(fail(
            "unshare(CLONE_NEWUSER | CLONE_NEWNS)",
            io::Error::last_os_error(),
        ));
    }
    let map = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| fail("writing the user namespace id maps", e))
    };
    map("/proc/self/setgroups", "deny".to_string())?;
    map("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    map("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

fn make_private() -> Result<(), HelperError> {
    // SAFETY: all pointers are valid NUL-terminated strings or NULL, as mount(2) allows.
    #[expect(unsafe_code, reason = "mount has no safe wrapper")]
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(mount_error(
            Path::new("/"),
            "making mounts private",
            io::Error::last_os_error(),
        ));
    }
    Ok(())
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// A detached recursive copy of the mounts at and beneath `path`.
fn open_tree(path: &Path) -> io::Result<OwnedFd> {
    let c = c_path(path)?;
    let flags = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_RECURSIVE as u32;
    // SAFETY: `c` is a valid NUL-terminated path; open_tree reads nothing else.
    #[expect(unsafe_code, reason = "open_tree has no libc wrapper")]
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, c.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("open_tree returned a bad fd"))?;
    // SAFETY: the kernel just returned this descriptor and nothing else owns it.
    #[expect(unsafe_code, reason = "taking ownership of a new descriptor")]
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Makes the mount at `path` (relative to `dir`, or the detached tree `dir` itself when
/// `path` is empty) and every mount beneath it read-only.
fn mount_setattr_rdonly(dir: Option<&OwnedFd>, path: &CStr) -> io::Result<()> {
    let attr = libc::mount_attr {
        attr_set: libc::MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let (dirfd, mut flags) = match dir {
        Some(fd) => (fd.as_raw_fd(), libc::AT_EMPTY_PATH),
        None => (libc::AT_FDCWD, 0),
    };
    flags |= libc::AT_RECURSIVE;
    // SAFETY: `path` is NUL-terminated, `attr` is a valid mount_attr of the size passed.
    #[expect(unsafe_code, reason = "mount_setattr has no libc wrapper")]
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Attaches the detached tree `fd` at `path`.
fn move_mount(fd: &OwnedFd, path: &Path) -> io::Result<()> {
    let c = c_path(path)?;
    // SAFETY: `fd` is a live detached mount, both strings are NUL-terminated.
    #[expect(unsafe_code, reason = "move_mount has no libc wrapper")]
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Fails with a clear message when bubblewrap cannot create the namespaces it needs:
/// not root, `bwrap` not set-user-id, and user namespaces switched off.
pub(crate) fn check_user_namespaces(bwrap: &Path) -> Result<(), HelperError> {
    // SAFETY: geteuid cannot fail.
    #[expect(unsafe_code, reason = "libc identity call")]
    let uid = unsafe { libc::geteuid() };
    let setuid = std::fs::metadata(bwrap).is_ok_and(|m| m.permissions().mode() & 0o4000 != 0);
    if uid == 0 || setuid {
        return Ok(());
    }
    let read = |file: &str| {
        std::fs::read_to_string(file)
            .map(|s| s.trim().to_string())
            .ok()
    };
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Err(HelperError::NoUserNamespaces {
            setting: "user.max_user_namespaces = 0".to_string(),
        });
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Err(HelperError::NoUserNamespaces {
            setting: "kernel.unprivileged_userns_clone = 0".to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_writable_paths_share_one_mount_and_devices_get_none() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::create_dir_all(a.join("b")).unwrap();
        let got = mount_targets(&[
            a.join("b"),
            PathBuf::from("/dev/null"),
            a.clone(),
            dir.path().join("missing"),
        ]);
        assert_eq!(got, vec![a]);
    }
}
