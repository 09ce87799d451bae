//! The `osprey-linux-sandbox` helper: the `osprey` binary entered under that `argv[0]`,
//! which confines itself and then `exec`s the command it was given.
//!
//! Confining happens *inside* the process that becomes the command, after it was
//! spawned and before `execve`, because Landlock and seccomp restrict the calling thread
//! and everything it later runs; nothing can loosen them afterwards. The order is:
//!
//! 1. `PR_SET_NO_NEW_PRIVS`, so no set-user-id program can regain privileges and so an
//!    unprivileged process may install a seccomp filter.
//! 2. A private mount namespace (inside a user namespace when not root) in which every
//!    mount is read-only except copies of the writable paths, and the read-only
//!    carve-outs inside those (`.git`, `.osprey`) are read-only again (`mounts.rs`).
//!    Landlock governs writes but not metadata, so without this a command could `chmod`,
//!    `chown`, `touch -d` or `setxattr` any file it can reach; on a read-only mount all of
//!    these fail with `EROFS`. Landlock only ever grants, so it cannot express "read-only
//!    below a writable directory" either; the mounts do.
//! 3. Landlock: every filesystem right is handled; `read` paths get read/execute,
//!    `write` paths everything. With the network off, TCP bind/connect are handled with
//!    no port allowed, and connecting to abstract UNIX sockets outside the sandbox is
//!    scoped out; signals to processes outside the sandbox are always scoped out. A
//!    kernel without Landlock fails closed.
//! 4. When a writable root lacks `.git` or `.osprey`: the creation guard (`guard.rs`).
//!    The helper forks; the parent stays behind as a supervisor that performs every call
//!    that could create a name, refusing those two in a root, and exits as the command
//!    does. The child gets a Landlock layer refusing all creation and a seccomp filter
//!    that turns such calls into notifications for the supervisor, then goes on.
//! 5. seccomp (see `seccomp.rs` for the list): no ptrace, no namespaces or mounts, no
//!    kernel keyring, io_uring or BPF; with the network off, only `AF_UNIX` stream and
//!    seqpacket sockets may be created and `connect`, `bind` and `listen` fail, so only
//!    `socketpair`-style local plumbing works.
//! 6. `execvp` of the command with the environment unchanged.
//!
//! With `--bwrap PATH` the helper instead execs bubblewrap with mounts for the policy,
//! and bubblewrap starts the helper again with `--inner`, which does steps 1, 4, 5 and 6.
//!
//! The command line is defined in [`osprey_sandboxing::helper_args`].
//!
//! [`confine_in_child`] is the fast route for the common case: a request that would start
//! the helper's Landlock stage with nothing to guard gets a child step that performs steps
//! 1–3, 5 and 6 in the forked child itself, with everything prepared in the parent — the
//! same confinement without starting `osprey` a second time. The request still names the
//! helper, so a spawner that ignored the step would run the helper, never the bare command.

use std::ffi::OsString;
use std::io::Write as _;

use osprey_process::ExecRequest;

#[cfg(target_os = "linux")]
mod linux;

/// Exit status when the helper itself failed (bad arguments, confinement impossible).
pub const EXIT_SANDBOX_FAILED: i32 = 125;

/// Runs the helper. `args` is the full `argv`, including `argv[0]`, as from
/// [`std::env::args_os`]. Does not return when the command starts (the process image is
/// replaced); otherwise returns the exit status to exit with after printing why to
/// standard error: 125 when confinement failed, 126 when the command could not be
/// executed, 127 when it was not found.
pub fn run_main(args: Vec<OsString>) -> i32 {
    let rest = args.get(1..).unwrap_or(&[]);
    let (code, message) = run(rest);
    let _ = writeln!(std::io::stderr(), "osprey-linux-sandbox: {message}");
    code
}

/// `request` with a child step ([`ExecRequest::child_setup`]) that confines the forked
/// child and execs the command directly, when `request` is a helper request for the
/// Landlock stage that needs no creation guard; any other request (bubblewrap, the guard,
/// not a helper request, or one whose preparation failed, which the helper will then
/// report) is returned unchanged. Call it on what [`osprey_sandboxing`] returned, just
/// before spawning. Failures in the child read and exit like the helper's.
pub fn confine_in_child(request: ExecRequest) -> ExecRequest {
    #[cfg(target_os = "linux")]
    {
        linux::confine_in_child(request)
    }
    #[cfg(not(target_os = "linux"))]
    {
        request
    }
}

#[cfg(target_os = "linux")]
fn run(args: &[OsString]) -> (i32, String) {
    match osprey_sandboxing::helper_args::HelperInvocation::parse(args) {
        Err(e) => (EXIT_SANDBOX_FAILED, e.to_string()),
        Ok(invocation) => {
            let err = linux::confine_and_exec(invocation);
            (err.exit_code(), err.to_string())
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn run(_args: &[OsString]) -> (i32, String) {
    (
        EXIT_SANDBOX_FAILED,
        "this helper only works on Linux; on macOS Osprey uses sandbox-exec".to_string(),
    )
}
