//! Benchmark: load 1 000 prefix rules, then check 10 000 commands one by one.
//!
//! Reports load time and the per-check latency distribution (median, p90, p99, mean), next
//! to a baseline measured in the same run: a linear scan over every rule without the
//! program index. Run in release: `bash bench/execpolicy.sh` (target: median ≤ 50 µs).

use std::io::Write;
use std::path::Path;
use std::time::Duration;
use std::time::Instant;

use osprey_execpolicy::Decision;
use osprey_execpolicy::Policy;
use osprey_execpolicy::PrefixRule;

const RULES: usize = 1_000;
const COMMANDS: usize = 10_000;
const PROGRAMS: usize = 250;

/// A tiny deterministic generator so runs are comparable without a `rand` dependency.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % bound.max(1)
    }
}

fn rules_source(rng: &mut Lcg) -> String {
    let decisions = ["allow", "prompt", "forbidden"];
    let mut out = String::new();
    for i in 0..RULES {
        let program = format!("tool{}", i % PROGRAMS);
        let sub = format!("sub{}", rng.next(8));
        let decision = decisions[rng.next(3)];
        let line = match i % 4 {
            0 => format!("prefix_rule(pattern=[\"{program}\"], decision=\"{decision}\")\n"),
            1 => format!(
                "prefix_rule(pattern=[\"{program}\", [\"{sub}\", \"alt{i}\"]], decision=\"{decision}\", justification=\"rule {i}\")\n"
            ),
            2 => format!(
                "prefix_rule(pattern=[\"{program}\", \"{sub}\", \"--flag\"], decision=\"{decision}\", match=[\"{program} {sub} --flag x\"])\n"
            ),
            _ => format!("prefix_rule(pattern=[[\"{program}\", \"alias{i}\"], \"{sub}\"])\n"),
        };
        out.push_str(&line);
    }
    out
}

fn commands(rng: &mut Lcg) -> Vec<Vec<String>> {
    (0..COMMANDS)
        .map(|_| {
            // About one command in five names a program no rule mentions.
            let program = if rng.next(5) == 0 {
                format!("other{}", rng.next(100))
            } else {
                format!("tool{}", rng.next(PROGRAMS))
            };
            let mut argv = vec![program, format!("sub{}", rng.next(8))];
            if rng.next(2) == 0 {
                argv.push("--flag".to_owned());
            }
            for k in 0..rng.next(6) {
                argv.push(format!("arg{k}"));
            }
            argv
        })
        .collect()
}

/// Baseline: try every rule in order, with no index by program name.
fn linear_scan(rules: &[PrefixRule], cmd: &[String]) -> Option<Decision> {
    let mut strictest = None;
    for rule in rules {
        if cmd.len() >= rule.pattern.len()
            && rule
                .pattern
                .iter()
                .zip(cmd)
                .all(|(token, arg)| token.accepts(arg))
        {
            strictest = strictest.max(Some(rule.decision));
        }
    }
    strictest
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

fn summarize(
    name: &str,
    mut samples: Vec<Duration>,
    out: &mut impl Write,
) -> std::io::Result<Duration> {
    samples.sort();
    let total: Duration = samples.iter().sum();
    let median = percentile(&samples, 0.5);
    writeln!(
        out,
        "{name:<14} median {:>8.2?}  p90 {:>8.2?}  p99 {:>8.2?}  mean {:>8.2?}",
        median,
        percentile(&samples, 0.9),
        percentile(&samples, 0.99),
        total / samples.len().max(1) as u32,
    )?;
    Ok(median)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = std::io::stdout().lock();
    let mut rng = Lcg(0x05E9_2E7D);
    let source = rules_source(&mut rng);
    let cmds = commands(&mut rng);

    let started = Instant::now();
    let policy = Policy::from_source(Path::new("bench.rules"), &source)?;
    let load = started.elapsed();
    writeln!(out, "loaded {} rules in {load:.2?}", policy.rules().len())?;

    let mut indexed = Vec::with_capacity(cmds.len());
    let mut baseline = Vec::with_capacity(cmds.len());
    let mut disagreements = 0usize;
    let mut matched = 0usize;
    for cmd in &cmds {
        let t = Instant::now();
        let evaluation = policy.check(cmd);
        indexed.push(t.elapsed());
        let t = Instant::now();
        let scanned = linear_scan(policy.rules(), cmd);
        baseline.push(t.elapsed());
        matched += usize::from(evaluation.decision.is_some());
        disagreements += usize::from(evaluation.decision != scanned);
    }
    writeln!(
        out,
        "checked {} commands ({matched} matched at least one rule)",
        cmds.len()
    )?;
    let ours = summarize("Policy::check", indexed, &mut out)?;
    let base = summarize("linear scan", baseline, &mut out)?;
    let ratio = base.as_secs_f64() / ours.as_secs_f64().max(1e-12);
    writeln!(out, "median speed-up over the linear scan: {ratio:.1}x")?;
    let verdict = if ours <= Duration::from_micros(50) {
        "met"
    } else {
        "MISSED"
    };
    writeln!(out, "target median <= 50us per check: {verdict}")?;
    if disagreements > 0 {
        return Err(
            format!("{disagreements} commands got a different decision from the baseline").into(),
        );
    }
    Ok(())
}
