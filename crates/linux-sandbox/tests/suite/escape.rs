//! Escape attempts. Each runs under every confined policy and must fail closed: the
//! protected state is checked afterwards, not only the exit code.

use pretty_assertions::assert_eq;

use super::common::{CONFINED, Fixture, Outsider};

#[test]
fn writing_outside_the_roots_fails() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let run = fx.run(
            policy,
            r#"echo pwned > "$OUT/new"; echo pwned >> "$OUT/victim"; mkdir "$OUT/dir"; rm -f "$OUT/victim"; touch /etc/osprey-escape"#,
            &[],
        );
        assert_ne!(run.code, 0, "{name}: {run:?}");
        assert!(
            !fx.outside.join("new").exists(),
            "{name}: created a file outside"
        );
        assert!(
            !fx.outside.join("dir").exists(),
            "{name}: created a dir outside"
        );
        assert_eq!(fx.read(&fx.outside.join("victim")), "original\n", "{name}");
        assert!(
            !std::path::Path::new("/etc/osprey-escape").exists(),
            "{name}"
        );
    }
}

#[test]
fn git_and_osprey_stay_read_only() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let config = fx.read(&fx.root.join(".git/config"));
        let run = fx.run(
            policy,
            r#"echo '[core] hooksPath=/x' >> .git/config
               echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
               mv .git .git-away; rm -rf .git; mv .osprey .osprey-away
               echo 'approval_policy = "never"' > .osprey/config.toml; touch .osprey/new
               exit 1"#,
            &[],
        );
        assert_eq!(run.code, 1, "{name}: {run:?}");
        assert_eq!(fx.read(&fx.root.join(".git/config")), config, "{name}");
        assert!(!fx.root.join(".git/hooks/pre-commit").exists(), "{name}");
        assert!(!fx.root.join(".git-away").exists(), "{name}");
        assert!(fx.root.join(".git/HEAD").exists(), "{name}");
        assert!(!fx.root.join(".osprey-away").exists(), "{name}");
        assert!(!fx.root.join(".osprey/new").exists(), "{name}");
        assert_eq!(
            fx.read(&fx.root.join(".osprey/config.toml")),
            "model = \"x\"\n",
            "{name}"
        );
    }
}

#[test]
fn gitdir_pointer_target_stays_read_only() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        std::fs::rename(fx.root.join(".git"), fx.root.join("meta")).unwrap();
        std::fs::write(fx.root.join(".git"), "gitdir: meta\n").unwrap();
        let run = fx.run(
            policy,
            r#"git status >/dev/null || exit 9; echo x >> meta/config; echo x > .git; exit 1"#,
            &[],
        );
        assert_eq!(run.code, 1, "{name}: {run:?}");
        assert!(
            !fx.read(&fx.root.join("meta/config")).contains("\nx\n"),
            "{name}"
        );
        assert_eq!(fx.read(&fx.root.join(".git")), "gitdir: meta\n", "{name}");
    }
}

#[test]
fn symlinks_and_hard_links_do_not_reach_outside() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        std::os::unix::fs::symlink(fx.outside.join("victim"), fx.root.join("planted")).unwrap();
        let run = fx.run(
            policy,
            r#"ln -s "$OUT/victim" link; echo pwned > link; echo pwned > planted
               ln -s "$OUT" dirlink; echo pwned > dirlink/new
               ln "$OUT/victim" hard; echo pwned >> hard
               exit 1"#,
            &[],
        );
        assert_eq!(run.code, 1, "{name}: {run:?}");
        assert_eq!(
            fx.read(&fx.outside.join("victim")),
            "original\n",
            "{name}: {run:?}"
        );
        assert!(!fx.outside.join("new").exists(), "{name}");
        use std::os::unix::fs::MetadataExt;
        let links = std::fs::metadata(fx.outside.join("victim"))
            .unwrap()
            .nlink();
        assert_eq!(links, 1, "{name}: hard link to an outside file");
    }
}

#[test]
fn the_root_cannot_be_renamed_or_replaced() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        std::fs::create_dir(fx.outside.join("decoy")).unwrap();
        let run = fx.run(
            policy,
            r#"cd /; mv "$ROOT" "$ROOT.moved"; mv "$ROOT" "$OUT/stolen"
               python3 -c 'import os,sys; os.rename(sys.argv[1], sys.argv[2])' "$OUT/decoy" "$ROOT"
               mkdir -p "$ROOT/sub" && mv -T "$ROOT/sub" "$ROOT"
               exit 1"#,
            &[],
        );
        assert_eq!(run.code, 1, "{name}: {run:?}");
        assert_eq!(fx.read(&fx.root.join("README")), "hello\n", "{name}");
        assert!(fx.outside.join("decoy").is_dir(), "{name}");
        assert!(!fx.outside.join("stolen").exists(), "{name}");
    }
}

