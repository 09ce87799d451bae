//! The seccomp filter. Denied calls fail with `EPERM` ("Operation not permitted"), so
//! programs report an ordinary error instead of dying; nothing is killed except a
//! syscall made for a foreign architecture (the filter's architecture check).
//!
//! Always denied: `ptrace`, `process_vm_readv/writev`, `unshare`, `setns`, `clone` with
//! any namespace flag, every mount-related call, `chroot`, `bpf`, `perf_event_open`,
//! `userfaultfd`, kernel keyring calls, module loading, `kexec`, `open_by_handle_at`,
//! `io_uring_*` (it could perform socket operations the filter never sees), and the
//! terminal-injection ioctls `TIOCSTI`/`TIOCLINUX`. `clone3` fails with `ENOSYS` because
//! its flags sit behind a pointer the filter cannot read; the C library then falls back
//! to `clone`, whose flags it can. On x86-64, x32-ABI syscall numbers fail with `ENOSYS`.
//!
//! Without network access: `socket`/`socketpair` only for `AF_UNIX` stream and seqpacket
//! sockets (datagram sockets could `sendmsg` to a host socket by address, which the
//! filter cannot see), and `connect`, `bind` and `listen` always fail. A seccomp filter
//! cannot read the address behind `connect`'s pointer, so refusing every `connect` is
//! the sound way to keep UNIX sockets of host services (Docker, D-Bus, ssh-agent) out
//! of reach; `socketpair` and inherited pipes keep local plumbing working.
//!
//! Metadata calls (`chmod`, `chown`, `utimensat`, `setxattr` and their relatives) are not
//! filtered: a filter sees only the descriptor or a pointer to the path, never which file
//! is meant, and commands need them inside the workspace (`chmod +x`, `git checkout`,
//! `tar x`). The read-only mounts refuse them everywhere outside the writable roots.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch, sock_filter,
};

use super::HelperError;

fn err(e: impl std::fmt::Display) -> HelperError {
    HelperError::Seccomp(e.to_string())
}

fn cond(arg: u8, op: Op, value: u64) -> Result<SeccompCondition, HelperError> {
    SeccompCondition::new(arg, Len::Dword, op, value).map_err(err)
}

const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

fn denied_rules(network: bool) -> Result<BTreeMap<i64, Vec<SeccompRule>>, HelperError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let always = [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_open_by_handle_at,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ];
    for nr in always {
        rules.insert(nr, Vec::new());
    }
    let mut clone_rules = Vec::new();
    for flag in NAMESPACE_FLAGS {
        let flag = u64::from(flag.unsigned_abs());
        clone_rules.push(SeccompRule::new(vec![cond(0, Op::MaskedEq(flag), flag)?]).map_err(err)?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    // A filter of the command's own that answers "continue" would let calls past the
    // creation guard's supervisor (`guard.rs`): no notification listeners.
    let listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    rules.insert(
        libc::SYS_seccomp,
        vec![SeccompRule::new(vec![cond(1, Op::MaskedEq(listener), listener)?]).map_err(err)?],
    );
    rules.insert(
        libc::SYS_ioctl,
        vec![
            SeccompRule::new(vec![cond(1, Op::Eq, libc::TIOCSTI)?]).map_err(err)?,
            SeccompRule::new(vec![cond(1, Op::Eq, libc::TIOCLINUX)?]).map_err(err)?,
        ],
    );
    if !network {
        let unix = libc::AF_UNIX as u64;
        let type_mask = 0xf;
        let socket_rules = || -> Result<Vec<SeccompRule>, HelperError> {
            Ok(vec![
                SeccompRule::new(vec![cond(0, Op::Ne, unix)?]).map_err(err)?,
                SeccompRule::new(vec![
                    cond(0, Op::Eq, unix)?,
                    cond(1, Op::MaskedEq(type_mask), libc::SOCK_DGRAM as u64)?,
                ])
                .map_err(err)?,
            ])
        };
        rules.insert(libc::SYS_socket, socket_rules()?);
        rules.insert(libc::SYS_socketpair, socket_rules()?);
        for nr in [libc::SYS_connect, libc::SYS_bind, libc::SYS_listen] {
            rules.insert(nr, Vec::new());
        }
    }
    Ok(rules)
}

fn arch() -> Result<TargetArch, HelperError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        HelperError::Seccomp(format!(
            "no seccomp filter for the {} architecture; the command was not run",
            std::env::consts::ARCH
        ))
    })
}

fn compile(filter: SeccompFilter) -> Result<BpfProgram, HelperError> {
    filter.try_into().map_err(err)
}

/// The two programs: `EPERM` for denied calls, `ENOSYS` for `clone3` (and x32 calls).
pub(crate) fn programs(network: bool) -> Result<[BpfProgram; 2], HelperError> {
    let arch = arch()?;
    let eperm = SeccompFilter::new(
        denied_rules(network)?,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    let mut enosys_rules = BTreeMap::new();
    enosys_rules.insert(libc::SYS_clone3, Vec::new());
    let enosys = SeccompFilter::new(
        enosys_rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(err)?;
    let mut enosys = compile(enosys)?;
    if arch == TargetArch::x86_64 {
        enosys.splice(0..0, x32_prologue());
    }
    Ok([compile(eperm)?, enosys])
}

/// `if nr >= __X32_SYSCALL_BIT { return ERRNO(ENOSYS) }`, prepended to a program (BPF
/// jumps are relative, so the rest of the program is unaffected).
fn x32_prologue() -> Vec<sock_filter> {
    // BPF_LD | BPF_W | BPF_ABS
    const LD_W_ABS: u16 = 0x20;
    // BPF_JMP | BPF_JGE | BPF_K
    const JGE_K: u16 = 0x35;
    // BPF_RET | BPF_K
    const RET_K: u16 = 0x06;
    vec![
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: JGE_K,
            jt: 0,
            jf: 1,
            k: 0x4000_0000,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: 0x0005_0000 | libc::ENOSYS as u32,
        },
    ]
}

/// Installs both filters on this thread (the helper is single-threaded, and the filters
/// are inherited across `exec` and by every child).
pub(crate) fn apply(network: bool) -> Result<(), HelperError> {
    for program in programs(network)? {
        seccompiler::apply_filter(&program).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile_for_this_arch() {
        for network in [false, true] {
            let [eperm, enosys] = programs(network).unwrap();
            assert!(eperm.len() > 40, "{}", eperm.len());
            assert!(enosys.len() > 3);
        }
        let off = programs(false).unwrap()[0].len();
        let on = programs(true).unwrap()[0].len();
        assert!(off > on, "network rules add instructions: {off} vs {on}");
    }
}
