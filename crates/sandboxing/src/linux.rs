//! Linux: choosing between the Landlock path and the bubblewrap path, and rewriting an
//! [`ExecRequest`] so that it enters the `osprey-linux-sandbox` helper.

use std::path::{Path, PathBuf};

use osprey_process::ExecRequest;
use osprey_protocol::SandboxPolicy;
use serde::{Deserialize, Serialize};

use crate::helper_args::{HELPER_ARG0, HelperInvocation, HelperMode};
use crate::{Confinement, FileSystemPolicy, FsAccess, SandboxError};

/// Which Linux mechanism enforces the filesystem policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinuxBackend {
    /// Landlock when the policy allows it, bubblewrap otherwise.
    #[default]
    Auto,
    /// Landlock only; fails for policies it cannot express.
    Landlock,
    /// Bubblewrap (mount namespaces) for everything.
    Bubblewrap,
}

/// How the Landlock path enforces a filesystem policy.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LandlockPlan {
    /// Paths granted read access (beneath them).
    pub read: Vec<PathBuf>,
    /// Paths granted full access (beneath them).
    pub write: Vec<PathBuf>,
    /// Read-only carve-outs inside writable paths, enforced by read-only bind mounts in a
    /// private mount namespace (Landlock rules only ever add access).
    pub readonly_mounts: Vec<PathBuf>,
}

/// Why a policy needs bubblewrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeedsBubblewrap {
    /// The entry Landlock cannot express.
    pub path: PathBuf,
    /// In words.
    pub reason: String,
}

/// Plans the Landlock path, or says why the policy needs bubblewrap.
///
/// Landlock rules only grant; a descendant can never have less access than its
/// ancestor. So an entry may be enforced by Landlock when its access is at least its
/// parent's. Two exceptions: a `read` entry under a `write` parent becomes a read-only
/// bind mount (unless something beneath it is writable again), and a `none` entry under
/// a readable parent needs bubblewrap to hide it. Entries whose path does not exist are
/// skipped: there is nothing to grant or hide.
pub fn landlock_plan(fs: &FileSystemPolicy) -> Result<LandlockPlan, NeedsBubblewrap> {
    let mut plan = LandlockPlan::default();
    let entries = fs.entries();
    for entry in entries {
        if std::fs::symlink_metadata(&entry.path).is_err() {
            continue;
        }
        let parent = fs.inherited_access(&entry.path);
        match (parent, entry.access) {
            (FsAccess::Write, FsAccess::Read) => {
                if let Some(inner) = entries.iter().find(|e| {
                    e.path != entry.path
                        && e.path.starts_with(&entry.path)
                        && e.access == FsAccess::Write
                }) {
                    return Err(NeedsBubblewrap {
                        path: inner.path.clone(),
                        reason: format!(
                            "a writable path inside the read-only carve-out {}",
                            entry.path.display()
                        ),
                    });
                }
                plan.readonly_mounts.push(entry.path.clone());
            }
            (p, FsAccess::None) if p > FsAccess::None => {
                return Err(NeedsBubblewrap {
                    path: entry.path.clone(),
                    reason: format!("a `none` entry under a path that is {}", p.as_str()),
                });
            }
            (FsAccess::Write, FsAccess::Write) | (_, FsAccess::None) => {}
            (FsAccess::Read, FsAccess::Read) => {}
            (_, FsAccess::Read) => plan.read.push(entry.path.clone()),
            (_, FsAccess::Write) => plan.write.push(entry.path.clone()),
        }
    }
    Ok(plan)
}

/// Confines `request` under a coarse policy on Linux: the returned request runs
/// `helper_exe` with `argv[0]` = `osprey-linux-sandbox`, which applies the policy and
/// then execs the original command. `danger-full-access` returns the request unchanged.
pub fn confine_linux(
    request: ExecRequest,
    policy: &SandboxPolicy,
    cwd: &Path,
    helper_exe: &Path,
) -> Result<ExecRequest, SandboxError> {
    match Confinement::from_sandbox_policy(policy, cwd, &request.env) {
        None => Ok(request),
        Some(confinement) => {
            confine_linux_with(request, &confinement, helper_exe, LinuxBackend::Auto)
        }
    }
}

