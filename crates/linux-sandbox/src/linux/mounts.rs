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
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};

use super::HelperError;
use super::failure::{Failure, Step};

/// Everything the read-only view needs, prepared before it is built: the paths as C
/// strings and the id maps as bytes, so that [`MountPlan::build`] makes only system calls
/// and can run between `fork` and `exec` in a child of a multi-threaded process.
pub(crate) struct MountPlan {
    /// The read-write copies to take, and where they go back.
    writable: Vec<PathBuf>,
    writable_c: Vec<CString>,
    /// The read-only carve-outs inside them.
    readonly: Vec<PathBuf>,
    readonly_c: Vec<CString>,
    /// The working directory to re-enter afterwards.
    cwd: PathBuf,
    cwd_c: CString,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    as_root: bool,
    /// One slot per writable path for its detached copy, filled while building.
    copies: Vec<AtomicI32>,
}

impl MountPlan {
    /// The plan for `writable` (the paths Landlock grants write access, outermost first,
    /// as [`osprey_sandboxing::landlock_plan`] lists them), `readonly` (the carve-outs
    /// inside them) and the working directory `cwd`.
    pub(crate) fn new(
        writable: &[PathBuf],
        readonly: &[PathBuf],
        cwd: &Path,
    ) -> Result<Self, HelperError> {
        let writable = mount_targets(writable);
        let readonly = readonly.to_vec();
        let c_paths = |paths: &[PathBuf]| -> Result<Vec<CString>, HelperError> {
            paths
                .iter()
                .map(|p| c_path(p).map_err(|e| mount_error(p, "naming", e)))
                .collect()
        };
        // SAFETY: geteuid/getegid cannot fail and take no pointers.
        #[expect(unsafe_code, reason = "libc identity calls")]
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        Ok(Self {
            writable_c: c_paths(&writable)?,
            readonly_c: c_paths(&readonly)?,
            cwd_c: c_path(cwd).map_err(|e| mount_error(cwd, "naming", e))?,
            cwd: cwd.to_path_buf(),
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            as_root: uid == 0,
            copies: writable.iter().map(|_| AtomicI32::new(-1)).collect(),
            writable,
            readonly,
        })
    }

    /// Builds the view described in the module comment in this process, with system
    /// calls only.
    pub(crate) fn build(&self) -> Result<(), Failure> {
        self.enter_namespaces()?;
        // SAFETY: all pointers are valid NUL-terminated strings or NULL, as mount(2)
        // allows.
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
        check(rc, Step::MakePrivate, 0)?;
        for (index, (path, slot)) in self.writable_c.iter().zip(&self.copies).enumerate() {
            slot.store(
                open_tree(path, Step::CopyWritable, index)?,
                Ordering::Relaxed,
            );
        }
        mount_setattr_rdonly(libc::AT_FDCWD, c"/", Step::AllReadOnly, 0)?;
        for (index, (path, slot)) in self.writable_c.iter().zip(&self.copies).enumerate() {
            let fd = slot.swap(-1, Ordering::Relaxed);
            let moved = move_mount(fd, path, Step::MountWritable, index);
            close(fd);
            moved?;
        }
        for (index, path) in self.readonly_c.iter().enumerate() {
            let fd = open_tree(path, Step::CopyReadOnly, index)?;
            let done = mount_setattr_rdonly(fd, c"", Step::MakeReadOnly, index)
                .and_then(|()| move_mount(fd, path, Step::MountReadOnly, index));
            close(fd);
            done?;
        }
        // SAFETY: `cwd_c` is a valid NUL-terminated path.
        #[expect(unsafe_code, reason = "chdir has no allocation-free safe wrapper")]
        let rc = unsafe { libc::chdir(self.cwd_c.as_ptr()) };
        check(rc, Step::ReenterCwd, 0)
    }

    /// The path a failure at `step` for entry `index` was about.
    pub(crate) fn path_of(&self, step: Step, index: usize) -> &Path {
        let list = match step {
            Step::CopyWritable | Step::MountWritable => &self.writable,
            Step::CopyReadOnly | Step::MakeReadOnly | Step::MountReadOnly => &self.readonly,
            Step::ReenterCwd => return &self.cwd,
            _ => return Path::new("/"),
        };
        list.get(index).map_or(Path::new("/"), PathBuf::as_path)
    }

