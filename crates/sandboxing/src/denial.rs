//! Telling the model, in plain words, that a failure was the sandbox's doing — and only
//! then.
//!
//! A command that fails under confinement often prints an ordinary error ("Permission
//! denied") that the model would otherwise try to fix by changing file modes or retrying,
//! and a note lets the orchestrator offer a rerun outside the sandbox. A note that is wrong
//! is worse than none: it offers to drop the sandbox for a failure the sandbox did not
//! cause. So the output is not trusted on its own. [`detect_denial_in`] reports:
//!
//! - a filesystem error only for a path it can name, when that path is outside what the
//!   policy allows *and* this machine would allow the access without the sandbox (so a
//!   file that is `chmod 000`, or a message a program prints about a path the policy lets
//!   it write, is an ordinary failure);
//! - the helper's own words: a refused `.git`/`.osprey` creation (checked against the
//!   policy like any path), or a sandbox that could not be set up (exit 125);
//! - a network error only when the policy has the network off;
//! - an `EPERM` from a call the sandbox always refuses (ptrace, mounts, namespaces);
//! - a process killed by `SIGSYS` (a shell reports 159 and "Bad system call").
//!
//! Anything else is an ordinary failure.

use std::path::{Path, PathBuf};

use osprey_protocol::SandboxPolicy;

use crate::fs_policy::normalize;
use crate::helper_args::HELPER_ARG0;
use crate::{FileSystemPolicy, FsAccess, PROTECTED_NAMES};

/// Exit status a shell reports for a child killed by `SIGSYS` (128 + 31): what a seccomp
/// filter that kills produces.
pub const SIGSYS_EXIT: i32 = 159;

/// The helper's exit status when it could not confine the command.
const SANDBOX_FAILED_EXIT: i32 = 125;

/// What the helper prints when the creation guard refuses a name.
pub const GUARD_REFUSAL: &str = "refused to create";

const FS_PATTERNS: &[&str] = &[
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "errno 13",
    "errno 30",
];

const NET_PATTERNS: &[&str] = &[
    "network is unreachable",
    "temporary failure in name resolution",
    "could not resolve host",
    "name or service not known",
    "failed to resolve",
    "address family not supported",
    "no address associated with hostname",
    "getaddrinfo",
    "socket: operation not permitted",
    "connect: operation not permitted",
    "couldn't connect to server",
    "failed to establish a new connection",
];

/// Words that put an `EPERM` in a network context.
const NET_CONTEXT: &[&str] = &[
    "socket",
    "connect(",
    "urlopen",
    "http://",
    "https://",
    "urllib",
    "requests.",
];

/// Calls the sandbox refuses whatever the policy: an `EPERM` naming one is its doing.
const ALWAYS_REFUSED: &[&str] = &[
    "ptrace",
    "mount",
    "unshare",
    "setns",
    "chroot",
    "namespace",
    "keyctl",
    "bpf",
    "io_uring",
];

/// What the check knows about the command.
#[derive(Debug, Clone, Copy)]
pub struct DenialContext<'a> {
    /// The turn's coarse policy.
    pub policy: &'a SandboxPolicy,
    /// The command's filesystem policy, when known; otherwise derived from `policy`.
    pub filesystem: Option<&'a FileSystemPolicy>,
    /// The command's working directory, for relative paths in messages; without it they
    /// are not judged.
    pub cwd: Option<&'a Path>,
}

/// [`detect_denial_in`] with only the coarse policy known (no working directory).
pub fn detect_denial(
    policy: &SandboxPolicy,
    exit_code: Option<i32>,
    output: &str,
) -> Option<String> {
    let ctx = DenialContext {
        policy,
        filesystem: None,
        cwd: None,
    };
    detect_denial_in(&ctx, exit_code, output)
}

