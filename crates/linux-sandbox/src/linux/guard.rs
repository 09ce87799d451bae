//! Keeping `.git` and `.osprey` from being *created* in a writable root.
//!
//! An existing `.git` or `.osprey` is a read-only mount (see `mounts.rs`). A missing one has
//! nothing to mount over, and no mechanism at hand can refuse one name in a writable
//! directory: Landlock grants rights per directory, not per name; a mount point must exist
//! on the host (creating placeholders would leave `.git`/`.osprey` entries in the user's
//! tree); making the root's top level read-only would break new files at the top of the
//! repository (every atomic rewrite of `README.md` creates a temporary file next to it).
//!
//! So creation itself goes through a supervisor:
//!
//! - A Landlock layer that grants nothing for `MAKE_REG`, `MAKE_DIR` and `MAKE_SYM`: the
//!   kernel refuses the command every new file, directory and symlink, everywhere.
//! - A seccomp filter (`notify.rs`) that hands every call which could create a name —
//!   `mkdir*`, `symlink*`, `link*`, `rename*`, `open*`/`creat` with `O_CREAT` or
//!   `O_TMPFILE`, `openat2` — to the supervisor as a user notification.
//! - The supervisor (`supervisor.rs`), this helper's parent half after a `fork` (inside the
//!   same mount namespace and the policy's own Landlock layer, outside the creation layer
//!   and seccomp), reads the path from the command's memory *once*, resolves its parent
//!   directory to a descriptor, refuses the name when it is `.git` or `.osprey` (any letter
//!   case) directly in a writable root (compared by device and inode, so no path spelling,
//!   symlink or bind mount gets around it), and otherwise performs the call itself on that
//!   descriptor and returns the result (a new descriptor is installed in the command with
//!   `SECCOMP_IOCTL_NOTIF_ADDFD`).
//!
//! This is sound although the command can change its memory, its cwd or symlinks at any
//! time: the supervisor acts on its own copy of the path and on descriptors it opened, and
//! when it lets the kernel run a call itself (an `O_CREAT` open of a file that already
//! exists) the Landlock layer still refuses any creation the call might turn into. The
//! supervisor cannot reach further than the command: the policy's Landlock layer is
//! applied before the fork, so a path through a magic link (`/proc/<pid>/cwd` of a process
//! outside, an inherited descriptor) meets the same rules, and the read-only mounts hold
//! for both. Inside bubblewrap the mounts alone make the view, and `/proc` shows only the
//! sandbox's own processes.
//!
//! Without Landlock (the bubblewrap fallback on old kernels) there is no such backstop, so
//! the supervisor performs *every* notified call itself, also opens of existing files
//! (those that may block, on a thread of their own).
//!
//! The command is the supervisor's child, in the same process group and session; the
//! supervisor forwards termination signals, reaps orphans (it is a subreaper, so daemons
//! stay its descendants and their calls can be read), and exits with the command's status
//! (dying by the same signal). If the supervisor dies, the command is killed
//! (`PR_SET_PDEATHSIG`), and a notified call without a supervisor fails: it fails closed.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;

use osprey_sandboxing::{FileSystemPolicy, PROTECTED_NAMES};

use super::HelperError;
use super::notify;
use super::supervisor::Supervisor;

/// The directories in which the protected names may not be created, by (device, inode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Roots(pub(crate) Vec<(u64, u64)>);

impl Roots {
    /// The writable directories of `fs`, when at least one of them lacks a protected name
    /// (or has it only as a symlink, which a command may replace); `None` when every
    /// protected name already exists as a read-only mount and nothing needs guarding.
    pub(crate) fn of(fs: &FileSystemPolicy) -> Option<Self> {
        let mut roots = Vec::new();
        let mut needed = false;
        for path in fs.writable_paths() {
            if path.starts_with("/dev") || path.starts_with("/proc") {
                continue;
            }
            let Ok(meta) = std::fs::metadata(path) else {
                continue;
            };
            if !meta.is_dir() {
                continue;
            }
            roots.push((meta.dev(), meta.ino()));
            needed |= PROTECTED_NAMES.iter().any(|name| {
                std::fs::symlink_metadata(path.join(name))
                    .ok()
                    .is_none_or(|m| m.file_type().is_symlink())
            });
        }
        (needed && !roots.is_empty()).then_some(Self(roots))
    }

