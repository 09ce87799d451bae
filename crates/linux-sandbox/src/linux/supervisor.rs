//! The supervisor of the creation guard (the design is in `guard.rs`): for each
//! notification it reads the call's paths from the command's memory (`process_vm_readv`,
//! once), opens the starting directory through `/proc/<pid>/cwd` or `/proc/<pid>/fd/<n>`,
//! resolves the parent directory to a descriptor, checks with
//! `SECCOMP_IOCTL_NOTIF_ID_VALID` that the caller is still the same thread, refuses a
//! protected name in a root with `EACCES`, and performs the call on the parent descriptor
//! under the caller's umask. Errors are passed back as the call's `errno`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::CString;
use std::io::Write as _;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;

use osprey_sandboxing::GUARD_REFUSAL;
use osprey_sandboxing::helper_args::HELPER_ARG0;

use super::guard::{Backstop, Roots};
use super::notify::{
    Reply, TMPFILE_BIT, answer, cstring, errno_of, identity, identity_kind, last_errno, open_at,
    stat_at, status,
};

/// `AT_FDCWD`, for the calls that take no directory.
#[cfg(target_arch = "x86_64")]
const CWD: i32 = libc::AT_FDCWD;
/// Symlinks followed while resolving a dangling link by hand, as the kernel allows.
const MAX_LINKS: usize = 40;

/// One notified call.
struct Call {
    id: u64,
    pid: i32,
    nr: i64,
    args: [u64; 6],
}

impl Call {
    fn dirfd(&self, i: usize) -> i32 {
        // The kernel passes an `int`: the low 32 bits.
        self.args[i] as u32 as i32
    }
}

/// The answering side; see the module comment.
pub(crate) struct Supervisor {
    listener: Arc<OwnedFd>,
    roots: Roots,
    backstop: Backstop,
    /// Refusals already reported on stderr (each path once).
    reported: RefCell<HashSet<PathBuf>>,
}

/// Where a name is to be created: the parent directory and the last component.
struct Place {
    parent: OwnedFd,
    /// The last component as given (trailing slashes kept, so the kernel judges them).
    name: CString,
    /// The last component without slashes, for the protected-name check.
    bare: Vec<u8>,
}

impl Supervisor {
    pub(crate) fn new(listener: OwnedFd, roots: Roots, backstop: Backstop) -> Self {
        Self {
            listener: Arc::new(listener),
            roots,
            backstop,
            reported: RefCell::new(HashSet::new()),
        }
    }

    pub(crate) fn listener_fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    /// Receives one notification and answers it.
    pub(crate) fn serve_one(&self) {
        // SAFETY: an all-zero seccomp_notif is what NOTIF_RECV requires.
        #[expect(unsafe_code, reason = "plain C struct")]
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: `req` is valid storage of the size the ioctl number encodes.
        #[expect(unsafe_code, reason = "seccomp ioctl has no safe wrapper")]
        let rc = unsafe {
            libc::ioctl(
                self.listener_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut req as *mut libc::seccomp_notif,
            )
        };
        if rc != 0 {
            // The caller died before the notification was read, or a signal came.
            return;
        }
        let call = Call {
            id: req.id,
            pid: i32::try_from(req.pid).unwrap_or(0),
            nr: i64::from(req.data.nr),
            args: req.data.args,
        };
        let reply = self.decide(&call).unwrap_or_else(|errno| {
            // A failure to read or resolve: with the Landlock layer behind it, the kernel
            // may run the call and report its own precise error; without, refuse.
            match self.backstop {
                Backstop::Landlock => Reply::Continue,
                Backstop::None => Reply::Errno(errno),
            }
        });
        answer(&self.listener, call.id, reply);
    }

