//! Overhead of one `exec_command` call running `true`, from the call's arrival at the
//! registry to its output being ready, against a bare spawn of `bash -c true`.
//! Run: `cargo run --release -p osprey-core --example bench_exec_overhead [runs]`.
#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program"
)]

use std::time::Duration;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let (tool, bare) = osprey_core::bench::exec_overhead(runs).await.unwrap();
    let (t, b) = (median(tool), median(bare));
    println!(
        "exec_command `true` (registry dispatch → output): median {:.2} ms",
        t.as_secs_f64() * 1e3
    );
    println!(
        "bare spawn `bash -c true`:                        median {:.2} ms",
        b.as_secs_f64() * 1e3
    );
    println!(
        "overhead: {:+.2} ms (target ≤ +2 ms)",
        (t.as_secs_f64() - b.as_secs_f64()) * 1e3
    );
}
