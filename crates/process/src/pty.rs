//! Pseudo-terminal plumbing for interactive sessions.
//!
//! portable-pty allocates the terminal pair and resizes it. The child is spawned by us
//! (not by portable-pty) so that it gets exactly the request's argv[0], environment and
//! working directory, and the same session/process-group setup as every other command.
//! The master side is read and written through Tokio's `AsyncFd` on a non-blocking
//! duplicate of the master descriptor: no blocking reader thread exists that could
//! outlive the session.
//!
//! Windows: no terminal yet. ConPTY would need its own spawn path (the pseudo console is
//! attached at process creation) and blocking reader threads, and under the Wine the tests
//! use it shows nothing (measured: a child's output never leaves the pseudo console); until
//! then a `tty` request fails with [`SpawnError::Terminal`] saying so, and pipes work as
//! everywhere.

#[cfg(unix)]
use std::fs::File;
use std::io;
#[cfg(unix)]
use std::io::{Read, Write};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
#[cfg(unix)]
use std::process::Stdio;

#[cfg(unix)]
use portable_pty::{MasterPty, PtySize, native_pty_system};
#[cfg(unix)]
use tokio::io::unix::AsyncFd;

use crate::request::{ExecRequest, SpawnError};
#[cfg(unix)]
use crate::sys;

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalSize {
    /// Lines.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

impl Default for TerminalSize {
    /// The classic 24 × 80.
    fn default() -> Self {
        Self { rows: 24, cols: 80 }
    }
}

#[cfg(unix)]
impl TerminalSize {
    fn to_pty(self) -> PtySize {
        PtySize {
            rows: self.rows,
            cols: self.cols,
            pixel_width: 0,
            pixel_height: 0,
        }
    }
}

/// The master side of a session's terminal.
#[cfg(unix)]
pub(crate) struct PtyMaster {
    /// Kept for resizing; also keeps the terminal pair alive. (A mutex only because
    /// portable-pty's master is not `Sync`.)
    master: std::sync::Mutex<Box<dyn MasterPty + Send>>,
    /// Non-blocking duplicate used for all reads and writes.
    io: AsyncFd<File>,
}

#[cfg(unix)]
impl std::fmt::Debug for PtyMaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyMaster").finish_non_exhaustive()
    }
}

#[cfg(unix)]
impl PtyMaster {
    pub(crate) fn resize(&self, size: TerminalSize) -> io::Result<()> {
        let master = self
            .master
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        master.resize(size.to_pty()).map_err(io::Error::other)
    }

    /// Reads what the terminal has; `Ok(0)` once every slave descriptor is closed.
    pub(crate) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.io.readable().await?;
            match guard.try_io(|inner| inner.get_ref().read(buf)) {
                Ok(Err(err)) if err.raw_os_error() == Some(libc::EIO) => return Ok(0),
                Ok(res) => return res,
                Err(_would_block) => {}
            }
        }
    }

    pub(crate) async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let mut guard = self.io.writable().await?;
            match guard.try_io(|inner| inner.get_ref().write(bytes)) {
                Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(Ok(n)) => bytes = &bytes[n..],
                Ok(Err(err)) => return Err(err),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }
}

/// Allocates a terminal of `size` and starts `req` on it as the session leader with the
/// terminal as its controlling terminal and as stdin, stdout and stderr.
#[cfg(unix)]
pub(crate) fn spawn_on_pty(
    req: &ExecRequest,
    size: TerminalSize,
) -> Result<(tokio::process::Child, PtyMaster), SpawnError> {
    if !req.cwd.is_dir() {
        // Classify the bad cwd the same way as for pipes.
        return Err(SpawnError::from_io(
            req,
            io::Error::from(io::ErrorKind::NotFound),
        ));
    }
    let pair = native_pty_system()
        .openpty(size.to_pty())
        .map_err(|err| SpawnError::terminal(req, err.to_string()))?;
    let name = pair
        .master
        .tty_name()
        .ok_or_else(|| SpawnError::terminal(req, "the terminal has no device name"))?;
    let master_fd = pair
        .master
        .as_raw_fd()
        .ok_or_else(|| SpawnError::terminal(req, "the terminal has no descriptor"))?;
    // Open our own slave descriptor by name: portable-pty does not hand out its own.
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&name)
        .map_err(|err| {
            SpawnError::terminal(req, format!("could not open {}: {err}", name.display()))
        })?;
    drop(pair.slave);
    let io = sys::dup_nonblocking(master_fd)
        .and_then(|fd| sys::register_async(File::from(fd)))
        .map_err(|err| SpawnError::terminal(req, err.to_string()))?;

    let stdio = |file: &File| -> Result<Stdio, SpawnError> {
        file.try_clone()
            .map(Stdio::from)
            .map_err(|err| SpawnError::terminal(req, err.to_string()))
    };
    let mut cmd = crate::request::base_command(req);
    cmd.stdin(stdio(&slave)?)
        .stdout(stdio(&slave)?)
        .stderr(Stdio::from(slave))
        .kill_on_drop(true);
    sys::start_in_new_session(&mut cmd, true);
    req.apply_extras(&mut cmd);
    let child = cmd.spawn().map_err(|err| SpawnError::from_io(req, err))?;
    // `cmd` owns the last parent-side slave descriptors; drop them so reads on the master
    // report end-of-file once the child's side is closed.
    drop(cmd);
    Ok((
        child,
        PtyMaster {
            master: std::sync::Mutex::new(pair.master),
            io,
        },
    ))
}

/// Windows has no terminal for a child yet: there is no master to hold.
#[cfg(windows)]
#[derive(Debug)]
pub(crate) enum PtyMaster {}

#[cfg(windows)]
impl PtyMaster {
    pub(crate) fn resize(&self, _size: TerminalSize) -> io::Result<()> {
        match *self {}
    }

    pub(crate) async fn read(&self, _buf: &mut [u8]) -> io::Result<usize> {
        match *self {}
    }

    pub(crate) async fn write_all(&self, _bytes: &[u8]) -> io::Result<()> {
        match *self {}
    }
}

/// A terminal was asked for on Windows: refused in words, nothing is started.
#[cfg(windows)]
pub(crate) fn spawn_on_pty(
    req: &ExecRequest,
    _size: TerminalSize,
) -> Result<(tokio::process::Child, PtyMaster), SpawnError> {
    Err(SpawnError::terminal(
        req,
        "Osprey does not run programs on a terminal (ConPTY) on Windows yet; start it \
         without tty (pipes) instead",
    ))
}
