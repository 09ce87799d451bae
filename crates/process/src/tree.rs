//! The process tree a spawned child leads, and the one way to stop all of it.
//!
//! On Unix the child leads a session, so its process group (id = its pid) holds everything
//! it starts, and signals go to the group. On Windows the child is put in a Job Object of its
//! own before it runs (see `job`); Windows has no signals to send, so interrupt, terminate
//! and kill all end the whole job.

use std::io;

use crate::request::{ExecRequest, SpawnError};

/// A child's process tree: its process group on Unix, its Job Object on Windows.
#[derive(Debug)]
pub(crate) struct ProcessTree {
    pid: Option<u32>,
    #[cfg(windows)]
    job: crate::job::Job,
}

impl ProcessTree {
    /// Spawns `cmd` (built from `req`) and takes charge of its tree. On Windows the child
    /// starts suspended and is resumed once it is in its job; a child that cannot be put in
    /// one is killed and the spawn fails.
    pub(crate) fn spawn(
        req: &ExecRequest,
        cmd: &mut tokio::process::Command,
    ) -> Result<(tokio::process::Child, Self), SpawnError> {
        refuse_unix_only_extras(req)?;
        let child = cmd.spawn().map_err(|err| SpawnError::from_io(req, err))?;
        Self::adopt(req, child)
    }

    #[cfg(unix)]
    pub(crate) fn adopt(
        _req: &ExecRequest,
        child: tokio::process::Child,
    ) -> Result<(tokio::process::Child, Self), SpawnError> {
        let pid = child.id();
        Ok((child, Self { pid }))
    }

    #[cfg(windows)]
    pub(crate) fn adopt(
        req: &ExecRequest,
        mut child: tokio::process::Child,
    ) -> Result<(tokio::process::Child, Self), SpawnError> {
        let pid = child.id();
        let adopted = match (child.raw_handle(), pid) {
            (Some(handle), Some(pid)) => crate::job::Job::adopt(handle, pid),
            _ => Err(io::Error::other("the new process has no handle")),
        };
        match adopted {
            Ok(job) => Ok((child, Self { pid, job })),
            Err(err) => {
                let _ = child.start_kill();
                Err(SpawnError::Os {
                    program: req.program.clone(),
                    cwd: req.cwd.clone(),
                    reason: format!(
                        "it could not be put in a job object (which lets Osprey stop it and \
                         everything it starts): {}",
                        crate::request::plain_os_message(&err)
                    ),
                    source: err,
                })
            }
        }
    }

    /// The child's process id (on Unix also its process group id).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Kills the whole tree (`SIGKILL` to the group; `TerminateJobObject`).
    pub(crate) fn kill(&self) -> io::Result<()> {
        #[cfg(unix)]
        {
            self.signal(libc::SIGKILL)
        }
        #[cfg(windows)]
        {
            self.job.kill()
        }
    }

    /// Asks the tree to stop (`SIGTERM`; on Windows, which has no signals, a kill).
    pub(crate) fn terminate(&self) -> io::Result<()> {
        #[cfg(unix)]
        {
            self.signal(libc::SIGTERM)
        }
        #[cfg(windows)]
        {
            self.job.kill()
        }
    }

    /// Ctrl-C (`SIGINT`; on Windows a kill: a process without a console of ours cannot be
    /// sent a console control event).
    pub(crate) fn interrupt(&self) -> io::Result<()> {
        #[cfg(unix)]
        {
            self.signal(libc::SIGINT)
        }
        #[cfg(windows)]
        {
            self.job.kill()
        }
    }

    #[cfg(unix)]
    fn signal(&self, signal: libc::c_int) -> io::Result<()> {
        match self.pid {
            Some(pid) => crate::sys::signal_process_group(pid, signal),
            None => Ok(()),
        }
    }
}

/// The signal that ended a process (Unix); Windows processes end with a code only.
pub(crate) fn signal_of(status: std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        status.signal()
    }
    #[cfg(windows)]
    {
        let _ = status;
        None
    }
}

/// On Windows a request cannot carry what only Unix can do: a step between fork and exec
/// (the Linux sandbox) or a separate `argv[0]`. Refused rather than silently dropped, so
/// that a confinement step is never skipped.
fn refuse_unix_only_extras(req: &ExecRequest) -> Result<(), SpawnError> {
    #[cfg(windows)]
    {
        let what = if req.child_setup.is_some() {
            Some("a step to run before exec (the Linux sandbox's confinement)")
        } else if req.arg0.as_deref().is_some_and(|a| a != req.program) {
            Some("an argv[0] different from the program")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(SpawnError::Os {
                program: req.program.clone(),
                cwd: req.cwd.clone(),
                reason: format!("the request asks for {what}, which Windows cannot do"),
                source: io::Error::from(io::ErrorKind::Unsupported),
            });
        }
    }
    let _ = req;
    Ok(())
}

/// Windows behaviour, run under Wine by `scripts/wine-exec-server.sh unit`.
#[cfg(all(test, windows))]
mod windows_tests {
    use std::time::Duration;

    use crate::{ExecExpiration, ExecRequest, OutputCaps, run_to_completion};

    fn cmd(script: &str, cwd: &std::path::Path) -> ExecRequest {
        ExecRequest::new("cmd.exe", cwd)
            .args(["/c", script])
            .envs(std::env::vars().collect())
    }

    #[tokio::test]
    async fn a_cmd_script_runs_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = run_to_completion(
            cmd(r#"echo "a & b"& echo %COMSPEC%& exit /b 4"#, dir.path()),
            ExecExpiration::timeout(Duration::from_secs(30)),
            OutputCaps::default(),
            None,
        )
        .await
        .unwrap();
        let text = outcome.output_lossy();
        assert!(text.contains("\"a & b\""), "{text:?}");
        assert!(text.to_ascii_lowercase().contains("cmd.exe"), "{text:?}");
        assert_eq!(outcome.exit_code, Some(4));
    }

    /// A timeout kills the job: the grandchild `start /b` began never writes its file.
    #[tokio::test]
    async fn a_timeout_kills_the_whole_job() {
        let dir = tempfile::tempdir().unwrap();
        let script = r#"start /b cmd /c "ping -n 3 127.0.0.1 >nul & echo late> late.txt" & ping -n 30 127.0.0.1 >nul"#;
        let started = std::time::Instant::now();
        let outcome = run_to_completion(
            cmd(script, dir.path()),
            ExecExpiration::timeout(Duration::from_secs(1)),
            OutputCaps::default(),
            None,
        )
        .await
        .unwrap();
        assert!(outcome.timed_out);
        assert!(started.elapsed() < Duration::from_secs(10), "{outcome:?}");
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(
            !dir.path().join("late.txt").exists(),
            "a grandchild outlived the timeout"
        );
    }

    #[tokio::test]
    async fn unix_only_requests_are_refused_not_run_without() {
        let dir = tempfile::tempdir().unwrap();
        let err = run_to_completion(
            cmd("echo x", dir.path()).arg0("other"),
            ExecExpiration::never(),
            OutputCaps::default(),
            None,
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("argv[0]"), "{err}");
    }
}