    /// Whether `name` in the directory `dir` is a protected name in a root.
    pub(crate) fn forbids(&self, dir: (u64, u64), name: &[u8]) -> bool {
        PROTECTED_NAMES
            .iter()
            .any(|p| p.as_bytes().eq_ignore_ascii_case(name))
            && self.0.contains(&dir)
    }
}

/// What stops the command from creating names behind the supervisor's back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backstop {
    /// A Landlock layer refuses every creation: the supervisor may let the kernel run a
    /// call that should not create anything.
    Landlock,
    /// No Landlock: the supervisor runs every notified call itself.
    None,
}

impl Backstop {
    fn to_byte(self) -> u8 {
        match self {
            Self::Landlock => b'L',
            Self::None => b'N',
        }
    }

    fn from_byte(byte: u8) -> Self {
        if byte == b'L' {
            Self::Landlock
        } else {
            Self::None
        }
    }
}

/// The command's side after the fork: hands the notification listener to the supervisor.
pub(crate) struct CommandSide {
    socket: OwnedFd,
}

impl CommandSide {
    /// Installs the notifying seccomp filter and sends its listener to the supervisor.
    /// Must run after the Landlock layers and before the other seccomp filters.
    pub(crate) fn hand_over(self, backstop: Backstop) -> Result<(), HelperError> {
        let listener = notify::install_filter()?;
        send_fd(&self.socket, &listener, backstop.to_byte())
            .map_err(|e| guard_error("sending the notification listener", e))
    }
}

fn guard_error(step: &str, e: io::Error) -> HelperError {
    HelperError::Guard(format!("{step}: {e}"))
}

fn last_error(step: &str) -> HelperError {
    guard_error(step, io::Error::last_os_error())
}

/// Signals the supervisor handles through a signalfd instead of by default action.
const HANDLED: [libc::c_int; 7] = [
    libc::SIGCHLD,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// Forks. The child returns and goes on confining itself; the parent becomes the
/// supervisor and never returns (it exits with the child's status).
pub(crate) fn start(roots: Roots) -> Result<CommandSide, HelperError> {
    let mut pair = [0; 2];
    // SAFETY: `pair` is a valid out-array of two descriptors.
    #[expect(unsafe_code, reason = "socketpair has no safe wrapper")]
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(last_error("socketpair"));
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    #[expect(unsafe_code, reason = "taking ownership of new descriptors")]
    let (supervisor_end, command_end) =
        unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    // Block the handled signals before forking, so a child that exits at once still
    // leaves its SIGCHLD pending for the supervisor; the child restores the old mask.
    let old_mask = block_signals()?;
    // SAFETY: getpid cannot fail.
    #[expect(unsafe_code, reason = "libc identity call")]
    let parent = unsafe { libc::getpid() };
    // SAFETY: the helper is single-threaded, so the child may run arbitrary code.
    #[expect(unsafe_code, reason = "fork has no safe wrapper")]
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(last_error("fork")),
        0 => {
            drop(supervisor_end);
            set_mask(&old_mask)?;
            // SAFETY: prctl with integer arguments only.
            #[expect(unsafe_code, reason = "prctl has no safe wrapper")]
            let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            // SAFETY: getppid cannot fail.
            #[expect(unsafe_code, reason = "libc identity call")]
            let still_ours = unsafe { libc::getppid() } == parent;
            if rc != 0 || !still_ours {
                return Err(guard_error(
                    "tying the command to its supervisor",
                    io::Error::other("the supervisor is gone"),
                ));
            }
            Ok(CommandSide {
                socket: command_end,
            })
        }
        child => {
            drop(command_end);
            supervise(&supervisor_end, child, roots)
        }
    }
}

