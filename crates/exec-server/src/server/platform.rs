//! What differs between the Unix and the Windows server: the shell it reports, how
//! environment names compare, how resolved paths read, and whether processes can be
//! confined at all.
//!
//! Windows has no sandbox in Osprey (no restricted token, no AppContainer), so a Windows
//! server refuses `process/start` unless it was started with `--sandbox
//! danger-full-access`: a server told to confine processes that runs them unconfined would
//! be a lie the client cannot see. fs calls are checked against the roots by the server
//! itself and work the same everywhere.

use std::collections::HashMap;
#[cfg(windows)]
use std::path::Path;
use std::path::PathBuf;

use osprey_protocol::SandboxPolicy;

use super::RpcError;
use crate::protocol::ShellInfo;

/// `name` in `env`; on Windows without regard to case (`Path` is `PATH` there).
pub(crate) fn env_lookup<'a>(env: &'a HashMap<String, String>, name: &str) -> Option<&'a String> {
    if cfg!(windows) {
        env.iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value)
    } else {
        env.get(name)
    }
}

/// Whether two environment variable names are the same variable here.
pub(crate) fn same_env_name(a: &str, b: &str) -> bool {
    if cfg!(windows) {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// The user's home directory: `HOME` on Unix, `USERPROFILE` on Windows.
pub(crate) fn home_dir(env: &HashMap<String, String>) -> Option<PathBuf> {
    let name = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    env_lookup(env, name).map(PathBuf::from)
}

/// The shell a client should run commands with. Unix: `$SHELL`, else `/bin/sh`. Windows:
/// PowerShell when it is installed (`pwsh.exe` or `powershell.exe` on the `PATH`, or in
/// its system folder), else `COMSPEC` (cmd.exe) — never a POSIX shell. Wine's
/// `powershell.exe` is a stub that runs nothing and exits 0, so it does not count.
pub(crate) fn default_shell(env: &HashMap<String, String>) -> ShellInfo {
    #[cfg(windows)]
    {
        windows_shell(env)
    }
    #[cfg(not(windows))]
    {
        let path = env
            .get("SHELL")
            .cloned()
            .unwrap_or_else(|| "/bin/sh".to_owned());
        let name = std::path::Path::new(&path)
            .file_name()
            .map_or_else(|| "sh".to_owned(), |n| n.to_string_lossy().into_owned());
        ShellInfo { name, path }
    }
}

#[cfg(windows)]
fn windows_shell(env: &HashMap<String, String>) -> ShellInfo {
    let system_root = env_lookup(env, "SystemRoot")
        .cloned()
        .unwrap_or_else(|| r"C:\Windows".to_owned());
    let on_path = env_lookup(env, "PATH")
        .map(|paths| std::env::split_paths(paths).collect::<Vec<_>>())
        .unwrap_or_default();
    let powershell = ["pwsh.exe", "powershell.exe"]
        .iter()
        .flat_map(|exe| on_path.iter().map(move |dir| dir.join(exe)))
        .chain([Path::new(&system_root).join(r"System32\WindowsPowerShell\v1.0\powershell.exe")])
        .find(|candidate| candidate.is_file() && !is_wine_stub(candidate));
    if let Some(path) = powershell {
        return ShellInfo {
            name: "powershell".to_owned(),
            path: path.display().to_string(),
        };
    }
    let path = env_lookup(env, "COMSPEC")
        .cloned()
        .unwrap_or_else(|| format!(r"{system_root}\System32\cmd.exe"));
    ShellInfo {
        name: "cmd".to_owned(),
        path,
    }
}

/// Whether `exe` is one of Wine's built-in programs, which carry `Wine builtin DLL` (or
/// `Wine placeholder DLL`) in their DOS header.
#[cfg(windows)]
fn is_wine_stub(exe: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 128];
    let Ok(mut file) = std::fs::File::open(exe) else {
        return false;
    };
    let Ok(n) = file.read(&mut head) else {
        return false;
    };
    head[..n]
        .windows(8)
        .any(|w| w == b"Wine bui" || w == b"Wine pla")
}

/// On Windows, where Osprey cannot confine a process: the refusal of `process/start`
/// unless the server runs `danger-full-access`. Elsewhere never refuses.
pub(crate) fn refuse_unconfinable(policy: &SandboxPolicy) -> Result<(), RpcError> {
    if cfg!(windows) && !matches!(policy, SandboxPolicy::DangerFullAccess) {
        return Err(RpcError::invalid_request(
            "this exec server runs on Windows, where Osprey cannot sandbox processes, and it \
             was started with a sandbox (the default is workspace-write); no process was \
             started. Restart it with `--sandbox danger-full-access` to run processes \
             unconfined, or use a Linux exec server",
        ));
    }
    Ok(())
}

/// A resolved path as people write it: on Windows without the `\\?\` prefix
/// `canonicalize` adds to a drive path (`\\?\C:\x` → `C:\x`). Other verbatim forms (UNC,
/// device paths) are kept as they are.
pub(crate) fn plain_path(path: PathBuf) -> PathBuf {
    #[cfg(windows)]
    {
        let text = path.as_os_str().to_string_lossy();
        if let Some(rest) = text.strip_prefix(r"\\?\") {
            let bytes = rest.as_bytes();
            if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
                return PathBuf::from(rest);
            }
        }
        path
    }
    #[cfg(not(windows))]
    {
        path
    }
}

/// Whether a path component names `protected` (`.git`, `.osprey`). Windows file names
/// ignore case and drop trailing dots and spaces, so `.GIT.` opens `.git` there.
pub(crate) fn is_protected_name(component: &std::ffi::OsStr, protected: &str) -> bool {
    if cfg!(windows) {
        let name = component.to_string_lossy();
        name.trim_end_matches(['.', ' '])
            .eq_ignore_ascii_case(protected)
    } else {
        component == std::ffi::OsStr::new(protected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unix_shell_is_shell_or_sh() {
        let env = HashMap::from([("SHELL".to_owned(), "/bin/zsh".to_owned())]);
        if cfg!(windows) {
            return;
        }
        assert_eq!(default_shell(&env).name, "zsh");
        assert_eq!(default_shell(&HashMap::new()).path, "/bin/sh");
    }

    #[cfg(windows)]
    #[test]
    fn windows_paths_env_and_sandbox() {
        assert_eq!(
            plain_path(PathBuf::from(r"\\?\C:\work\x")),
            PathBuf::from(r"C:\work\x")
        );
        assert_eq!(
            plain_path(PathBuf::from(r"\\?\UNC\host\share")),
            PathBuf::from(r"\\?\UNC\host\share")
        );
        let env = HashMap::from([("Path".to_owned(), r"C:\bin".to_owned())]);
        assert_eq!(
            env_lookup(&env, "PATH").map(String::as_str),
            Some(r"C:\bin")
        );
        assert!(refuse_unconfinable(&SandboxPolicy::ReadOnly).is_err());
        assert!(refuse_unconfinable(&SandboxPolicy::DangerFullAccess).is_ok());
        let shell = default_shell(&HashMap::from([(
            "ComSpec".to_owned(),
            r"C:\Windows\System32\cmd.exe".to_owned(),
        )]));
        assert!(
            matches!(shell.name.as_str(), "cmd" | "powershell"),
            "{shell:?}"
        );
    }

    #[test]
    fn protected_names_follow_the_platform() {
        assert!(is_protected_name(std::ffi::OsStr::new(".git"), ".git"));
        assert_eq!(
            is_protected_name(std::ffi::OsStr::new(".GIT."), ".git"),
            cfg!(windows)
        );
    }
}
