//! How confining a command can fail. Every message says what failed, where, and what to
//! do next; none of them is ever answered by running the command unconfined.

use std::path::PathBuf;

/// A command could not be confined under the requested policy.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// A filesystem policy entry named a relative path.
    #[error(
        "sandbox filesystem policy entry `{}` is not an absolute path; resolve it against \
         the working directory first",
        path.display()
    )]
    RelativePath {
        /// The offending path.
        path: PathBuf,
    },
    /// The policy needs bubblewrap and none usable was found.
    #[error(
        "the sandbox policy needs bubblewrap ({reason}), but no `bwrap` was found on the \
         PATH outside the working directory; install it (e.g. `apt-get install bubblewrap`) \
         or simplify the filesystem policy"
    )]
    BubblewrapNotFound {
        /// Why bubblewrap is needed.
        reason: String,
    },
    /// The Landlock backend was forced but the policy cannot be expressed with it.
    #[error(
        "the sandbox policy cannot be enforced with Landlock: {reason} (at {}); use the \
         bubblewrap backend for split filesystem policies",
        path.display()
    )]
    NotExpressibleWithLandlock {
        /// The entry that cannot be expressed.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A path or argument cannot be passed to the helper because it is not UTF-8.
    #[error(
        "cannot pass `{}` to the sandbox helper: it is not valid UTF-8; rename it or choose \
         another path",
        value
    )]
    NotUtf8 {
        /// The value, lossily converted.
        value: String,
    },
    /// The helper's command line was malformed.
    #[error("invalid osprey-linux-sandbox arguments: {reason}; usage: {usage}")]
    HelperUsage {
        /// What was wrong.
        reason: String,
        /// The expected form.
        usage: &'static str,
    },
    /// The confinement JSON given to the helper did not parse.
    #[error("invalid sandbox policy JSON given to osprey-linux-sandbox: {source}")]
    PolicyJson {
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// This platform has no sandbox implementation.
    #[error(
        "Osprey has no sandbox for {os}; commands cannot be confined here. Use \
         `danger-full-access` only if you accept running them unconfined"
    )]
    UnsupportedPlatform {
        /// The operating system.
        os: &'static str,
    },
    /// A permission profile's path cannot be resolved for this command.
    #[error(
        "the permission profile `{profile}` names `{path}`, which cannot be resolved for this \
         command: {reason}; the command was not run. Fix the profile or the environment"
    )]
    UnresolvedPermission {
        /// The profile's name.
        profile: String,
        /// The path as written.
        path: String,
        /// Why.
        reason: String,
    },
    /// The command to confine was empty.
    #[error("no command given to run in the sandbox; pass it after `--`")]
    EmptyCommand,
}
