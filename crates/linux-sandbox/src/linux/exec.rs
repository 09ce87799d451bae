//! `no_new_privs` and the final `exec`.

use std::convert::Infallible;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::HelperError;

pub(crate) fn set_no_new_privs() -> Result<(), HelperError> {
    // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes plain integer arguments and touches no
    // memory of ours.
    #[expect(unsafe_code, reason = "prctl has no safe wrapper")]
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc != 0 {
        return Err(HelperError::NoNewPrivs(std::io::Error::last_os_error()));
    }
    Ok(())
}

fn cstrings(args: &[OsString]) -> Result<Vec<CString>, HelperError> {
    args.iter()
        .map(|a| {
            CString::new(a.as_bytes())
                .map_err(|_| HelperError::NulByte(a.to_string_lossy().into_owned()))
        })
        .collect()
}

/// Replaces this process with `command[0]`, searched on `PATH` like a shell does.
pub(crate) fn exec(command: &[OsString]) -> Result<Infallible, HelperError> {
    let argv = cstrings(command)?;
    let program = command
        .first()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(file) = argv.first() else {
        return Err(HelperError::NulByte(program));
    };
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: `file` and every pointer in `ptrs` point into `argv`, which outlives the
    // call; `ptrs` is NULL-terminated as execvp requires. On success it does not return.
    #[expect(
        unsafe_code,
        reason = "execvp has no safe wrapper that keeps confinement"
    )]
    unsafe {
        libc::execvp(file.as_ptr(), ptrs.as_ptr());
    }
    Err(HelperError::Exec {
        program,
        source: std::io::Error::last_os_error(),
    })
}

/// Replaces this process with the program at `path`, with `argv` as its arguments.
pub(crate) fn exec_path(path: &Path, argv: &[OsString]) -> Result<Infallible, HelperError> {
    let program = path.to_string_lossy().into_owned();
    let file = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| HelperError::NulByte(program.clone()))?;
    let argv = cstrings(argv)?;
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: as in `exec`: all pointers live in `argv`/`file` for the whole call and the
    // array is NULL-terminated.
    #[expect(unsafe_code, reason = "execv has no safe wrapper")]
    unsafe {
        libc::execv(file.as_ptr(), ptrs.as_ptr());
    }
    Err(HelperError::Exec {
        program,
        source: std::io::Error::last_os_error(),
    })
}
