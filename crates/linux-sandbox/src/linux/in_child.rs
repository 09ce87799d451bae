//! The helper's confinement done in the spawned child itself, between `fork` and `exec`.
//!
//! A request rewritten to run the helper costs a second start of the `osprey` binary
//! (loading, relocating, C++ static initialisers) before the command even begins. For the
//! Landlock stage without the creation guard, everything the helper would do can instead
//! be prepared in the parent — the ruleset with its rules, both seccomp programs, the paths
//! of the mount view as C strings — and the forked child then makes only the system calls:
//! `no_new_privs`, the read-only mount view, `landlock_restrict_self`, the two filters. The
//! command is then exec'd directly. The policy is the one the helper's arguments carry,
//! parsed by the helper's own parser, so both routes enforce the same thing.
//!
//! Requests that need more stay with the helper: the creation guard (a supervisor process
//! must stay behind), bubblewrap, and any request whose preparation fails here (the
//! helper then reports the failure in its words, and still never runs unconfined).

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

use osprey_process::{ChildSetup, ExecRequest};
use osprey_sandboxing::helper_args::{HELPER_ARG0, HelperInvocation, HelperMode};
use osprey_sandboxing::{LandlockPlan, landlock_abi, landlock_plan};
use seccompiler::BpfProgram;

use super::failure::{Failure, Step};
use super::guard::Roots;
use super::mounts::MountPlan;
use super::{HelperError, ruleset, seccomp};

/// What the child needs, prepared in the parent.
struct Prepared {
    mounts: MountPlan,
    /// The created ruleset; enforcing it needs only its descriptor.
    landlock: OwnedFd,
    filters: [BpfProgram; 2],
}

impl Prepared {
    fn new(plan: &LandlockPlan, network: bool, cwd: &std::path::Path) -> Option<Self> {
        let mounts = MountPlan::new(&plan.write, &plan.readonly_mounts, cwd).ok()?;
        let landlock: Option<OwnedFd> = ruleset::build(plan, network).ok()?.into();
        let filters = seccomp::programs(network).ok()?;
        Some(Self {
            mounts,
            landlock: landlock?,
            filters,
        })
    }

    /// The confinement, in the helper's order. System calls only.
    fn run(&self) -> Result<(), Failure> {
        // SAFETY: prctl with PR_SET_NO_NEW_PRIVS takes plain integer arguments.
        #[expect(unsafe_code, reason = "prctl has no safe wrapper")]
        let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        if rc != 0 {
            return Err(Failure::last_os_error(Step::NoNewPrivs, 0));
        }
        self.mounts.build()?;
        // SAFETY: the descriptor is a live Landlock ruleset owned by `self`; flags 0.
        #[expect(unsafe_code, reason = "landlock_restrict_self has no libc wrapper")]
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.landlock.as_raw_fd(),
                0u32,
            )
        };
        if rc != 0 {
            return Err(Failure::last_os_error(Step::Landlock, 0));
        }
        for filter in &self.filters {
            seccompiler::apply_filter(filter).map_err(|e| {
                let errno = match e {
                    seccompiler::Error::Seccomp(io) => io.raw_os_error().unwrap_or(libc::EIO),
                    _ => libc::EINVAL,
                };
                Failure::new(Step::Seccomp, 0, errno)
            })?;
        }
        Ok(())
    }

    /// The words for a failure the child reported as `code`.
    fn explain(&self, code: i32) -> Option<String> {
        let failure = Failure::unpack(code)?;
        let path = self.mounts.path_of(failure.step, failure.index);
        let error: HelperError = failure.into_error(path);
        Some(format!("the sandbox could not confine it: {error}"))
    }
}

/// `request` confined in its own child instead of through the helper, when `request` runs
/// the helper's Landlock stage and needs no creation guard; otherwise `request` unchanged.
pub(crate) fn confine_in_child(request: ExecRequest) -> ExecRequest {
    if request.arg0.as_deref() != Some(HELPER_ARG0) || request.child_setup.is_some() {
        return request;
    }
    let args: Vec<OsString> = request.args.iter().map(OsString::from).collect();
    let Ok(invocation) = HelperInvocation::parse(&args) else {
        return request;
    };
    if invocation.mode != HelperMode::Landlock || landlock_abi().is_none() {
        return request;
    }
    let filesystem = &invocation.confinement.filesystem;
    if Roots::of(filesystem).is_some() {
        return request;
    }
    let Ok(plan) = landlock_plan(filesystem) else {
        return request;
    };
    let Some(prepared) = Prepared::new(&plan, invocation.confinement.network, &request.cwd) else {
        return request;
    };
    let mut command = invocation
        .command
        .into_iter()
        .map(|part| part.into_string().ok());
    let Some(Some(program)) = command.next() else {
        return request;
    };
    let Some(args) = command.collect::<Option<Vec<String>>>() else {
        return request;
    };
    let prepared = Arc::new(prepared);
    let step = Arc::clone(&prepared);
    // SAFETY: `Prepared::run` only makes system calls on data prepared above: the mount
    // plan's C strings and slots, the ruleset descriptor and the compiled filters.
    #[expect(unsafe_code, reason = "a step between fork and exec")]
    let setup = unsafe {
        ChildSetup::new(
            "sandbox",
            Arc::new(move || step.run().map_err(std::io::Error::from)),
            Arc::new(move |code| prepared.explain(code)),
        )
    };
    ExecRequest {
        program,
        args,
        cwd: request.cwd,
        env: request.env,
        arg0: None,
        child_setup: Some(setup),
    }
}