fn sigset(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: an all-zero sigset_t is valid storage; sigemptyset initialises it.
    #[expect(unsafe_code, reason = "plain C struct and sigset helpers")]
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

fn block_signals() -> Result<libc::sigset_t, HelperError> {
    let set = sigset(&HANDLED);
    // SAFETY: as above; `old` is valid storage for the previous mask.
    #[expect(unsafe_code, reason = "sigprocmask has no safe wrapper")]
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        if libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
            return Err(last_error("blocking signals"));
        }
        Ok(old)
    }
}

fn set_mask(mask: &libc::sigset_t) -> Result<(), HelperError> {
    // SAFETY: `mask` is an initialised sigset_t.
    #[expect(unsafe_code, reason = "sigprocmask has no safe wrapper")]
    let rc = unsafe { libc::sigprocmask(libc::SIG_SETMASK, mask, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(last_error("restoring the signal mask"));
    }
    Ok(())
}

/// The supervisor: receives the listener, serves notifications until the command exits,
/// then exits the same way.
fn supervise(socket: &OwnedFd, child: libc::pid_t, roots: Roots) -> ! {
    // SAFETY: prctl with integer arguments only. Not dumpable: nothing in the sandbox may
    // open this process's memory, even where ptrace rules would let a same-user process.
    #[expect(unsafe_code, reason = "prctl has no safe wrapper")]
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    let signals = match signal_fd() {
        Ok(fd) => fd,
        Err(e) => fail(child, &e),
    };
    let supervisor = match recv_fd(socket) {
        Ok(Some((listener, byte))) => {
            Some(Supervisor::new(listener, roots, Backstop::from_byte(byte)))
        }
        // The command ended (or failed to confine itself) before handing over: it has
        // said why on stderr; pass its status on.
        Ok(None) => None,
        Err(e) => fail(
            child,
            &guard_error("receiving the notification listener", e),
        ),
    };
    let mut listening = supervisor.is_some();
    loop {
        let mut fds = [
            libc::pollfd {
                fd: signals.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: supervisor
                    .as_ref()
                    .filter(|_| listening)
                    .map_or(-1, Supervisor::listener_fd),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a valid array of two pollfd structs.
        #[expect(unsafe_code, reason = "poll has no safe wrapper")]
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            fail(child, &last_error("poll"));
        }
        if fds[0].revents & libc::POLLIN != 0 {
            drain_signals(&signals, child);
        }
        if let Some(sup) = &supervisor {
            if fds[1].revents & libc::POLLIN != 0 {
                sup.serve_one();
            } else if fds[1].revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                // Every process under the filter is gone; only the exit is left to see.
                listening = false;
            }
        }
    }
}

/// Kills the command and exits with the sandbox failure status.
fn fail(child: libc::pid_t, e: &HelperError) -> ! {
    use std::io::Write as _;
    // SAFETY: kill with integer arguments.
    #[expect(unsafe_code, reason = "kill has no safe wrapper")]
    unsafe {
        libc::kill(child, libc::SIGKILL);
    }
    let _ = writeln!(io::stderr(), "osprey-linux-sandbox: {e}");
    std::process::exit(crate::EXIT_SANDBOX_FAILED)
}

fn signal_fd() -> Result<OwnedFd, HelperError> {
    let set = sigset(&HANDLED);
    // SAFETY: `set` is an initialised sigset_t; -1 asks for a new descriptor.
    #[expect(unsafe_code, reason = "signalfd has no safe wrapper")]
    let fd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
    if fd < 0 {
        return Err(last_error("signalfd"));
    }
    // SAFETY: a new descriptor owned by nothing else.
    #[expect(unsafe_code, reason = "taking ownership of a new descriptor")]
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads every pending signal: SIGCHLD reaps (and ends the supervisor when it was the
/// command), signals sent by a process are passed on to the command. Terminal-generated
/// SIGINT/SIGQUIT reach the command through its process group already.
fn drain_signals(signals: &OwnedFd, child: libc::pid_t) {
    loop {
        // SAFETY: an all-zero signalfd_siginfo is valid storage.
        #[expect(unsafe_code, reason = "plain C struct")]
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        // SAFETY: `info` is `size` bytes of writable storage.
        #[expect(unsafe_code, reason = "read into a C struct")]
        let n = unsafe {
            libc::read(
                signals.as_raw_fd(),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                size,
            )
        };
        if usize::try_from(n).ok() != Some(size) {
            return;
        }
        let signo = i32::try_from(info.ssi_signo).unwrap_or(0);
        if signo == libc::SIGCHLD {
            reap(child);
        } else if info.ssi_code <= 0 {
            // SI_USER, SI_QUEUE, SI_TKILL: from a process, not the terminal.
            // SAFETY: kill with integer arguments.
            #[expect(unsafe_code, reason = "kill has no safe wrapper")]
            unsafe {
                libc::kill(child, signo);
            }
        }
    }
}

/// Reaps every exited descendant; when the command itself exited, exits the same way.
fn reap(child: libc::pid_t) {
    loop {
        let mut status = 0;
        // SAFETY: `status` is valid storage for the wait status.
        #[expect(unsafe_code, reason = "waitpid has no safe wrapper")]
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if pid == child {
            mirror(status);
        }
    }
}

/// Exits as the command did: the same code, or death by the same signal (without a core
/// file of the supervisor).
fn mirror(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        let set = sigset(&[sig]);
        // SAFETY: plain libc calls with valid arguments; raising a signal whose default
        // action ends the process.
        #[expect(unsafe_code, reason = "signal disposition calls")]
        unsafe {
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            libc::signal(sig, libc::SIG_DFL);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::raise(sig);
        }
        std::process::exit(128 + sig);
    }
    std::process::exit(libc::WEXITSTATUS(status))
}

/// Sends `fd` and one byte over `socket`.
fn send_fd(socket: &OwnedFd, fd: &OwnedFd, byte: u8) -> io::Result<()> {
    let mut data = [byte];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let raw: RawFd = fd.as_raw_fd();
    // SAFETY: CMSG_SPACE is a pure size computation.
    #[expect(unsafe_code, reason = "cmsg size macro")]
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: an all-zero msghdr is valid; the pointers set below outlive the call.
    #[expect(unsafe_code, reason = "building a msghdr with SCM_RIGHTS")]
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(io::Error::other("no room for the control message"));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), raw);
        if libc::sendmsg(socket.as_raw_fd(), &msg, 0) != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives a descriptor and its byte; `None` when the other end closed without sending.
fn recv_fd(socket: &OwnedFd) -> io::Result<Option<(OwnedFd, u8)>> {
    let mut data = [0u8];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: CMSG_SPACE is a pure size computation.
    #[expect(unsafe_code, reason = "cmsg size macro")]
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: as in `send_fd`; the kernel fills `control` with at most `space` bytes.
    #[expect(unsafe_code, reason = "reading a msghdr with SCM_RIGHTS")]
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space;
        let n = loop {
            let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Ok(None);
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::other("the message carried no descriptor"));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(Some((OwnedFd::from_raw_fd(fd), data[0])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use osprey_sandboxing::{FsAccess, FsEntry};

    #[test]
    fn roots_are_guarded_only_when_a_protected_name_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let fs = FileSystemPolicy::new([
            FsEntry::new("/", FsAccess::Read),
            FsEntry::new(&root, FsAccess::Write),
            FsEntry::new("/dev/null", FsAccess::Write),
        ])
        .unwrap();
        let roots = Roots::of(&fs).unwrap();
        let meta = std::fs::metadata(&root).unwrap();
        let id = (meta.dev(), meta.ino());
        assert_eq!(roots, Roots(vec![id]));
        assert!(roots.forbids(id, b".git"));
        assert!(roots.forbids(id, b".OSPREY"));
        assert!(!roots.forbids(id, b".gitignore"));
        assert!(!roots.forbids((id.0, id.1 + 1), b".git"));

        std::fs::create_dir(root.join(".git")).unwrap();
        std::os::unix::fs::symlink(root.join(".git"), root.join(".osprey")).unwrap();
        assert!(
            Roots::of(&fs).is_some(),
            "a symlinked .osprey can be replaced"
        );
        std::fs::remove_file(root.join(".osprey")).unwrap();
        std::fs::create_dir(root.join(".osprey")).unwrap();
        assert_eq!(Roots::of(&fs), None);
    }
}
