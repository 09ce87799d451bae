//! A confinement step that failed: which step, for which entry of its path list, and the
//! OS error number — plain data, so that confining in a forked child (`in_child.rs`) can
//! report it without allocating, and the helper can turn it into a [`HelperError`].

use std::io;
use std::path::Path;

use super::HelperError;
use super::mounts::mount_error;

/// The steps of confinement, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    NoNewPrivs,
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

#[cfg(test)]
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
    /// What the step does, in words.
    pub(crate) fn words(self) -> &'static str {
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

    /// Whether a failure of this step is about one path of its list.
    pub(crate) fn has_path(self) -> bool {
        matches!(
            self,
            Self::CopyWritable
                | Self::MountWritable
                | Self::CopyReadOnly
                | Self::MakeReadOnly
                | Self::MountReadOnly
                | Self::ReenterCwd
        )
    }

    /// What to check next, for the steps whose failure has a usual cause.
    pub(crate) fn hint(self) -> &'static str {
        match self {
            Self::Unshare | Self::IdMaps | Self::MakePrivate => {
                ". The sandbox needs a private mount namespace, which requires user \
                 namespaces when not root (check `sysctl kernel.unprivileged_userns_clone` \
                 and `user.max_user_namespaces`)"
            }
            Self::Landlock => ". Landlock must be enabled in the running kernel",
            _ => "",
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_has_words_and_the_namespace_steps_a_hint() {
        for step in STEPS {
            assert!(!step.words().is_empty(), "{step:?}");
            assert!(!step.words().contains('{'), "{step:?}");
        }
        assert!(Step::Unshare.hint().contains("user namespaces"));
        assert!(Step::MountWritable.has_path() && !Step::Seccomp.has_path());
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