/// Returns a note when a failed command's output shows a denial by the sandbox (see the
/// module comment). `exit_code` is `None` when the process was killed by a signal.
pub fn detect_denial_in(
    ctx: &DenialContext<'_>,
    exit_code: Option<i32>,
    output: &str,
) -> Option<String> {
    let policy = ctx.policy;
    if matches!(policy, SandboxPolicy::DangerFullAccess) || exit_code == Some(0) {
        return None;
    }
    let mode = policy.mode();
    let derived;
    let fs = match ctx.filesystem {
        Some(fs) => fs,
        None => {
            let cwd = ctx.cwd.unwrap_or(Path::new("/nonexistent-osprey-cwd"));
            let tmpdir = std::env::var_os("TMPDIR").map(PathBuf::from);
            derived = FileSystemPolicy::from_sandbox_policy(policy, cwd, tmpdir.as_deref());
            &derived
        }
    };
    let helper_prefix = format!("{HELPER_ARG0}: ");
    for line in output.lines() {
        let Some(message) = line.trim().strip_prefix(&helper_prefix) else {
            continue;
        };
        if exit_code == Some(SANDBOX_FAILED_EXIT) {
            return Some(format!(
                "The sandbox ({mode}) could not be set up, so the command did not run: \
                 `{}`. Ask to run it outside the sandbox if it is needed.",
                cap(message)
            ));
        }
        if message.starts_with(GUARD_REFUSAL)
            && quoted(message)
                .iter()
                .any(|p| creates_protected_name(fs, &resolve(p, ctx.cwd)))
        {
            return Some(format!(
                "The sandbox ({mode}) refused this: `{}`. A `.git` or `.osprey` cannot be \
                 created at the top of a writable root; ask to run the command outside the \
                 sandbox if that is really meant.",
                cap(message)
            ));
        }
    }
    if (exit_code == Some(SIGSYS_EXIT) || exit_code.is_none()) && output.contains("Bad system call")
    {
        return Some(format!(
            "The sandbox ({mode}) stopped a forbidden system call (SIGSYS). The command \
             cannot do this here; ask to run it outside the sandbox if it is needed."
        ));
    }
    if !policy.has_full_network_access()
        && let Some(line) = network_line(output)
    {
        return Some(format!(
            "The sandbox ({mode}) has network access off, which caused: `{line}`. Ask to \
             run it with network access if it really needs the network."
        ));
    }
    for line in output.lines() {
        let lower = line.to_ascii_lowercase();
        if !FS_PATTERNS.iter().any(|p| lower.contains(p)) {
            continue;
        }
        let outside = candidates(line)
            .into_iter()
            .filter(|c| ctx.cwd.is_some() || c.starts_with('/'))
            .map(|c| resolve(&c, ctx.cwd))
            .any(|path| sandbox_caused(fs, &path));
        if outside {
            return Some(fs_note(policy, line));
        }
        if lower.contains("operation not permitted")
            && ALWAYS_REFUSED.iter().any(|w| lower.contains(w))
        {
            return Some(format!(
                "The sandbox ({mode}) refuses this call: `{}`. It blocks ptrace, mounts and \
                 namespaces; ask to run the command outside the sandbox if it needs them.",
                cap(line.trim())
            ));
        }
    }
    None
}

fn fs_note(policy: &SandboxPolicy, line: &str) -> String {
    let mode = policy.mode();
    let allowed = match policy {
        SandboxPolicy::ReadOnly => "nothing may be written",
        _ => {
            "writes are allowed only in the working directory, the writable roots and the \
             temp directories, and .git and .osprey stay read-only"
        }
    };
    format!(
        "The sandbox ({mode}) denied this: `{}` ({allowed}). Do not change file permissions \
         to work around it; ask to run the command outside the sandbox if it must write there.",
        cap(line.trim())
    )
}

