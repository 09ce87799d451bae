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
    osprey_apply_patch::run_cli(
        args,
        &mut std::io::stdin(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
        &cwd,
    )
}

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