/// Confines `request` under an explicit [`Confinement`] with a chosen backend.
pub fn confine_linux_with(
    request: ExecRequest,
    confinement: &Confinement,
    helper_exe: &Path,
    backend: LinuxBackend,
) -> Result<ExecRequest, SandboxError> {
    let bwrap = find_bwrap(request.env.get("PATH").map(String::as_str), &request.cwd);
    let mode = choose_mode(
        backend,
        landlock_plan(&confinement.filesystem),
        crate::probe::landlock_abi().is_some(),
        bwrap,
    )?;
    helper_request(request, confinement, helper_exe, mode)
}

/// The helper's stage for `backend`. `auto` takes Landlock when the policy fits it and the
/// kernel has it, bubblewrap otherwise; without either the Landlock stage is chosen all the
/// same, and the helper refuses to run the command with its explanation (never unconfined).
fn choose_mode(
    backend: LinuxBackend,
    plan: Result<LandlockPlan, NeedsBubblewrap>,
    landlock_available: bool,
    bwrap: Option<PathBuf>,
) -> Result<HelperMode, SandboxError> {
    let reason = match (backend, plan) {
        (LinuxBackend::Landlock, Err(why)) => {
            return Err(SandboxError::NotExpressibleWithLandlock {
                path: why.path,
                reason: why.reason,
            });
        }
        (LinuxBackend::Landlock, Ok(_)) => return Ok(HelperMode::Landlock),
        (LinuxBackend::Auto, Ok(_)) if landlock_available => return Ok(HelperMode::Landlock),
        (LinuxBackend::Auto, Ok(_)) => match bwrap {
            Some(bwrap) => return Ok(HelperMode::BubblewrapOuter { bwrap }),
            None => return Ok(HelperMode::Landlock),
        },
        (LinuxBackend::Auto, Err(why)) => format!("{} at {}", why.reason, why.path.display()),
        (LinuxBackend::Bubblewrap, _) => "the bubblewrap backend was chosen".to_string(),
    };
    bwrap
        .map(|bwrap| HelperMode::BubblewrapOuter { bwrap })
        .ok_or(SandboxError::BubblewrapNotFound { reason })
}

fn helper_request(
    request: ExecRequest,
    confinement: &Confinement,
    helper_exe: &Path,
    mode: HelperMode,
) -> Result<ExecRequest, SandboxError> {
    let mut command = vec![request.program.into()];
    command.extend(request.args.into_iter().map(Into::into));
    let invocation = HelperInvocation {
        mode,
        confinement: confinement.clone(),
        command,
    };
    let args = invocation
        .to_args()
        .into_iter()
        .map(|a| {
            a.into_string().map_err(|a| SandboxError::NotUtf8 {
                value: a.to_string_lossy().into_owned(),
            })
        })
        .collect::<Result<Vec<String>, _>>()?;
    let program = helper_exe.to_str().ok_or_else(|| SandboxError::NotUtf8 {
        value: helper_exe.to_string_lossy().into_owned(),
    })?;
    Ok(ExecRequest {
        program: program.to_string(),
        args,
        cwd: request.cwd,
        env: request.env,
        arg0: Some(HELPER_ARG0.to_string()),
        child_setup: None,
    })
}

