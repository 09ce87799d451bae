//! The virtual `apply_patch` command: what runs for
//! `osprey --osprey-run-as-apply-patch PATCH` and for the binary invoked as
//! `apply_patch` / `applypatch`.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::apply::apply_verified;
use crate::parser::parse_patch;
use crate::verify::verify_patch;

/// Exit code: the patch was applied.
pub const EXIT_SUCCESS: i32 = 0;
/// Exit code: the patch was invalid or did not apply; nothing was changed.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code: the command was used wrongly (no patch, too many arguments).
pub const EXIT_USAGE: i32 = 2;

const USAGE: &str = "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch\n";

/// Runs the virtual CLI. `args` are the arguments after the program name (or
/// after `--osprey-run-as-apply-patch`): none (the patch is read from
/// `stdin`) or exactly one, the patch. Paths resolve against `cwd` and must
/// stay inside it (after `..` and symlinks are resolved). Prints the summary
/// to `stdout`, errors to `stderr`, and returns the exit code.
pub fn run_cli(
    args: &[OsString],
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    cwd: &Path,
) -> i32 {
    let roots = [cwd.to_path_buf()];
    run_cli_with_roots(args, stdin, stdout, stderr, cwd, Some(&roots))
}

/// [`run_cli`] with explicit allowed roots (`None`: any path may be touched).
pub fn run_cli_with_roots(
    args: &[OsString],
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    cwd: &Path,
    allowed_roots: Option<&[PathBuf]>,
) -> i32 {
    let text = match args {
        [] => {
            let mut buf = Vec::new();
            if let Err(e) = stdin.read_to_end(&mut buf) {
                let _ = writeln!(stderr, "Error: failed to read the patch from stdin: {e}");
                return EXIT_FAILURE;
            }
            match String::from_utf8(buf) {
                Ok(text) if !text.trim().is_empty() => text,
                Ok(_) => {
                    let _ = write!(stderr, "{USAGE}");
                    return EXIT_USAGE;
                }
                Err(_) => {
                    let _ = writeln!(stderr, "Error: the patch read from stdin is not UTF-8.");
                    return EXIT_FAILURE;
                }
            }
        }
        [one] => match one.to_str() {
            Some(text) => text.to_string(),
            None => {
                let _ = writeln!(stderr, "Error: the PATCH argument is not UTF-8.");
                return EXIT_FAILURE;
            }
        },
        _ => {
            let _ = writeln!(
                stderr,
                "{USAGE}Error: apply_patch accepts exactly one argument."
            );
            return EXIT_USAGE;
        }
    };
    apply_text(&text, stdout, stderr, cwd, allowed_roots)
}

fn apply_text(
    text: &str,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    cwd: &Path,
    allowed_roots: Option<&[PathBuf]>,
) -> i32 {
    let patch = match parse_patch(text) {
        Ok(patch) => patch,
        Err(e) => {
            let _ = writeln!(stderr, "{e}");
            return EXIT_FAILURE;
        }
    };
    let result = verify_patch(&patch, cwd, allowed_roots).and_then(|v| apply_verified(&v));
    match result {
        Ok(summary) => {
            if write!(stdout, "{}", summary.text).is_err() {
                return EXIT_FAILURE;
            }
            EXIT_SUCCESS
        }
        Err(e) => {
            let _ = writeln!(stderr, "{e}");
            EXIT_FAILURE
        }
    }
}
