//! Startup of several stdio MCP servers at once, against the slowest one's own start time.
//!
//! Run with `bench/mcp_startup.sh` (or `cargo run --release -p osprey-mcp --example
//! bench_startup -- [SERVERS] [ROUNDS]` with `OSPREY_MCP_EVERYTHING` set). Each round starts
//! SERVERS copies of `@modelcontextprotocol/server-everything` over stdio:
//!
//! * **together** — one `McpConnectionManager::start` with all of them; its wall time, and
//!   the slowest server's own start time inside that same run (the manager's overhead is the
//!   difference: everything it does besides waiting for the slowest server);
//! * **alone** — each server in a manager of its own, one after another; the slowest of them
//!   (what one server costs without others competing for the CPU).
//!
//! Prints medians over the rounds.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use osprey_config::{McpServerConfig, McpTransport};
use osprey_mcp::McpConnectionManager;

fn config(js: &str) -> McpServerConfig {
    McpServerConfig {
        transport: McpTransport::Stdio {
            command: "node".to_owned(),
            args: vec![js.to_owned(), "stdio".to_owned()],
            env: BTreeMap::new(),
            cwd: None,
        },
        startup_timeout: Duration::from_secs(30),
        tool_timeout: Duration::from_secs(30),
        enabled: true,
        enabled_tools: None,
        disabled_tools: Vec::new(),
        require_approval: false,
        default_tools_approval_mode: osprey_config::McpApprovalMode::Auto,
        tool_approval_modes: Default::default(),
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

struct Round {
    together: Duration,
    slowest_inside: Duration,
    slowest_alone: Duration,
}

async fn round(js: &str, count: usize, env: &HashMap<String, String>) -> Result<Round, String> {
    let all: BTreeMap<String, McpServerConfig> = (0..count)
        .map(|i| (format!("everything{i}"), config(js)))
        .collect();
    let started = Instant::now();
    let manager = McpConnectionManager::start(&all, env).await;
    let together = started.elapsed();
    let failures = manager.failures();
    if !failures.is_empty() {
        return Err(format!("servers failed: {failures:?}"));
    }
    let slowest_inside = manager
        .startup_times()
        .values()
        .max()
        .copied()
        .unwrap_or_default();
    manager.shutdown().await;

    let mut slowest_alone = Duration::ZERO;
    for (name, server) in &all {
        let one = BTreeMap::from([(name.clone(), server.clone())]);
        let started = Instant::now();
        let manager = McpConnectionManager::start(&one, env).await;
        slowest_alone = slowest_alone.max(started.elapsed());
        manager.shutdown().await;
    }
    Ok(Round {
        together,
        slowest_inside,
        slowest_alone,
    })
}

#[expect(clippy::print_stdout, reason = "the benchmark's report is its output")]
fn report(count: usize, rounds: &[Round]) {
    let together = median(rounds.iter().map(|r| r.together).collect());
    let inside = median(rounds.iter().map(|r| r.slowest_inside).collect());
    let alone = median(rounds.iter().map(|r| r.slowest_alone).collect());
    let overhead = median(
        rounds
            .iter()
            .map(|r| r.together.saturating_sub(r.slowest_inside))
            .collect(),
    );
    println!(
        "servers: {count} x server-everything (stdio), rounds: {}",
        rounds.len()
    );
    println!("manager start, all together:          {}", ms(together));
    println!("slowest server's own start (same run): {}", ms(inside));
    println!(
        "manager overhead (together - slowest): {} (target <= 50 ms)",
        ms(overhead)
    );
    println!("slowest single server started alone:  {}", ms(alone));
    println!(
        "together vs alone:                     {:+.1} ms (CPU contention between the servers)",
        (together.as_secs_f64() - alone.as_secs_f64()) * 1e3
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let js = std::env::var("OSPREY_MCP_EVERYTHING")
        .map_err(|_| "set OSPREY_MCP_EVERYTHING (eval \"$(bash scripts/install-test-deps.sh)\")")?;
    let mut args = std::env::args().skip(1);
    let count: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(7);
    let env: HashMap<String, String> = std::env::vars().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Warm-up: page cache and node's compile cache.
    runtime.block_on(round(&js, count, &env))?;
    let mut results = Vec::new();
    for _ in 0..rounds {
        results.push(runtime.block_on(round(&js, count, &env))?);
    }
    report(count, &results);
    Ok(())
}
