//! Shared helpers: requests for `/bin/sh` scripts, and checks on process liveness.

use std::path::Path;
use std::time::{Duration, Instant};

use osprey_process::{
    ExecExpiration, ExecOutcome, ExecRequest, InteractiveProcess, OutputCaps, OutputSink,
    run_to_completion,
};

pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// `/bin/sh -c script` in `cwd`, with only PATH set.
pub fn sh_in(cwd: &Path, script: &str) -> ExecRequest {
    ExecRequest::new("/bin/sh", cwd)
        .args(["-c", script])
        .env("PATH", PATH)
}

/// `/bin/sh -c script` in the system temp dir.
pub fn sh(script: &str) -> ExecRequest {
    sh_in(&std::env::temp_dir(), script)
}

pub async fn run(req: ExecRequest, expiration: ExecExpiration) -> ExecOutcome {
    run_to_completion(req, expiration, OutputCaps::default(), None)
        .await
        .unwrap()
}

pub async fn run_with_sink(
    req: ExecRequest,
    expiration: ExecExpiration,
    sink: OutputSink,
) -> ExecOutcome {
    run_to_completion(req, expiration, OutputCaps::default(), Some(sink))
        .await
        .unwrap()
}

/// Parses the number after `pid=` in `text`.
pub fn pid_in(text: &str) -> Option<u32> {
    let rest = &text[text.find("pid=")? + 4..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Whether `pid` no longer runs: no /proc entry, or a zombie waiting for its reaper.
pub fn is_gone(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    // The state is the first field after the parenthesised command name.
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    matches!(state, Some('Z' | 'X'))
}

/// Asserts `pid` is gone, allowing the kernel a moment to finish the exit of a process
/// that was just sent SIGKILL (there is no event to await for another parent's child).
pub async fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !is_gone(pid) {
        assert!(Instant::now() < deadline, "process {pid} is still running");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Kills a process the test left behind on purpose (one that escaped our group).
pub async fn kill_leftover(pid: u32) {
    let out = run(sh(&format!("kill -9 {pid}")), ExecExpiration::never()).await;
    assert_eq!(out.exit_code, Some(0), "{}", out.output_lossy());
}

/// Collects from `proc` until the accumulated output contains `needle`; fails after 10 s.
pub async fn collect_until(proc: &InteractiveProcess, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    loop {
        let got = proc
            .collect_output(Duration::from_millis(100), 1 << 20)
            .await;
        seen.push_str(&String::from_utf8_lossy(&got.output));
        if seen.contains(needle) {
            return seen;
        }
        assert!(
            Instant::now() < deadline,
            "never saw {needle:?}; output so far: {seen:?} (exited: {:?})",
            got.exited
        );
    }
}
