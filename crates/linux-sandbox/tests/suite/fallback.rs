//! A kernel without Landlock, simulated: the helper runs under a seccomp filter that makes
//! the three Landlock calls fail with `ENOSYS`, as they do on such a kernel. The Landlock
//! backend must refuse to run anything; bubblewrap must still hold every promise, the
//! creation guard included (which then has no Landlock layer behind it and carries out
//! every call itself).

use std::process::Stdio;

use pretty_assertions::assert_eq;

use super::common::{BIN, Fixture, Run, command};

/// Installs the filter, then execs its arguments. (BPF by hand: load the syscall number;
/// `landlock_create_ruleset`, `landlock_add_rule`, `landlock_restrict_self` are 444–446 on
/// every architecture with the generic syscall table and on x86-64.)
const WITHOUT_LANDLOCK: &str = r#"
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def insn(code, k, jt=0, jf=0): return struct.pack("HBBI", code, jt, jf, k)
prog = [insn(0x20, 0)]
for nr in (444, 445, 446):
    prog += [insn(0x15, nr, 0, 1), insn(0x06, 0x00050000 | 38)]
prog.append(insn(0x06, 0x7fff0000))
code = b"".join(prog)
buf = ctypes.create_string_buffer(code, len(code))
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fprog = Fprog(len(prog), ctypes.addressof(buf))
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0, ctypes.get_errno()
os.execv(sys.argv[1], sys.argv[1:])
"#;

fn run_without_landlock(fx: &Fixture, policy: &[&str], script: &str) -> Run {
    let out = command("python3")
        .args(["-c", WITHOUT_LANDLOCK, BIN])
        .args(policy)
        .args(["--", "bash", "-c", script])
        .current_dir(&fx.root)
        .env("OSPREY_SANDBOX_TEST_ROUTE", crate::ROUTE)
        .env("TMPDIR", &fx.tmpdir)
        .env("ROOT", &fx.root)
        .env("OUT", &fx.outside)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn landlock_backend_fails_closed_without_landlock() {
    let fx = Fixture::new();
    let run = run_without_landlock(
        &fx,
        &["--policy", "workspace-write", "--backend", "landlock"],
        r#"echo ran; echo pwned > "$OUT/victim""#,
    );
    assert_eq!(run.code, 125, "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(run.stderr.contains("Landlock is not available"), "{run:?}");
    assert_eq!(fx.read(&fx.outside.join("victim")), "original\n");
}

#[test]
fn bubblewrap_without_landlock_keeps_every_promise() {
    let policy = ["--policy", "workspace-write", "--backend", "bubblewrap"];
    let fx = Fixture::new();
    std::fs::remove_dir_all(fx.root.join(".osprey")).unwrap();
    std::fs::remove_dir_all(fx.root.join(".git")).unwrap();
    let run = run_without_landlock(&fx, &policy, super::escape::CREATE_PROTECTED);
    assert!(!run.stdout.contains("CREATED"), "{run:?}");
    assert!(run.stdout.contains("legit-ok"), "{run:?}");
    for name in [".git", ".osprey", ".OSPREY"] {
        assert!(!fx.root.join(name).exists(), "{name}: {run:?}");
    }

    // Without a Landlock layer the supervisor opens existing files itself: a FIFO (whose
    // open blocks until the other end comes), a symlink to a new file, `/dev/stdout`,
    // append mode and the umask must all behave as they do unconfined.
    let fx = Fixture::new();
    let run = run_without_landlock(
        &fx,
        &policy,
        r#"mkfifo p && (cat p > got &) && echo through-fifo > p && wait; sleep 0.2; cat got
           ln -s made-by-link link && echo via-link > link && cat made-by-link
           echo to-stdout > /dev/stdout
           echo one > log && echo two >> log && cat log
           umask 077 && echo s > private && stat -c %a private
           echo pwned > "$OUT/new" 2>/dev/null && echo "ESCAPED: outside"
           echo pwned >> "$OUT/victim" 2>/dev/null && echo "ESCAPED: victim"
           exit 0"#,
    );
    assert_eq!(
        run.stdout, "through-fifo\nvia-link\nto-stdout\none\ntwo\n600\n",
        "{run:?}"
    );
    assert!(!fx.outside.join("new").exists());
    assert_eq!(fx.read(&fx.outside.join("victim")), "original\n");
}

#[test]
fn auto_falls_back_to_bubblewrap_without_landlock() {
    // The default backend: the probe in the confining process finds no Landlock and picks
    // bubblewrap (bwrap is PID 1 of the command's namespace), which enforces the policy.
    let fx = Fixture::new();
    let run = run_without_landlock(
        &fx,
        &["--policy", "workspace-write"],
        r#"cat /proc/1/comm; echo ok > inside && cat inside
           echo pwned > "$OUT/new" 2>/dev/null && echo "ESCAPED: outside"
           exit 0"#,
    );
    assert_eq!(run.stdout, "bwrap\nok\n", "{run:?}");
    assert!(!fx.outside.join("new").exists());
    // With Landlock there, the same command takes the Landlock path (no PID namespace).
    let run = fx.run(&["--policy", "workspace-write"], "cat /proc/1/comm", &[]);
    assert_ne!(run.stdout, "bwrap\n", "{run:?}");
}
