//! Entry points other than clap subcommands, and the small glue the subcommands share.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

/// The hidden flag that runs the `apply_patch` virtual command.
pub const APPLY_PATCH_FLAG: &str = "--osprey-run-as-apply-patch";

/// Handles invocations by program name or hidden flag. `None`: parse as usual.
pub fn dispatch_special(args: &[OsString]) -> Option<i32> {
    let program = args
        .first()
        .map(Path::new)
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if matches!(program, "apply_patch" | "applypatch") {
        return Some(apply_patch(&args[1..]));
    }
    if program == osprey_sandboxing::helper_args::HELPER_ARG0 {
        // Returns only when confinement or exec failed.
        return Some(osprey_linux_sandbox::run_main(args.to_vec()));
    }
    if args.get(1).is_some_and(|a| a == APPLY_PATCH_FLAG) {
        return Some(apply_patch(&args[2..]));
    }
    None
}

fn apply_patch(args: &[OsString]) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "Error: cannot read the current directory: {e}"
            );
            return osprey_apply_patch::EXIT_FAILURE;
        }
    };
    // The agent passes the sandbox's writable roots when it applies a patch inside the
    // sandbox; by hand, patches may only touch files under the current directory.
    let roots: Option<Vec<std::path::PathBuf>> = std::env::var_os(APPLY_PATCH_ROOTS_ENV)
        .map(|value| std::env::split_paths(&value).collect());
    let roots = roots.unwrap_or_else(|| vec![cwd.clone()]);
    osprey_apply_patch::run_cli_with_roots(
        args,
        &mut std::io::stdin(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
        &cwd,
        Some(&roots),
    )
}

/// Writable roots for the `apply_patch` virtual command, `PATH`-style (set by the agent).
pub const APPLY_PATCH_ROOTS_ENV: &str = osprey_config::env_vars::OSPREY_APPLY_PATCH_ROOTS;

pub fn execpolicy_check(args: &[String]) -> i32 {
    osprey_execpolicy::run_check_cli(args, &mut std::io::stdout(), &mut std::io::stderr())
}

pub fn block_on<F: std::future::Future<Output = i32>>(future: F) -> i32 {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(future),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "Error: could not start the async runtime: {e}"
            );
            1
        }
    }
}

/// `osprey sandbox …`: runs one command under a policy; its output goes to stdout (stdout and
/// stderr combined, in arrival order) and its exit code is passed through.
pub async fn sandbox_command(args: osprey_sandboxing::SandboxCommandArgs) -> i32 {
    let fail = |message: String| {
        let _ = writeln!(std::io::stderr(), "Error: {message}");
        1
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return fail(format!("cannot read the current directory: {e}")),
    };
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return fail(format!(
                "cannot find the osprey executable for the sandbox helper: {e}"
            ));
        }
    };
    let env = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let request = match args.build_request(&cwd, env, &exe) {
        Ok(request) => request,
        Err(e) => return fail(e.to_string()),
    };
    let sink = osprey_process::OutputSink::callback(|bytes: &[u8]| {
        let mut out = std::io::stdout();
        let _ = out.write_all(bytes);
        let _ = out.flush();
    });
    match osprey_process::run_to_completion(
        request,
        osprey_process::ExecExpiration::never(),
        osprey_process::OutputCaps {
            head_bytes: 0,
            tail_bytes: 0,
        },
        Some(sink),
    )
    .await
    {
        Ok(outcome) => outcome
            .exit_code
            .unwrap_or_else(|| 128 + outcome.signal.unwrap_or(0)),
        Err(e) => fail(e.to_string()),
    }
}

/// `osprey mcp add|list|get|remove`.
pub fn mcp_command(cli: osprey_mcp::McpCli) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let env = osprey_config::EnvSnapshot::from_process();
    match osprey_config::find_osprey_home(&env, &cwd) {
        Ok(home) => {
            osprey_mcp::run_mcp_command(cli, &home, &mut std::io::stdout(), &mut std::io::stderr())
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            1
        }
    }
}

/// `osprey model fetch|serve`.
pub async fn model_command(cli: osprey_local_model::ModelCli) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let env = osprey_config::EnvSnapshot::from_process();
    let home = match osprey_config::find_osprey_home(&env, &cwd) {
        Ok(home) => home,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            return 1;
        }
    };
    let mut out = std::io::stderr();
    match osprey_local_model::run_model_command(cli, &home, &mut out).await {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "Error: {e}");
            1
        }
    }
}
