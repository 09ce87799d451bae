//! Two writers on one rollout file are refused.

use super::{meta, user, write_rollout};
use osprey_rollout::{RolloutError, RolloutRecorder, read_rollout};

#[tokio::test]
async fn a_second_recorder_on_the_same_file_is_refused_until_the_first_shuts_down() {
    let home = tempfile::tempdir().unwrap();
    let first = RolloutRecorder::create(home.path(), meta("/w")).unwrap();
    let path = first.path().to_path_buf();

    let err = RolloutRecorder::resume(&path).unwrap_err();
    assert!(matches!(err, RolloutError::Locked { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("in use by another Osprey process"),
        "{message}"
    );
    assert!(message.contains(&path.display().to_string()), "{message}");

    first.record(vec![user("hi")]);
    first.shutdown().await.unwrap();
    let (second, contents) = RolloutRecorder::resume(&path).unwrap();
    assert_eq!(contents.lines.len(), 1);
    second.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_stale_lock_file_without_a_lock_is_taken_over() {
    let home = tempfile::tempdir().unwrap();
    let path = write_rollout(home.path(), super::at(1, 1), meta("/w"), vec![user("x")]);
    let mut lock = path.as_os_str().to_owned();
    lock.push(".lock");
    std::fs::write(&lock, "999999\n").unwrap();
    let (recorder, _) = RolloutRecorder::resume(&path).unwrap();
    recorder.record(vec![user("y")]);
    recorder.shutdown().await.unwrap();
    assert_eq!(read_rollout(&path).unwrap().lines.len(), 2);
}

const CHILD_ENV: &str = "OSPREY_ROLLOUT_LOCK_CHILD";

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test re-runs its own binary as a second process"
)]
async fn a_recorder_in_another_process_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let recorder = RolloutRecorder::create(home.path(), meta("/w")).unwrap();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "suite::locking::child_tries_to_resume",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, recorder.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("CHILD: locked"), "{stdout}");
    recorder.shutdown().await.unwrap();
}

/// Run only by `a_recorder_in_another_process_is_refused`, in a child process.
#[tokio::test]
#[ignore = "helper run as a child process by a_recorder_in_another_process_is_refused"]
async fn child_tries_to_resume() {
    let path = std::env::var_os(CHILD_ENV).expect("run by the parent test with the path set");
    match RolloutRecorder::resume(std::path::Path::new(&path)) {
        Err(RolloutError::Locked { .. }) => println!("CHILD: locked"),
        Err(other) => panic!("CHILD: unexpected error {other}"),
        Ok(_) => panic!("CHILD: resumed a file another process is writing"),
    }
}