#[test]
fn proc_paths_do_not_reach_outside() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let outsider = Outsider::start(&fx.outside);
        let run = fx.run(
            policy,
            r#"echo pwned > "/proc/self/root$OUT/a"; echo pwned > "/proc/$PID/cwd/b"
               echo pwned >> "/proc/$PID/cwd/victim"; echo pwned > "/proc/$$/root$OUT/c"
               exit 1"#,
            &[("PID", outsider.pid())],
        );
        assert_eq!(run.code, 1, "{name}: {run:?}");
        for f in ["a", "b", "c"] {
            assert!(!fx.outside.join(f).exists(), "{name}: wrote {f} via /proc");
        }
        assert_eq!(fx.read(&fx.outside.join("victim")), "original\n", "{name}");
    }
}

#[test]
fn namespaces_and_mounts_are_refused() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let run = fx.run(
            policy,
            r#"ok=0
               for c in "unshare -r true" "unshare -m true" "unshare -n true" "unshare -U true" \
                        "mount -t tmpfs none $TMPDIR" "umount /proc" "chroot / true"; do
                 if $c 2>/dev/null; then echo "ESCAPED: $c"; ok=1; fi
               done
               python3 -c 'import os; os.unshare(os.CLONE_NEWUSER)' 2>/dev/null && echo "ESCAPED: os.unshare"
               exit $ok"#,
            &[],
        );
        assert!(!run.stdout.contains("ESCAPED"), "{name}: {run:?}");
        assert_eq!(run.code, 0, "{name}: {run:?}");
    }
}

#[test]
fn ptrace_of_an_outside_process_is_refused() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let outsider = Outsider::start(&fx.outside);
        let run = fx.run(
            policy,
            r#"timeout 5 strace -p "$PID" -e trace=none 2>/dev/null && echo "ESCAPED: strace -p"
               python3 - "$PID" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
if libc.ptrace(PTRACE_ATTACH, int(sys.argv[1]), None, None) == 0:
    print("ESCAPED: ptrace attach")
PY
               timeout 5 strace -f true 2>/dev/null && echo "ESCAPED: strace own child"
               kill -STOP "$PID" 2>/dev/null && echo "ESCAPED: signal outside"
               exit 0"#,
            &[("PID", outsider.pid())],
        );
        assert!(!run.stdout.contains("ESCAPED"), "{name}: {run:?}");
        assert_eq!(run.code, 0, "{name}: {run:?}");
    }
}

/// The sandbox's verdict on a finished run, as the agent forms it: the command's own
/// filesystem policy and working directory.
fn verdict(
    fx: &Fixture,
    policy: &osprey_sandboxing::SandboxPolicy,
    run: &super::common::Run,
) -> Option<String> {
    let env = [("TMPDIR".to_string(), fx.tmpdir.display().to_string())].into();
    let conf = osprey_sandboxing::Confinement::from_sandbox_policy(policy, &fx.root, &env).unwrap();
    let ctx = osprey_sandboxing::DenialContext {
        policy,
        filesystem: Some(&conf.filesystem),
        cwd: Some(&fx.root),
    };
    osprey_sandboxing::detect_denial_in(&ctx, Some(run.code), &run.output())
}

#[test]
fn denials_are_reported_only_when_the_sandbox_caused_them() {
    let policy = osprey_sandboxing::SandboxPolicy::WorkspaceWrite {
        writable_roots: vec![],
        network_access: false,
        exclude_tmpdir_env_var: false,
        exclude_slash_tmp: false,
    };
    let ww = ["--policy", "workspace-write"];
    let fx = Fixture::new();

    // Real denials: a write outside the roots, a write into .git, a refused .osprey.
    for script in [
        r#"echo x > "$OUT/f""#,
        r#"echo x >> "$OUT/victim""#,
        "echo x >> .git/config",
        // Refused by the creation guard (the fixture's .osprey is removed for it below).
        "rm -rf .osprey 2>/dev/null; mkdir .osprey 2>/dev/null",
    ] {
        if script.contains("mkdir .osprey") {
            std::fs::remove_dir_all(fx.root.join(".osprey")).unwrap();
        }
        let run = fx.run(&ww, script, &[]);
        assert_ne!(run.code, 0, "{script}: {run:?}");
        let note = verdict(&fx, &policy, &run);
        assert!(
            note.is_some_and(|n| n.contains("sandbox")),
            "{script}: {run:?}"
        );
    }

    // Ordinary failures that mention permissions.
    let locked = fx.root.join("locked");
    std::fs::write(&locked, "x").unwrap();
    let mut cases = vec![
        (
            "a program's own words",
            "echo 'Permission denied'; exit 1".to_string(),
        ),
        (
            "a message about a writable path",
            format!(
                "echo \"cat: {}: Permission denied\" >&2; exit 1",
                locked.display()
            ),
        ),
        (
            "a file in the root that refuses the command itself",
            "chmod 000 locked; cat locked && echo >> locked; exit 1".to_string(),
        ),
    ];
    // Outside the roots, a file the machine itself refuses to change (immutable, which
    // binds root too): the sandbox is not why the write failed.
    let frozen = fx.outside.join("frozen");
    std::fs::write(&frozen, "x").unwrap();
    let immutable = super::common::command("chattr")
        .arg("+i")
        .arg(&frozen)
        .status()
        .is_ok_and(|s| s.success());
    if immutable {
        cases.push((
            "an immutable file outside",
            format!("echo x >> {}", frozen.display()),
        ));
    }
    for (what, script) in &cases {
        let run = fx.run(&ww, script, &[]);
        assert_ne!(run.code, 0, "{what}: {run:?}");
        assert_eq!(verdict(&fx, &policy, &run), None, "{what}: {run:?}");
    }
    if immutable {
        let _ = super::common::command("chattr")
            .arg("-i")
            .arg(&frozen)
            .status();
    }
}

