//! Overhead of confinement: spawning `true` directly versus through the helper on the
//! Landlock path (without and with the read-only `.git` mount namespace) and the
//! bubblewrap path. Prints the median wall time of each and the difference to direct.
//!
//! Run with `bash crates/linux-sandbox/bench/sandbox.sh` (release build). Entered as
//! `osprey-linux-sandbox` it is the helper, like the `osprey` binary.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

use osprey_sandboxing::helper_args::HELPER_ARG0;
use osprey_sandboxing::{
    Confinement, ExecRequest, LinuxBackend, SandboxPolicy, confine_linux_with,
};

fn main() -> anyhow::Result<()> {
    let argv: Vec<OsString> = std::env::args_os().collect();
    if argv
        .first()
        .and_then(|a| Path::new(a).file_name())
        .is_some_and(|n| n == HELPER_ARG0)
    {
        std::process::exit(osprey_linux_sandbox::run_main(argv));
    }
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let helper = std::env::current_exe()?;
    let base = tempfile::tempdir()?;
    let plain = base.path().join("plain");
    let repo = base.path().join("repo");
    std::fs::create_dir_all(&plain)?;
    std::fs::create_dir_all(repo.join(".git"))?;
    let env: HashMap<String, String> = std::env::vars().collect();
    let policy = SandboxPolicy::WorkspaceWrite {
        writable_roots: vec![],
        network_access: false,
        exclude_tmpdir_env_var: false,
        exclude_slash_tmp: false,
    };
    let request = |cwd: &Path| ExecRequest::new("true", cwd).envs(env.clone());
    let confined = |cwd: &Path, backend| -> anyhow::Result<ExecRequest> {
        let c = Confinement::from_sandbox_policy(&policy, cwd, &env)
            .ok_or_else(|| anyhow::anyhow!("unconfined"))?;
        Ok(confine_linux_with(request(cwd), &c, &helper, backend)?)
    };
    let cases = [
        ("direct", request(&plain)),
        ("landlock", confined(&plain, LinuxBackend::Landlock)?),
        (
            "landlock+.git mount",
            confined(&repo, LinuxBackend::Landlock)?,
        ),
        ("bubblewrap", confined(&plain, LinuxBackend::Bubblewrap)?),
    ];
    // Cases are interleaved, one run of each per round, so load from other processes on
    // the machine falls on all of them alike.
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); cases.len()];
    for _ in 0..runs {
        for (i, (_, req)) in cases.iter().enumerate() {
            times[i].push(time_one(req)?);
        }
    }
    let medians: Vec<f64> = times
        .iter_mut()
        .map(|t| {
            t.sort();
            t[t.len() / 2].as_secs_f64() * 1e3
        })
        .collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{runs} interleaved runs of `true` each; median wall time per spawn+wait"
    )?;
    for ((name, _), median) in cases.iter().zip(&medians) {
        let added = median - medians[0];
        writeln!(out, "{name:<22} {median:>8.3} ms   (+{added:.3} ms)")?;
    }
    Ok(())
}

fn time_one(req: &ExecRequest) -> anyhow::Result<Duration> {
    #[expect(clippy::disallowed_methods, reason = "benchmark spawns directly")]
    let mut cmd = std::process::Command::new(&req.program);
    cmd.args(&req.args)
        .current_dir(&req.cwd)
        .env_clear()
        .envs(&req.env);
    if let Some(arg0) = &req.arg0 {
        cmd.arg0(arg0);
    }
    let start = Instant::now();
    let status = cmd.status()?;
    let elapsed = start.elapsed();
    anyhow::ensure!(status.success(), "{} failed: {status}", req.program);
    Ok(elapsed)
}
