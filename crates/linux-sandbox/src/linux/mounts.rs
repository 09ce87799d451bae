//! Read-only carve-outs as bind mounts in a private mount namespace, and the user
//! namespace check for the bubblewrap path.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::HelperError;

/// Gives this process a private mount namespace (inside a new user namespace unless it
/// is root) and bind-mounts each path onto itself read-only. A path that is a mount
/// point cannot be renamed or removed either, so `.git` cannot be swapped out.
pub(crate) fn make_read_only(paths: &[PathBuf]) -> Result<(), HelperError> {
    let Some(first) = paths.first() else {
        return Ok(());
    };
    let fail = |path: &Path, step: &'static str| {
        let source = io::Error::last_os_error();
        HelperError::ReadOnlyMount {
            path: path.to_path_buf(),
            step,
            source,
        }
    };
    // SAFETY: geteuid/getegid cannot fail and take no pointers.
    #[expect(unsafe_code, reason = "libc identity calls")]
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // As root, a mount namespace alone suffices; otherwise (or if root lacks
    // CAP_SYS_ADMIN, as in some containers) a user namespace grants it.
    // SAFETY: unshare takes flags only; the helper is single-threaded here.
    #[expect(unsafe_code, reason = "unshare has no safe wrapper")]
    let as_root = uid == 0 && unsafe { libc::unshare(libc::CLONE_NEWNS) } == 0;
    if !as_root {
        // SAFETY: as above.
        #[expect(unsafe_code, reason = "unshare has no safe wrapper")]
        let rc = unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) };
        if rc != 0 {
            return Err(fail(first, "unshare(CLONE_NEWUSER | CLONE_NEWNS)"));
        }
        let map = |file: &str, text: String| {
            std::fs::write(file, text).map_err(|source| HelperError::ReadOnlyMount {
                path: first.clone(),
                step: "writing the user namespace id maps",
                source,
            })
        };
        map("/proc/self/setgroups", "deny".to_string())?;
        map("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        map("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    let root = c"/";
    // SAFETY: all pointers are valid NUL-terminated strings or NULL, as mount(2) allows.
    #[expect(unsafe_code, reason = "mount has no safe wrapper")]
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(fail(first, "making mounts private"));
    }
    for path in paths {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| HelperError::NulByte(path.to_string_lossy().into_owned()))?;
        // SAFETY: `c` is a valid NUL-terminated path; other pointers are NULL.
        #[expect(unsafe_code, reason = "mount has no safe wrapper")]
        let rc = unsafe {
            libc::mount(
                c.as_ptr(),
                c.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            return Err(fail(path, "bind mount"));
        }
        // A remount inside a user namespace must keep the flags it inherited (nosuid,
        // nodev, noexec, atime), or the kernel refuses it.
        let kept = inherited_flags(&c);
        // SAFETY: as above.
        #[expect(unsafe_code, reason = "mount has no safe wrapper")]
        let rc = unsafe {
            libc::mount(
                std::ptr::null(),
                c.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            return Err(fail(path, "read-only remount"));
        }
    }
    Ok(())
}

fn inherited_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: an all-zero statvfs is a valid value to be overwritten.
    #[expect(unsafe_code, reason = "zeroed plain C struct")]
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and `st` is a valid out-pointer.
    #[expect(unsafe_code, reason = "statvfs has no safe wrapper")]
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut st) };
    if rc != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms)
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
