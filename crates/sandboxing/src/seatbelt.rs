//! macOS: a Seatbelt (SBPL) profile generated from the policy, run through
//! `/usr/bin/sandbox-exec` by absolute path (so a planted `sandbox-exec` on the PATH is
//! never used).
//!
//! The profile denies everything by default and then allows, per filesystem entry, the
//! region beneath that entry minus the regions of more specific entries. The regions are
//! disjoint, so the result does not depend on how Seatbelt orders rules. Unlike Landlock,
//! Seatbelt can name paths that do not exist yet, so `.git` and `.osprey` are carved out
//! of every writable root whether or not they exist.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use osprey_process::ExecRequest;
use osprey_protocol::SandboxPolicy;

use crate::fs_policy::{PROTECTED_NAMES, WRITABLE_DEVICES, normalize};
use crate::{Confinement, FileSystemPolicy, FsAccess, FsEntry, SandboxError};

/// The one `sandbox-exec` Osprey runs.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

const BASE: &str = r#"(version 1)
; Osprey Seatbelt profile: closed unless allowed below.
(deny default)

; Processes: run programs, fork, and signal or inspect only within this sandbox.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

; What ordinary programs need from the system: sysctls, user and group lookups, locale,
; semaphores, terminals, and the shared memory that the system libraries use.
(allow sysctl-read)
(allow ipc-posix-sem)
(allow ipc-posix-shm-read-data)
(allow pseudo-tty)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.logd")
  (global-name "com.apple.PowerManagement.control"))
