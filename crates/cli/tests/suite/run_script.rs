//! `scripts/osprey`, the README's one command: it passes the arguments through untouched,
//! builds only when the binary is missing or older than the sources, and installs the build
//! dependencies before building. The build steps are checked with stand-ins for `cargo` and
//! `install-build-deps.sh` in a copy of the script, so no test builds a release binary.

#![expect(
    clippy::disallowed_methods,
    reason = "the test runs bash on the script, as a user would"
)]

use pretty_assertions::assert_eq;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/osprey")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_script_is_valid_bash() {
    let out = Command::new("bash")
        .arg("-n")
        .arg(script())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn arguments_reach_the_binary_untouched() {
    // printf as the binary prints each argument back exactly.
    let out = Command::new("bash")
        .arg(script())
        .args(["[%s]", "two words", "*", "", "--flag=a b", "$HOME"])
        .env("OSPREY_BIN", "/usr/bin/printf")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[two words][*][][--flag=a b][$HOME]");
}

#[test]
fn the_real_binary_runs_through_the_script() {
    let osprey = assert_cmd::cargo::cargo_bin("osprey");
    let direct = Command::new(&osprey).arg("--version").output().unwrap();
    let scripted = Command::new("bash")
        .arg(script())
        .arg("--version")
        .env("OSPREY_BIN", &osprey)
        .output()
        .unwrap();
    assert!(scripted.status.success(), "{}", text(&scripted.stderr));
    assert_eq!(text(&scripted.stdout), text(&direct.stdout));
    assert!(text(&scripted.stdout).starts_with("osprey "));
}

/// A checkout with the script and stand-ins: `cargo` (on PATH) and `install-build-deps.sh`
/// append what they were asked to a log, and the fake build writes a release "binary" that
/// prints its arguments.
struct FakeCheckout {
    dir: tempfile::TempDir,
}

impl FakeCheckout {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in ["scripts", "crates/cli/src", "bin", "work"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        std::fs::copy(script(), root.join("scripts/osprey")).unwrap();
        std::fs::write(root.join("Cargo.toml"), "[workspace]\n").unwrap();
        std::fs::write(root.join("Cargo.lock"), "").unwrap();
        std::fs::write(root.join("crates/cli/src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(
            root.join("scripts/install-build-deps.sh"),
            "echo deps >> \"$(dirname \"$0\")/../log\"\n",
        )
        .unwrap();
        let cargo = root.join("bin/cargo");
        std::fs::write(
            &cargo,
            "#!/bin/sh\n\
             echo \"cargo $* (in $(pwd))\" >> \"$FAKE_ROOT/log\"\n\
             mkdir -p target/release\n\
             printf '#!/bin/sh\\necho built \"$@\"\\n' > target/release/osprey\n\
             chmod +x target/release/osprey\n",
        )
        .unwrap();
        make_executable(&cargo);
        Self { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Runs the copied script from `work/` (not the checkout) with `args`.
    fn run(&self, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            self.root().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("bash")
            .arg(self.root().join("scripts/osprey"))
            .args(args)
            .current_dir(self.root().join("work"))
            .env("PATH", path)
            .env("FAKE_ROOT", self.root())
            .env_remove("OSPREY_BIN")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        out
    }

    /// The log lines since the last call, which clears the log.
    fn take_log(&self) -> Vec<String> {
        let log = self.root().join("log");
        let lines = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect();
        let _ = std::fs::remove_file(log);
        lines
    }

    /// Sets a file's modification time `secs` seconds from now.
    fn touch(&self, relative: &str, secs: i64) {
        let file = std::fs::File::options()
            .write(true)
            .open(self.root().join(relative))
            .unwrap();
        let now = std::time::SystemTime::now();
        let when = if secs >= 0 {
            now + std::time::Duration::from_secs(secs.unsigned_abs())
        } else {
            now - std::time::Duration::from_secs(secs.unsigned_abs())
        };
        file.set_modified(when).unwrap();
    }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_first_run_installs_deps_and_builds_later_runs_only_when_sources_changed() {
    let checkout = FakeCheckout::new();
    let root = checkout.root().display().to_string();
    for source in ["Cargo.toml", "Cargo.lock", "crates/cli/src/main.rs"] {
        checkout.touch(source, -60);
    }

    // First run: no binary yet, so dependencies, then one release build in the checkout;
    // the binary then runs with the arguments, and the build's output stays off stdout.
    let out = checkout.run(&["exec", "hi there"]);
    assert_eq!(text(&out.stdout), "built exec hi there\n");
    assert_eq!(
        checkout.take_log(),
        vec![
            "deps".to_owned(),
            format!("cargo build --release -p osprey-cli (in {root})"),
        ]
    );

    // Nothing changed: no build.
    let out = checkout.run(&["--version"]);
    assert_eq!(text(&out.stdout), "built --version\n");
    assert_eq!(checkout.take_log(), Vec::<String>::new());

    // A source newer than the binary: build again.
    checkout.touch("crates/cli/src/main.rs", 60);
    checkout.run(&["--version"]);
    assert_eq!(
        checkout.take_log(),
        vec![
            "deps".to_owned(),
            format!("cargo build --release -p osprey-cli (in {root})"),
        ]
    );
}
