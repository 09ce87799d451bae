//! The user's shell and how to hand it a script.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Which family a shell belongs to; decides the flags used to run a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShellKind {
    Bash,
    Zsh,
    /// `sh` and other POSIX shells that take `-c` and `-l` (dash, ash, ksh…).
    Sh,
    PowerShell,
    /// Windows' cmd.exe: a script goes after `/c`.
    Cmd,
    /// Anything else (fish, tcsh, nu…): run with `-c`, never as a login shell.
    Other,
}

impl ShellKind {
    /// Classifies a shell by its file name (`/usr/bin/zsh` → Zsh, `pwsh.exe` → PowerShell).
    pub fn from_path(path: &Path) -> ShellKind {
        let name = path
            .file_name()
            .and_then(OsStr::to_str)
            .unwrap_or_default()
            .to_ascii_lowercase();
        // Windows paths keep their backslashes when read on Unix.
        let name = name.rsplit('\\').next().unwrap_or_default();
        let name = name.strip_suffix(".exe").unwrap_or(name);
        match name {
            "bash" | "rbash" => ShellKind::Bash,
            "zsh" => ShellKind::Zsh,
            "sh" | "dash" | "ash" | "ksh" | "ksh93" | "mksh" | "lksh" | "oksh" | "yash"
            | "posh" => ShellKind::Sh,
            "pwsh" | "powershell" | "pwsh-preview" => ShellKind::PowerShell,
            "cmd" => ShellKind::Cmd,
            _ => ShellKind::Other,
        }
    }
}

/// A shell program and its kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shell {
    pub kind: ShellKind,
    pub path: PathBuf,
}

/// Why a shell named by the model or the user could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShellError {
    #[error("no shell was named; give a shell name such as `bash` or a path such as `/bin/zsh`")]
    Empty,
    #[error("shell `{name}` was not found on PATH; give its full path or install it")]
    NotFound { name: String },
    #[error("shell path `{}` does not exist; check the path or give a shell name", path.display())]
    MissingPath { path: PathBuf },
}

impl Shell {
    pub fn new(path: impl Into<PathBuf>) -> Shell {
        let path = path.into();
        Shell {
            kind: ShellKind::from_path(&path),
            path,
        }
    }

    /// The argv that runs `script` with this shell: `[path, "-lc", script]` (or `-c` when
    /// `login` is false) for POSIX shells, `[path, "-NoProfile", "-Command", script]` for
    /// PowerShell (which has no login mode), `[path, "/c", script]` for cmd.exe (Osprey's
    /// process crate passes the script to cmd verbatim), `[path, "-c", script]` for other
    /// shells.
    pub fn derive_exec_args(&self, script: &str, login: bool) -> Vec<String> {
        let path = self.path.to_string_lossy().into_owned();
        match self.kind {
            ShellKind::Bash | ShellKind::Zsh | ShellKind::Sh => {
                let flag = if login { "-lc" } else { "-c" };
                vec![path, flag.to_string(), script.to_string()]
            }
            ShellKind::PowerShell => vec![
                path,
                "-NoProfile".to_string(),
                "-Command".to_string(),
                script.to_string(),
            ],
            ShellKind::Cmd => vec![path, "/c".to_string(), script.to_string()],
            ShellKind::Other => vec![path, "-c".to_string(), script.to_string()],
        }
    }

    /// Resolves a shell the model or user named: a path (anything with a `/`) must exist; a
    /// bare name is looked up on the current `PATH`.
    pub fn from_name_or_path(name: &str) -> Result<Shell, ShellError> {
        Shell::from_name_or_path_in(name, std::env::var_os("PATH").as_deref())
    }

    /// [`Shell::from_name_or_path`] with an explicit `PATH` value (for tests and for callers
    /// that run commands with their own environment).
    pub fn from_name_or_path_in(name: &str, path_var: Option<&OsStr>) -> Result<Shell, ShellError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(ShellError::Empty);
        }
        if name.contains('/') || name.contains('\\') {
            let path = PathBuf::from(name);
            if !path.exists() {
                return Err(ShellError::MissingPath { path });
            }
            return Ok(Shell::new(path));
        }
        let found = path_var.and_then(|paths| {
            std::env::split_paths(paths)
                .filter(|dir| dir.is_absolute())
                .map(|dir| dir.join(name))
                .find(|candidate| is_executable_file(candidate))
        });
        match found {
            Some(path) => Ok(Shell::new(path)),
            None => Err(ShellError::NotFound {
                name: name.to_string(),
            }),
        }
    }
}

fn is_executable_file(path: &Path) -> bool {
    let Ok(meta) = path.metadata() else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// The user's login shell: `$SHELL` when set to an absolute path, else the shell in the
/// user's password-database entry, else `/bin/sh`. On Windows: PowerShell when it is on the
/// `PATH` (`pwsh.exe`, then `powershell.exe`), else `COMSPEC` (cmd.exe) — never a POSIX
/// shell.
#[cfg(windows)]
pub fn default_user_shell() -> Shell {
    let path_var = std::env::var_os("PATH");
    for name in ["pwsh.exe", "powershell.exe"] {
        if let Ok(shell) = Shell::from_name_or_path_in(name, path_var.as_deref()) {
            return shell;
        }
    }
    let comspec = std::env::var_os("COMSPEC")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .unwrap_or_else(|| PathBuf::from(r"C:\Windows\System32\cmd.exe"));
    Shell::new(comspec)
}

/// The user's login shell: `$SHELL` when set to an absolute path, else the shell in the
/// user's password-database entry, else `/bin/sh`.
#[cfg(not(windows))]
pub fn default_user_shell() -> Shell {
    let from_env = std::env::var_os("SHELL")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute());
    if let Some(path) = from_env {
        return Shell::new(path);
    }
    if let Some(path) = passwd_shell() {
        return Shell::new(path);
    }
    Shell::new("/bin/sh")
}