    /// What to do with `call`. `Err(errno)` when its arguments could not be read or its
    /// directories resolved.
    fn decide(&self, call: &Call) -> Result<Reply, i32> {
        let a = &call.args;
        match call.nr {
            libc::SYS_mkdirat => self.mkdir(call, call.dirfd(0), a[1], a[2]),
            libc::SYS_symlinkat => self.symlink(call, a[0], call.dirfd(1), a[2]),
            libc::SYS_linkat => self.link(call, (call.dirfd(0), a[1]), (call.dirfd(2), a[3]), a[4]),
            libc::SYS_renameat => {
                self.rename(call, (call.dirfd(0), a[1]), (call.dirfd(2), a[3]), 0)
            }
            libc::SYS_renameat2 => {
                self.rename(call, (call.dirfd(0), a[1]), (call.dirfd(2), a[3]), a[4])
            }
            libc::SYS_openat => self.open(call, call.dirfd(0), a[1], a[2], a[3], 0),
            libc::SYS_openat2 => {
                let size = usize::try_from(a[3]).map_err(|_| libc::E2BIG)?;
                let raw = self.read_bytes(call, a[2], size.min(4096))?;
                if size < std::mem::size_of::<libc::open_how>() {
                    return Ok(Reply::Errno(libc::EINVAL));
                }
                if raw.len() < size || raw[24..].iter().any(|&b| b != 0) {
                    return Ok(Reply::Errno(libc::E2BIG));
                }
                let word = |i: usize| {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&raw[i * 8..i * 8 + 8]);
                    u64::from_ne_bytes(b)
                };
                self.open(call, call.dirfd(0), a[1], word(0), word(1), word(2))
            }
            #[cfg(target_arch = "x86_64")]
            libc::SYS_mkdir => self.mkdir(call, CWD, a[0], a[1]),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_symlink => self.symlink(call, a[0], CWD, a[1]),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_link => self.link(call, (CWD, a[0]), (CWD, a[1]), 0),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_rename => self.rename(call, (CWD, a[0]), (CWD, a[1]), 0),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_open => self.open(call, CWD, a[0], a[1], a[2], 0),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_creat => {
                let flags = (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64;
                self.open(call, CWD, a[0], flags, a[1], 0)
            }
            _ => Err(libc::ENOSYS),
        }
    }

    /// Reads up to `len` bytes at `addr` in the caller, stopping at the first unmapped page.
    fn read_bytes(&self, call: &Call, addr: u64, len: usize) -> Result<Vec<u8>, i32> {
        const PAGE: u64 = 4096;
        let mut buf = vec![0u8; len];
        let mut remote = Vec::new();
        let mut at = addr;
        let end = addr.checked_add(len as u64).ok_or(libc::EFAULT)?;
        while at < end {
            let next = ((at / PAGE) + 1) * PAGE;
            let chunk = next.min(end) - at;
            remote.push(libc::iovec {
                iov_base: at as *mut libc::c_void,
                iov_len: chunk as usize,
            });
            at += chunk;
        }
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        // SAFETY: `local` covers `buf`; the remote iovecs are only read by the kernel, in
        // the other process.
        #[expect(unsafe_code, reason = "process_vm_readv has no safe wrapper")]
        let n = unsafe {
            libc::process_vm_readv(
                call.pid,
                &local,
                1,
                remote.as_ptr(),
                remote.len() as libc::c_ulong,
                0,
            )
        };
        if n < 0 {
            return Err(last_errno());
        }
        buf.truncate(usize::try_from(n).unwrap_or(0));
        Ok(buf)
    }

    /// The NUL-terminated string at `addr` (at most `PATH_MAX` bytes).
    fn read_string(&self, call: &Call, addr: u64) -> Result<Vec<u8>, i32> {
        if addr == 0 {
            return Err(libc::EFAULT);
        }
        let max = libc::PATH_MAX as usize;
        let bytes = self.read_bytes(call, addr, max)?;
        match bytes.iter().position(|&b| b == 0) {
            Some(end) => Ok(bytes[..end].to_vec()),
            None if bytes.len() == max => Err(libc::ENAMETOOLONG),
            None => Err(libc::EFAULT),
        }
    }

    /// The path at `addr`, as the caller means it (see [`as_caller`]).
    fn read_path(&self, call: &Call, addr: u64) -> Result<Vec<u8>, i32> {
        Ok(as_caller(call.pid, self.read_string(call, addr)?))
    }

