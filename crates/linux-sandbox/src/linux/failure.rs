//! A confinement step that failed, small enough to travel as one `i32`.
//!
//! Confining in a forked child (`in_child.rs`) can only report an error number back to the
//! parent: the standard library's spawn passes the `raw_os_error` of a failed pre-exec
//! step through a pipe and nothing else. So a failure is packed into that number — a tag,
//! which step, which path of the step's list, and the OS error — and unpacked in the parent
//! into the same [`HelperError`] the helper would have printed.

use std::io;
use std::path::Path;

use super::HelperError;
use super::mounts::mount_error;

/// The steps of confinement, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    NoNewPrivs = 1,
    Unshare,
    IdMaps,
    MakePrivate,
    CopyWritable,
    AllReadOnly,
    MountWritable,
    CopyReadOnly,
    MakeReadOnly,
    MountReadOnly,
    ReenterCwd,
    Landlock,
    Seccomp,
}

const STEPS: [Step; 13] = [
    Step::NoNewPrivs,
    Step::Unshare,
    Step::IdMaps,
    Step::MakePrivate,
    Step::CopyWritable,
    Step::AllReadOnly,
    Step::MountWritable,
    Step::CopyReadOnly,
    Step::MakeReadOnly,
    Step::MountReadOnly,
    Step::ReenterCwd,
    Step::Landlock,
    Step::Seccomp,
];

impl Step {
    fn words(self) -> &'static str {
        match self {
            Self::NoNewPrivs => "setting no_new_privs",
            Self::Unshare => "unshare(CLONE_NEWUSER | CLONE_NEWNS)",
            Self::IdMaps => "writing the user namespace id maps",
            Self::MakePrivate => "making mounts private",
            Self::CopyWritable | Self::CopyReadOnly => "copying",
            Self::AllReadOnly => "making every mount read-only",
            Self::MountWritable => "mounting read-write",
            Self::MakeReadOnly => "making read-only",
            Self::MountReadOnly => "mounting read-only",
            Self::ReenterCwd => "re-entering",
            Self::Landlock => "restricting to the Landlock rules",
            Self::Seccomp => "installing the seccomp filter",
        }
    }
}

/// Marks a number as a packed [`Failure`]: bits 24–30. Ordinary error numbers are far
/// below it.
const TAG: i32 = 0x2A << 24;
const TAG_MASK: i32 = 0x7F << 24;

/// One failed step: which, for which entry of its path list, and the OS error number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Failure {
    pub(crate) step: Step,
    pub(crate) index: usize,
    pub(crate) errno: i32,
}

impl Failure {
    pub(crate) fn new(step: Step, index: usize, errno: i32) -> Self {
        Self { step, index, errno }
    }

    /// The failure of `step` with the calling thread's current error number.
    pub(crate) fn last_os_error(step: Step, index: usize) -> Self {
        let errno = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        Self::new(step, index, errno)
    }

    /// The failure as one number: tag, step (5 bits), index (7 bits, saturating) and
    /// error number (12 bits).
    pub(crate) fn pack(self) -> i32 {
        let index = i32::try_from(self.index.min(0x7F)).unwrap_or(0x7F);
        TAG | ((self.step as i32) << 19) | (index << 12) | (self.errno & 0xFFF)
    }

    /// The failure packed in `code`, or `None` for an ordinary error number.
    pub(crate) fn unpack(code: i32) -> Option<Self> {
        if code & TAG_MASK != TAG {
            return None;
        }
        let step_number = usize::try_from((code >> 19) & 0x1F).ok()?;
        let step = *STEPS.get(step_number.checked_sub(1)?)?;
        let index = usize::try_from((code >> 12) & 0x7F).ok()?;
        Some(Self::new(step, index, code & 0xFFF))
    }

    /// The error the helper reports for this failure; `path` is the entry it was about.
    pub(crate) fn into_error(self, path: &Path) -> HelperError {
        let source = io::Error::from_raw_os_error(self.errno);
        match self.step {
            Step::NoNewPrivs => HelperError::NoNewPrivs(source),
            Step::Landlock => HelperError::Landlock(plain(&source)),
            Step::Seccomp => HelperError::Seccomp(plain(&source)),
            step => mount_error(path, step.words(), source),
        }
    }
}

/// The OS's words for an error, without "(os error N)".
fn plain(err: &io::Error) -> String {
    let text = err.to_string();
    match text.rfind(" (os error ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

impl From<Failure> for io::Error {
    fn from(failure: Failure) -> Self {
        io::Error::from_raw_os_error(failure.pack())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_survives_packing_and_ordinary_errors_are_not_mistaken_for_one() {
        for step in STEPS {
            for index in [0, 5, 127, 4000] {
                let failure = Failure::new(step, index, libc::EPERM);
                let back = Failure::unpack(failure.pack()).unwrap();
                assert_eq!(back.step, step);
                assert_eq!(back.index, index.min(127));
                assert_eq!(back.errno, libc::EPERM);
                assert!(failure.pack() > 0);
            }
        }
        for errno in [0, libc::ENOENT, libc::EPERM, libc::EACCES, 4095] {
            assert_eq!(Failure::unpack(errno), None);
        }
    }

    #[test]
    fn a_failed_mount_step_reads_like_the_helper_message() {
        let failure = Failure::new(Step::MountWritable, 0, libc::EPERM);
        let text = failure.into_error(Path::new("/work")).to_string();
        assert!(text.contains("/work"), "{text}");
        assert!(text.contains("mounting read-write"), "{text}");
        assert!(text.contains("Operation not permitted"), "{text}");
        let text = Failure::new(Step::Seccomp, 0, libc::EINVAL)
            .into_error(Path::new("/"))
            .to_string();
        assert!(text.contains("seccomp"), "{text}");
    }
}