(allow file-ioctl (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
"#;

/// The Seatbelt profile for a coarse policy in `cwd` (`tmpdir` is the command's
/// `$TMPDIR`, writable under `workspace-write` unless excluded).
pub fn seatbelt_profile(policy: &SandboxPolicy, cwd: &Path, tmpdir: Option<&Path>) -> String {
    let fs = FileSystemPolicy::from_sandbox_policy(policy, cwd, tmpdir);
    let mut entries = fs.entries().to_vec();
    let roots: Vec<PathBuf> = fs
        .writable_paths()
        .filter(|p| !p.starts_with("/dev") && *p != Path::new("/"))
        .map(Path::to_path_buf)
        .collect();
    for root in roots {
        for name in PROTECTED_NAMES {
            entries.push(FsEntry::new(root.join(name), FsAccess::Read));
        }
    }
    let fs = FileSystemPolicy::new(entries).unwrap_or(fs);
    seatbelt_profile_for(&fs, policy.has_full_network_access())
}

/// The Seatbelt profile for an explicit filesystem policy and network switch.
pub fn seatbelt_profile_for(fs: &FileSystemPolicy, network: bool) -> String {
    let mut out = String::from(BASE);
    out.push_str("\n; Filesystem, from the most general entry to the most specific.\n");
    let entries = fs.entries();
    for entry in entries {
        let verbs = match entry.access {
            FsAccess::None => continue,
            FsAccess::Read => "file-read*",
            FsAccess::Write if is_device(&entry.path) => "file-read* file-write-data file-ioctl",
            FsAccess::Write => "file-read* file-write*",
        };
        let inner: Vec<&FsEntry> = entries
            .iter()
            .filter(|e| {
                e.path != entry.path && e.path.starts_with(&entry.path) && e.access != entry.access
            })
            .collect();
        let _ = write!(out, "(allow {verbs}");
        if inner.is_empty() {
            let _ = writeln!(out, " (subpath {}))", quote(&entry.path));
        } else {
            let _ = writeln!(out, "\n  (require-all (subpath {})", quote(&entry.path));
            for e in inner {
                let _ = writeln!(out, "    (require-not (subpath {}))", quote(&e.path));
            }
            out.push_str("  ))\n");
        }
    }
    out.push_str("\n; Network.\n");
    if network {
        out.push_str("(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)\n");
    } else {
        out.push_str("; off: no network-outbound, network-inbound or network-bind rule.\n");
    }
    out
}

fn is_device(path: &Path) -> bool {
    WRITABLE_DEVICES.iter().any(|d| Path::new(d) == path) && path != Path::new("/dev/pts")
}

/// An SBPL string literal.
fn quote(path: &Path) -> String {
    let mut out = String::from("\"");
    for c in path.to_string_lossy().chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Confines `request` on macOS: `/usr/bin/sandbox-exec -p PROFILE -- COMMAND...`.
/// `danger-full-access` returns the request unchanged.
pub fn confine_macos(
    request: ExecRequest,
    policy: &SandboxPolicy,
    cwd: &Path,
) -> Result<ExecRequest, SandboxError> {
    if matches!(policy, SandboxPolicy::DangerFullAccess) {
        return Ok(request);
    }
    let tmpdir = request.env.get("TMPDIR").map(Path::new);
    let profile = seatbelt_profile(policy, &normalize(cwd), tmpdir);
    let mut args = vec!["-p".to_string(), profile, "--".to_string(), request.program];
    args.extend(request.args);
    Ok(ExecRequest {
        program: SANDBOX_EXEC.to_string(),
        args,
        cwd: request.cwd,
        env: request.env,
        arg0: None,
        child_setup: None,
    })
}

/// Confines `request` under an explicit [`Confinement`] (a permission profile's) with
/// Seatbelt: `.git` and `.osprey` are carved out of every writable directory, existing or
/// not.
pub fn confine_macos_with(request: ExecRequest, confinement: &Confinement) -> ExecRequest {
    let fs = &confinement.filesystem;
    let mut entries = fs.entries().to_vec();
    for root in fs
        .writable_paths()
        .filter(|p| !p.starts_with("/dev") && *p != Path::new("/"))
    {
        for name in PROTECTED_NAMES {
            entries.push(FsEntry::new(root.join(name), FsAccess::Read));
        }
    }
    let fs = FileSystemPolicy::new(entries).unwrap_or_else(|_| fs.clone());
    let profile = seatbelt_profile_for(&fs, confinement.network);
    let mut args = vec!["-p".to_string(), profile, "--".to_string(), request.program];
    args.extend(request.args);
    ExecRequest {
        program: SANDBOX_EXEC.to_string(),
        args,
        cwd: request.cwd,
        env: request.env,
        arg0: None,
        child_setup: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ww(network_access: bool, writable_roots: Vec<PathBuf>) -> SandboxPolicy {
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: true,
        }
    }

    #[test]
    fn profile_read_only() {
        insta::assert_snapshot!(seatbelt_profile(
            &SandboxPolicy::ReadOnly,
            Path::new("/nonexistent/repo"),
            None
        ));
    }

    #[test]
    fn profile_workspace_write() {
        insta::assert_snapshot!(seatbelt_profile(
            &ww(false, vec![PathBuf::from("/nonexistent/extra \"quoted\"")]),
            Path::new("/nonexistent/repo"),
            Some(Path::new("/nonexistent/tmpdir")),
        ));
    }

    #[test]
    fn profile_workspace_write_with_network() {
        insta::assert_snapshot!(seatbelt_profile(
            &ww(true, vec![]),
            Path::new("/nonexistent/repo"),
            None
        ));
    }

    #[test]
    fn confine_uses_absolute_sandbox_exec() {
        let req = ExecRequest::new("ls", "/nonexistent/repo").args(["-l"]);
        let out = confine_macos(
            req.clone(),
            &SandboxPolicy::ReadOnly,
            Path::new("/nonexistent/repo"),
        )
        .unwrap();
        assert_eq!(out.program, SANDBOX_EXEC);
        assert_eq!(out.args[0], "-p");
        assert_eq!(&out.args[2..], ["--", "ls", "-l"]);
        assert_eq!(
            confine_macos(
                req.clone(),
                &SandboxPolicy::DangerFullAccess,
                Path::new("/")
            )
            .unwrap(),
            req
        );
    }
}
