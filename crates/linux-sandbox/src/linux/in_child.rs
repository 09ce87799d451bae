//! The helper's confinement done in the spawned child itself, between `fork` and `exec`.
//!
//! A request rewritten to run the helper costs a second start of the `osprey` binary
//! (loading, relocating, C++ static initialisers) before the command even begins. For the
//! Landlock stage without the creation guard, everything the helper would do can instead
//! be prepared in the parent — the ruleset with its rules, both seccomp programs, the paths
//! of the mount view as C strings, the command's resolved path, argv and environment — and
//! the forked child then makes only system calls: `no_new_privs`, the read-only mount view,
//! `landlock_restrict_self`, the two filters, and `execve` of the command. The policy is the
//! one the helper's arguments carry, parsed by the helper's own parser, so both routes
//! enforce the same thing.
//!
//! The request itself stays the helper request: the step ends in its own `execve` and
//! never returns to the spawner. A spawner that ignored the step would start the helper,
//! which confines the command itself — dropping the step can never run anything
//! unconfined. A step that fails writes the helper's kind of message to the command's
//! standard error (`osprey-linux-sandbox: …`) and exits 125 (126 or 127 when the command
//! cannot be executed), exactly as the helper would, so denial detection and exit codes
//! do not depend on the route.
//!
//! Requests that need more stay with the helper alone: the creation guard (a supervisor
//! process must stay behind), bubblewrap, a relative working directory, a command not
//! found on the `PATH`, and any request whose preparation fails here.

use std::ffi::{CStr, CString, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use osprey_process::{ChildSetup, ExecRequest};
use osprey_sandboxing::helper_args::{HELPER_ARG0, HelperInvocation, HelperMode};
use osprey_sandboxing::{LandlockPlan, landlock_abi, landlock_plan};
use seccompiler::BpfProgram;

use super::failure::{Failure, Step};
use super::guard::Roots;
use super::mounts::MountPlan;
use super::{ruleset, seccomp};
use crate::EXIT_SANDBOX_FAILED;

/// What the command's `execve` needs, prepared in the parent.
struct Command {
    path: CString,
    /// The command as typed, for messages.
    name: CString,
    /// `argv` and `envp` as the NULL-terminated pointer arrays `execve` takes; the pointers
    /// point into `_argv` and `_envp`, which live as long as this.
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    _argv: Vec<CString>,
    _envp: Vec<CString>,
}

// SAFETY: the raw pointers point into the CStrings owned by the same value, which are never
// changed after construction; sharing them between threads only reads them.
#[expect(
    unsafe_code,
    reason = "pointer arrays for execve, read-only after construction"
)]
unsafe impl Send for Command {}
// SAFETY: as above.
#[expect(
    unsafe_code,
    reason = "pointer arrays for execve, read-only after construction"
)]
unsafe impl Sync for Command {}

impl Command {
    fn new(command: &[OsString], request: &ExecRequest) -> Option<Self> {
        let first = command.first()?;
        let path = resolve(Path::new(first), request)?;
        let c = |bytes: &[u8]| CString::new(bytes).ok();
        let argv: Vec<CString> = command
            .iter()
            .map(|a| c(a.as_bytes()))
            .collect::<Option<_>>()?;
        let envp: Vec<CString> = request
            .env
            .iter()
            .map(|(k, v)| c(format!("{k}={v}").as_bytes()))
            .collect::<Option<_>>()?;
        let pointers = |strings: &[CString]| {
            let mut out: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
            out.push(std::ptr::null());
            out
        };
        Some(Self {
            path: c(path.as_os_str().as_bytes())?,
            name: c(first.as_bytes())?,
            argv: pointers(&argv),
            envp: pointers(&envp),
            _argv: argv,
            _envp: envp,
        })
    }
}