/// The first `bwrap` on `path_var` that is an absolute directory outside `cwd` (a
/// repository must not be able to plant its own `bwrap`).
pub fn find_bwrap(path_var: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    let cwd = crate::fs_policy::normalize(cwd);
    let default = "/usr/local/bin:/usr/bin:/bin";
    path_var
        .unwrap_or(default)
        .split(':')
        .map(Path::new)
        .filter(|dir| dir.is_absolute())
        .map(|dir| crate::fs_policy::normalize(dir).join("bwrap"))
        .filter(|candidate| !candidate.starts_with(&cwd))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FsEntry;
    use pretty_assertions::assert_eq;

    fn fsp(entries: &[(&Path, FsAccess)]) -> FileSystemPolicy {
        FileSystemPolicy::new(entries.iter().map(|(p, a)| FsEntry::new(*p, *a))).unwrap()
    }

    #[test]
    fn plan_for_split_policies() {
        let dir = tempfile::tempdir().unwrap();
        let repo = std::fs::canonicalize(dir.path()).unwrap();
        let secrets = repo.join("secrets");
        let public = secrets.join("public");
        let git = repo.join(".git");
        std::fs::create_dir_all(&public).unwrap();
        std::fs::create_dir_all(&git).unwrap();
        let root = Path::new("/");

        let plain = fsp(&[
            (root, FsAccess::Read),
            (&repo, FsAccess::Write),
            (&git, FsAccess::Read),
        ]);
        assert_eq!(
            landlock_plan(&plain).unwrap(),
            LandlockPlan {
                read: vec![PathBuf::from("/")],
                write: vec![repo.clone()],
                readonly_mounts: vec![git],
            }
        );

        let hidden = fsp(&[
            (root, FsAccess::Read),
            (&repo, FsAccess::Write),
            (&secrets, FsAccess::None),
        ]);
        assert_eq!(landlock_plan(&hidden).unwrap_err().path, secrets);

        let reopened = fsp(&[
            (root, FsAccess::Read),
            (&repo, FsAccess::Write),
            (&secrets, FsAccess::Read),
            (&public, FsAccess::Write),
        ]);
        assert_eq!(landlock_plan(&reopened).unwrap_err().path, public);

        // A writable child under a path nobody may read is plain Landlock.
        let islands = fsp(&[(&repo, FsAccess::None), (&public, FsAccess::Write)]);
        assert_eq!(landlock_plan(&islands).unwrap().write, vec![public]);

        // Entries that do not exist are ignored.
        let ghost = fsp(&[
            (root, FsAccess::Read),
            (Path::new("/nonexistent-ghost"), FsAccess::None),
        ]);
        assert!(landlock_plan(&ghost).is_ok());
    }

    #[test]
    fn confine_rewrites_the_request() {
        let dir = tempfile::tempdir().unwrap();
        let req = ExecRequest::new("echo", dir.path())
            .args(["hi"])
            .env("PATH", "/usr/bin");
        let out = confine_linux(
            req.clone(),
            &SandboxPolicy::ReadOnly,
            dir.path(),
            Path::new("/opt/osprey"),
        )
        .unwrap();
        assert_eq!(out.program, "/opt/osprey");
        assert_eq!(out.arg0.as_deref(), Some("osprey-linux-sandbox"));
        assert_eq!(out.env, req.env);
        let parsed =
            HelperInvocation::parse(&out.args.iter().map(Into::into).collect::<Vec<_>>()).unwrap();
        assert_eq!(parsed.mode, HelperMode::Landlock);
        assert_eq!(parsed.command, vec!["echo", "hi"]);
        assert!(!parsed.confinement.network);

        let full = confine_linux(
            req.clone(),
            &SandboxPolicy::DangerFullAccess,
            dir.path(),
            Path::new("/x"),
        )
        .unwrap();
        assert_eq!(full, req);
    }

    #[test]
    fn auto_falls_back_to_bubblewrap_only_without_landlock() {
        let fits = || Ok(LandlockPlan::default());
        let split = || {
            Err(NeedsBubblewrap {
                path: PathBuf::from("/r/secrets"),
                reason: "a `none` entry".into(),
            })
        };
        let bwrap = || Some(PathBuf::from("/usr/bin/bwrap"));
        let outer = HelperMode::BubblewrapOuter {
            bwrap: PathBuf::from("/usr/bin/bwrap"),
        };
        use LinuxBackend::{Auto, Bubblewrap, Landlock};
        let ok = |b, plan, ll, bw| choose_mode(b, plan, ll, bw).unwrap();
        assert_eq!(ok(Auto, fits(), true, bwrap()), HelperMode::Landlock);
        assert_eq!(ok(Auto, fits(), false, bwrap()), outer);
        // Neither: the helper refuses with the Landlock message (fails closed).
        assert_eq!(ok(Auto, fits(), false, None), HelperMode::Landlock);
        assert_eq!(ok(Auto, split(), true, bwrap()), outer);
        assert_eq!(ok(Landlock, fits(), false, bwrap()), HelperMode::Landlock);
        assert_eq!(ok(Bubblewrap, fits(), true, bwrap()), outer);
        assert!(matches!(
            choose_mode(Landlock, split(), true, bwrap()),
            Err(SandboxError::NotExpressibleWithLandlock { .. })
        ));
        for backend in [Auto, Bubblewrap] {
            let err = choose_mode(backend, split(), true, None)
                .unwrap_err()
                .to_string();
            assert!(err.contains("needs bubblewrap"), "{err}");
        }
    }

    #[test]
    fn bwrap_inside_the_workspace_is_never_used() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(dir.path()).unwrap();
        let bin = cwd.join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("bwrap"), "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(bin.join("bwrap"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        let path = format!("{}:relative/dir", bin.display());
        assert_eq!(find_bwrap(Some(&path), &cwd), None);
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            find_bwrap(Some(&path), other.path()),
            Some(bin.join("bwrap"))
        );
    }
}
