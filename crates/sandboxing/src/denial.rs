//! Telling the model, in plain words, that a failure was probably the sandbox.
//!
//! A command that fails under confinement often prints an ordinary error ("Permission
//! denied") that the model would otherwise try to fix by changing file modes or
//! retrying. [`detect_denial`] recognises the messages the sandbox causes and returns a
//! short note to add to the tool output. It stays quiet unless the command failed and the
//! policy actually confines the thing the message is about, to keep false alarms rare.

use osprey_protocol::SandboxPolicy;

/// Exit status a shell reports for a child killed by `SIGSYS` (128 + 31): what a seccomp
/// filter that kills produces.
pub const SIGSYS_EXIT: i32 = 159;

const FS_PATTERNS: &[&str] = &[
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "eacces",
    "erofs",
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

/// Returns a note when the output of a failed command looks like a sandbox denial.
///
/// `exit_code` is `None` when the process was killed by a signal. Nothing is reported for
/// a successful command or under `danger-full-access`.
pub fn detect_denial(
    policy: &SandboxPolicy,
    exit_code: Option<i32>,
    output: &str,
) -> Option<String> {
    if matches!(policy, SandboxPolicy::DangerFullAccess) || exit_code == Some(0) {
        return None;
    }
    let mode = policy.mode();
    if exit_code == Some(SIGSYS_EXIT) || output.contains("Bad system call") {
        return Some(format!(
            "The sandbox ({mode}) stopped a forbidden system call (SIGSYS). The command \
             cannot do this here; ask to run it outside the sandbox if it is needed."
        ));
    }
    let net_line = find_line(output, NET_PATTERNS).or_else(|| {
        // A bare EPERM from a program that was talking to the network (Python's
        // `PermissionError` from `socket()`, for one) is the seccomp filter's doing.
        let lower = output.to_ascii_lowercase();
        NET_CONTEXT
            .iter()
            .any(|w| lower.contains(w))
            .then(|| find_line(output, &["operation not permitted"]))
            .flatten()
    });
    if !policy.has_full_network_access()
        && let Some(line) = net_line
    {
        return Some(format!(
            "The sandbox ({mode}) has network access off, which probably caused: `{line}`. \
             Ask to run it with network access if it really needs the network."
        ));
    }
    let line = find_line(output, FS_PATTERNS)?;
    let allowed = match policy {
        SandboxPolicy::ReadOnly => "nothing may be written".to_string(),
        SandboxPolicy::WorkspaceWrite { .. } => {
            "writes are allowed only in the working directory, the writable roots and the \
             temp directories, and .git and .osprey stay read-only"
                .to_string()
        }
        SandboxPolicy::DangerFullAccess => return None,
    };
    let hint = if line
        .to_ascii_lowercase()
        .contains("operation not permitted")
    {
        "The sandbox also blocks ptrace, mounts and namespaces. "
    } else {
        ""
    };
    Some(format!(
        "The sandbox ({mode}) probably denied this: `{line}` ({allowed}). {hint}Do not \
         change file permissions to work around it; ask to run the command outside the \
         sandbox if it must write there."
    ))
}

/// The first line containing one of `patterns` (case-insensitive), trimmed and capped.
fn find_line(output: &str, patterns: &[&str]) -> Option<String> {
    let line = output.lines().find(|line| {
        let lower = line.to_ascii_lowercase();
        patterns.iter().any(|p| lower.contains(p))
    })?;
    let line = line.trim();
    let capped: String = line.chars().take(160).collect();
    Some(if capped.len() < line.len() {
        format!("{capped}…")
    } else {
        capped
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ww(network_access: bool) -> SandboxPolicy {
        SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: false,
        }
    }

    #[test]
    fn table() {
        let cases: &[(SandboxPolicy, Option<i32>, &str, Option<&str>)] = &[
            (
                ww(false),
                Some(1),
                "touch: cannot touch '/etc/x': Permission denied",
                Some("probably denied"),
            ),
            (
                ww(false),
                Some(1),
                "sh: 1: cannot create .git/config: Read-only file system",
                Some(".git and .osprey"),
            ),
            (
                SandboxPolicy::ReadOnly,
                Some(2),
                "mkdir: cannot create directory 'x': Read-only file system",
                Some("nothing may be written"),
            ),
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
            (ww(false), Some(SIGSYS_EXIT), "", Some("SIGSYS")),
            (
                ww(false),
                None,
                "Bad system call (core dumped)",
                Some("SIGSYS"),
            ),
            (
                ww(false),
                Some(1),
                "strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted",
                Some("ptrace"),
            ),
            (
                ww(false),
                Some(1),
                "  File \"socket.py\", line 232, in __init__\nPermissionError: [Errno 1] Operation not permitted",
                Some("network access off"),
            ),
            // Success, full access, or the network allowed: quiet.
            (ww(false), Some(0), "Permission denied", None),
            (
                SandboxPolicy::DangerFullAccess,
                Some(1),
                "Permission denied",
                None,
            ),
            (
                ww(true),
                Some(6),
                "curl: (6) Could not resolve host: example.com",
                None,
            ),
            // Ordinary failures: quiet.
            (
                ww(false),
                Some(1),
                "error[E0425]: cannot find value `x` in this scope",
                None,
            ),
            (
                ww(false),
                Some(1),
                "FAILED tests/test_x.py::test_y - AssertionError",
                None,
            ),
        ];
        for (policy, code, output, want) in cases {
            let got = detect_denial(policy, *code, output);
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
    fn long_lines_are_capped() {
        let long = format!("{}: Permission denied", "x".repeat(500));
        let note = detect_denial(&SandboxPolicy::ReadOnly, Some(1), &long).unwrap();
        assert!(note.len() < 500, "{note}");
    }
}
