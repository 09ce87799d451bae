//! `osprey execpolicy check` without its command line: load rules files, check one command,
//! print the evaluation. The `cli` crate parses the arguments into a [`CheckRequest`].

use std::io::Write;
use std::path::PathBuf;

use crate::policy::MatchOptions;
use crate::policy::Policy;

/// What `execpolicy check` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckRequest {
    /// Rules files, loaded in this order.
    pub rules: Vec<PathBuf>,
    /// Pretty-print the JSON output.
    pub pretty: bool,
    /// When no rule names the program literally, let an absolute program path match rules
    /// written for its basename (limited by `host_executable` lists).
    pub resolve_host_executables: bool,
    /// The command to check, as separate words.
    pub command: Vec<String>,
}

/// Runs `execpolicy check` for `request`, writing the JSON line to `stdout` and errors to
/// `stderr`. Returns the process exit code: 0 after printing an evaluation (even
/// `forbidden`), 1 when a rules file does not load or output fails.
pub fn run_check(request: &CheckRequest, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let policy = match Policy::load_files(&request.rules) {
        Ok(policy) => policy,
        Err(err) => {
            let _ = writeln!(stderr, "error: {err}");
            return 1;
        }
    };
    let options = MatchOptions {
        resolve_host_executables: request.resolve_host_executables,
    };
    let evaluation = policy.check_with_options(&request.command, &options);
    let json = if request.pretty {
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
