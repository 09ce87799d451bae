//! The command line of the `osprey-linux-sandbox` helper, defined once so the side that
//! writes it ([`crate::confine_linux`]) and the side that reads it (the helper) agree.
//!
//! ```text
//! osprey-linux-sandbox [--bwrap PATH | --inner] --confinement JSON -- COMMAND [ARGS...]
//! ```
//!
//! - no mode flag: the Landlock path (read-only bind mounts, Landlock, seccomp, exec);
//! - `--bwrap PATH`: build a bubblewrap command line and exec `PATH`; bubblewrap starts
//!   the helper again with `--inner`;
//! - `--inner`: already inside bubblewrap; apply seccomp and exec.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::{Confinement, SandboxError};

/// The `argv[0]` the helper is entered through.
pub const HELPER_ARG0: &str = "osprey-linux-sandbox";

const USAGE: &str =
    "osprey-linux-sandbox [--bwrap PATH | --inner] --confinement JSON -- COMMAND [ARGS...]";

/// Which stage of confinement the helper performs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelperMode {
    /// Landlock (plus read-only bind mounts for carve-outs) and seccomp, then exec.
    Landlock,
    /// Exec bubblewrap at this path, which re-enters the helper in [`HelperMode::Inner`].
    BubblewrapOuter {
        /// Absolute path of `bwrap`.
        bwrap: PathBuf,
    },
    /// Inside bubblewrap: seccomp only, then exec.
    Inner,
}

/// A parsed helper command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperInvocation {
    /// The stage.
    pub mode: HelperMode,
    /// What to enforce.
    pub confinement: Confinement,
    /// The command and its arguments.
    pub command: Vec<OsString>,
}

impl HelperInvocation {
    /// The arguments after `argv[0]`.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        match &self.mode {
            HelperMode::Landlock => {}
            HelperMode::BubblewrapOuter { bwrap } => {
                out.push("--bwrap".into());
                out.push(bwrap.clone().into_os_string());
            }
            HelperMode::Inner => out.push("--inner".into()),
        }
        out.push("--confinement".into());
        out.push(self.confinement.to_json().into());
        out.push("--".into());
        out.extend(self.command.iter().cloned());
        out
    }

    /// Parses the arguments after `argv[0]`.
    pub fn parse(args: &[OsString]) -> Result<Self, SandboxError> {
        let usage = |reason: &str| SandboxError::HelperUsage {
            reason: reason.to_string(),
            usage: USAGE,
        };
        let mut mode = HelperMode::Landlock;
        let mut confinement = None;
        let mut iter = args.iter();
        loop {
            let Some(arg) = iter.next() else {
                return Err(usage("missing `--` before the command"));
            };
            match arg.to_str() {
                Some("--") => break,
                Some("--inner") => mode = HelperMode::Inner,
                Some("--bwrap") => {
                    let path = iter.next().ok_or_else(|| usage("`--bwrap` needs a path"))?;
                    mode = HelperMode::BubblewrapOuter {
                        bwrap: PathBuf::from(path),
                    };
                }
                Some("--confinement") => {
                    let json = iter
                        .next()
                        .and_then(|j| j.to_str())
                        .ok_or_else(|| usage("`--confinement` needs a JSON value"))?;
                    confinement = Some(Confinement::from_json(json)?);
                }
                _ => {
                    return Err(usage(&format!(
                        "unexpected argument `{}`",
                        arg.to_string_lossy()
                    )));
                }
            }
        }
        let confinement = confinement.ok_or_else(|| usage("missing `--confinement`"))?;
        let command: Vec<OsString> = iter.cloned().collect();
        if command.is_empty() {
            return Err(SandboxError::EmptyCommand);
        }
        Ok(Self {
            mode,
            confinement,
            command,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FileSystemPolicy, FsAccess, FsEntry};
    use pretty_assertions::assert_eq;

    fn sample(mode: HelperMode) -> HelperInvocation {
        HelperInvocation {
            mode,
            confinement: Confinement {
                filesystem: FileSystemPolicy::new([FsEntry::new("/", FsAccess::Read)]).unwrap(),
                network: false,
            },
            command: vec!["sh".into(), "-c".into(), "--inner".into()],
        }
    }

    #[test]
    fn round_trips_every_mode() {
        for mode in [
            HelperMode::Landlock,
            HelperMode::Inner,
            HelperMode::BubblewrapOuter {
                bwrap: "/usr/bin/bwrap".into(),
            },
        ] {
            let inv = sample(mode);
            assert_eq!(HelperInvocation::parse(&inv.to_args()).unwrap(), inv);
        }
    }

    #[test]
    fn rejects_malformed_lines() {
        let cases: &[&[&str]] = &[
            &[],
            &["--confinement", "{}", "--", "true"],
            &["--", "true"],
            &[
                "--confinement",
                r#"{"filesystem":[],"network":false}"#,
                "--",
            ],
            &["--bogus"],
        ];
        for case in cases {
            let args: Vec<OsString> = case.iter().map(OsString::from).collect();
            assert!(HelperInvocation::parse(&args).is_err(), "{case:?}");
        }
    }
}
