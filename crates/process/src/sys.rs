//! The handful of system calls the OS only offers through `unsafe`: starting a child in a
//! session of its own, signalling a whole process group, and duplicating a descriptor.
//! Everything else in the crate is safe code built on these.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

/// Makes the child, between fork and exec, the leader of a new session and therefore of a
/// new process group whose id is its pid. With `controlling_tty`, its stdin (a terminal)
/// also becomes the session's controlling terminal, which job control and `tty` need.
///
/// A new session rather than only a new group: the command then has no controlling
/// terminal of ours, so it cannot read the user's keystrokes, be stopped by `SIGTTIN`, or
/// receive the user's Ctrl-C.
pub(crate) fn start_in_new_session(cmd: &mut tokio::process::Command, controlling_tty: bool) {
    // SAFETY: the closure runs in the child between fork and exec. It only calls `setsid`
    // and `ioctl`, both async-signal-safe, allocates nothing and touches no state shared
    // with the parent.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            #[allow(
                clippy::unnecessary_cast,
                reason = "the request type differs by platform"
            )]
            let request = libc::TIOCSCTTY as _;
            if controlling_tty && libc::ioctl(0, request, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Sends `signal` to every process in the group `pgid`. A group that no longer exists is
/// not an error.
pub(crate) fn signal_process_group(pgid: u32, signal: libc::c_int) -> io::Result<()> {
    let pgid = libc::pid_t::try_from(pgid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "process id out of range"))?;
    if pgid <= 1 {
        // 0 would be our own group and 1 init's; neither is ever a child's group.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing to signal process group 0 or 1",
        ));
    }
    // SAFETY: `killpg` has no memory-safety preconditions; `pgid > 1` rules out signalling
    // our own group or init.
    let rc = unsafe { libc::killpg(pgid, signal) };
    if rc == -1 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::ESRCH) {
            return Ok(());
        }
        return Err(err);
    }
    Ok(())
}

/// Duplicates `fd` (close-on-exec) and puts the shared open file in non-blocking mode,
/// ready for Tokio's `AsyncFd`.
pub(crate) fn dup_nonblocking(fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: the caller passes a descriptor it owns and keeps open for this call; the
    // borrow ends before this function returns.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let owned = borrowed.try_clone_to_owned()?;
    let raw = owned.as_raw_fd();
    // SAFETY: `raw` is a valid open descriptor owned by `owned`; F_GETFL/F_SETFL only read
    // and set its status flags.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    if flags == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(owned)
}

/// Registers `file` with Tokio's reactor for readiness-based reads and writes. Must be
/// called within a runtime that has I/O enabled.
pub(crate) fn register_async(
    file: std::fs::File,
) -> io::Result<tokio::io::unix::AsyncFd<std::fs::File>> {
    // SAFETY: `File` owns its descriptor, keeps it open until it is dropped (which happens
    // only when the `AsyncFd` is dropped), and `as_raw_fd` always returns that descriptor.
    unsafe { tokio::io::unix::AsyncFd::register(file) }.map_err(io::Error::from)
}
