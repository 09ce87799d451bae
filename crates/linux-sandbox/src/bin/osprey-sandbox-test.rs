//! Test-only driver: runs one command sandboxed, end to end, without the `osprey` cli.
//!
//! Entered as `osprey-linux-sandbox` (by `argv[0]`) it is the helper, exactly as the
//! `osprey` binary would be. Otherwise it takes `osprey sandbox`'s arguments (plus
//! `--confinement-json` for split policies), builds the confined request with itself as
//! the helper, spawns it and exits with the command's status (128 + signal when killed).

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;

use clap::Parser;
use osprey_sandboxing::helper_args::HELPER_ARG0;
use osprey_sandboxing::{Confinement, ExecRequest, SandboxCommandArgs, confine_linux_with};

#[derive(Parser)]
struct Cli {
    /// A full `Confinement` as JSON; overrides `--policy` and friends.
    #[arg(long)]
    confinement_json: Option<String>,
    #[command(flatten)]
    args: SandboxCommandArgs,
}

fn main() {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let is_helper = argv
        .first()
        .and_then(|a| Path::new(a).file_name())
        .is_some_and(|n| n == HELPER_ARG0);
    if is_helper {
        std::process::exit(osprey_linux_sandbox::run_main(argv));
    }
    std::process::exit(match drive(Cli::parse()) {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "osprey-sandbox-test: {message}");
            125
        }
    });
}

fn drive(cli: Cli) -> Result<i32, String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let env: HashMap<String, String> = std::env::vars().collect();
    let helper = std::env::current_exe().map_err(|e| e.to_string())?;
    let request = match &cli.confinement_json {
        Some(json) => {
            let confinement = Confinement::from_json(json).map_err(|e| e.to_string())?;
            let (program, args) = cli.args.command.split_first().ok_or("no command")?;
            let request = ExecRequest::new(program.clone(), &cwd)
                .args(args.iter().cloned())
                .envs(env);
            confine_linux_with(request, &confinement, &helper, cli.args.backend)
        }
        None => cli.args.build_request(&cwd, env, &helper),
    }
    .map_err(|e| e.to_string())?;
    #[expect(
        clippy::disallowed_methods,
        reason = "test binary spawns the confined request itself"
    )]
    let mut command = std::process::Command::new(&request.program);
    command
        .args(&request.args)
        .current_dir(&request.cwd)
        .env_clear()
        .envs(&request.env);
    if let Some(arg0) = &request.arg0 {
        command.arg0(arg0);
    }
    let status = command
        .status()
        .map_err(|e| format!("spawn {}: {e}", request.program))?;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
