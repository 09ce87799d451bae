//! Test-only driver: runs one command sandboxed, end to end, without the `osprey` cli.
//!
//! Entered as `osprey-linux-sandbox` (by `argv[0]`) it is the helper, exactly as the
//! `osprey` binary would be. Otherwise it takes `osprey sandbox`'s arguments (plus
//! `--confinement-json` for split policies), builds the confined request with itself as
//! the helper, spawns it and exits with the command's status (128 + signal when killed).
//! The arguments are read by a small parser here: the helper's crate stays free of
//! argument-parsing libraries.
//!
//! With `OSPREY_SANDBOX_TEST_ROUTE=in-child` in its environment, the confined request goes
//! through [`osprey_linux_sandbox::confine_in_child`] first, as `osprey` does, so the
//! command is confined in its own forked child when the policy allows (the variable is
//! removed from the command's environment). The command finds
//! `OSPREY_SANDBOX_TEST_CONFINED_IN=child` or `=helper` in its environment, naming the route
//! actually taken.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};

use osprey_sandboxing::helper_args::HELPER_ARG0;
use osprey_sandboxing::{
    Confinement, ExecRequest, LinuxBackend, SandboxCommand, SandboxMode, confine_linux_with,
};

const USAGE: &str = "osprey-sandbox-test [--confinement-json JSON] [--policy P] \
    [--writable-root DIR]... [--network] [--exclude-tmpdir-env-var] [--exclude-slash-tmp] \
    [--backend B] -- COMMAND [ARGS...]";

/// Chooses the in-child route (see the module comment).
const ROUTE_VAR: &str = "OSPREY_SANDBOX_TEST_ROUTE";
/// Names the route taken, for the command.
const CONFINED_IN_VAR: &str = "OSPREY_SANDBOX_TEST_CONFINED_IN";

struct Cli {
    /// A full `Confinement` as JSON; overrides `--policy` and friends.
    confinement_json: Option<String>,
    args: SandboxCommand,
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
    let result = parse(argv.into_iter().skip(1)).and_then(drive);
    std::process::exit(match result {
        Ok(code) => code,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "osprey-sandbox-test: {message}");
            125
        }
    });
}

/// Parses the words after `argv[0]`.
fn parse(args: impl Iterator<Item = OsString>) -> Result<Cli, String> {
    let mut args = args.map(|a| {
        a.into_string()
            .map_err(|a| format!("argument {} is not UTF-8", a.to_string_lossy()))
    });
    let mut cli = Cli {
        confinement_json: None,
        args: SandboxCommand::default(),
    };
    while let Some(arg) = args.next() {
        let arg = arg?;
        let mut value = || {
            args.next()
                .unwrap_or_else(|| Err(format!("{arg} needs a value; usage: {USAGE}")))
        };
        match arg.as_str() {
            "--" => {
                cli.args.command = args.collect::<Result<_, _>>()?;
                if cli.args.command.is_empty() {
                    return Err(format!("no command after `--`; usage: {USAGE}"));
                }
                return Ok(cli);
            }
            "--confinement-json" => cli.confinement_json = Some(value()?),
            "--policy" => cli.args.mode = policy(&value()?)?,
            "--backend" => cli.args.backend = backend(&value()?)?,
            "--writable-root" => cli.args.writable_roots.push(PathBuf::from(value()?)),
            "--network" => cli.args.network = true,
            "--exclude-tmpdir-env-var" => cli.args.exclude_tmpdir_env_var = true,
            "--exclude-slash-tmp" => cli.args.exclude_slash_tmp = true,
            other => return Err(format!("unknown argument `{other}`; usage: {USAGE}")),
        }
    }
    Err(format!("missing `--` before the command; usage: {USAGE}"))
}

fn policy(raw: &str) -> Result<SandboxMode, String> {
    match raw {
        "read-only" => Ok(SandboxMode::ReadOnly),
        "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
        "danger-full-access" => Ok(SandboxMode::DangerFullAccess),
        _ => Err(format!(
            "unknown policy `{raw}`: use read-only, workspace-write or danger-full-access"
        )),
    }
}

fn backend(raw: &str) -> Result<LinuxBackend, String> {
    match raw {
        "auto" => Ok(LinuxBackend::Auto),
        "landlock" => Ok(LinuxBackend::Landlock),
        "bubblewrap" => Ok(LinuxBackend::Bubblewrap),
        _ => Err(format!(
            "unknown backend `{raw}`: use auto, landlock or bubblewrap"
        )),
    }
}

fn drive(cli: Cli) -> Result<i32, String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let mut env: HashMap<String, String> = std::env::vars().collect();
    let in_child = env.remove(ROUTE_VAR).as_deref() == Some("in-child");
    // Tells the command (and so the tests) which route confined it: `child` now, for the
    // environment the child step captures; `helper` below when the step is not taken.
    env.insert(CONFINED_IN_VAR.to_string(), "child".to_string());
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
    let mut request = if in_child {
        osprey_linux_sandbox::confine_in_child(request)
    } else {
        request
    };
    if request.child_setup.is_none() {
        request
            .env
            .insert(CONFINED_IN_VAR.to_string(), "helper".to_string());
    }
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
    if let Some(setup) = &request.child_setup {
        setup.install_std(&mut command);
    }
    let status = command
        .status()
        .map_err(|e| format!("spawn {}: {e}", request.program))?;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
