//! The process behind an `exec_command` session: spawned here, or on an exec server.

use super::remote_process::RemoteSession;
use osprey_process::{CollectResult, InteractiveProcess};
use std::time::Duration;

#[derive(Debug)]
pub enum SessionProcess {
    Local(InteractiveProcess),
    Remote(RemoteSession),
}

impl SessionProcess {
    pub fn has_exited(&self) -> bool {
        match self {
            Self::Local(p) => p.has_exited(),
            Self::Remote(p) => p.has_exited(),
        }
    }

    pub async fn write_stdin(&self, bytes: &[u8]) -> Result<(), String> {
        match self {
            Self::Local(p) => p.write_stdin(bytes).await.map_err(|e| e.to_string()),
            Self::Remote(p) => p.write_stdin(bytes).await,
        }
    }

    pub async fn collect_output(&self, yield_for: Duration, max_bytes: usize) -> CollectResult {
        match self {
            Self::Local(p) => p.collect_output(yield_for, max_bytes).await,
            Self::Remote(p) => p.collect_output(yield_for, max_bytes).await,
        }
    }

    pub fn kill(&self) {
        match self {
            Self::Local(p) => p.kill(),
            Self::Remote(p) => p.kill(),
        }
    }

    /// The exec server's verdict that its sandbox blocked the command (remote only; a
    /// local session's denial is judged from its output).
    pub fn server_denied(&self) -> bool {
        match self {
            Self::Local(_) => false,
            Self::Remote(p) => p.sandbox_denied(),
        }
    }
}
