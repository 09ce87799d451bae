//! What to run ([`ExecRequest`]), how a spawn fails ([`SpawnError`]), and the one place
//! that turns a request into an OS command.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::process::Stdio;

use crate::child_setup::ChildSetup;

/// One program to start, fully specified: nothing is inherited from Osprey's own
/// environment or working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The program: a path, or a name looked up on the `PATH` in `env`.
    pub program: String,
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// Working directory for the child.
    pub cwd: PathBuf,
    /// The complete environment of the child: the inherited one is cleared first.
    pub env: HashMap<String, String>,
    /// What the child sees as `argv[0]`; defaults to `program`. Used for helpers that
    /// dispatch on their own name.
    pub arg0: Option<String>,
    /// System calls to make in the child just before `exec` (the sandbox's confinement,
    /// which ends in an `execve` of its own).
    pub child_setup: Option<ChildSetup>,
}

impl ExecRequest {
    /// A request with no arguments, an empty environment and no `arg0` override.
    pub fn new(program: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: HashMap::new(),
            arg0: None,
            child_setup: None,
        }
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Replaces the whole environment.
    pub fn envs(mut self, env: HashMap<String, String>) -> Self {
        self.env = env;
        self
    }

    /// Sets `argv[0]`.
    pub fn arg0(mut self, arg0: impl Into<String>) -> Self {
        self.arg0 = Some(arg0.into());
        self
    }

    /// Sets the step to run in the child before `exec`.
    pub fn child_setup(mut self, setup: ChildSetup) -> Self {
        self.child_setup = Some(setup);
        self
    }

    /// Applies what every spawn does with the request beyond program, arguments and
    /// streams: `argv[0]` and the child setup step.
    ///
    /// On Windows neither exists; [`ProcessTree::spawn`](crate::tree::ProcessTree::spawn)
    /// refuses a request that carries them.
    pub(crate) fn apply_extras(&self, cmd: &mut tokio::process::Command) {
        #[cfg(unix)]
        {
            if let Some(arg0) = &self.arg0 {
                cmd.arg0(arg0);
            }
            if let Some(setup) = &self.child_setup {
                setup.install(cmd);
            }
        }
        #[cfg(windows)]
        let _ = cmd;
    }
}

/// A program could not be started. Each message names the program, the working
/// directory, and what went wrong in plain words.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// No executable was found under that name.
    #[error(
        "could not start `{program}` in {}: No such file or directory; check the program \
         name, and that it is installed and on the PATH given to the command",
        cwd.display()
    )]
    ProgramNotFound {
        /// The program as requested.
        program: String,
        /// The working directory requested.
        cwd: PathBuf,
    },
    /// The working directory does not exist or is not a directory.
    #[error(
        "could not start `{program}` in {}: the working directory {reason}; create it or \
         run the command somewhere else",
        cwd.display()
    )]
    BadCwd {
        /// The program as requested.
        program: String,
        /// The working directory requested.
        cwd: PathBuf,
        /// "does not exist" or "is not a directory".
        reason: &'static str,
    },
    /// Any other refusal by the operating system (permissions, limits, bad format).
    #[error("could not start `{program}` in {}: {reason}", cwd.display())]
    Os {
        /// The program as requested.
        program: String,
        /// The working directory requested.
        cwd: PathBuf,
        /// The OS error in words, without its number.
        reason: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A pseudo-terminal could not be set up for an interactive session.
    #[error("could not start `{program}` in {}: could not open a terminal for it: {reason}", cwd.display())]
    Terminal {
        /// The program as requested.
        program: String,
        /// The working directory requested.
        cwd: PathBuf,
        /// What failed.
        reason: String,
    },
    /// Spawning needs a Tokio runtime and none was running.
    #[error(
        "could not start `{program}`: no Tokio runtime is running on this thread; call \
         from within async code"
    )]
    NoRuntime {
        /// The program as requested.
        program: String,
    },
}

impl SpawnError {
    /// Classifies a spawn failure, looking at the working directory only after the fact
    /// so the common path pays nothing for it.
    pub(crate) fn from_io(req: &ExecRequest, err: io::Error) -> Self {
        let program = req.program.clone();
        let cwd = req.cwd.clone();
        match std::fs::metadata(&req.cwd) {
            Err(_) => {
                return Self::BadCwd {
                    program,
                    cwd,
                    reason: "does not exist",
                };
            }
            Ok(meta) if !meta.is_dir() => {
                return Self::BadCwd {
                    program,
                    cwd,
                    reason: "is not a directory",
                };
            }
            Ok(_) => {}
        }
        if err.kind() == io::ErrorKind::NotFound {
            return Self::ProgramNotFound { program, cwd };
        }
        Self::Os {
            program,
            cwd,
            reason: plain_os_message(&err),
            source: err,
        }
    }