#[cfg(unix)]
#[expect(
    unsafe_code,
    reason = "reading the password database needs getpwuid_r, which only libc offers"
)]
fn passwd_shell() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;

    let mut buffer = vec![0u8; 4096];
    loop {
        // SAFETY: `passwd` is plain old data, so an all-zero value is valid; getpwuid_r only
        // writes into it.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer refers to live, writable memory owned by this frame, and the
        // length passed is the buffer's true length. getuid cannot fail.
        let status = unsafe {
            libc::getpwuid_r(
                libc::getuid(),
                &mut entry,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                &mut result,
            )
        };
        if status == libc::ERANGE && buffer.len() < 1 << 20 {
            buffer.resize(buffer.len() * 2, 0);
            continue;
        }
        if status != 0 || result.is_null() || entry.pw_shell.is_null() {
            return None;
        }
        // SAFETY: on success `pw_shell` points to a NUL-terminated string inside `buffer`,
        // which outlives this borrow.
        let shell = unsafe { CStr::from_ptr(entry.pw_shell) };
        let path = PathBuf::from(OsStr::from_bytes(shell.to_bytes()));
        return path.is_absolute().then_some(path);
    }
}

#[cfg(not(any(unix, windows)))]
fn passwd_shell() -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn cmd_takes_its_script_after_slash_c() {
        for path in [r"C:\Windows\System32\cmd.exe", "CMD.EXE", "cmd"] {
            let shell = Shell::new(path);
            assert_eq!(shell.kind, ShellKind::Cmd, "{path}");
            assert_eq!(
                shell.derive_exec_args("echo hi & ver", true),
                strings(&[path, "/c", "echo hi & ver"])
            );
        }
    }

    #[test]
    fn posix_shells_use_c_or_lc() {
        for (path, kind) in [
            ("/bin/bash", ShellKind::Bash),
            ("/usr/bin/zsh", ShellKind::Zsh),
            ("/bin/sh", ShellKind::Sh),
            ("/bin/dash", ShellKind::Sh),
        ] {
            let shell = Shell::new(path);
            assert_eq!(shell.kind, kind);
            assert_eq!(
                shell.derive_exec_args("ls", true),
                strings(&[path, "-lc", "ls"])
            );
            assert_eq!(
                shell.derive_exec_args("ls", false),
                strings(&[path, "-c", "ls"])
            );
        }
    }

    #[test]
    fn powershell_ignores_login() {
        for path in ["/usr/bin/pwsh", r"C:\Windows\powershell.exe", "pwsh.exe"] {
            let shell = Shell::new(path);
            assert_eq!(shell.kind, ShellKind::PowerShell, "{path}");
            let expected = strings(&[path, "-NoProfile", "-Command", "Get-Date"]);
            assert_eq!(shell.derive_exec_args("Get-Date", true), expected);
            assert_eq!(shell.derive_exec_args("Get-Date", false), expected);
        }
    }

    #[test]
    fn other_shells_use_plain_c() {
        let shell = Shell::new("/usr/bin/fish");
        assert_eq!(shell.kind, ShellKind::Other);
        assert_eq!(
            shell.derive_exec_args("ls", true),
            strings(&["/usr/bin/fish", "-c", "ls"])
        );
    }

    #[test]
    fn names_are_found_on_the_given_path() {
        let dir = std::env::temp_dir().join(format!("osprey-shell-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("zsh");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let shell = Shell::from_name_or_path_in("zsh", Some(dir.as_os_str())).unwrap();
        assert_eq!(
            shell,
            Shell {
                kind: ShellKind::Zsh,
                path: fake.clone()
            }
        );
        let missing = Shell::from_name_or_path_in("bash", Some(dir.as_os_str()));
        assert!(
            matches!(missing, Err(ShellError::NotFound { .. })),
            "{missing:?}"
        );
        let by_path = Shell::from_name_or_path_in(fake.to_str().unwrap(), None).unwrap();
        assert_eq!(by_path.kind, ShellKind::Zsh);
        assert!(matches!(
            Shell::from_name_or_path_in("/no/such/shell", None),
            Err(ShellError::MissingPath { .. })
        ));
        assert!(matches!(
            Shell::from_name_or_path_in("  ", None),
            Err(ShellError::Empty)
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn passwd_lookup_returns_an_absolute_shell_when_present() {
        // The test user may have no entry (containers); when there is one it is absolute.
        if let Some(path) = passwd_shell() {
            assert!(path.is_absolute(), "{path:?}");
        }
        assert!(default_user_shell().path.is_absolute());
    }
}
