//! Spawn overhead of `run_to_completion` against a bare `std::process::Command`.
//!
//! Run with `cargo run --release -p osprey-process --example bench_spawn`. Prints the
//! median of 200 runs of each, and the difference.

use std::time::{Duration, Instant};

use osprey_process::{ExecExpiration, ExecRequest, OutputCaps, run_to_completion};

const RUNS: usize = 200;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[expect(clippy::print_stdout, reason = "the benchmark's report is its output")]
fn report(ours: Duration, bare: Duration) {
    println!("runs per side:            {RUNS}");
    println!("run_to_completion(true):  {ours:?} median");
    println!("Command::new(true):       {bare:?} median");
    let diff = ours.as_secs_f64() - bare.as_secs_f64();
    println!(
        "difference:               {:+.1} µs ({:.2}x)",
        diff * 1e6,
        ours.as_secs_f64() / bare.as_secs_f64()
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_string());
    let request = ExecRequest::new("true", std::env::temp_dir()).env("PATH", path);

    // Warm up both paths (page cache, runtime threads).
    for _ in 0..10 {
        runtime.block_on(run_to_completion(
            request.clone(),
            ExecExpiration::never(),
            OutputCaps::default(),
            None,
        ))?;
        bare_true()?;
    }

    let mut ours = Vec::with_capacity(RUNS);
    let mut bare = Vec::with_capacity(RUNS);
    // Interleave so that machine noise hits both sides alike.
    for _ in 0..RUNS {
        let start = Instant::now();
        let outcome = runtime.block_on(run_to_completion(
            request.clone(),
            ExecExpiration::never(),
            OutputCaps::default(),
            None,
        ))?;
        ours.push(start.elapsed());
        if outcome.exit_code != Some(0) {
            return Err(format!("`true` failed: {outcome:?}").into());
        }

        let start = Instant::now();
        bare_true()?;
        bare.push(start.elapsed());
    }
    report(median(ours), median(bare));
    Ok(())
}

fn bare_true() -> std::io::Result<()> {
    #[expect(
        clippy::disallowed_methods,
        reason = "the baseline is a bare std spawn"
    )]
    let status = std::process::Command::new("true").status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other("`true` failed"))
    }
}