    /// A private mount namespace, inside a new user namespace unless this process is root
    /// with `CAP_SYS_ADMIN`.
    fn enter_namespaces(&self) -> Result<(), Failure> {
        // As root, a mount namespace alone suffices; otherwise (or if root lacks
        // CAP_SYS_ADMIN, as in some containers) a user namespace grants it.
        // SAFETY: unshare takes flags only; the caller is single-threaded here (the helper,
        // or a child between fork and exec).
        #[expect(unsafe_code, reason = "unshare has no safe wrapper")]
        if self.as_root && unsafe { libc::unshare(libc::CLONE_NEWNS) } == 0 {
            return Ok(());
        }
        // SAFETY: as above.
        #[expect(unsafe_code, reason = "unshare has no safe wrapper")]
        let rc = unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) };
        check(rc, Step::Unshare, 0)?;
        write_proc(c"/proc/self/setgroups", b"deny")?;
        write_proc(c"/proc/self/uid_map", &self.uid_map)?;
        write_proc(c"/proc/self/gid_map", &self.gid_map)
    }
}

/// Builds the read-only view in the helper's own process.
pub(crate) fn build_view(writable: &[PathBuf], readonly: &[PathBuf]) -> Result<(), HelperError> {
    let cwd = std::env::current_dir().map_err(|source| HelperError::ReadOnlyMount {
        path: PathBuf::from("."),
        step: "reading the working directory",
        source,
    })?;
    let plan = MountPlan::new(writable, readonly, &cwd)?;
    plan.build()
        .map_err(|failure| failure.into_error(plan.path_of(failure.step, failure.index)))
}

fn check(rc: libc::c_int, step: Step, index: usize) -> Result<(), Failure> {
    if rc == 0 {
        return Ok(());
    }
    Err(Failure::last_os_error(step, index))
}

fn close(fd: libc::c_int) {
    if fd >= 0 {
        // SAFETY: `fd` is a descriptor this code opened and nothing else uses.
        #[expect(unsafe_code, reason = "closing a raw descriptor")]
        unsafe {
            libc::close(fd);
        }
    }
}

/// Writes `bytes` to a `/proc` file in one `write`, as the id map files require.
fn write_proc(file: &CStr, bytes: &[u8]) -> Result<(), Failure> {
    // SAFETY: `file` is NUL-terminated; the flags take no pointers.
    #[expect(unsafe_code, reason = "open without allocation")]
    let fd = unsafe { libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(Failure::last_os_error(Step::IdMaps, 0));
    }
    // SAFETY: `bytes` is valid for `bytes.len()` bytes for the whole call.
    #[expect(unsafe_code, reason = "write without allocation")]
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let result = if usize::try_from(written).ok() == Some(bytes.len()) {
        Ok(())
    } else {
        Err(Failure::last_os_error(Step::IdMaps, 0))
    };
    close(fd);
    result
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

pub(crate) fn mount_error(path: &Path, step: &'static str, source: io::Error) -> HelperError {
    HelperError::ReadOnlyMount {
        path: path.to_path_buf(),
        step,
        source,
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// A detached recursive copy of the mounts at and beneath `path`.
fn open_tree(path: &CStr, step: Step, index: usize) -> Result<libc::c_int, Failure> {
    let flags = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_RECURSIVE as u32;
    // SAFETY: `path` is a valid NUL-terminated path; open_tree reads nothing else.
    #[expect(unsafe_code, reason = "open_tree has no libc wrapper")]
    let fd = unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) };
    if fd < 0 {
        return Err(Failure::last_os_error(step, index));
    }
    libc::c_int::try_from(fd).map_err(|_| Failure::new(step, index, libc::EBADF))
}

/// Makes the mount at `path` (relative to `dirfd`, or the detached tree `dirfd` itself
/// when `path` is empty) and every mount beneath it read-only.
fn mount_setattr_rdonly(
    dirfd: libc::c_int,
    path: &CStr,
    step: Step,
    index: usize,
) -> Result<(), Failure> {
    let attr = libc::mount_attr {
        attr_set: libc::MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let mut flags = libc::AT_RECURSIVE;
    if path.is_empty() {
        flags |= libc::AT_EMPTY_PATH;
    }
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
        return Err(Failure::last_os_error(step, index));
    }
    Ok(())
}

/// Attaches the detached tree `fd` at `path`.
fn move_mount(fd: libc::c_int, path: &CStr, step: Step, index: usize) -> Result<(), Failure> {
    // SAFETY: `fd` is a live detached mount, both strings are NUL-terminated.
    #[expect(unsafe_code, reason = "move_mount has no libc wrapper")]
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if rc != 0 {
        return Err(Failure::last_os_error(step, index));
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
