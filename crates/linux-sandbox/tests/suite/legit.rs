//! What must keep working inside the sandbox: builds, git, temp files, reading the
//! system, pipes, and the exit code passing through.

use std::os::unix::process::CommandExt;

use pretty_assertions::assert_eq;

use super::common::{CONFINED, Fixture, writers};

const MAKEFILE: &str = "hello: main.o util.o\n\tcc -o hello main.o util.o\n\n%.o: %.c\n\tcc -O1 -c $< -o $@\n\nclean:\n\trm -f hello *.o\n";
const MAIN_C: &str = "#include <stdio.h>\nint twice(int);\nint main(void) { printf(\"hello %d\\n\", twice(21)); return 0; }\n";
const UTIL_C: &str = "int twice(int x) { return 2 * x; }\n";

#[test]
fn a_c_project_builds_and_runs() {
    for (name, policy) in writers() {
        let fx = Fixture::new();
        let src = fx.root.join("src");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(
            fx.root.join("Makefile"),
            MAKEFILE.replace("main.o util.o", "src/main.o src/util.o"),
        )
        .unwrap();
        std::fs::write(src.join("main.c"), MAIN_C).unwrap();
        std::fs::write(src.join("util.c"), UTIL_C).unwrap();
        // With the temp dirs excluded, the compiler needs a temp dir in the workspace.
        let script = "export TMPDIR=$ROOT/.build-tmp; mkdir -p $TMPDIR; make -s && ./hello && make -s clean && test ! -e hello";
        let run = fx.run(policy, script, &[]);
        assert_eq!(run.stdout, "hello 42\n", "{name}: {run:?}");
        assert_eq!(run.code, 0, "{name}: {run:?}");
    }
}

#[test]
fn git_reads_work_everywhere() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let run = fx.run(
            policy,
            "git status --short && git log --oneline | wc -l && git diff --stat",
            &[],
        );
        assert_eq!(run.stdout.trim(), "1", "{name}: {run:?}");
        assert_eq!(run.code, 0, "{name}: {run:?}");
    }
}

#[test]
fn workspace_and_temp_files_are_writable() {
    for (name, policy) in writers() {
        let fx = Fixture::new();
        let tmp_ok = !name.ends_with("no-tmp");
        let run = fx.run(
            policy,
            r#"echo a > new.txt && mkdir -p d/e && mv new.txt d/e/ && rm -r d && echo ws-ok
               f=$(mktemp) && echo t > "$f" && rm "$f" && echo tmpdir-ok
               f=/tmp/osprey-sbx-$$ && echo t > "$f" && rm "$f" && echo slash-tmp-ok
               true"#,
            &[],
        );
        let expected = if tmp_ok {
            "ws-ok\ntmpdir-ok\nslash-tmp-ok\n"
        } else {
            "ws-ok\n"
        };
        assert_eq!(run.stdout, expected, "{name}: {run:?}");
    }
}

#[test]
fn read_only_cannot_write_the_workspace() {
    for (name, policy) in CONFINED.iter().filter(|(n, _)| n.starts_with("read-only")) {
        let fx = Fixture::new();
        let run = fx.run(policy, "echo x > new.txt; mktemp; echo x >> README", &[]);
        assert_ne!(run.code, 0, "{name}: {run:?}");
        assert!(!fx.root.join("new.txt").exists(), "{name}");
        assert_eq!(fx.read(&fx.root.join("README")), "hello\n", "{name}");
    }
}

#[test]
fn system_files_pipes_and_devices_work() {
    for (name, policy) in CONFINED {
        let fx = Fixture::new();
        let run = fx.run(
            policy,
            r#"head -c0 /etc/passwd && ls /usr/bin >/dev/null && echo abc | tr a-z A-Z | grep -c ABC
               python3 -c 'import subprocess; print(subprocess.run(["echo","sub"],capture_output=True,text=True).stdout.strip())'
               python3 -c 'import socket; a,b=socket.socketpair(); a.sendall(b"pair"); print(b.recv(4).decode())'
               head -c 4 /dev/zero | wc -c; echo quiet > /dev/null; uname >/dev/null; exit 42"#,
            &[],
        );
        assert_eq!(run.stdout, "1\nsub\npair\n4\n", "{name}: {run:?}");
        assert_eq!(run.code, 42, "{name}: exit code passes through");
    }
}

