//! Spawn failures name the program, the directory and the reason in words.

use std::os::unix::fs::PermissionsExt;

use osprey_process::{
    ExecExpiration, ExecRequest, InteractiveProcess, OutputCaps, SpawnError, run_to_completion,
};
use pretty_assertions::assert_eq;

async fn spawn_error(req: ExecRequest) -> SpawnError {
    run_to_completion(req, ExecExpiration::never(), OutputCaps::default(), None)
        .await
        .unwrap_err()
}

#[tokio::test]
async fn missing_program_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = spawn_error(ExecRequest::new("osprey-no-such-program", dir.path())).await;
    assert!(matches!(err, SpawnError::ProgramNotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "could not start `osprey-no-such-program` in {}: No such file or directory; check \
             the program name, and that it is installed and on the PATH given to the command",
            dir.path().display()
        )
    );
}

#[tokio::test]
async fn missing_cwd_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("gone");
    let err = spawn_error(ExecRequest::new("/bin/sh", &cwd)).await;
    assert_eq!(
        err.to_string(),
        format!(
            "could not start `/bin/sh` in {}: the working directory does not exist; create it \
             or run the command somewhere else",
            cwd.display()
        )
    );

    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let err = spawn_error(ExecRequest::new("/bin/sh", &file)).await;
    assert!(
        err.to_string()
            .contains("the working directory is not a directory"),
        "{err}"
    );
}

#[tokio::test]
async fn non_executable_program_gives_the_os_reason() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let program = script.display().to_string();
    let err = spawn_error(ExecRequest::new(&program, dir.path())).await;
    assert_eq!(
        err.to_string(),
        format!(
            "could not start `{program}` in {}: Permission denied",
            dir.path().display()
        )
    );
}

#[tokio::test]
async fn interactive_spawn_failures_match_one_shot_ones() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("gone");
    for tty in [false, true] {
        let err = InteractiveProcess::spawn(ExecRequest::new("/bin/sh", &cwd), tty).unwrap_err();
        assert!(
            matches!(err, SpawnError::BadCwd { .. }),
            "tty={tty}: {err:?}"
        );
        let err =
            InteractiveProcess::spawn(ExecRequest::new("osprey-no-such-program", dir.path()), tty)
                .unwrap_err();
        assert!(
            matches!(err, SpawnError::ProgramNotFound { .. }),
            "tty={tty}: {err:?}"
        );
    }
}

#[test]
fn interactive_spawn_outside_a_runtime_is_an_error_not_a_panic() {
    let err = InteractiveProcess::spawn(ExecRequest::new("/bin/sh", "/"), false).unwrap_err();
    assert!(matches!(err, SpawnError::NoRuntime { .. }), "{err:?}");
}