    pub(crate) fn terminal(req: &ExecRequest, reason: impl Into<String>) -> Self {
        Self::Terminal {
            program: req.program.clone(),
            cwd: req.cwd.clone(),
            reason: reason.into(),
        }
    }
}

/// The OS's text for an error without the trailing "(os error N)".
pub(crate) fn plain_os_message(err: &io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(cut) if text.ends_with(')') => text[..cut].to_string(),
        _ => text,
    }
}

/// How the child's standard streams are wired.
pub(crate) enum Stdin {
    Null,
    Piped,
}

/// The program, its arguments, its working directory and exactly its environment: what
/// every spawn of a request starts from.
pub(crate) fn base_command(req: &ExecRequest) -> tokio::process::Command {
    #[expect(
        clippy::disallowed_methods,
        reason = "osprey-process is the one crate that spawns processes"
    )]
    let mut cmd = tokio::process::Command::new(&req.program);
    #[cfg(windows)]
    push_windows_args(&mut cmd, req);
    #[cfg(not(windows))]
    cmd.args(&req.args);
    cmd.current_dir(&req.cwd).env_clear().envs(&req.env);
    cmd
}

/// Windows has no argv, only a command line each program splits itself. The standard
/// library quotes arguments the way C programs split them, which is wrong for cmd.exe: it
/// takes everything after `/c` (or `/k`) as one line of its own syntax, and `\"` means
/// nothing to it. So for cmd the script after `/c` goes on the line verbatim, as
/// `/s /c "SCRIPT"` — `/s` makes cmd strip exactly the outer quotes and run SCRIPT as
/// written. The arguments before `/c` are quoted as usual.
#[cfg(windows)]
fn push_windows_args(cmd: &mut tokio::process::Command, req: &ExecRequest) {
    match cmd_script_start(&req.program, &req.args) {
        Some(at) => {
            cmd.args(&req.args[..at]);
            let script = req.args[at + 1..].join(" ");
            cmd.raw_arg(format!("/s {} \"{script}\"", req.args[at]));
        }
        None => {
            cmd.args(&req.args);
        }
    }
}

/// Where cmd's `/c` or `/k` is in `args` when `program` is cmd.exe.
#[cfg(any(windows, test))]
pub(crate) fn cmd_script_start(program: &str, args: &[String]) -> Option<usize> {
    let name = program.rsplit(['\\', '/']).next().unwrap_or(program);
    let name = name.to_ascii_lowercase();
    if name != "cmd" && name != "cmd.exe" {
        return None;
    }
    args.iter()
        .position(|a| a.eq_ignore_ascii_case("/c") || a.eq_ignore_ascii_case("/k"))
}

/// Builds the OS command for `req`: cleared environment, explicit cwd, optional argv[0],
/// its own session and process group (on Windows: created suspended, to be put in a job
/// object by [`ProcessTree::spawn`](crate::tree::ProcessTree::spawn)), stdout/stderr piped.
pub(crate) fn command(req: &ExecRequest, stdin: Stdin) -> tokio::process::Command {
    let mut cmd = base_command(req);
    cmd.stdin(match stdin {
        Stdin::Null => Stdio::null(),
        Stdin::Piped => Stdio::piped(),
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    #[cfg(unix)]
    crate::sys::start_in_new_session(&mut cmd, false);
    #[cfg(windows)]
    cmd.creation_flags(crate::job::CREATION_FLAGS);
    req.apply_extras(&mut cmd);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmd_scripts_are_found_after_slash_c() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            cmd_script_start(
                r"C:\Windows\System32\CMD.EXE",
                &args(&["/d", "/C", "echo hi"])
            ),
            Some(1)
        );
        assert_eq!(cmd_script_start("cmd", &args(&["/k", "x"])), Some(0));
        assert_eq!(cmd_script_start("cmd", &args(&["echo"])), None);
        assert_eq!(cmd_script_start("bash", &args(&["/c", "x"])), None);
    }

    #[cfg(unix)]
    #[test]
    fn os_message_loses_its_number() {
        let err = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(plain_os_message(&err), "Permission denied");
    }
}
