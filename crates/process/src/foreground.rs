//! A program that takes over the terminal for a while: the person's `$EDITOR`, started by
//! the TUI with the draft. Unlike every other child it is *not* put in a session of its
//! own: it stays in the TUI's process group, which is the terminal's foreground group, and
//! inherits the terminal as its standard streams, so it can read keys and draw. The caller
//! gives the terminal up (raw mode off, alternate screen left, its own input reader
//! stopped) before, and takes it back after.

use std::process::Stdio;

use crate::request::{ExecRequest, SpawnError, base_command};

/// Runs `req` in the foreground of the terminal and waits for it: its exit code, or
/// `None` when a signal ended it.
pub async fn run_in_foreground(req: &ExecRequest) -> Result<Option<i32>, SpawnError> {
    let mut cmd = base_command(req);
    cmd.stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    req.apply_extras(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| SpawnError::from_io(req, e))?;
    let status = child
        .wait()
        .await
        .map_err(|e| SpawnError::from_io(req, e))?;
    Ok(status.code())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_exit_code_comes_back_and_a_missing_program_is_a_plain_error() {
        let req = ExecRequest::new("sh", "/")
            .env("PATH", "/usr/bin:/bin")
            .args(["-c", "exit 3"]);
        assert_eq!(run_in_foreground(&req).await.unwrap(), Some(3));
        let missing = ExecRequest::new("osprey-no-such-editor", "/").env("PATH", "/usr/bin:/bin");
        let err = run_in_foreground(&missing).await.unwrap_err().to_string();
        assert!(err.contains("osprey-no-such-editor"), "{err}");
    }
}
