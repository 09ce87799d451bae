//! Shared fixtures: a workspace and an outside directory under the target's temp dir
//! (never under /tmp, which workspace-write makes writable), and a runner for the
//! test binary.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_osprey-sandbox-test");

/// Every confined policy, by name, with its flags.
pub const CONFINED: &[(&str, &[&str])] = &[
    ("read-only", &["--policy", "read-only"]),
    ("workspace-write", &["--policy", "workspace-write"]),
    (
        "workspace-write-no-tmp",
        &[
            "--policy",
            "workspace-write",
            "--exclude-tmpdir-env-var",
            "--exclude-slash-tmp",
        ],
    ),
    (
        "workspace-write-bwrap",
        &["--policy", "workspace-write", "--backend", "bubblewrap"],
    ),
    (
        "read-only-bwrap",
        &["--policy", "read-only", "--backend", "bubblewrap"],
    ),
];

/// Policies that may write the workspace.
pub fn writers() -> impl Iterator<Item = &'static (&'static str, &'static [&'static str])> {
    CONFINED
        .iter()
        .filter(|(name, _)| name.starts_with("workspace-write"))
}

#[expect(clippy::disallowed_methods, reason = "tests start processes directly")]
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    Command::new(program)
}

pub struct Fixture {
    _base: TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub tmpdir: PathBuf,
}

/// Where fixtures live. `workspace-write` makes `/tmp` writable, so an "outside" folder
/// under `/tmp` would really be writable: when the build (and its temp dir) is under `/tmp`,
/// as in a CI clone there, fixtures go to `/var/tmp` instead.
fn fixture_parent() -> PathBuf {
    let target_tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let canon = std::fs::canonicalize(&target_tmp).unwrap_or(target_tmp);
    let under_tmp = canon.starts_with("/tmp")
        || std::env::var_os("TMPDIR").is_some_and(|t| canon.starts_with(t));
    if !under_tmp {
        return canon;
    }
    let fallback = PathBuf::from("/var/tmp/osprey-sandbox-tests");
    std::fs::create_dir_all(&fallback).unwrap();
    fallback
}

impl Fixture {
    /// A workspace `root` that is a git repository with one commit and an `.osprey`
    /// folder, an `outside` folder with a `victim` file, and a private `$TMPDIR`.
    pub fn new() -> Self {
        let base = tempfile::Builder::new()
            .prefix("sbx")
            .tempdir_in(fixture_parent())
            .unwrap();
        let canon = std::fs::canonicalize(base.path()).unwrap();
        let root = canon.join("root");
        let outside = canon.join("outside");
        let tmpdir = canon.join("tmpdir");
        for d in [&root, &outside, &tmpdir, &root.join(".osprey")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(outside.join("victim"), "original\n").unwrap();
        std::fs::write(root.join(".osprey/config.toml"), "model = \"x\"\n").unwrap();
        std::fs::write(root.join("README"), "hello\n").unwrap();
        git(&root, &["init", "-q", "."]);
        std::fs::write(root.join(".git/info/exclude"), ".osprey/\n.build-tmp/\n").unwrap();
        git(&root, &["add", "README"]);
        git(
            &root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "commit",
                "-qm",
                "init",
            ],
        );
        Self {
            _base: base,
            root,
            outside,
            tmpdir,
        }
    }

    /// Runs `bash -c script` in `root` under `policy`, with `ROOT`, `OUT` and extra
    /// variables set, through the test crate's route (`crate::ROUTE`).
    pub fn run(&self, policy: &[&str], script: &str, extra: &[(&str, String)]) -> Run {
        let mut cmd = command(BIN);
        cmd.env("OSPREY_SANDBOX_TEST_ROUTE", crate::ROUTE);
        cmd.args(policy)
            .arg("--")
            .args(["bash", "-c", script])
            .current_dir(&self.root)
            .env("TMPDIR", &self.tmpdir)
            .env("ROOT", &self.root)
            .env("OUT", &self.outside)
            .stdin(Stdio::null());
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn read(&self, path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_else(|e| format!("<{e}>"))
    }
}

fn git(dir: &Path, args: &[&str]) {
    let status = command("git").args(args).current_dir(dir).status().unwrap();
    assert!(status.success(), "git {args:?}");
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn output(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// A process outside the sandbox (a `sleep` in `cwd`), killed on drop.
pub struct Outsider(pub Child);

impl Outsider {
    pub fn start(cwd: &Path) -> Self {
        let child = command("sleep")
            .arg("300")
            .current_dir(cwd)
            .spawn()
            .unwrap();
        Self(child)
    }

    pub fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Outsider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