/// Tries every metadata change on `$OUT/victim`, on `$OUT` itself and on the read-only
/// `.git/config`; prints `CHANGED: …` for each that succeeds.
const METADATA: &str = r#"
for f in "$OUT/victim" "$OUT" "$ROOT/.git/config"; do
  chmod 777 "$f" 2>/dev/null && echo "CHANGED: chmod $f"
  chown "$(id -u):$(id -g)" "$f" 2>/dev/null && echo "CHANGED: chown $f"
  touch -m -d '2001-02-03 04:05:06' "$f" 2>/dev/null && echo "CHANGED: touch -m -d $f"
  touch -a -d '2001-02-03 04:05:06' "$f" 2>/dev/null && echo "CHANGED: touch -a -d $f"
  python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.osprey", b"x")' "$f" 2>/dev/null \
    && echo "CHANGED: setxattr $f"
  if command -v setfattr >/dev/null; then
    setfattr -n user.osprey2 -v y "$f" 2>/dev/null && echo "CHANGED: setfattr $f"
  fi
done
exit 0
"#;

/// What a metadata change would alter: mode, owner, times (ctime moves with any change,
/// chown to the same owner included) and the extended attribute names.
fn metadata_of(path: &std::path::Path) -> (u32, u32, u32, i64, i64, i64, i64, String) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).unwrap();
    let xattrs = super::common::command("python3")
        .args([
            "-c",
            "import os,sys; print(sorted(os.listxattr(sys.argv[1])))",
        ])
        .arg(path)
        .output()
        .unwrap();
    (
        m.mode(),
        m.uid(),
        m.gid(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
        String::from_utf8_lossy(&xattrs.stdout).into_owned(),
    )
}

#[test]
fn metadata_outside_the_roots_cannot_change() {
    // Control: unconfined, every probe changes something, so a probe that cannot work
    // (no xattr support, a missing tool) cannot pass for a sandbox that holds.
    let fx = Fixture::new();
    let run = fx.run(&["--policy", "danger-full-access"], METADATA, &[]);
    for probe in ["chmod", "chown", "touch -m -d", "touch -a -d", "setxattr"] {
        assert!(
            run.stdout.contains(&format!(
                "CHANGED: {probe} {}",
                fx.outside.join("victim").display()
            )),
            "control: {probe} should work unconfined: {run:?}"
        );
    }
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let targets = [
            fx.outside.join("victim"),
            fx.outside.clone(),
            fx.root.join(".git/config"),
        ];
        let before: Vec<_> = targets.iter().map(|p| metadata_of(p)).collect();
        let run = fx.run(policy, METADATA, &[]);
        assert!(!run.stdout.contains("CHANGED"), "{name}: {run:?}");
        assert_eq!(run.code, 0, "{name}: {run:?}");
        let after: Vec<_> = targets.iter().map(|p| metadata_of(p)).collect();
        assert_eq!(after, before, "{name}: metadata changed");
    }
}

#[test]
fn metadata_inside_the_roots_can_change() {
    // The other side of the read-only mounts: the workspace's own files keep working.
    for (name, policy) in super::common::writers() {
        let fx = Fixture::new();
        std::fs::write(fx.root.join("script.sh"), "#!/bin/sh\necho ran\n").unwrap();
        let run = fx.run(
            policy,
            r#"chmod +x script.sh && ./script.sh && touch -d '2001-02-03' README && echo touched
               python3 -c 'import os; os.setxattr("README", "user.osprey", b"x")' && echo xattr"#,
            &[],
        );
        assert_eq!(run.stdout, "ran\ntouched\nxattr\n", "{name}: {run:?}");
    }
}