#[test]
fn danger_full_access_is_not_confined() {
    let fx = Fixture::new();
    let run = fx.run(
        &["--policy", "danger-full-access"],
        r#"echo changed > "$OUT/victim""#,
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(fx.read(&fx.outside.join("victim")), "changed\n");
}

#[test]
fn helper_failures_have_distinct_exit_codes() {
    let fx = Fixture::new();
    let missing = fx.run(
        &["--policy", "read-only"],
        "exec osprey-no-such-program",
        &[],
    );
    assert_eq!(missing.code, 127, "{missing:?}");
    let out = super::common::command(super::common::BIN)
        .arg0("osprey-linux-sandbox")
        .args(["--confinement", "{not json", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("osprey-linux-sandbox: invalid sandbox policy JSON"),
        "{stderr}"
    );
    let direct = super::common::command(super::common::BIN)
        .arg0("osprey-linux-sandbox")
        .args([
            "--confinement",
            r#"{"filesystem":[{"path":"/","access":"read"}],"network":false}"#,
            "--",
            "osprey-no-such-program",
        ])
        .output()
        .unwrap();
    assert_eq!(direct.status.code(), Some(127));
}

/// The in-child route is really taken where it can be (read-only, and workspace-write when
/// nothing needs the creation guard), and the helper keeps the rest; the helper route takes
/// the helper every time.
#[test]
fn each_policy_is_confined_on_the_expected_route() {
    let fx = Fixture::new();
    let no_guard: &[&str] = &[
        "--policy",
        "workspace-write",
        "--exclude-tmpdir-env-var",
        "--exclude-slash-tmp",
    ];
    let cases: [(&[&str], &str); 4] = [
        (&["--policy", "read-only"], "child"),
        (no_guard, "child"),
        // `$TMPDIR` and `/tmp` are writable roots without `.git`: the guard is needed.
        (&["--policy", "workspace-write"], "helper"),
        (
            &["--policy", "read-only", "--backend", "bubblewrap"],
            "helper",
        ),
    ];
    for (policy, expected) in cases {
        let expected = if crate::ROUTE == "helper" {
            "helper"
        } else {
            expected
        };
        let run = fx.run(
            policy,
            r#"printf %s "$OSPREY_SANDBOX_TEST_CONFINED_IN""#,
            &[],
        );
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, expected),
            "{policy:?}: {run:?}"
        );
    }
}

/// The command inherits no descriptor of the confinement (the Landlock ruleset, detached
/// mount copies): everything the parent prepared is close-on-exec.
#[test]
fn the_command_inherits_no_descriptor_of_the_sandbox() {
    let fx = Fixture::new();
    for (name, policy) in CONFINED {
        let run = fx.run(
            policy,
            "ls -l /proc/self/fd/ | tail -n +2 | wc -l; ls -l /proc/self/fd/",
            &[],
        );
        assert_eq!(run.code, 0, "{name}: {run:?}");
        assert!(!run.stdout.contains("landlock"), "{name}: {run:?}");
        assert!(!run.stdout.contains("anon_inode"), "{name}: {run:?}");
    }
}

/// A confinement step that fails in the child stops the command before it starts, with the
/// helper's kind of message and exit status: here a carve-out vanished between planning and
/// spawning.
#[test]
fn a_step_that_fails_in_the_child_runs_nothing_and_says_why() {
    use osprey_sandboxing::{Confinement, ExecRequest, LinuxBackend, confine_linux_with};
    let fx = Fixture::new();
    let mut env = std::collections::HashMap::new();
    env.insert("PATH".to_string(), "/usr/bin:/bin".to_string());
    let policy = osprey_sandboxing::SandboxPolicy::WorkspaceWrite {
        writable_roots: vec![],
        network_access: false,
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: true,
    };
    let confinement = Confinement::from_sandbox_policy(&policy, &fx.root, &env).unwrap();
    let marker = fx.outside.join("ran");
    let request = ExecRequest::new("touch", &fx.root)
        .args([marker.to_string_lossy().into_owned()])
        .envs(env);
    let helper = std::path::PathBuf::from(super::common::BIN);
    let request =
        confine_linux_with(request, &confinement, &helper, LinuxBackend::Landlock).unwrap();
    let request = osprey_linux_sandbox::confine_in_child(request);
    let setup = request
        .child_setup
        .clone()
        .expect("the in-child route applies");
    std::fs::remove_dir_all(fx.root.join(".osprey")).unwrap();
    let mut command = super::common::command(&request.program);
    command
        .args(&request.args)
        .arg0(request.arg0.as_deref().unwrap())
        .current_dir(&request.cwd)
        .env_clear()
        .envs(&request.env);
    setup.install_std(&mut command);
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.starts_with("osprey-linux-sandbox: could not set up the sandbox (copying "),
        "{stderr}"
    );
    assert!(
        stderr.contains(".osprey: No such file or directory"),
        "{stderr}"
    );
    assert!(!marker.exists(), "the command ran");
}
