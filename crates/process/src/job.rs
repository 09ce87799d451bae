//! Windows: a child and everything it starts live in a Job Object of their own, the Windows
//! counterpart of the process group every child leads on Unix. Killing the job
//! (`TerminateJobObject`) ends the whole tree, and the job is created with
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, so dropping the last handle to it does the same.
//!
//! The child is created suspended (`CREATE_SUSPENDED`, set by `request::command`), put in
//! the job, and only then resumed: a grandchild it starts at once cannot slip out before
//! the child is in the job. The standard library keeps the primary thread's handle to
//! itself, so the child's threads are found with a Toolhelp snapshot and resumed by id.

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED, OpenThread, ResumeThread,
    THREAD_SUSPEND_RESUME,
};

/// The creation flags every child gets: suspended until it is in its job, a process group
/// of its own for console control events, and no console window.
pub(crate) const CREATION_FLAGS: u32 =
    CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW;

/// The exit code the processes of a killed job get (Unix reports a kill as signal 9; a
/// Windows process has only a code).
pub(crate) const KILLED_EXIT_CODE: u32 = 1;

/// A Job Object holding one child's process tree.
#[derive(Debug)]
pub(crate) struct Job {
    handle: OwnedHandle,
}

impl Job {
    /// Creates a job that kills its processes when its last handle closes, puts the
    /// suspended child `process` (process id `pid`) in it, and resumes the child.
    pub(crate) fn adopt(process: HANDLE, pid: u32) -> io::Result<Self> {
        // SAFETY: both arguments may be null (default security, no name); the returned
        // handle is checked before use and owned by `OwnedHandle` from then on.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid job handle nobody else owns.
        let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
        let job = Self { handle };
        // SAFETY: the structure is plain data; all-zero is a valid "no limits" value.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: `limits` lives across the call and the size passed is its size.
        let set = unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                std::ptr::from_ref(&limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `process` is the child's handle, valid while the caller holds the child.
        if unsafe { AssignProcessToJobObject(job.raw(), process) } == 0 {
            return Err(io::Error::last_os_error());
        }
        resume_threads(pid)?;
        Ok(job)
    }

    /// Ends every process in the job. A job whose processes are all gone is not an error.
    pub(crate) fn kill(&self) -> io::Result<()> {
        // SAFETY: the handle is owned by `self` and open.
        if unsafe { TerminateJobObject(self.raw(), KILLED_EXIT_CODE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn raw(&self) -> HANDLE {
        self.handle.as_raw_handle()
    }
}

/// Resumes every thread of process `pid` (a suspended new process has exactly one).
fn resume_threads(pid: u32) -> io::Result<()> {
    // SAFETY: no pointer arguments; the handle is checked and then owned.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE || snapshot.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh snapshot handle nobody else owns.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot) };
    // SAFETY: plain data; `dwSize` is set as the API requires.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    let mut resumed = 0;
    // SAFETY: `entry` is a valid, sized THREADENTRY32 for every call below.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: no pointer arguments; the handle is checked and then owned.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: as above.
                let thread = unsafe { OwnedHandle::from_raw_handle(thread) };
                // SAFETY: an open thread handle with THREAD_SUSPEND_RESUME access.
                if unsafe { ResumeThread(thread.as_raw_handle()) } != u32::MAX {
                    resumed += 1;
                }
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!(
            "the new process {pid} was put in its job but none of its threads could be resumed"
        )));
    }
    Ok(())
}
