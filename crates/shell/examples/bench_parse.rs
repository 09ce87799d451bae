//! Times `parse_command` on 10 000 typical agent command lines and reports microseconds per
//! parse, next to a baseline measured in the same run: tree-sitter parsing the same scripts
//! without our analysis. Run with
//! `cargo run --release -p osprey-shell --example bench_parse`.
#![expect(clippy::print_stdout, reason = "a benchmark's output is its purpose")]

use std::hint::black_box;
use std::time::Instant;

use osprey_shell::{ParsedCommand, parse_command};

const SCRIPTS: &[&str] = &[
    "ls -la",
    "git status",
    "git diff HEAD~1 --stat | tail -n 1",
    "rg -n 'fn main' src | head -20",
    "sed -n '1,80p' crates/core/src/lib.rs",
    "cd crates/shell && cargo test -p osprey-shell",
    "for f in *.rs; do wc -l \"$f\"; done",
    "find . -name '*.toml' -not -path './target/*' | xargs grep -l workspace",
    "cat <<'EOF' > notes.md\n# Notes\nsome text\nEOF",
    "if [ -f Cargo.toml ]; then cargo build 2>&1 | tail -n 30; else echo missing; fi",
    "npm ci && npm run build && npm test -- --watch=false",
    "python3 -c 'import sys; print(sys.version)'",
    "export RUST_LOG=debug; timeout 60 cargo run --bin osprey -- exec 'hi'",
    "count=$(git ls-files | wc -l); echo \"files: $count\"",
    "mkdir -p out && cp -r src out/ && ls out",
    "grep -rn TODO src --include='*.rs' || true",
    "while read -r line; do echo \"$line\"; done < input.txt > output.txt",
    "docker run --rm -v \"$PWD\":/w -w /w rust:1 cargo check",
    "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-old\n+new\n*** End Patch\nPATCH",
    "echo $(date +%s) && sleep 1 && echo done",
];

const ITERATIONS: usize = 10_000;

fn main() {
    let argvs: Vec<Vec<String>> = SCRIPTS
        .iter()
        .map(|s| vec!["bash".to_string(), "-lc".to_string(), (*s).to_string()])
        .collect();

    // Warm up (thread-local parser, caches).
    for argv in &argvs {
        black_box(parse_command(argv));
    }

    let mut parser = tree_sitter::Parser::new();
    let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    let baseline_ok = parser.set_language(&language).is_ok();
    let start = Instant::now();
    for i in 0..ITERATIONS {
        black_box(parser.parse(SCRIPTS[i % SCRIPTS.len()], None));
    }
    let baseline = start.elapsed();

    let mut analysable = 0usize;
    let start = Instant::now();
    for i in 0..ITERATIONS {
        if let ParsedCommand::Commands(_) = black_box(parse_command(&argvs[i % argvs.len()])) {
            analysable += 1;
        }
    }
    let full = start.elapsed();

    let per = |d: std::time::Duration| d.as_secs_f64() * 1e6 / ITERATIONS as f64;
    println!("scripts parsed:           {ITERATIONS} ({analysable} analysable)");
    if baseline_ok {
        println!(
            "tree-sitter parse only:   {:.2} µs per script",
            per(baseline)
        );
    }
    println!("parse_command (full):     {:.2} µs per script", per(full));
    if baseline_ok {
        println!(
            "ratio full / parse only:  {:.2}",
            full.as_secs_f64() / baseline.as_secs_f64()
        );
    }
}