/// The file `program` names, looked up like `execvp` does: as given when it contains a
/// slash (relative to the request's working directory), else the first executable regular
/// file of that name on the request's `PATH`.
fn resolve(program: &Path, request: &ExecRequest) -> Option<PathBuf> {
    if program.as_os_str().as_bytes().contains(&b'/') {
        return Some(request.cwd.join(program));
    }
    let path_var = request
        .env
        .get("PATH")
        .map_or("/bin:/usr/bin", String::as_str);
    path_var
        .split(':')
        .map(|dir| {
            let dir = if dir.is_empty() { "." } else { dir };
            request.cwd.join(dir).join(program)
        })
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What the child needs, prepared in the parent.
struct Prepared {
    mounts: MountPlan,
    /// The created ruleset; enforcing it needs only its descriptor.
    landlock: OwnedFd,
    filters: [BpfProgram; 2],
    command: Command,
}

impl Prepared {
    fn new(plan: &LandlockPlan, network: bool, cwd: &Path, command: Command) -> Option<Self> {
        let mounts = MountPlan::new(&plan.write, &plan.readonly_mounts, cwd).ok()?;
        let landlock: Option<OwnedFd> = ruleset::build(plan, network).ok()?.into();
        let filters = seccomp::programs(network).ok()?;
        Some(Self {
            mounts,
            landlock: landlock?,
            filters,
            command,
        })
    }

    /// Confines this process and becomes the command; on failure, says why on standard
    /// error and exits as the helper would. System calls only.
    fn confine_and_exec(&self) -> ! {
        if let Err(failure) = self.confine() {
            let path = self.mounts.path_of(failure.step, failure.index);
            report_failure(failure, path);
        }
        let command = &self.command;
        // SAFETY: every pointer is into CStrings owned by `self`; both arrays are
        // NULL-terminated.
        #[expect(unsafe_code, reason = "execve has no safe wrapper")]
        unsafe {
            libc::execve(
                command.path.as_ptr(),
                command.argv.as_ptr(),
                command.envp.as_ptr(),
            );
        }
        let errno = last_errno();
        write_all(b"osprey-linux-sandbox: cannot run `");
        write_all(command.name.as_bytes());
        write_all(b"`: ");
        write_errno(errno);
        write_all(b"\n");
        exit(if errno == libc::ENOENT { 127 } else { 126 })
    }

    /// The confinement, in the helper's order.
    fn confine(&self) -> Result<(), Failure> {
        // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes plain integer arguments.
        #[expect(unsafe_code, reason = "prctl has no safe wrapper")]
        let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        if rc != 0 {
            return Err(Failure::last_os_error(Step::NoNewPrivs, 0));
        }
        self.mounts.build()?;
        // SAFETY: the descriptor is a live Landlock ruleset owned by `self`; flags 0.
        #[expect(unsafe_code, reason = "landlock_restrict_self has no libc wrapper")]
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.landlock.as_raw_fd(),
                0u32,
            )
        };
        if rc != 0 {
            return Err(Failure::last_os_error(Step::Landlock, 0));
        }
        for filter in &self.filters {
            seccompiler::apply_filter(filter).map_err(|e| {
                let errno = match e {
                    seccompiler::Error::Seccomp(io) | seccompiler::Error::Prctl(io) => {
                        io.raw_os_error().unwrap_or(libc::EIO)
                    }
                    _ => libc::EINVAL,
                };
                Failure::new(Step::Seccomp, 0, errno)
            })?;
        }
        Ok(())
    }
}

/// Says on standard error which step failed, where and why, then exits 125: the helper's
/// status for "the sandbox could not be set up, the command was not run".
fn report_failure(failure: Failure, path: &Path) -> ! {
    write_all(b"osprey-linux-sandbox: could not set up the sandbox (");
    write_all(failure.step.words().as_bytes());
    if failure.step.has_path() {
        write_all(b" ");
        write_all(path.as_os_str().as_bytes());
    }
    write_all(b": ");
    write_errno(failure.errno);
    write_all(b"); the command was not run");
    write_all(failure.step.hint().as_bytes());
    write_all(b"\n");
    exit(EXIT_SANDBOX_FAILED)
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Writes the OS's words for `errno` (`strerror_r` into a stack buffer).
fn write_errno(errno: i32) {
    let mut buf = [0u8; 128];
    // SAFETY: `buf` is writable for its length; the XSI strerror_r writes a NUL-terminated
    // string of at most that length into it.
    #[expect(unsafe_code, reason = "strerror_r has no safe wrapper")]
    let rc = unsafe { libc::strerror_r(errno, buf.as_mut_ptr().cast(), buf.len()) };
    match CStr::from_bytes_until_nul(&buf) {
        Ok(text) if rc == 0 && !text.is_empty() => write_all(text.to_bytes()),
        _ => write_all(b"unknown error"),
    }
}

fn write_all(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for its length for the whole call.
        #[expect(unsafe_code, reason = "write without allocation")]
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        match usize::try_from(n) {
            Ok(n) if n > 0 => bytes = bytes.get(n..).unwrap_or_default(),
            _ => return,
        }
    }
}

fn exit(code: i32) -> ! {
    // SAFETY: _exit ends the process at once, running nothing of the parent's copied state.
    #[expect(unsafe_code, reason = "_exit has no safe wrapper")]
    unsafe {
        libc::_exit(code)
    }
}

/// `request` with the helper's confinement moved into its own child, when `request` runs
/// the helper's Landlock stage and needs no creation guard; otherwise `request` unchanged.
pub(crate) fn confine_in_child(mut request: ExecRequest) -> ExecRequest {
    if let Some(setup) = prepare(&request) {
        request.child_setup = Some(setup);
    }
    request
}

fn prepare(request: &ExecRequest) -> Option<ChildSetup> {
    if request.arg0.as_deref() != Some(HELPER_ARG0)
        || request.child_setup.is_some()
        || !request.cwd.is_absolute()
    {
        return None;
    }
    let args: Vec<OsString> = request.args.iter().map(OsString::from).collect();
    let invocation = HelperInvocation::parse(&args).ok()?;
    if invocation.mode != HelperMode::Landlock || landlock_abi().is_none() {
        return None;
    }
    let filesystem = &invocation.confinement.filesystem;
    if Roots::of(filesystem).is_some() {
        return None;
    }
    let plan = landlock_plan(filesystem).ok()?;
    let command = Command::new(&invocation.command, request)?;
    let prepared = Prepared::new(&plan, invocation.confinement.network, &request.cwd, command)?;
    let prepared = Arc::new(prepared);
    // SAFETY: `confine_and_exec` only makes system calls on data prepared above (the mount
    // plan's C strings and slots, the ruleset descriptor, the compiled filters, the
    // command's argv and envp) and never returns.
    #[expect(unsafe_code, reason = "a step between fork and exec")]
    let setup = unsafe {
        ChildSetup::new(
            "sandbox",
            Arc::new(move || -> std::io::Result<()> { prepared.confine_and_exec() }),
        )
    };
    Some(setup)
}
