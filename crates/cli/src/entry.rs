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
