//! Runs `grep_files` once and prints its output, for `bench/grep_files.sh` to time against
//! ripgrep.
//!
//! Usage: `grep_bench ROOT PATTERN [INCLUDE_GLOB] [LIMIT]`
#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark driver's output is its purpose"
)]

use std::path::Path;
use std::process::ExitCode;

use osprey_tools::{GrepFilesArgs, grep_files};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, pattern, rest @ ..] = args.as_slice() else {
        eprintln!("usage: grep_bench ROOT PATTERN [INCLUDE_GLOB] [LIMIT]");
        return ExitCode::from(2);
    };
    let include = rest.first().filter(|g| !g.is_empty()).cloned();
    let limit = rest.get(1).and_then(|l| l.parse().ok()).or(Some(2000));
    let args = GrepFilesArgs {
        pattern: pattern.clone(),
        include,
        path: Some(root.clone()),
        limit,
    };
    match grep_files(&args, Path::new("/")) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}