/// Whether the sandbox, not the machine, refused access to `path`: the policy allows less
/// there than the machine would (a protected name in a root being created counts too).
fn sandbox_caused(fs: &FileSystemPolicy, path: &Path) -> bool {
    if creates_protected_name(fs, path) {
        return true;
    }
    match fs.access(path) {
        FsAccess::Write => false,
        FsAccess::Read => host_allows(path, Access::Write),
        FsAccess::None => host_allows(path, Access::Read) || host_allows(path, Access::Write),
    }
}

/// Whether `path` is (or lies in) a `.git` or `.osprey` that does not exist, directly in a
/// writable directory: what the creation guard refuses.
fn creates_protected_name(fs: &FileSystemPolicy, path: &Path) -> bool {
    path.ancestors().any(|p| {
        let named = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| PROTECTED_NAMES.iter().any(|pn| pn.eq_ignore_ascii_case(n)));
        named
            && std::fs::symlink_metadata(p).is_err()
            && p.parent().is_some_and(|dir| {
                fs.entries()
                    .iter()
                    .any(|e| e.path == dir && e.access == FsAccess::Write)
            })
    })
}

#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
}

/// Whether this process (the agent, unconfined) could do `access` at `path`, or for a
/// path that does not exist, create it.
fn host_allows(path: &Path, access: Access) -> bool {
    if std::fs::symlink_metadata(path).is_ok() {
        return host_access(path, access);
    }
    match access {
        Access::Read => false,
        Access::Write => path
            .parent()
            .is_some_and(|dir| dir.is_dir() && host_access(dir, Access::Write)),
    }
}

#[cfg(target_os = "linux")]
fn host_access(path: &Path, access: Access) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    let mode = match access {
        Access::Read => libc::R_OK,
        Access::Write => libc::W_OK,
    };
    // SAFETY: `c` is a valid NUL-terminated path; access(2) only reads it.
    #[expect(unsafe_code, reason = "access(2) has no std wrapper")]
    let rc = unsafe { libc::access(c.as_ptr(), mode) };
    rc == 0
}

#[cfg(not(target_os = "linux"))]
fn host_access(path: &Path, access: Access) -> bool {
    match access {
        Access::Read => std::fs::metadata(path).is_ok(),
        Access::Write => std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly()),
    }
}

