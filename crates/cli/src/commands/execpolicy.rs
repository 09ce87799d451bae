//! `osprey execpolicy check`: the command line of the check; `osprey-execpolicy` loads the
//! rules and evaluates.
//!
//! `main` hands the words after `execpolicy check` over unparsed (the subcommand turns off
//! clap's help flag and takes everything as trailing words) and they are parsed here as a
//! command of their own, named `osprey execpolicy check`. That keeps its help, usage errors
//! and exit codes (2 for usage, 0 for `--help`) exactly as Codex's `execpolicy check` prints
//! them, which the differential tests compare.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use osprey_execpolicy::{CheckRequest, run_check};

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
pub fn run(args: &[String], stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
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
    let request = CheckRequest {
        rules: parsed.rules,
        pretty: parsed.pretty,
        resolve_host_executables: parsed.resolve_host_executables,
        command: parsed.command,
    };
    run_check(&request, stdout, stderr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn check(args: &[&str]) -> (i32, String, String) {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn flags_reach_the_check_and_command_words_may_look_like_flags() {
        let dir = tempfile::tempdir().unwrap();
        let rules = dir.path().join("a.rules");
        std::fs::write(&rules, "prefix_rule(pattern=[\"ls\", \"--pretty\"])\n").unwrap();
        let rules = rules.to_string_lossy().into_owned();
        let (code, out, err) = check(&["--rules", &rules, "--", "ls", "--pretty"]);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(
            out,
            "{\"matchedRules\":[{\"prefixRuleMatch\":{\"matchedPrefix\":[\"ls\",\"--pretty\"],\"decision\":\"allow\"}}],\"decision\":\"allow\"}\n"
        );
        let (code, pretty, _) = check(&["-r", &rules, "--pretty", "ls", "--pretty"]);
        assert_eq!(code, 0);
        assert!(pretty.lines().count() > 1, "{pretty}");
        let (code, out, _) = check(&["-r", &rules, "cat"]);
        assert_eq!((code, out.as_str()), (0, "{\"matchedRules\":[]}\n"));
    }

    #[test]
    fn usage_errors_exit_two_and_help_exits_zero() {
        let (code, _, err) = check(&["ls"]);
        assert_eq!(code, 2);
        assert!(err.contains("--rules <PATH>"), "{err}");
        assert_eq!(check(&["--rules", "x.rules"]).0, 2);
        let (code, out, _) = check(&["--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("Usage: osprey execpolicy check"), "{out}");
        assert!(out.contains("--resolve-host-executables"), "{out}");
    }
}
