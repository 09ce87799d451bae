//! The creation guard's seccomp half (the design is in `guard.rs`): the filter that turns
//! every call which could create a name into a user notification, how a notification is
//! answered, and the thin wrappers around the `*at` calls the supervisor
//! (`supervisor.rs`) makes.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use super::HelperError;

/// `O_TMPFILE` without the `O_DIRECTORY` bit it includes.
pub(super) const TMPFILE_BIT: u64 = (libc::O_TMPFILE & !libc::O_DIRECTORY) as u64;
/// Marks the filter's "notify" returns so they can be rewritten after compiling
/// (seccompiler has no user-notification action).
const MARK: u32 = 0x0517;
/// `SECCOMP_RET_TRACE`, whose data bits carry [`MARK`].
const RET_TRACE: u32 = 0x7ff0_0000;
/// BPF `RET | K`.
const BPF_RET_K: u16 = 0x06;

fn err(e: impl std::fmt::Display) -> HelperError {
    HelperError::Guard(e.to_string())
}

fn flag_rule(arg: u8, bit: u64) -> Result<SeccompRule, HelperError> {
    let cond = SeccompCondition::new(arg, Len::Dword, Op::MaskedEq(bit), bit).map_err(err)?;
    SeccompRule::new(vec![cond]).map_err(err)
}

fn creating_open(flags_arg: u8) -> Result<Vec<SeccompRule>, HelperError> {
    Ok(vec![
        flag_rule(flags_arg, libc::O_CREAT as u64)?,
        flag_rule(flags_arg, TMPFILE_BIT)?,
    ])
}

/// Which calls are handed to the supervisor.
fn notified_rules() -> Result<BTreeMap<i64, Vec<SeccompRule>>, HelperError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_mkdirat,
        libc::SYS_symlinkat,
        libc::SYS_linkat,
        libc::SYS_renameat,
        libc::SYS_renameat2,
        libc::SYS_openat2,
    ] {
        rules.insert(nr, Vec::new());
    }
    rules.insert(libc::SYS_openat, creating_open(2)?);
    #[cfg(target_arch = "x86_64")]
    {
        for nr in [
            libc::SYS_mkdir,
            libc::SYS_symlink,
            libc::SYS_link,
            libc::SYS_rename,
            libc::SYS_creat,
        ] {
            rules.insert(nr, Vec::new());
        }
        rules.insert(libc::SYS_open, creating_open(1)?);
    }
    Ok(rules)
}

/// Installs the notifying filter on this thread and returns its listener.
pub(crate) fn install_filter() -> Result<OwnedFd, HelperError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        HelperError::Guard(format!(
            "no seccomp filter for the {} architecture",
            std::env::consts::ARCH
        ))
    })?;
    let filter = SeccompFilter::new(
        notified_rules()?,
        SeccompAction::Allow,
        SeccompAction::Trace(MARK),
        arch,
    )
    .map_err(err)?;
    let mut program: BpfProgram = filter.try_into().map_err(err)?;
    for insn in &mut program {
        if insn.code == BPF_RET_K && insn.k == RET_TRACE | MARK {
            insn.k = libc::SECCOMP_RET_USER_NOTIF;
        }
    }
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(err)?,
        filter: program.as_mut_ptr().cast(),
    };
    let install = |flags: libc::c_ulong| {
        // SAFETY: `fprog` points at `program`, which outlives the call.
        #[expect(unsafe_code, reason = "seccomp(2) with a listener has no safe wrapper")]
        unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flags,
                &fprog as *const libc::sock_fprog,
            )
        }
    };
    // Killable waits (Linux 5.19) keep a signal from interrupting a call the supervisor is
    // already carrying out; older kernels do without.
    let mut fd = install(
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
    );
    if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        fd = install(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
    }
    if fd < 0 {
        return Err(HelperError::Guard(format!(
            "installing the notifying seccomp filter: {} (Linux 5.9 or later is needed)",
            io::Error::last_os_error()
        )));
    }
    let fd = RawFd::try_from(fd).map_err(err)?;
    // SAFETY: the kernel just returned this descriptor.
    #[expect(unsafe_code, reason = "taking ownership of a new descriptor")]
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// How a notification is answered.
pub(super) enum Reply {
    /// Let the kernel run the call as made.
    Continue,
    /// Fail with this errno.
    Errno(i32),
    /// Succeed with this return value.
    Value(i64),
    /// Install this descriptor in the caller and return its number.
    Fd { fd: OwnedFd, cloexec: bool },
    /// A thread answers (an open that may block).
    Later,
}

