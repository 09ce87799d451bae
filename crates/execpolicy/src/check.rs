//! `osprey execpolicy check`: load rules files, check one command, print the evaluation.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;

use crate::policy::MatchOptions;
use crate::policy::Policy;

/// Check a command against execpolicy rules files and print the result as JSON.
///
/// Prints `{"matchedRules":[…],"decision":"…"}` and exits 0, whatever the decision; a rules
/// file that fails to load (including a failing `match`/`not_match` example) exits 1.
#[derive(Debug, Parser)]
#[command(name = "osprey execpolicy check")]
struct CheckArgs {
    /// A rules file to load (repeatable; files are loaded in the order given).
    #[arg(short = 'r', long = "rules", value_name = "PATH", required = true)]
    rules: Vec<PathBuf>,

    /// Pretty-print the JSON output.
    #[arg(long)]
    pretty: bool,

    /// When no rule names the program literally, let an absolute program path match rules
    /// written for its basename (limited by `host_executable` lists).
    #[arg(long)]
    resolve_host_executables: bool,

    /// The command to check, as separate arguments.
    #[arg(
        value_name = "COMMAND",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    command: Vec<String>,
}

/// Runs `execpolicy check` with `args` (the words after `execpolicy check`), writing the JSON
/// line to `stdout` and errors to `stderr`. Returns the process exit code: 0 after printing
/// an evaluation (even `forbidden`), 1 when a rules file does not load or output fails, 2 for
/// a usage error (0 for `--help`).
pub fn run_check_cli(args: &[String], stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let argv = std::iter::once("osprey execpolicy check".to_owned()).chain(args.iter().cloned());
    let parsed = match CheckArgs::try_parse_from(argv) {
        Ok(parsed) => parsed,
        Err(err) => {
            let text = err.render().to_string();
            let target: &mut dyn Write = if err.use_stderr() { stderr } else { stdout };
            // Nothing sensible is left to do if the terminal is gone.
            let _ = target.write_all(text.as_bytes());
            return err.exit_code();
        }
    };
    let policy = match Policy::load_files(&parsed.rules) {
        Ok(policy) => policy,
        Err(err) => {
            let _ = writeln!(stderr, "error: {err}");
            return 1;
        }
    };
    let options = MatchOptions {
        resolve_host_executables: parsed.resolve_host_executables,
    };
    let evaluation = policy.check_with_options(&parsed.command, &options);
    let json = if parsed.pretty {
        serde_json::to_string_pretty(&evaluation)
    } else {
        serde_json::to_string(&evaluation)
    };
    let written = match json {
        Ok(json) => writeln!(stdout, "{json}"),
        Err(err) => {
            let _ = writeln!(stderr, "error: cannot render the evaluation as JSON: {err}");
            return 1;
        }
    };
    match written {
        Ok(()) => 0,
        Err(err) => {
            let _ = writeln!(stderr, "error: cannot write the evaluation: {err}");
            1
        }
    }
}