    /// The directory a relative path starts from: the caller's cwd or one of its
    /// descriptors. `None` for an absolute path (resolved from `/` without one).
    fn base(
        &self,
        call: &Call,
        dirfd: i32,
        path: &[u8],
        resolve: u64,
    ) -> Result<Option<OwnedFd>, i32> {
        if path.first() == Some(&b'/') && resolve == 0 {
            return Ok(None);
        }
        let link = if dirfd == libc::AT_FDCWD {
            format!("/proc/{}/cwd", call.pid)
        } else {
            format!("/proc/{}/fd/{dirfd}", call.pid)
        };
        let link = cstring(link.as_bytes())?;
        let flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
        open_at(libc::AT_FDCWD, &link, flags, 0, 0).map(Some)
    }

    /// Resolves `path` (from `dirfd`) to its parent directory and last component.
    fn place(&self, call: &Call, dirfd: i32, path: &[u8], resolve: u64) -> Result<Place, i32> {
        if path.is_empty() {
            return Err(libc::ENOENT);
        }
        let base = self.base(call, dirfd, path, resolve)?;
        self.place_from(base, path, resolve)
    }

    fn place_from(&self, base: Option<OwnedFd>, path: &[u8], resolve: u64) -> Result<Place, i32> {
        let trimmed_len = path.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
        let trimmed = &path[..trimmed_len];
        let (parent_path, name): (&[u8], &[u8]) = match trimmed.iter().rposition(|&b| b == b'/') {
            Some(0) => (b"/", &path[1..]),
            Some(i) => (&trimmed[..i], &path[i + 1..]),
            None if trimmed.is_empty() => (b"/", b"."),
            None => (b".", path),
        };
        let bare = name.iter().copied().filter(|&b| b != b'/').collect();
        let dir = base.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
        let flags = (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
        let parent = open_at(dir, &cstring(parent_path)?, flags, 0, resolve)?;
        Ok(Place {
            parent,
            name: cstring(name)?,
            bare,
        })
    }

    /// True when creating `place` would create a protected name in a root. The first
    /// refusal of each path is said on stderr (the command may hide its own error
    /// messages), which is also how denial detection knows the sandbox refused it.
    fn forbidden(&self, place: &Place) -> Result<bool, i32> {
        let forbidden = self.roots.forbids(identity(&place.parent)?, &place.bare);
        if forbidden {
            let dir = std::fs::read_link(format!("/proc/self/fd/{}", place.parent.as_raw_fd()))
                .unwrap_or_default();
            let path = dir.join(std::ffi::OsStr::from_bytes(&place.bare));
            if self.reported.borrow_mut().insert(path.clone()) {
                let _ = writeln!(
                    std::io::stderr(),
                    "{HELPER_ARG0}: {GUARD_REFUSAL} '{}': .git and .osprey cannot be created \
                     in a writable root",
                    path.display()
                );
            }
        }
        Ok(forbidden)
    }

    /// The caller's umask, from `/proc/<pid>/status`.
    fn umask(&self, call: &Call) -> Result<libc::mode_t, i32> {
        let text = std::fs::read_to_string(format!("/proc/{}/status", call.pid))
            .map_err(|e| errno_of(&e))?;
        text.lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .and_then(|v| libc::mode_t::from_str_radix(v.trim(), 8).ok())
            .ok_or(libc::EIO)
    }

    /// Reads everything `place`s need is done: the caller must still be the thread that
    /// made the call, or the descriptors opened through `/proc/<pid>` may be another's.
    fn still_valid(&self, call: &Call) -> Result<(), i32> {
        let mut id = call.id;
        // SAFETY: `id` is a valid u64 for the ioctl to read.
        #[expect(unsafe_code, reason = "seccomp ioctl has no safe wrapper")]
        let rc = unsafe {
            libc::ioctl(
                self.listener_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
                &mut id as *mut u64,
            )
        };
        if rc != 0 {
            return Err(libc::ESRCH);
        }
        Ok(())
    }

    /// Sets this process's umask to the caller's, for a call that creates something.
    fn with_umask(&self, call: &Call) -> Result<(), i32> {
        let mask = self.umask(call)?;
        // SAFETY: umask cannot fail.
        #[expect(unsafe_code, reason = "umask has no safe wrapper")]
        unsafe {
            libc::umask(mask);
        }
        Ok(())
    }

    fn mkdir(&self, call: &Call, dirfd: i32, path: u64, mode: u64) -> Result<Reply, i32> {
        let path = self.read_path(call, path)?;
        let place = self.place(call, dirfd, &path, 0)?;
        self.still_valid(call)?;
        if self.forbidden(&place)? {
            return Ok(Reply::Errno(libc::EACCES));
        }
        self.with_umask(call)?;
        // SAFETY: `place.name` is NUL-terminated; the parent is an open directory.
        #[expect(
            unsafe_code,
            reason = "mkdirat has no safe wrapper on a raw directory fd"
        )]
        let rc = unsafe {
            libc::mkdirat(
                place.parent.as_raw_fd(),
                place.name.as_ptr(),
                mode as libc::mode_t,
            )
        };
        Ok(status(rc))
    }

    fn symlink(&self, call: &Call, target: u64, dirfd: i32, path: u64) -> Result<Reply, i32> {
        let target = cstring(&self.read_string(call, target)?)?;
        let path = self.read_path(call, path)?;
        let place = self.place(call, dirfd, &path, 0)?;
        self.still_valid(call)?;
        if self.forbidden(&place)? {
            return Ok(Reply::Errno(libc::EACCES));
        }
        // SAFETY: both strings are NUL-terminated; the parent is an open directory.
        #[expect(
            unsafe_code,
            reason = "symlinkat has no safe wrapper on a raw directory fd"
        )]
        let rc = unsafe {
            libc::symlinkat(
                target.as_ptr(),
                place.parent.as_raw_fd(),
                place.name.as_ptr(),
            )
        };
        Ok(status(rc))
    }

    fn link(
        &self,
        call: &Call,
        old: (i32, u64),
        new: (i32, u64),
        flags: u64,
    ) -> Result<Reply, i32> {
        let known = (libc::AT_SYMLINK_FOLLOW | libc::AT_EMPTY_PATH) as u64;
        if flags & !known != 0 {
            return Ok(Reply::Errno(libc::EINVAL));
        }
        let old_path = self.read_path(call, old.1)?;
        let new_path = self.read_path(call, new.1)?;
        let to = self.place(call, new.0, &new_path, 0)?;
        if old_path.is_empty() && flags & libc::AT_EMPTY_PATH as u64 != 0 {
            // Linking an open file (an `O_TMPFILE` one, say) by its descriptor: through our
            // own `/proc/self/fd` link to it, which needs no privilege.
            let link = cstring(format!("/proc/{}/fd/{}", call.pid, old.0).as_bytes())?;
            let file = open_at(
                libc::AT_FDCWD,
                &link,
                (libc::O_PATH | libc::O_CLOEXEC) as u64,
                0,
                0,
            )?;
            self.still_valid(call)?;
            if self.forbidden(&to)? {
                return Ok(Reply::Errno(libc::EACCES));
            }
            let ours = cstring(format!("/proc/self/fd/{}", file.as_raw_fd()).as_bytes())?;
            // SAFETY: both names are NUL-terminated; the descriptors are open.
            #[expect(
                unsafe_code,
                reason = "linkat has no safe wrapper on raw directory fds"
            )]
            let rc = unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    ours.as_ptr(),
                    to.parent.as_raw_fd(),
                    to.name.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            };
            return Ok(status(rc));
        }
        let from = self.place(call, old.0, &old_path, 0)?;
        self.still_valid(call)?;
        if self.forbidden(&to)? {
            return Ok(Reply::Errno(libc::EACCES));
        }
        // SAFETY: as above.
        #[expect(
            unsafe_code,
            reason = "linkat has no safe wrapper on raw directory fds"
        )]
        let rc = unsafe {
            libc::linkat(
                from.parent.as_raw_fd(),
                from.name.as_ptr(),
                to.parent.as_raw_fd(),
                to.name.as_ptr(),
                (flags & libc::AT_SYMLINK_FOLLOW as u64) as libc::c_int,
            )
        };
        Ok(status(rc))
    }

    fn rename(
        &self,
        call: &Call,
        old: (i32, u64),
        new: (i32, u64),
        flags: u64,
    ) -> Result<Reply, i32> {
        let old_path = self.read_path(call, old.1)?;
        let new_path = self.read_path(call, new.1)?;
        let from = self.place(call, old.0, &old_path, 0)?;
        let to = self.place(call, new.0, &new_path, 0)?;
        self.still_valid(call)?;
        // Neither create a protected name nor move one away (a symlinked `.osprey` could be
        // replaced that way).
        if self.forbidden(&to)? || self.forbidden(&from)? {
            return Ok(Reply::Errno(libc::EACCES));
        }
        // SAFETY: both names are NUL-terminated; the parents are open directories.
        #[expect(
            unsafe_code,
            reason = "renameat2 has no safe wrapper on raw directory fds"
        )]
        let rc = unsafe {
            libc::renameat2(
                from.parent.as_raw_fd(),
                from.name.as_ptr(),
                to.parent.as_raw_fd(),
                to.name.as_ptr(),
                flags as libc::c_uint,
            )
        };
        Ok(status(rc))
    }

    fn open(
        &self,
        call: &Call,
        dirfd: i32,
        path: u64,
        flags: u64,
        mode: u64,
        resolve: u64,
    ) -> Result<Reply, i32> {
        let path = self.read_path(call, path)?;
        let creates = flags & (libc::O_CREAT as u64 | TMPFILE_BIT) != 0;
        if !creates && self.backstop == Backstop::Landlock {
            // Only `openat2` gets here; without creation flags the Landlock layer stops
            // whatever the kernel would do with them.
            return Ok(Reply::Continue);
        }
        let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
        let own_flags = flags | libc::O_CLOEXEC as u64;
        if flags & TMPFILE_BIT != 0 || !creates {
            // No name is created (an `O_TMPFILE` file gets one only through `linkat`, which
            // is checked): open exactly as asked.
            let base = self.base(call, dirfd, &path, resolve)?;
            self.still_valid(call)?;
            self.with_umask(call)?;
            let dir = base.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
            let path = cstring(&path)?;
            if !creates {
                // Without a backstop, opening an existing FIFO or device may block: do it
                // on a thread of its own.
                let listener = Arc::clone(&self.listener);
                let id = call.id;
                std::thread::spawn(move || {
                    let reply = match open_at(dir, &path, own_flags, mode, resolve) {
                        Ok(fd) => Reply::Fd { fd, cloexec },
                        Err(e) => Reply::Errno(e),
                    };
                    drop(base);
                    answer(&listener, id, reply);
                });
                return Ok(Reply::Later);
            }
            return Ok(match open_at(dir, &path, own_flags, mode, resolve) {
                Ok(fd) => Reply::Fd { fd, cloexec },
                Err(e) => Reply::Errno(e),
            });
        }
        let mut place = self.place(call, dirfd, &path, resolve)?;
        self.still_valid(call)?;
        for _ in 0..MAX_LINKS {
            if self.forbidden(&place)? {
                return Ok(Reply::Errno(libc::EACCES));
            }
            match stat_at(&place.parent, &place.name) {
                Err(libc::ENOENT) => {}
                Err(e) => return Ok(Reply::Errno(e)),
                Ok(st) => match self.backstop {
                    // It exists: opening it creates nothing, and if the name vanishes in
                    // the meantime the Landlock layer refuses the creation.
                    Backstop::Landlock => return Ok(Reply::Continue),
                    Backstop::None => match self.open_existing(&place, &st, flags, mode, call)? {
                        Existing::Opened(reply) => return Ok(reply),
                        Existing::Follow(next) => {
                            place = next;
                            continue;
                        }
                    },
                },
            }
            self.with_umask(call)?;
            // O_EXCL: create exactly this name, never through a symlink planted meanwhile.
            let excl = own_flags | libc::O_EXCL as u64;
            return Ok(
                match open_at(place.parent.as_raw_fd(), &place.name, excl, mode, resolve) {
                    Ok(fd) => Reply::Fd { fd, cloexec },
                    Err(libc::EEXIST) if flags & libc::O_EXCL as u64 == 0 => match self.backstop {
                        Backstop::Landlock => Reply::Continue,
                        // Someone created it in between: go round again and open it.
                        Backstop::None => continue,
                    },
                    Err(e) => Reply::Errno(e),
                },
            );
        }
        Ok(Reply::Errno(libc::ELOOP))
    }

    /// Without a backstop: an `O_CREAT` open of something that exists. It is pinned with
    /// an `O_PATH` descriptor (following symlinks, magic ones too) and reopened through
    /// that, so what is opened is what was looked at; a dangling symlink is followed by
    /// hand, since its target is a name to create and must be checked too.
    fn open_existing(
        &self,
        place: &Place,
        st: &libc::stat,
        flags: u64,
        mode: u64,
        call: &Call,
    ) -> Result<Existing, i32> {
        let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
        if flags & libc::O_EXCL as u64 != 0 {
            return Ok(Existing::Opened(Reply::Errno(libc::EEXIST)));
        }
        let is_link = st.st_mode & libc::S_IFMT == libc::S_IFLNK;
        if is_link && flags & libc::O_NOFOLLOW as u64 != 0 {
            return Ok(Existing::Opened(Reply::Errno(libc::ELOOP)));
        }
        let pin_flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
        let pinned = match open_at(place.parent.as_raw_fd(), &place.name, pin_flags, 0, 0) {
            Ok(fd) => fd,
            Err(libc::ENOENT) if is_link => return self.follow(place, call).map(Existing::Follow),
            Err(e) => return Ok(Existing::Opened(Reply::Errno(e))),
        };
        let kind = identity_kind(&pinned)?;
        let own_flags = (flags & !(libc::O_CREAT as u64)) | libc::O_CLOEXEC as u64;
        let reopen = move || {
            let path = cstring(format!("/proc/self/fd/{}", pinned.as_raw_fd()).as_bytes())?;
            open_at(libc::AT_FDCWD, &path, own_flags, mode, 0)
        };
        let reply = move |r: Result<OwnedFd, i32>| match r {
            Ok(fd) => Reply::Fd { fd, cloexec },
            Err(e) => Reply::Errno(e),
        };
        if kind == libc::S_IFREG || kind == libc::S_IFDIR {
            return Ok(Existing::Opened(reply(reopen())));
        }
        // A FIFO or device may block until its other end opens: on a thread.
        let listener = Arc::clone(&self.listener);
        let id = call.id;
        std::thread::spawn(move || answer(&listener, id, reply(reopen())));
        Ok(Existing::Opened(Reply::Later))
    }

    /// The place a dangling symlink points to.
    fn follow(&self, place: &Place, call: &Call) -> Result<Place, i32> {
        let mut buf = vec![0u8; libc::PATH_MAX as usize];
        // SAFETY: `buf` is writable for its length; the name is NUL-terminated.
        #[expect(unsafe_code, reason = "readlinkat has no safe wrapper on a raw fd")]
        let n = unsafe {
            libc::readlinkat(
                place.parent.as_raw_fd(),
                place.name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        let n = usize::try_from(n).map_err(|_| last_errno())?;
        buf.truncate(n);
        let buf = as_caller(call.pid, buf);
        let base = if buf.first() == Some(&b'/') {
            None
        } else {
            Some(place.parent.try_clone().map_err(|e| errno_of(&e))?)
        };
        self.place_from(base, &buf, 0)
    }
}

/// `/proc/self` and `/proc/thread-self` at the start of a path name the caller, not the
/// supervisor resolving it: rewritten to `/proc/<pid>` (`pid` is the calling thread's id,
/// whose `/proc` entry has the same `fd`, `cwd` and `root`). Only for meaning: whatever
/// a path resolves to, the protected-name check compares the parent directory itself.
fn as_caller(pid: i32, path: Vec<u8>) -> Vec<u8> {
    for prefix in [&b"/proc/self"[..], b"/proc/thread-self"] {
        if let Some(rest) = path.strip_prefix(prefix)
            && (rest.is_empty() || rest[0] == b'/')
        {
            let mut out = format!("/proc/{pid}").into_bytes();
            out.extend_from_slice(rest);
            return out;
        }
    }
    path
}

enum Existing {
    Opened(Reply),
    Follow(Place),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_self_means_the_caller() {
        let cases: &[(&str, &str)] = &[
            ("/proc/self/fd/3", "/proc/42/fd/3"),
            ("/proc/self", "/proc/42"),
            ("/proc/thread-self/cwd/x", "/proc/42/cwd/x"),
            ("/proc/selfish/x", "/proc/selfish/x"),
            ("proc/self/x", "proc/self/x"),
            ("/tmp/a", "/tmp/a"),
        ];
        for (path, want) in cases {
            assert_eq!(
                as_caller(42, path.as_bytes().to_vec()),
                want.as_bytes(),
                "{path}"
            );
        }
    }
}
