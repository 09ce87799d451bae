//! Landlock rules for a [`LandlockPlan`].

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, LandlockStatus, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};
use osprey_sandboxing::LandlockPlan;

use super::HelperError;
use super::guard::Backstop;

/// The newest ABI this code knows; the crate downgrades to what the kernel supports.
const ABI_TARGET: ABI = ABI::V10;

/// Restricts this process (and what it execs) to `plan`. Without `network`, TCP bind and
/// connect (ABI 4+), connecting to abstract UNIX sockets outside the sandbox (ABI 6+)
/// and to pathname UNIX sockets (ABI 9+) are denied too. Signals to processes outside
/// the sandbox are always denied (ABI 6+).
pub(crate) fn apply(plan: &LandlockPlan, network: bool) -> Result<(), HelperError> {
    let err = |e: landlock::RulesetError| HelperError::Landlock(e.to_string());
    let status = build(plan, network)?.restrict_self().map_err(err)?;
    // Best effort downgrades to what the kernel supports; nothing enforced at all means
    // no Landlock, and then the command must not run.
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(HelperError::LandlockUnavailable {
            status: status_text(status.landlock),
        });
    }
    Ok(())
}

/// The ruleset for `plan`, created (its rules added) but not yet enforced. Without any
/// Landlock in the kernel it holds no descriptor.
pub(crate) fn build(plan: &LandlockPlan, network: bool) -> Result<RulesetCreated, HelperError> {
    let err = |e: landlock::RulesetError| HelperError::Landlock(e.to_string());
    let mut handled: BitFlags<AccessFs> = AccessFs::from_all(ABI_TARGET);
    if network {
        handled.remove(AccessFs::ResolveUnix);
    }
    let mut ruleset = Ruleset::default().handle_access(handled).map_err(err)?;
    let mut scopes: BitFlags<Scope> = Scope::Signal.into();
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI_TARGET))
            .map_err(err)?;
        scopes |= Scope::AbstractUnixSocket;
    }
    let mut created = ruleset.scope(scopes).map_err(err)?.create().map_err(err)?;
    let read = AccessFs::from_read(ABI_TARGET);
    for (paths, access) in [(&plan.read, read), (&plan.write, handled)] {
        for path in paths {
            // A path that vanished since planning grants nothing.
            let Ok(fd) = PathFd::new(path) else {
                continue;
            };
            created = created
                .add_rule(PathBeneath::new(fd, access & handled))
                .map_err(err)?;
        }
    }
    Ok(created)
}

/// A layer that grants no creation of files, directories or symlinks anywhere: the
/// creation guard's backstop (`guard.rs`). [`Backstop::None`] when the kernel has no
/// Landlock to enforce it.
pub(crate) fn deny_creation() -> Result<Backstop, HelperError> {
    let err = |e: landlock::RulesetError| HelperError::Landlock(e.to_string());
    let make = AccessFs::MakeReg | AccessFs::MakeDir | AccessFs::MakeSym;
    // Scoping signals keeps the command from killing its supervisor (which sits in the
    // enclosing layer only).
    let status = Ruleset::default()
        .handle_access(make)
        .map_err(err)?
        .scope(Scope::Signal)
        .map_err(err)?
        .create()
        .map_err(err)?
        .restrict_self()
        .map_err(err)?;
    Ok(if status.ruleset == RulesetStatus::NotEnforced {
        Backstop::None
    } else {
        Backstop::Landlock
    })
}

/// Why Landlock enforced nothing, in words for the error message.
fn status_text(status: LandlockStatus) -> String {
    match status {
        LandlockStatus::NotImplemented => "the running kernel was built without Landlock".into(),
        LandlockStatus::NotEnabled => {
            "the running kernel has Landlock, but it is not enabled at boot".into()
        }
        LandlockStatus::Available { effective_abi, .. } => format!(
            "the kernel reports Landlock ABI {effective_abi}, but it enforced none of the rules"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landlock_status_reads_as_words_not_debug_text() {
        let texts = [
            status_text(LandlockStatus::NotImplemented),
            status_text(LandlockStatus::NotEnabled),
            status_text(LandlockStatus::Available {
                effective_abi: ABI::V3,
                kernel_abi: None,
            }),
        ];
        assert!(texts[0].contains("built without Landlock"), "{}", texts[0]);
        assert!(texts[1].contains("not enabled at boot"), "{}", texts[1]);
        assert!(texts[2].contains("Landlock ABI 3"), "{}", texts[2]);
        for text in texts {
            for debug in [
                "NotImplemented",
                "NotEnabled",
                "Available",
                "{",
                "V3",
                "Some(",
            ] {
                assert!(!text.contains(debug), "{text}");
            }
        }
    }
}
