//! What this machine cannot do, said once when a thread starts (not at each command), and
//! the one kernel fact the backend choice needs: whether Landlock works.

use std::path::Path;
use std::sync::OnceLock;

use crate::{LinuxBackend, find_bwrap};

/// The Landlock ABI version the running kernel offers, `None` when it has none (not built
/// in, or not enabled at boot). Asked once per process
/// (`landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`, which creates
/// nothing); the answer cannot change while it runs.
pub fn landlock_abi() -> Option<u32> {
    static ABI: OnceLock<Option<u32>> = OnceLock::new();
    *ABI.get_or_init(query_landlock_abi)
}

#[cfg(target_os = "linux")]
fn query_landlock_abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a NULL attribute pointer, size 0 and the VERSION flag the kernel only
    // returns a number; no memory is read or written.
    #[expect(unsafe_code, reason = "the Landlock version query has no libc wrapper")]
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(abi).ok().filter(|v| *v > 0)
}

#[cfg(not(target_os = "linux"))]
fn query_landlock_abi() -> Option<u32> {
    None
}

/// Plain-words problems with confining commands on this machine under the default
/// `auto` backend; empty when all is well. See [`platform_problems_for`].
pub fn platform_problems() -> Vec<String> {
    platform_problems_for(LinuxBackend::Auto)
}

/// Plain-words problems with confining commands on this machine with `backend`; empty when
/// all is well. Reads `/proc`, the process's `PATH` and asks the kernel whether Landlock
/// works; spawns nothing.
pub fn platform_problems_for(backend: LinuxBackend) -> Vec<String> {
    let mut problems = Vec::new();
    if !cfg!(target_os = "linux") {
        return problems;
    }
    let read = |path: &str| std::fs::read_to_string(Path::new(path)).ok();
    let userns_off = read("/proc/sys/kernel/unprivileged_userns_clone")
        .is_some_and(|v| v.trim() == "0")
        || read("/proc/sys/user/max_user_namespaces").is_some_and(|v| v.trim() == "0");
    if userns_off {
        problems.push(
            "user namespaces are disabled on this machine, so the sandbox cannot build its \
             read-only mounts or run bubblewrap, and sandboxed commands will be refused (as \
             root they still work); enable unprivileged user namespaces to use the sandbox"
                .to_string(),
        );
    }
    let path_var = std::env::var("PATH").ok();
    let bwrap = find_bwrap(path_var.as_deref(), Path::new("/nonexistent-cwd"));
    let landlock = landlock_abi().is_some();
    match (backend, landlock, bwrap) {
        (LinuxBackend::Auto, false, Some(bwrap)) => problems.push(format!(
            "Landlock is not available on this kernel, so sandboxed commands run under \
             bubblewrap ({}) instead, each about 10 ms slower",
            bwrap.display()
        )),
        (LinuxBackend::Auto, false, None) => problems.push(
            "Landlock is not available on this kernel and bubblewrap was not found, so \
             sandboxed commands will be refused; install bubblewrap (e.g. `apt-get install \
             bubblewrap`) or boot a kernel with `landlock` in its `lsm=` list"
                .to_string(),
        ),
        (LinuxBackend::Landlock, false, _) => problems.push(
            "Landlock is not available on this kernel, and `[sandbox] linux_backend = \
             \"landlock\"` allows nothing else, so sandboxed commands will be refused; set it \
             to \"auto\" or \"bubblewrap\" (with bubblewrap installed)"
                .to_string(),
        ),
        (LinuxBackend::Bubblewrap, _, None) => problems.push(
            "`[sandbox] linux_backend = \"bubblewrap\"` is set but no `bwrap` was found on \
             the PATH, so sandboxed commands will be refused; install bubblewrap (e.g. \
             `apt-get install bubblewrap`)"
                .to_string(),
        ),
        _ => {}
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_landlock_answer_is_stable_and_plausible() {
        let first = landlock_abi();
        assert_eq!(first, landlock_abi());
        if let Some(abi) = first {
            assert!((1..100).contains(&abi), "{abi}");
        }
    }
}
