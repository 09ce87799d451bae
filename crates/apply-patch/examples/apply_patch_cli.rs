//! A stand-alone `apply_patch` command over the library, used by
//! `bench/apply_patch.sh`:
//!
//! - `apply_patch_cli generate DIR [MEGABYTES] [CHUNKS]` writes `DIR/big.rs`
//!   (a generated source file) and `DIR/patch.txt` (a patch editing it in
//!   evenly spaced chunks, each with an `@@` anchor);
//! - `apply_patch_cli [PATCH]` behaves like `apply_patch` in the current
//!   directory (patch from the argument or stdin).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == "generate") {
        let dir = PathBuf::from(args.get(1).ok_or_else(|| anyhow::anyhow!("generate DIR"))?);
        let megabytes: usize = parse_arg(&args, 2, 10)?;
        let chunks: usize = parse_arg(&args, 3, 200)?;
        return generate(&dir, megabytes, chunks);
    }
    let cwd = std::env::current_dir()?;
    let code = osprey_apply_patch::run_cli(
        &args,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
        &cwd,
    );
    std::process::exit(code);
}

fn parse_arg(args: &[OsString], index: usize, default: usize) -> anyhow::Result<usize> {
    match args.get(index) {
        Some(v) => Ok(v.to_string_lossy().parse()?),
        None => Ok(default),
    }
}

fn function(i: usize) -> String {
    format!(
        "/// Computes step {i} of the pipeline.\n\
         pub fn step_{i}(input: &[u64], state: &mut State) -> u64 {{\n\
         \x20   let mut total = state.offset.wrapping_add({i});\n\
         \x20   for value in input.iter().copied() {{\n\
         \x20       total = total.rotate_left(5) ^ value.wrapping_mul(0x9e37_79b9);\n\
         \x20   }}\n\
         \x20   state.record(\"step_{i}\", total);\n\
         \x20   total\n\
         }}\n\n"
    )
}

fn generate(dir: &std::path::Path, megabytes: usize, chunks: usize) -> anyhow::Result<()> {
    let target = megabytes * 1024 * 1024;
    let mut src = String::with_capacity(target + 1024);
    let mut count = 0;
    while src.len() < target {
        src.push_str(&function(count));
        count += 1;
    }
    std::fs::write(dir.join("big.rs"), &src)?;
    let mut patch = String::from("*** Begin Patch\n*** Update File: big.rs\n");
    let stride = count / chunks.max(1);
    for c in 0..chunks {
        let i = c * stride + stride / 2;
        writeln!(
            patch,
            "@@ pub fn step_{i}(input: &[u64], state: &mut State) -> u64 {{"
        )?;
        writeln!(
            patch,
            "     let mut total = state.offset.wrapping_add({i});"
        )?;
        writeln!(patch, "     for value in input.iter().copied() {{")?;
        writeln!(
            patch,
            "-        total = total.rotate_left(5) ^ value.wrapping_mul(0x9e37_79b9);"
        )?;
        writeln!(
            patch,
            "+        total = total.rotate_left(7) ^ value.wrapping_mul(0x85eb_ca6b);"
        )?;
        writeln!(patch, "+        total = total.wrapping_add({c});")?;
        writeln!(patch, "     }}")?;
    }
    patch.push_str("*** End Patch\n");
    std::fs::write(dir.join("patch.txt"), &patch)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "generated {} bytes ({count} functions) and a patch of {} bytes with {chunks} chunks",
        src.len(),
        patch.len()
    )?;
    Ok(())
}