pub(super) fn errno_of(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

pub(super) fn last_errno() -> i32 {
    errno_of(&io::Error::last_os_error())
}

pub(super) fn cstring(bytes: &[u8]) -> Result<CString, i32> {
    CString::new(bytes).map_err(|_| libc::EINVAL)
}

pub(super) fn owned(fd: libc::c_long) -> Result<OwnedFd, i32> {
    if fd < 0 {
        return Err(last_errno());
    }
    let fd = RawFd::try_from(fd).map_err(|_| libc::EMFILE)?;
    // SAFETY: the kernel just returned this descriptor.
    #[expect(unsafe_code, reason = "taking ownership of a new descriptor")]
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `openat(dir, path, flags, mode)`, or `openat2` with `resolve` flags.
pub(super) fn open_at(
    dir: RawFd,
    path: &CString,
    flags: u64,
    mode: u64,
    resolve: u64,
) -> Result<OwnedFd, i32> {
    if resolve == 0 {
        // SAFETY: `path` is NUL-terminated; the other arguments are plain integers.
        #[expect(
            unsafe_code,
            reason = "openat has no safe wrapper on a raw directory fd"
        )]
        let fd = unsafe {
            libc::openat(
                dir,
                path.as_ptr(),
                flags as libc::c_int,
                mode as libc::c_uint,
            )
        };
        return owned(libc::c_long::from(fd));
    }
    // SAFETY: open_how is plain integers; all-zero is a valid value.
    #[expect(
        unsafe_code,
        reason = "open_how cannot be built by a struct expression"
    )]
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags;
    how.mode = mode;
    how.resolve = resolve;
    // SAFETY: `how` is a valid open_how of the size passed; `path` is NUL-terminated.
    #[expect(unsafe_code, reason = "openat2 has no libc wrapper")]
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    owned(fd)
}

pub(super) fn stat_at(dir: &OwnedFd, name: &CString) -> Result<libc::stat, i32> {
    // SAFETY: an all-zero stat is valid storage to be overwritten.
    #[expect(unsafe_code, reason = "plain C struct")]
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is NUL-terminated and `st` is valid storage.
    #[expect(
        unsafe_code,
        reason = "fstatat has no safe wrapper on a raw directory fd"
    )]
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        return Err(last_errno());
    }
    Ok(st)
}

pub(super) fn identity(fd: &OwnedFd) -> Result<(u64, u64), i32> {
    // SAFETY: as in `stat_at`.
    #[expect(unsafe_code, reason = "plain C struct")]
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `st` is valid storage.
    #[expect(unsafe_code, reason = "fstat has no safe wrapper")]
    let rc = unsafe { libc::fstat(fd.as_raw_fd(), &mut st) };
    if rc != 0 {
        return Err(last_errno());
    }
    Ok((st.st_dev, st.st_ino))
}

pub(super) fn status(rc: libc::c_int) -> Reply {
    if rc == 0 {
        Reply::Value(0)
    } else {
        Reply::Errno(last_errno())
    }
}

/// The file type bits of an open descriptor.
pub(super) fn identity_kind(fd: &OwnedFd) -> Result<libc::mode_t, i32> {
    // SAFETY: as in `stat_at`.
    #[expect(unsafe_code, reason = "plain C struct")]
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `st` is valid storage.
    #[expect(unsafe_code, reason = "fstat has no safe wrapper")]
    let rc = unsafe { libc::fstat(fd.as_raw_fd(), &mut st) };
    if rc != 0 {
        return Err(last_errno());
    }
    Ok(st.st_mode & libc::S_IFMT)
}

/// Sends `reply` for notification `id`. A caller that is gone is no error.
pub(super) fn answer(listener: &OwnedFd, id: u64, reply: Reply) {
    let send = |val: i64, error: i32, flags: u32| {
        let mut resp = libc::seccomp_notif_resp {
            id,
            val,
            error,
            flags,
        };
        // SAFETY: `resp` is a valid response struct of the size the ioctl encodes.
        #[expect(unsafe_code, reason = "seccomp ioctl has no safe wrapper")]
        unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &mut resp as *mut libc::seccomp_notif_resp,
            );
        }
    };
    match reply {
        Reply::Later => {}
        Reply::Continue => send(0, 0, libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32),
        Reply::Errno(e) => send(0, -e, 0),
        Reply::Value(v) => send(v, 0, 0),
        Reply::Fd { fd, cloexec } => {
            let add = |flags: u32| {
                let mut addfd = libc::seccomp_notif_addfd {
                    id,
                    flags,
                    srcfd: fd.as_raw_fd() as u32,
                    newfd: 0,
                    newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
                };
                // SAFETY: `addfd` is a valid struct of the size the ioctl encodes.
                #[expect(unsafe_code, reason = "seccomp ioctl has no safe wrapper")]
                unsafe {
                    libc::ioctl(
                        listener.as_raw_fd(),
                        libc::SECCOMP_IOCTL_NOTIF_ADDFD,
                        &mut addfd as *mut libc::seccomp_notif_addfd,
                    )
                }
            };
            // Install and answer in one step (Linux 5.14); before that, in two.
            let rc = add(libc::SECCOMP_ADDFD_FLAG_SEND as u32);
            if rc < 0 && last_errno() == libc::EINVAL {
                let newfd = add(0);
                if newfd < 0 {
                    send(0, -last_errno(), 0);
                } else {
                    send(i64::from(newfd), 0, 0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notifying_filter_compiles_and_marks_are_rewritten() {
        let arch = TargetArch::try_from(std::env::consts::ARCH).unwrap();
        let filter = SeccompFilter::new(
            notified_rules().unwrap(),
            SeccompAction::Allow,
            SeccompAction::Trace(MARK),
            arch,
        )
        .unwrap();
        let program: BpfProgram = filter.try_into().unwrap();
        let marks = program
            .iter()
            .filter(|i| i.code == BPF_RET_K && i.k == RET_TRACE | MARK)
            .count();
        assert!(marks > 0, "the match action appears as RET K with the mark");
    }
}
