//! What this machine cannot do, said once when a thread starts (not at each command).

use std::path::Path;

/// Plain-words problems with confining commands on this machine; empty when all is well.
/// Reads only `/proc` and `/sys`; spawns nothing.
pub fn platform_problems() -> Vec<String> {
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
            "user namespaces are disabled on this machine, so split filesystem policies \
             (bubblewrap) cannot be set up and sandboxed commands that need them will be \
             refused; enable unprivileged user namespaces to use them"
                .to_string(),
        );
    }
    if let Some(lsm) = read("/sys/kernel/security/lsm")
        && !lsm.split(',').any(|m| m.trim() == "landlock")
    {
        problems.push(
            "Landlock is not enabled in this kernel, so sandboxed commands will be refused \
             unless bubblewrap can confine them (boot with `lsm=landlock,…`, or use \
             danger-full-access only if you accept running unconfined)"
                .to_string(),
        );
    }
    problems
}