/// An absolute path for `candidate`: as is, or joined to `cwd`, then normalized.
fn resolve(candidate: &str, cwd: Option<&Path>) -> PathBuf {
    let path = Path::new(candidate);
    let joined = match cwd {
        Some(cwd) if !path.is_absolute() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    normalize(&joined)
}

/// Quoted parts of `line` ('…', "…", ‘…’, `…').
fn quoted(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let inner = &after[..end];
            if !inner.is_empty() && !inner.contains('\n') {
                out.push(inner.to_owned());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    out
}

/// Paths a line of error output may name: its quoted parts, the `prog: PATH: error` part
/// before the error phrase, and words that start with `/`.
fn candidates(line: &str) -> Vec<String> {
    let mut out = quoted(line);
    let segments: Vec<&str> = line.split(": ").collect();
    for pair in segments.windows(2) {
        let next = pair[1].to_ascii_lowercase();
        if FS_PATTERNS.iter().any(|p| next.starts_with(p)) {
            // `bash: PATH: …`, or `sh: 1: cannot create PATH: …` (the last word).
            out.push(pair[0].trim().to_owned());
            if let Some(last) = pair[0].split_whitespace().last() {
                out.push(last.to_owned());
            }
        }
    }
    for word in line.split_whitespace() {
        let word = word.trim_matches(|c: char| "'\"‘’`,:;()[]".contains(c));
        if word.starts_with('/') {
            out.push(word.to_owned());
        }
    }
    out.retain(|c| !c.is_empty() && c.len() < 4096 && !c.contains('\0'));
    out.sort();
    out.dedup();
    out
}

fn network_line(output: &str) -> Option<String> {
    find_line(output, NET_PATTERNS).or_else(|| {
        // A bare EPERM from a program that was talking to the network (Python's
        // `PermissionError` from `socket()`, for one) is the seccomp filter's doing.
        let lower = output.to_ascii_lowercase();
        NET_CONTEXT
            .iter()
            .any(|w| lower.contains(w))
            .then(|| find_line(output, &["operation not permitted"]))
            .flatten()
    })
}

/// The first line containing one of `patterns` (case-insensitive), trimmed and capped.
fn find_line(output: &str, patterns: &[&str]) -> Option<String> {
    let line = output.lines().find(|line| {
        let lower = line.to_ascii_lowercase();
        patterns.iter().any(|p| lower.contains(p))
    })?;
    Some(cap(line.trim()))
}

fn cap(line: &str) -> String {
    let capped: String = line.chars().take(160).collect();
    if capped.len() < line.len() {
        format!("{capped}…")
    } else {
        capped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FsEntry;

    fn ww(network_access: bool) -> SandboxPolicy {
        SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        }
    }

    /// A workspace (writable) and an outside directory (readable), both real.
    struct World {
        _dir: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
        fs: FileSystemPolicy,
    }

    fn world() -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim"), "x").unwrap();
        std::fs::create_dir_all(base.join("hidden")).unwrap();
        std::fs::write(base.join("hidden/k"), "secret").unwrap();
        let fs = FileSystemPolicy::new([
            FsEntry::new("/", FsAccess::Read),
            FsEntry::new(&root, FsAccess::Write),
            FsEntry::new(root.join(".git"), FsAccess::Read),
            FsEntry::new(base.join("hidden"), FsAccess::None),
        ])
        .unwrap();
        World {
            _dir: dir,
            root,
            outside,
            fs,
        }
    }

    fn check(w: &World, policy: &SandboxPolicy, code: Option<i32>, output: &str) -> Option<String> {
        let ctx = DenialContext {
            policy,
            filesystem: Some(&w.fs),
            cwd: Some(&w.root),
        };
        detect_denial_in(&ctx, code, output)
    }

    #[test]
    fn denials_are_reported_only_for_paths_outside_the_policy() {
        let w = world();
        let p = ww(false);
        let out = w.outside.display();
        let root = w.root.display();
        let yes: Vec<String> = vec![
            format!("touch: cannot touch '{out}/new': Read-only file system"),
            format!("bash: {out}/victim: Permission denied"),
            format!("PermissionError: [Errno 13] Permission denied: '{out}/victim'"),
            "sh: 1: cannot create .git/config: Read-only file system".to_string(),
            "mkdir: cannot create directory ‘.osprey’: Permission denied".to_string(),
            format!(
                "cat: {}/hidden/k: Permission denied",
                w.outside.parent().unwrap().display()
            ),
        ];
        for output in &yes {
            let note = check(&w, &p, Some(1), output);
            assert!(note.is_some_and(|n| n.contains("denied this")), "{output}");
        }
        let no: Vec<String> = vec![
            // A program's own words, without a path.
            "Permission denied".to_string(),
            "error: Permission denied (os error 13)".to_string(),
            // A path the policy lets the command write: not the sandbox.
            format!("cp: cannot open '{root}/data.bin' for reading: Permission denied"),
            "bash: ./build.sh: Permission denied".to_string(),
            // Other failures.
            "error[E0425]: cannot find value `x` in this scope".to_string(),
            "FAILED tests/test_x.py::test_y - AssertionError".to_string(),
        ];
        for output in &no {
            assert_eq!(check(&w, &p, Some(1), output), None, "{output}");
        }
        assert_eq!(
            check(&w, &p, Some(0), &yes[0]),
            None,
            "success is never a denial"
        );
        assert_eq!(
            check(&w, &SandboxPolicy::DangerFullAccess, Some(1), &yes[0]),
            None
        );
    }

    #[test]
    fn a_path_the_machine_itself_refuses_is_not_the_sandbox() {
        // As root, mode bits refuse nothing; the case only exists for other users.
        // SAFETY: geteuid cannot fail.
        #[expect(unsafe_code, reason = "libc identity call in a test")]
        if unsafe { libc::geteuid() } == 0 {
            return;
        }
        use std::os::unix::fs::PermissionsExt;
        let w = world();
        let locked = w.outside.join("locked");
        std::fs::write(&locked, "x").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        let output = format!("cat: {}: Permission denied", locked.display());
        assert_eq!(check(&w, &SandboxPolicy::ReadOnly, Some(1), &output), None);
    }

    #[test]
    fn network_and_system_call_denials() {
        let w = world();
        let cases: &[(SandboxPolicy, Option<i32>, &str, Option<&str>)] = &[
            (
                ww(false),
                Some(6),
                "curl: (6) Could not resolve host: example.com",
                Some("network access off"),
            ),
            (
                ww(false),
                Some(7),
                "curl: (7) Failed to connect: Network is unreachable",
                Some("network access off"),
            ),
            (
                ww(true),
                Some(6),
                "curl: (6) Could not resolve host: example.com",
                None,
            ),
            (
                ww(false),
                Some(1),
                "  File \"socket.py\", line 232, in __init__\nPermissionError: [Errno 1] Operation not permitted",
                Some("network access off"),
            ),
            (
                ww(false),
                Some(SIGSYS_EXIT),
                "Bad system call (core dumped)",
                Some("SIGSYS"),
            ),
            (ww(false), None, "Bad system call", Some("SIGSYS")),
            // A program that merely prints the words.
            (ww(false), Some(1), "Bad system call", None),
            (ww(false), Some(SIGSYS_EXIT), "", None),
            (
                ww(false),
                Some(1),
                "strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted",
                Some("ptrace"),
            ),
            (
                ww(false),
                Some(1),
                "rm: cannot remove 'x': Operation not permitted",
                None,
            ),
        ];
        for (policy, code, output, want) in cases {
            let got = check(&w, policy, *code, output);
            match want {
                None => assert_eq!(got, None, "{output}"),
                Some(needle) => {
                    let got = got.unwrap_or_default();
                    assert!(got.contains(needle), "{output} -> {got}");
                }
            }
        }
    }

    #[test]
    fn the_helpers_own_words() {
        let w = world();
        let p = ww(false);
        let refused = format!(
            "osprey-linux-sandbox: {GUARD_REFUSAL} '{}/.osprey': .git and .osprey cannot be created",
            w.root.display()
        );
        assert!(check(&w, &p, Some(1), &refused).is_some_and(|n| n.contains("refused this")));
        // Forged for a path the guard would not refuse: ordinary.
        let forged = format!(
            "osprey-linux-sandbox: {GUARD_REFUSAL} '{}/sub/.osprey'",
            w.root.display()
        );
        assert_eq!(check(&w, &p, Some(1), &forged), None);
        let setup = "osprey-linux-sandbox: could not set up the sandbox's read-only mounts";
        assert!(check(&w, &p, Some(125), setup).is_some_and(|n| n.contains("could not be set up")));
        assert_eq!(check(&w, &p, Some(1), setup), None);
    }

    #[test]
    fn without_a_working_directory_relative_paths_are_not_judged() {
        let w = world();
        let out = format!("bash: {}/victim: Permission denied", w.outside.display());
        let p = ww(false);
        // The coarse policy alone, as the orchestrator's seam gives it today.
        assert!(detect_denial(&p, Some(1), &out).is_some());
        assert_eq!(
            detect_denial(&p, Some(1), "bash: victim: Permission denied"),
            None
        );
    }

    #[test]
    fn long_lines_are_capped() {
        let w = world();
        let long = format!(
            "{}/{}: Permission denied",
            w.outside.display(),
            "x".repeat(500)
        );
        let note = check(&w, &SandboxPolicy::ReadOnly, Some(1), &long).unwrap();
        assert!(note.len() < 500, "{note}");
    }
}
