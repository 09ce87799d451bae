//! Which path a patch takes: an auto-approved patch under an active sandbox is applied by
//! the `apply_patch` virtual command running confined in the sandbox, an approved patch
//! outside the writable roots is applied in-process.
//!
//! The thread's `osprey` binary is a stand-in script that runs the real one: when entered as
//! the virtual command it first tries to write outside the writable roots and prints whether
//! it could (`apply_patch child: confined` / `unconfined`), so the model's output shows
//! whether the child ran and whether the sandbox held it. Entered any other way it is the
//! sandbox helper and passes straight through.

use super::harness::*;
use osprey_protocol::ReviewDecision;
use osprey_test_support::*;
use std::path::{Path, PathBuf};

const CONFINED: &str = "apply_patch child: confined";
const UNCONFINED: &str = "apply_patch child: unconfined";

/// Writes the stand-in for the `osprey` binary into `dir`; the probe file is `probe`.
fn stand_in_exe(dir: &Path, probe: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let real = osprey_exe();
    let script = format!(
        "#!/bin/bash\n\
         case \"$1\" in\n\
         --osprey-run-as-apply-patch)\n\
         \x20 if ( : > '{probe}' ) 2>/dev/null; then echo '{UNCONFINED}'; else echo '{CONFINED}'; fi\n\
         \x20 exec '{real}' \"$@\" ;;\n\
         *) exec -a osprey-linux-sandbox '{real}' \"$@\" ;;\n\
         esac\n",
        probe = probe.display(),
        real = real.display(),
    );
    let path = dir.join("osprey");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn home_for(server: &MockModelServer, approval: &str) -> TempHome {
    let home = TempHome::for_server(server, WireApi::Responses);
    // Temp dirs are writable under workspace-write; the probe and "outside" live there.
    home.write_config(&format!(
        "approval_policy = \"{approval}\"\nsandbox_mode = \"workspace-write\"\n\
         sandbox_workspace_write.exclude_slash_tmp = true\n\
         sandbox_workspace_write.exclude_tmpdir_env_var = true\n"
    ));
    home
}

fn patch_turn(patch: &str) -> Vec<MockResponse> {
    vec![
        sse_turn(vec![ev_custom_tool_call("p1", "apply_patch", patch)]),
        sse_turn(vec![ev_assistant_message("m", "done")]),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_approved_patch_is_applied_by_a_confined_child() {
    let bin = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let probe = outside.path().join("probe");
    let exe = stand_in_exe(bin.path(), &probe);
    let server = MockModelServer::start(patch_turn(
        "*** Begin Patch\n*** Add File: inside.txt\n+ok\n*** End Patch",
    ))
    .await;
    let home = home_for(&server, "never");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .with_osprey_exe(exe)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    run_turn(&thread, "add", vec![]).await;
    let output = server.requests()[1].output_for("p1").unwrap();
    assert!(
        output.contains(CONFINED),
        "the virtual command did not run confined: {output}"
    );
    assert!(output.contains("A inside.txt"), "{output}");
    assert!(
        !probe.exists(),
        "the child wrote outside the writable roots"
    );
    assert_eq!(
        std::fs::read_to_string(repo.path().join("inside.txt")).unwrap(),
        "ok\n"
    );
    server.verify();
}

/// The control: a patch the user approved outside the writable roots could not be applied
/// in the sandbox, so it is applied in-process and no child runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_patch_outside_the_roots_is_applied_in_process() {
    let bin = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let probe = outside.path().join("probe");
    let exe = stand_in_exe(bin.path(), &probe);
    let target = outside.path().join("approved.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+approved\n*** End Patch",
        target.display()
    );
    let server = MockModelServer::start(patch_turn(&patch)).await;
    let home = home_for(&server, "on-request");
    let repo = temp_git_repo();
    let thread = manager(&home)
        .with_osprey_exe(exe)
        .start_thread(config(&home, repo.path()))
        .await
        .unwrap();
    let events = run_turn(&thread, "add", vec![ReviewDecision::Approved]).await;
    assert_eq!(approval_count(&events), 1);
    let output = server.requests()[1].output_for("p1").unwrap();
    assert!(
        !output.contains(CONFINED) && !output.contains(UNCONFINED),
        "an approved patch went through the sandboxed child: {output}"
    );
    assert!(!probe.exists());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "approved\n");
    server.verify();
}