/// Every way to bring a `.osprey` or `.git` into being at the top of a writable root
/// (`$ROOT`, and `$TMPDIR` as another root). Each prints `CREATED: …` if the call succeeds.
pub(super) const CREATE_PROTECTED: &str = r#"
try() { if "$@" 2>/dev/null; then echo "CREATED: $*"; fi; }
# A race: one thread keeps calling mkdir on a buffer another thread keeps rewriting
# between a harmless name and `.osprey`; the supervisor must act on what it read.
python3 - <<'PY'
import ctypes, threading, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(b"racename", 16)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, b".osprey\0", 8)
        ctypes.memmove(buf, b"racename", 8)
t = threading.Thread(target=flip); t.start()
for _ in range(3000):
    if libc.mkdir(buf, 0o755) == 0:
        os.rmdir("racename") if os.path.isdir("racename") else None
stop = True; t.join()
if os.path.exists(".osprey"): print("CREATED: .osprey by racing mkdir")
PY
try mkdir .osprey
try mkdir -p .osprey/sub
try sh -c 'echo x > .osprey/config.toml'
try mkdir .OSPREY
try mkdir .Git
try mkdir .git
try sh -c 'mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit'
try sh -c 'echo "gitdir: /nonexistent" > .git'
try git init -q .
mkdir -p sub elsewhere && echo 'gitdir: elsewhere' > pointer
try mv sub .osprey
try python3 -c 'import os; os.rename("elsewhere", ".git")'
try ln pointer .git
try ln -s elsewhere .osprey
try ln -s elsewhere .git
try mkdir "$ROOT/./.osprey"
try mkdir sub/../.osprey
try sh -c 'cd sub && mkdir ../.osprey'
try mkdir /proc/self/cwd/.osprey
try sh -c 'ln -s . selflink && mkdir selflink/.osprey'
try python3 -c 'import os; os.mkdir(".osprey", dir_fd=os.open(".", os.O_RDONLY))'
try python3 -c '
import os
fd = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600)
os.write(fd, b"gitdir: elsewhere\n")
os.link(str(fd), ".git", src_dir_fd=os.open("/proc/self/fd", os.O_PATH), follow_symlinks=True)'
try python3 -c 'import os; os.symlink("elsewhere", ".osprey", dir_fd=os.open(".", os.O_RDONLY))'
try mkdir "$TMPDIR/.git"
try sh -c 'echo x > "$TMPDIR/.osprey"'
# What must keep working beside them.
mkdir -p build/out && echo built > build/out/a && sed -i s/hello/hi/ README && echo legit-ok
exit 0
"#;

#[test]
fn missing_git_and_osprey_cannot_be_created() {
    for (name, policy) in super::common::writers() {
        for without_git in [false, true] {
            let fx = Fixture::new();
            std::fs::remove_dir_all(fx.root.join(".osprey")).unwrap();
            if without_git {
                std::fs::remove_dir_all(fx.root.join(".git")).unwrap();
            }
            let run = fx.run(policy, CREATE_PROTECTED, &[]);
            let label = format!("{name} (without .git: {without_git})");
            assert!(!run.stdout.contains("CREATED"), "{label}: {run:?}");
            assert!(run.stdout.contains("legit-ok"), "{label}: {run:?}");
            assert_eq!(fx.read(&fx.root.join("README")), "hi\n", "{label}");
            let mut left: Vec<String> = std::fs::read_dir(&fx.root)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            left.sort();
            let mut expected = vec!["README", "build", "elsewhere", "pointer", "selflink", "sub"];
            if !without_git {
                expected.insert(0, ".git");
            }
            assert_eq!(left, expected, "{label}: nothing else left behind");
            for tmp_name in [".git", ".osprey"] {
                assert!(
                    !fx.tmpdir.join(tmp_name).exists(),
                    "{label}: $TMPDIR/{tmp_name}"
                );
            }
        }
    }
}

#[test]
fn protected_names_are_created_without_the_sandbox() {
    // Control for the test above: unconfined, the same attempts succeed, so a broken
    // probe cannot pass for a working guard.
    let fx = Fixture::new();
    std::fs::remove_dir_all(fx.root.join(".osprey")).unwrap();
    std::fs::remove_dir_all(fx.root.join(".git")).unwrap();
    let run = fx.run(&["--policy", "danger-full-access"], CREATE_PROTECTED, &[]);
    // (The attempts run in sequence, so after the first success later ones may find the
    // name taken; these are the first of each kind. The race comes first.)
    for probe in [
        "CREATED: .osprey by racing mkdir",
        "CREATED: mkdir .git\n",
        "CREATED: sh -c echo x > \"$TMPDIR/.osprey\"",
    ] {
        assert!(run.stdout.contains(probe), "{probe}: {run:?}");
    }
    let tmp_git = format!("CREATED: mkdir {}", fx.tmpdir.join(".git").display());
    assert!(run.stdout.contains(&tmp_git), "{run:?}");
}
