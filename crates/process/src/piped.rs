//! Children that speak a protocol over their standard streams (MCP stdio servers).
//!
//! [`spawn_piped`] starts a request with stdin, stdout and stderr all piped, as the leader of
//! its own process group, and returns the child wrapped so that dropping it kills the whole
//! group. The caller owns the pipes and the protocol; reaping and group kills stay here.

use crate::request::{ExecRequest, SpawnError};
#[cfg(windows)]
use process_wrap::tokio::JobObject;
#[cfg(unix)]
use process_wrap::tokio::ProcessGroup;
use process_wrap::tokio::{CommandWrap, KillOnDrop};
use std::process::Stdio;

/// A running child with piped stdio; dropping it kills its process group.
pub type PipedChild = Box<dyn process_wrap::tokio::ChildWrapper>;

/// Starts `req` with piped stdin, stdout and stderr in a process group of its own (on
/// Windows: a job object of its own).
#[expect(
    clippy::disallowed_methods,
    reason = "the process crate is where commands are spawned"
)]
pub fn spawn_piped(req: &ExecRequest) -> Result<PipedChild, SpawnError> {
    let mut cmd = tokio::process::Command::new(&req.program);
    cmd.args(&req.args)
        .env_clear()
        .envs(&req.env)
        .current_dir(&req.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    req.apply_extras(&mut cmd);
    let mut wrapped = CommandWrap::from(cmd);
    #[cfg(unix)]
    wrapped.wrap(ProcessGroup::leader());
    #[cfg(windows)]
    wrapped.wrap(JobObject);
    wrapped.wrap(KillOnDrop);
    wrapped.spawn().map_err(|e| SpawnError::from_io(req, e))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn echoes_through_the_pipes() {
        let req = ExecRequest::new("cat", "/").env("PATH", "/usr/bin:/bin");
        let mut child = spawn_piped(&req).unwrap();
        let mut stdin = child.stdin().take().unwrap();
        let mut stdout = child.stdout().take().unwrap();
        stdin.write_all(b"ping\n").await.unwrap();
        drop(stdin);
        let mut out = String::new();
        stdout.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "ping\n");
    }

    #[tokio::test]
    async fn a_missing_program_is_a_plain_error() {
        let req = ExecRequest::new("no-such-program-osprey", "/").env("PATH", "/usr/bin:/bin");
        let err = spawn_piped(&req).err().unwrap().to_string();
        assert!(err.contains("no-such-program-osprey"), "{err}");
    }
}
